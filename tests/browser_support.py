"""A real headless Chromium for the tests that look at pages (Debian's ``chromium`` and
``chromium-driver``, driven by selenium).

Selenium is pointed at ``/usr/bin/chromedriver`` and ``/usr/bin/chromium`` so that its
selenium-manager never downloads a driver or a browser; a test module asks for the
``browser`` fixture (one browser per module) and is skipped, with the reason, when either
program or selenium is missing. ``.ci/run`` installs them.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from chromium import CHROMEDRIVER, CHROMIUM, missing, start  # tools/chromium.py (pytest's pythonpath)

__all__ = ["CHROMEDRIVER", "CHROMIUM", "browser", "console_problems", "missing"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module, with a fresh profile and the console log kept."""
    reason = missing()
    if reason is not None:
        pytest.skip(f"no browser: {reason}")
    profile = tempfile.mkdtemp(prefix="bbox-lark-chromium-")
    driver = start(profile, "--window-size=1280,900", console=True)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console_problems(driver: Any) -> list[dict[str, Any]]:
    """The console entries since the last call that are warnings or errors (a CSP violation,
    a script error, a failed load)."""
    return [entry for entry in driver.get_log("browser") if entry.get("level") in ("SEVERE", "WARNING")]
