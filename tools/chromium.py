"""A headless Chromium driven by selenium, for the browser tests (``tests/browser_support.py``)
and the screenshot tool (``tools/report_screens.py``): one place that says where the browser
and its driver are and how they start.

Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them); selenium is pointed
at both, so its selenium-manager never downloads a driver or a browser.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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
    """Why no browser can be started here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for program, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not program.exists():
            return f"{program} is missing (apt-get install {package})"
    return None


def start(profile: str, *extra: str, console: bool = False) -> Any:
    """A headless Chromium with a fresh profile folder ``profile`` and the ``extra`` flags;
    with ``console``, its console log is kept (``driver.get_log("browser")``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, *extra, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    if console:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
