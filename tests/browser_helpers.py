"""Headless Chromium for the tests that drive a page (the HTML replay, whist serve's table):
Debian's chromium and chromium-driver through selenium, skipped with a reason where missing."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@contextlib.contextmanager
def headless_chromium(window: str = "1400,900", browser_log: bool = False) -> Iterator[Any]:
    """A selenium driver of a headless Chromium with a throwaway profile (removed afterwards),
    ``window`` its size ("W,H"); ``browser_log``: keep the page's console log. Skips the test
    where Chromium or its driver is missing."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.skip(f"headless browser test needs Debian's chromium and chromium-driver; missing: {', '.join(missing)}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="whist-chromium-")
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", f"--window-size={window}", f"--user-data-dir={profile}"):
        options.add_argument(arg)
    options.binary_location = str(CHROMIUM)
    if browser_log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
