"""``cassette-tui serve``: the app in a real headless Chromium through textual-serve
(issue 30). The terminal draws on a canvas, so the test reads what the app sent to the
page (its screen updates over the websocket, captured in the page) and checks the
screenshots: the first divergence is shown and marked, and a key changes the screen."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cassette_tui.tui.commands.serve import is_loopback
from support.browser import chromium, distinct_colours, skip_without_browser
from support.paths import SAMPLES, SCRIPT
from support.run import cli

#: record every screen update the page receives, before the page's own scripts run
CAPTURE = r"""
window.__screen = [];
const Native = window.WebSocket;
window.WebSocket = function (url, protocols) {
  const ws = protocols === undefined ? new Native(url) : new Native(url, protocols);
  ws.addEventListener("message", (e) => {
    const d = e.data;
    if (typeof d === "string") window.__screen.push(d);
    else if (d instanceof ArrayBuffer) window.__screen.push(new TextDecoder().decode(d));
    else if (d instanceof Blob) d.text().then((t) => window.__screen.push(t));
  });
  return ws;
};
window.WebSocket.prototype = Native.prototype;
Object.assign(window.WebSocket, Native);
"""
_ESCAPES = re.compile(r"\x1b(\[[0-9;?$]*[A-Za-z]|\][^\x07]*\x07)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, deadline: float = 30.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(
                f"serve exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"serve did not listen on {port} within {deadline} s")


def _screen_text(driver) -> str:
    return _ESCAPES.sub("", driver.execute_script("return window.__screen.join('')"))


def _wait_text(driver, needle: str, deadline: float = 40.0) -> str:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        text = _screen_text(driver)
        if needle in text:
            return text
        time.sleep(0.3)
    pytest.fail(
        f"the served app never showed {needle!r}; it showed: {_screen_text(driver)[-2000:]}"
    )


def test_the_served_app_in_a_browser(tmp_path: Path) -> None:
    skip_without_browser()
    pytest.importorskip(
        "textual_serve", reason="textual-serve is not installed (the [serve] extra)"
    )
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    proc = subprocess.Popen(
        # by seq: row 2 is a response drift with its drift paths (auto aligns the sample
        # by key, where row 2 is A's extra retry); what is tested here is the serving
        [str(SCRIPT), "serve", str(SAMPLES / "fail.jsonl"), str(SAMPLES / "fix.jsonl"), "--port", str(port),
         "--align", "seq"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        _wait_for_port(port, proc)
        with chromium(tmp_path, resolve_local=True) as driver:
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CAPTURE})
            driver.get(f"http://127.0.0.1:{port}/")
            text = _wait_text(driver, "first divergence ~ row 2: A seq 2, B seq 2")
            assert "A fail.jsonl (7)" in text and "B fix.jsonl (4)" in text
            _wait_text(driver, "drift (6 paths, A -> B)")
            time.sleep(0.5)  # the canvas draws what arrived
            before = driver.get_screenshot_as_png()
            (tmp_path / "served.png").write_bytes(before)
            assert distinct_colours(before) > 8  # rows, marks and colours drawn
            keys = driver.find_element("css selector", ".xterm-helper-textarea")
            keys.send_keys("?")
            _wait_text(driver, "cassette-tui keys")
            time.sleep(0.5)
            after = driver.get_screenshot_as_png()
            (tmp_path / "served-help.png").write_bytes(after)
            assert after != before
            keys.send_keys("q")
            keys.send_keys("n")  # the next difference: row 3, another call
            _wait_text(driver, "other call")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)


def test_serve_refuses_a_remote_address_without_the_flag() -> None:
    done = cli("serve", str(SAMPLES / "fail.jsonl"), "--host", "0.0.0.0")
    assert done.returncode == 2
    assert "not a loopback address" in done.stderr and "--allow-remote" in done.stderr


def test_serve_on_a_port_in_use_is_bad_usage_without_a_traceback() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = cli("serve", str(SAMPLES / "fail.jsonl"), "--port", str(port), timeout=60)
    assert done.returncode == 2, done.stderr
    assert f"cassette-tui serve: cannot listen on 127.0.0.1:{port}:" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
     ("0.0.0.0", False), ("192.168.1.5", False), ("example.org", False), ("::", False)],
)  # fmt: skip
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_serve_without_textual_serve_says_how_to_install() -> None:
    # textual-serve hidden from the import system, as on a machine without the extra
    code = (
        "import sys, importlib.util as u\n"
        "real = u.find_spec\n"
        "u.find_spec = lambda name, *a: None if name == 'textual_serve' else real(name, *a)\n"
        "from cassette_tui.tui.cli import main\n"
        f"sys.argv = ['cassette-tui', 'serve', {str(SAMPLES / 'fail.jsonl')!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "pip install 'cassette-tui[serve]'" in done.stderr
