"""A copy of the project as a clone would hold it, for the tests that build or install it
(``test_wheel``, ``test_core_install``): building from the checkout itself would write its
``build/`` folder, which two xdist workers (or a stale earlier build) then share."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def snapshot(target: Path) -> Path:
    """The project's files (tracked or not, not ignored), or the tree less the usual
    scratch folders where git is not there: what a clone would hold."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        names = [name for name in listed.split("\0") if name and (REPO / name).is_file()]
    except (OSError, subprocess.SubprocessError):
        skip = shutil.ignore_patterns(".venv", ".git", "build", "dist", "site", ".nox", "*.egg-info")
        shutil.copytree(REPO, target, ignore=skip)
        return target
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target / name)
    return target
