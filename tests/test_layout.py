"""The README tells the truth: the session on its first screen is ``examples/session.bbox``
and the output shown under it is what ``check`` prints on it (run here, compared whole), and
its layout table matches the tree (every path exists, every module a folder's row names is
in that folder, every top-level folder of the checkout has a row).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")


def _block(text: str, language: str) -> str:
    found = re.search(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)
    assert found is not None, f"no ```{language} block"
    return found[1]


def _first_screen() -> str:
    return README.split("\n## ", 1)[0]


def test_the_first_screen_shows_the_example_session() -> None:
    screen = _first_screen()
    assert _block(screen, "bbox") == (REPO / "examples" / "session.bbox").read_text(encoding="utf-8")


def test_the_first_screen_shows_what_check_prints() -> None:
    shown = _block(_first_screen(), "text").splitlines()
    prompt = "$ bbox-lark "
    assert shown[0].startswith(prompt)
    args = shown[0].removeprefix(prompt).split()
    # The command line's own entry point, in a process of its own (findings on stdout, the
    # summary on stderr), run where the README's reader runs it: the checkout's root.
    done = subprocess.run(
        [sys.executable, "-c", "from bbox_lark.cli import main; main()", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (done.stdout + done.stderr).splitlines() == shown[1:]


def test_getting_started_shows_the_same_output() -> None:
    page = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert _block(page, "text").splitlines() == _block(_first_screen(), "text").splitlines()[1:]


def test_the_quick_start_checks_the_first_screen_session() -> None:
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    install = _block(quick_start, "sh")
    assert install.strip().endswith("bbox-lark check examples/session.bbox")
    assert "pip install . " in install  # the core install, no extra


# -- the layout table --------------------------------------------------------------------


def _layout_rows() -> list[tuple[list[str], list[str]]]:
    section = README.split("## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith(("| path ", "| --- ")):
            continue
        path_cell, what_cell = line.strip("|").split(" | ", 1)
        paths = re.findall(r"`([^`]+)`", path_cell)
        assert paths, line
        rows.append((paths, re.findall(r"`([^`]+)`", what_cell)))
    return rows


ROWS = _layout_rows()


def test_every_path_in_the_layout_exists() -> None:
    missing = [path for paths, _ in ROWS for path in paths if not (REPO / path).exists()]
    assert not missing, f"the README's layout names paths that do not exist: {missing}"


def test_every_module_a_folder_row_names_is_in_that_folder() -> None:
    # In a folder's row, a name in backticks that looks like a module (`survey`, `checks/`,
    # `bench.py`) must be a module or package of that folder.
    wrong = []
    for paths, names in ROWS:
        for folder in (REPO / p for p in paths if p.endswith("/")):
            for name in names:
                if not re.fullmatch(r"[a-z_][a-z0-9_]*(/|\.py)?", name):
                    continue
                stem = name.removesuffix("/").removesuffix(".py")
                if not ((folder / f"{stem}.py").is_file() or (folder / stem).is_dir()):
                    wrong.append(f"{folder.relative_to(REPO)}/{name}")
    assert not wrong, f"the README's layout names modules that are not there: {wrong}"


def test_every_top_level_folder_and_package_has_a_row() -> None:
    listed = {path for paths, _ in ROWS for path in paths}
    tops = {path.split("/", 1)[0] for path in listed}
    folders = {
        p.name
        for p in REPO.iterdir()
        if p.is_dir() and not p.name.startswith(".") and (p.name not in _ignored_by_git())
    }
    assert folders <= tops, f"top-level folders without a row: {sorted(folders - tops)}"
    # bbox_lark's sub-packages: a row of their own, or named in the bbox_lark/ row.
    package_row = next(names for paths, names in ROWS if paths == ["bbox_lark/"])
    for sub in (REPO / "bbox_lark").iterdir():
        if (sub / "__init__.py").is_file():
            assert f"bbox_lark/{sub.name}/" in listed or f"{sub.name}/" in package_row, sub.name


def _ignored_by_git() -> set[str]:
    """Top-level folders a checkout may hold that are not the project's (.venv, build, site,
    caches): the ones git ignores, or every untracked one when git is not there."""
    candidates = [p.name for p in REPO.iterdir() if p.is_dir() and not p.name.startswith(".")]
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--", *candidates],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        scratch = {"build", "site", "dist"}
        return {name for name in candidates if name in scratch or name.endswith(".egg-info")}
    tracked = {path.split("/", 1)[0] for path in done.stdout.split("\0") if path}
    return {name for name in candidates if name not in tracked}
