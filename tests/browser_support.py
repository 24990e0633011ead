"""A real headless Chromium for the tests that look at pages (Debian's ``chromium`` and
``chromium-driver``, driven by selenium).

Selenium is pointed at ``/usr/bin/chromedriver`` and ``/usr/bin/chromium`` so that its
selenium-manager never downloads a driver or a browser; a test module asks for the
``browser`` fixture (one browser per module) and is skipped, with the reason, when either
program or selenium is missing. ``.ci/run`` installs them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("BBOX_LARK_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("BBOX_LARK_CHROMEDRIVER", "/usr/bin/chromedriver"))

#: What a headless Chromium needs on a machine without a display or a network.
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def missing() -> str | None:
    """Why no browser test can run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for program, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not program.exists():
            return f"{program} is missing (apt-get install {package})"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module, with a fresh profile and the console log kept."""
    reason = missing()
    if reason is not None:
        pytest.skip(f"no browser: {reason}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="bbox-lark-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, "--window-size=1280,900", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console_problems(driver: Any) -> list[dict[str, Any]]:
    """The console entries since the last call that are warnings or errors (a CSP violation,
    a script error, a failed load)."""
    return [entry for entry in driver.get_log("browser") if entry.get("level") in ("SEVERE", "WARNING")]
