"""Headless Chromium driven by Selenium (Debian's ``chromium`` and ``chromium-driver``;
``.ci/run`` installs them), for the HTML report and the served app. Started with the
network quiet (no background connections) and every host name unresolvable, so a page
that tried to fetch anything would fail visibly instead of reaching out."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def skip_without_browser() -> None:
    """Skip the test, with the reason, where Chromium, its driver or Selenium is absent."""
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium chromium-driver)")
    pytest.importorskip("selenium", reason="selenium is not installed (the [test] extra)")


@contextmanager
def chromium(
    tmp: Path, *, width: int = 1200, height: int = 800, resolve_local: bool = False
) -> Iterator[Any]:
    """A Selenium WebDriver on headless Chromium, quit at the end. ``resolve_local``: let
    ``localhost`` resolve (the served app); every other name stays unresolvable."""
    skip_without_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-extensions",
        f"--window-size={width},{height}", f"--user-data-dir={tmp / 'chromium-profile'}",
        "--host-resolver-rules=MAP * ~NOTFOUND" + (", EXCLUDE localhost, EXCLUDE 127.0.0.1" if resolve_local else ""),
    ):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def distinct_colours(png: bytes) -> int:
    """How many colours a screenshot holds (a blank page has one or two)."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 16)
    return len(colours) if colours is not None else 1 << 16
