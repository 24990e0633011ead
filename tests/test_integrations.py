"""Integrations: the pre-commit hooks (.pre-commit-hooks.yaml) work from a real repository.

``pre-commit try-repo`` installs this project into its own virtual environment (pip, from
the package index), so that test is skipped when pre-commit or git is missing or when pip
cannot reach an index for the project's dependencies. It takes 20 to 40 s (marked
``network``: ``pytest -m 'not network'`` leaves it out).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / ".pre-commit-hooks.yaml"

HEADER = "---\nformat: bbox/1\nid: s1\nrepo_sha: 215db51\nrunner: local\n---\n"
CLEAN = HEADER + "@start id=s1\nt:read a.rs → [3 lines]\n@end\n"
MESSY = HEADER + "@start id=s1\nt:read   a.rs  ->  [3 lines]   \n@end\n"
BROKEN = "t:read a.rs → [ok]\n"  # no header: E004, an error


def test_manifest_declares_both_hooks() -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    hooks = {hook["id"]: hook for hook in clientlib.load_manifest(str(MANIFEST))}
    assert set(hooks) == {"bbox-lark-check", "bbox-lark-fmt"}
    assert hooks["bbox-lark-check"]["entry"] == "bbox-lark check"
    assert hooks["bbox-lark-fmt"]["entry"] == "bbox-lark fmt"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["files"] == r"\.(bbox|blackbox|rlog)$"


def _git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return done.stdout


def _index_reachable(env: dict[str, str]) -> bool:
    """Can pip resolve this project and its dependencies (as pre-commit's install will)?"""
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
    done = subprocess.run(
        [*pip, "--timeout", "15", "--retries", "1", str(REPO)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode == 0


@pytest.mark.network
def test_pre_commit_try_repo(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    try:
        listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO, env=env)
    except subprocess.CalledProcessError:
        pytest.skip("the project is not a git checkout")
    if not _index_reachable(env):
        pytest.skip("no package index reachable: pip cannot resolve the project's dependencies")

    # The hooks repository: a snapshot of the working tree as it is now (committed or not).
    hooks_repo = tmp_path / "hooks-repo"
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            target = hooks_repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    _git("init", "-q", cwd=hooks_repo, env=env)
    _git("add", "-A", cwd=hooks_repo, env=env)
    _git("commit", "-q", "-m", "snapshot", cwd=hooks_repo, env=env)

    # A project that uses the hooks.
    project = tmp_path / "project"
    (project / "logs").mkdir(parents=True)
    files = {
        "logs/clean.bbox": CLEAN,
        "logs/messy.rlog": MESSY,
        "logs/broken.blackbox": BROKEN,
        "notes.txt": BROKEN + "t:x  ->  y\n",  # not a bbox file name: never looked at
    }
    for name, text in files.items():
        (project / name).write_text(text, encoding="utf-8")
    _git("init", "-q", cwd=project, env=env)
    _git("add", "-A", cwd=project, env=env)

    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks_repo), "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out  # the broken file fails check; fmt rewrote a file
    assert "bbox-lark check" in out and "bbox-lark fmt" in out, out
    assert "logs/broken.blackbox:1:1: E004" in out, out
    assert "notes.txt" not in out, out
    assert "files were modified by this hook" in out, out
    assert (project / "logs/clean.bbox").read_text(encoding="utf-8") == CLEAN
    assert (project / "logs/messy.rlog").read_text(encoding="utf-8") == CLEAN
    assert (project / "logs/broken.blackbox").read_text(encoding="utf-8") == BROKEN
    assert (project / "notes.txt").read_text(encoding="utf-8") == files["notes.txt"]
