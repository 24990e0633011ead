"""Integrations: the pre-commit hooks (.pre-commit-hooks.yaml) work from a real repository,
on first use, as docs/integrations.md configures them.

Two runs on scratch repositories: the page's ``.pre-commit-config.yaml`` as written (its
``rev`` must exist; ``repo`` pointed at this checkout's git repository), and ``pre-commit
try-repo`` on a snapshot of the working tree. pre-commit installs this project into its own
virtual environment (pip, from the package index), so these tests are skipped when
pre-commit or git is missing or when pip cannot reach an index for the project's
dependencies. Each takes 20 to 40 s (marked ``network``: ``pytest -m 'not network'`` leaves
them out).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / ".pre-commit-hooks.yaml"
PAGE = REPO / "docs" / "integrations.md"

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


@functools.cache
def _index_reachable() -> bool:
    """Can pip resolve this project and its dependencies (as pre-commit's install will)?"""
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
    done = subprocess.run(
        [*pip, "--timeout", "15", "--retries", "1", str(REPO)],
        env=_git_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode == 0


def _documented_config() -> dict[str, object]:
    """The ``.pre-commit-config.yaml`` that docs/integrations.md shows."""
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, flags=re.M | re.S)
    config = next(yaml.safe_load(block) for block in blocks if block.startswith("repos:"))
    assert isinstance(config, dict)
    return config


def test_the_documented_rev_is_a_full_commit_or_a_tag_that_exists() -> None:
    (repo,) = _documented_config()["repos"]  # type: ignore[misc]
    assert [hook["id"] for hook in repo["hooks"]] == ["bbox-lark-check", "bbox-lark-fmt"]
    rev = repo["rev"]
    # A full commit id (pre-commit fetches exactly that), until a release tag is published.
    assert re.fullmatch(r"[0-9a-f]{40}", rev), rev
    env = _git_env()
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the commit cannot be looked up")
    try:
        _git("cat-file", "-e", f"{rev}^{{commit}}", cwd=REPO, env=env)
    except subprocess.CalledProcessError:
        if _git("rev-parse", "--is-shallow-repository", cwd=REPO, env=env).strip() == "true":
            pytest.skip("a shallow clone: the pinned commit may lie beyond its depth")
        raise AssertionError(f"docs/integrations.md pins {rev}, which the repository lacks") from None
    hooks = yaml.safe_load(_git("show", f"{rev}:.pre-commit-hooks.yaml", cwd=REPO, env=env))
    assert {hook["id"] for hook in hooks} >= {"bbox-lark-check", "bbox-lark-fmt"}


def _git_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return env


def _pre_commit_env(tmp_path: Path) -> dict[str, str]:
    """An environment for pre-commit with a home of its own; skips the test when pre-commit,
    git or a package index is missing."""
    pytest.importorskip("pre_commit")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = _git_env()
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    if not _index_reachable():
        pytest.skip("no package index reachable: pip cannot resolve the project's dependencies")
    return env


def _pre_commit(args: list[str], project: Path, env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.network
def test_the_documented_configuration_works_on_first_use(tmp_path: Path) -> None:
    if not (REPO / ".git").exists():
        pytest.skip("the project is not a git checkout")
    env = _pre_commit_env(tmp_path)
    config = _documented_config()
    (repo,) = config["repos"]  # type: ignore[misc]
    try:
        _git("cat-file", "-e", f"{repo['rev']}^{{commit}}", cwd=REPO, env=env)
    except subprocess.CalledProcessError:
        pytest.skip("this clone does not have the pinned commit (shallow?)")
    repo["repo"] = str(REPO)  # the page's URL, here: this checkout's repository
    project = tmp_path / "project"
    (project / "logs").mkdir(parents=True)
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (project / "logs/clean.bbox").write_text(CLEAN, encoding="utf-8")
    _git("init", "-q", cwd=project, env=env)
    _git("add", "-A", cwd=project, env=env)

    status, out = _pre_commit(["run", "--all-files"], project, env)
    assert status == 0, out  # a clean log passes both hooks
    assert "bbox-lark check" in out and "Passed" in out, out

    (project / "logs/messy.rlog").write_text(MESSY, encoding="utf-8")
    (project / "logs/broken.blackbox").write_text(BROKEN, encoding="utf-8")
    _git("add", "-A", cwd=project, env=env)
    status, out = _pre_commit(["run", "--all-files"], project, env)
    assert status == 1, out  # the broken log is refused; fmt rewrote the messy one
    assert "logs/broken.blackbox:1:1: E004" in out, out
    assert "files were modified by this hook" in out, out
    assert (project / "logs/messy.rlog").read_text(encoding="utf-8") == CLEAN
    assert (project / "logs/clean.bbox").read_text(encoding="utf-8") == CLEAN
    assert (project / "logs/broken.blackbox").read_text(encoding="utf-8") == BROKEN


@pytest.mark.network
def test_pre_commit_try_repo(tmp_path: Path) -> None:
    env = _pre_commit_env(tmp_path)
    try:
        listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO, env=env)
    except subprocess.CalledProcessError:
        pytest.skip("the project is not a git checkout")

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

    # A project that uses the hooks: a clean log alone passes.
    project = tmp_path / "project"
    (project / "logs").mkdir(parents=True)
    (project / "logs/clean.bbox").write_text(CLEAN, encoding="utf-8")
    _git("init", "-q", cwd=project, env=env)
    _git("add", "-A", cwd=project, env=env)
    status, out = _pre_commit(["try-repo", str(hooks_repo), "--all-files"], project, env)
    assert status == 0, out
    assert "bbox-lark check" in out and "bbox-lark fmt" in out, out

    # Then a messy log, a broken one and a file that is no bbox log.
    files = {
        "logs/messy.rlog": MESSY,
        "logs/broken.blackbox": BROKEN,
        "notes.txt": BROKEN + "t:x  ->  y\n",  # not a bbox file name: never looked at
    }
    for name, text in files.items():
        (project / name).write_text(text, encoding="utf-8")
    _git("add", "-A", cwd=project, env=env)
    status, out = _pre_commit(["try-repo", str(hooks_repo), "--all-files"], project, env)
    assert status == 1, out  # the broken file fails check; fmt rewrote a file
    assert "logs/broken.blackbox:1:1: E004" in out, out
    assert "notes.txt" not in out, out
    assert "files were modified by this hook" in out, out
    assert (project / "logs/clean.bbox").read_text(encoding="utf-8") == CLEAN
    assert (project / "logs/messy.rlog").read_text(encoding="utf-8") == CLEAN
    assert (project / "logs/broken.blackbox").read_text(encoding="utf-8") == BROKEN
    assert (project / "notes.txt").read_text(encoding="utf-8") == files["notes.txt"]
