"""The one-file HTML report in a real headless Chromium (issue 30): it opens from
``file://`` with no network, shows the rows with their marks and the first divergence,
answers its keys, and stays usable on a 100k-step pair (only the rows in view are drawn)."""

from __future__ import annotations

import json
from pathlib import Path

from support.browser import chromium, distinct_colours, skip_without_browser
from support.factory import entry, write_cassette
from support.paths import SAMPLES
from support.run import cli

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake, shaped like a GitHub token


def _rows(driver) -> list[str]:
    return [el.text for el in driver.find_elements("css selector", ".row")]


def test_the_sample_pair_report_in_a_browser(tmp_path: Path) -> None:
    skip_without_browser()
    out = tmp_path / "pair.html"
    # by seq: row 2 is a response drift whose drift the page shows (auto aligns the sample
    # by key, where row 2 is A's extra retry); what is tested here is the page
    done = cli("report", str(SAMPLES / "fail.jsonl"), str(SAMPLES / "fix.jsonl"),
               "--align", "seq", "-o", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    with chromium(tmp_path) as driver:
        driver.get(out.as_uri())
        rows = _rows(driver)
        assert len(rows) == 7
        first = driver.find_element("css selector", ".row.first")
        assert first.text.startswith("▶2") and "~" in first.text  # row 2, response drift
        assert "sel" in first.get_attribute("class")  # the page opens on it
        detail = driver.find_element("id", "detail").text
        assert "drift (A → B)" in detail and "$.status" in detail and "429" in detail
        assert "first divergence ▶ row 2" in driver.find_element("id", "first").text
        assert "error_response" in driver.find_element("id", "findings").text
        # nothing was fetched: the page is self-contained
        fetched = driver.execute_script("return performance.getEntriesByType('resource').length")
        assert fetched == 0
        # keys: n walks to the next difference, G to the last row, g to the first
        body = driver.find_element("tag name", "body")
        body.send_keys("n")
        assert driver.execute_script("return document.body.dataset.selected") == "2"
        body.send_keys("G")
        assert driver.execute_script("return document.body.dataset.selected") == "6"
        body.send_keys("g")
        assert driver.execute_script("return document.body.dataset.selected") == "0"
        body.send_keys("f")
        assert driver.execute_script("return document.body.dataset.selected") == "1"
        png = driver.get_screenshot_as_png()
        (tmp_path / "report.png").write_bytes(png)
        assert distinct_colours(png) > 8  # text, marks and the selection, not a blank page
        row_png = first.screenshot_as_png
        assert distinct_colours(row_png) > 2


def test_a_100k_step_report_draws_only_what_is_in_view(tmp_path: Path) -> None:
    skip_without_browser()
    a = [entry(i, "search", {"q": f"q{i}"}, response={"v": i}) for i in range(1, 100_001)]
    b = [dict(r) for r in a]
    b[54_321] = {**b[54_321], "response": {"v": -1}}
    pa = write_cassette(tmp_path / "a.jsonl", *a)
    pb = write_cassette(tmp_path / "b.jsonl", *b)
    out = tmp_path / "big.html"
    done = cli("report", str(pa), str(pb), "-o", str(out))
    assert done.returncode == 0, done.stderr
    with chromium(tmp_path) as driver:
        driver.get(out.as_uri())
        drawn = _rows(driver)
        assert 10 < len(drawn) < 200  # 100k rows in the page's data, a screenful drawn
        selected = driver.execute_script("return document.body.dataset.selected")
        assert selected == "54321"  # opened at the first divergence, deep in the list
        assert any(r.startswith("▶54322") for r in drawn)
        body = driver.find_element("tag name", "body")
        body.send_keys("G")
        assert driver.execute_script("return document.body.dataset.selected") == "99999"
        assert any(r.lstrip("▶ ").startswith("100000") for r in _rows(driver))
        assert len(_rows(driver)) < 200


def test_a_secret_is_masked_in_the_page_and_revealing_is_not_offered(tmp_path: Path) -> None:
    a = write_cassette(
        tmp_path / "a.jsonl", entry(1, "http_get", {"token": TOKEN}, response={"ok": 1})
    )
    b = write_cassette(
        tmp_path / "b.jsonl", entry(1, "http_get", {"token": TOKEN}, response={"ok": 2})
    )
    out = tmp_path / "r.html"
    done = cli("report", str(a), str(b), "-o", str(out))
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    assert TOKEN not in page and "ghp_" in page
    # an existing report is never replaced without --force
    again = cli("report", str(a), str(b), "-o", str(out))
    assert again.returncode == 2 and "exists" in again.stderr
    assert cli("report", str(a), str(b), "-o", str(out), "--force").returncode == 0


def test_the_gate_verdict_is_in_the_report(tmp_path: Path) -> None:
    gate = tmp_path / "gate.json"
    gate.write_text(json.dumps({"verdict": "flaky", "passed": 9, "clean": 20, "runs": 20,
                                "isolation": "netns", "divergence": {"message": "The runs part at call 2"}}))  # fmt: skip
    out = tmp_path / "r.html"
    done = cli(
        "report",
        str(SAMPLES / "fail.jsonl"),
        str(SAMPLES / "fix.jsonl"),
        "-o",
        str(out),
        "--gate",
        str(gate),
    )
    assert done.returncode == 0, done.stderr
    assert "gate: flaky: 9/20 passed" in out.read_text(encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    done = cli(
        "report",
        str(SAMPLES / "fail.jsonl"),
        str(SAMPLES / "fix.jsonl"),
        "-o",
        str(tmp_path / "x.html"),
        "--gate",
        str(bad),
    )
    assert done.returncode == 2 and "not a gate --json document" in done.stderr
    assert not (tmp_path / "x.html").exists()
