"""File discovery (docs/configuration.md, "File discovery"): .gitignore inside a git work
tree, .git never entered, exclude / extend-exclude, named paths always read, duplicates read
once, quoted globs expanded; the same discovery for check, fmt, fix and stats."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from bbox_lark.cli import app
from bbox_lark.files.config import DEFAULT_EXCLUDE, Resolver, cli_overrides
from bbox_lark.files.discover import collect_inputs, discover, names_one_file
from bbox_lark.files.globs import split_glob

runner = CliRunner()

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
#: A file fmt changes (u:x → u: x) and fix --arrows changes, with one warning (W013).
MESSY = HEADER + "u:hi\nt:read a.rs -> [1 lines]\n"


def tree(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(MESSY, encoding="utf-8")


def found(paths: list[str], **options: object) -> list[str]:
    resolver = Resolver(cli_overrides(**options))  # type: ignore[arg-type]
    return [item.path for item in discover(paths, resolver)]


def invoke(args: list[str], stdin: str | None = None) -> Result:
    result = runner.invoke(app, args, input=stdin)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def repo(here: Path) -> Path:
    """A git work tree with ignored and kept files."""
    subprocess.run(["git", "init", "-q", str(here)], check=True)
    tree(
        here,
        "a.bbox",
        "build/out.bbox",
        "logs/keep.bbox",
        "logs/skip.tmp.bbox",
        "logs/old/x.bbox",
        "logs/old/y.bbox",
        "local/mine.bbox",
        "notes.txt",
    )
    (here / ".gitignore").write_text("build/\n*.tmp.bbox\n# a comment\n\n", encoding="utf-8")
    (here / "logs" / ".gitignore").write_text("old/*\n!old/y.bbox\n", encoding="utf-8")
    (here / ".git" / "info").mkdir(exist_ok=True)
    (here / ".git" / "info" / "exclude").write_text("local/\n", encoding="utf-8")
    return here


def git_sees(root: Path) -> list[str]:
    """What git itself lists as not ignored (tracked or untracked), bbox files only."""
    done = subprocess.run(
        ["git", "ls-files", "--others", "--cached", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(line for line in done.stdout.splitlines() if line.endswith(".bbox"))


# -- .gitignore ----------------------------------------------------------------------------


def test_gitignore_is_honoured_inside_a_work_tree(repo: Path) -> None:
    assert found(["."]) == ["a.bbox", "logs/keep.bbox", "logs/old/y.bbox"]
    assert found(["."]) == git_sees(repo)  # the same answer as git's


def test_gitignore_files_above_the_named_folder_apply(repo: Path) -> None:
    assert found(["logs"]) == ["logs/keep.bbox", "logs/old/y.bbox"]
    os.chdir(repo / "logs")
    assert found(["."]) == ["keep.bbox", "old/y.bbox"]


def test_a_named_ignored_folder_is_searched(repo: Path) -> None:
    assert found(["build"]) == ["build/out.bbox"]
    assert found(["local"]) == ["local/mine.bbox"]


def test_a_named_ignored_file_is_read(repo: Path) -> None:
    assert found(["logs/skip.tmp.bbox", "build/out.bbox"]) == ["logs/skip.tmp.bbox", "build/out.bbox"]


def test_gitignore_is_not_read_outside_a_work_tree(here: Path) -> None:
    tree(here, "a.bbox", "build/out.bbox")
    (here / ".gitignore").write_text("build/\n", encoding="utf-8")
    assert found(["."]) == ["a.bbox", "build/out.bbox"]


def test_a_worktree_whose_git_is_a_file(here: Path) -> None:
    tree(here, "a.bbox", "build/out.bbox")
    (here / ".git").write_text("gitdir: /somewhere/else\n", encoding="utf-8")
    (here / ".gitignore").write_text("build/\n", encoding="utf-8")
    assert found(["."]) == ["a.bbox"]


# -- .git is never entered ---------------------------------------------------------------------


def test_git_is_never_entered_even_when_exclude_is_emptied(here: Path) -> None:
    tree(here, "a.bbox", ".git/hooks/x.bbox", "sub/.git/y.bbox", ".venv/z.bbox")
    assert found(["."]) == ["a.bbox"]
    (here / "bbox-lark.toml").write_text("exclude = []\n", encoding="utf-8")
    assert found(["."]) == [".venv/z.bbox", "a.bbox"]  # .venv only by default; .git never
    assert found(["**/*.bbox"]) == [".venv/z.bbox", "a.bbox"]
    items = discover([".git"], Resolver())
    assert [item.problem for item in items] == [".git: inside .git, which is never searched"]


# -- exclude and extend-exclude ----------------------------------------------------------------


def test_default_exclusions(here: Path) -> None:
    tree(here, "a.bbox", ".venv/b.bbox", "node_modules/pkg/c.bbox", "src/__pycache__/d.bbox", "venvs/e.bbox")
    assert found(["."]) == ["a.bbox", "venvs/e.bbox"]


def test_exclude_replaces_and_extend_exclude_adds(here: Path) -> None:
    tree(here, "a.bbox", "old/b.bbox", ".venv/c.bbox", "logs/old/d.bbox")
    assert found(["."], exclude=["old/"]) == [".venv/c.bbox", "a.bbox"]  # old/ at any depth
    assert found(["."], extend_exclude=["/old/"]) == ["a.bbox", "logs/old/d.bbox"]  # anchored
    assert found(["."], extend_exclude=["*.bbox", "!a.bbox"]) == ["a.bbox"]


def test_config_patterns_are_relative_to_its_folder(here: Path) -> None:
    tree(here, "proj/old/a.bbox", "proj/new/b.bbox", "old/c.bbox")
    (here / "proj" / "bbox-lark.toml").write_text('extend-exclude = ["/old"]\n', encoding="utf-8")
    assert found(["."]) == ["old/c.bbox", "proj/new/b.bbox"]


def test_command_line_patterns_are_relative_to_the_current_folder(here: Path) -> None:
    tree(here, "proj/old/a.bbox", "proj/new/b.bbox")
    assert found(["proj"], extend_exclude=["proj/old"]) == ["proj/new/b.bbox"]
    assert found(["proj"], extend_exclude=["/old"]) == ["proj/new/b.bbox", "proj/old/a.bbox"]


def test_each_folder_uses_its_own_configurations_exclude(here: Path) -> None:
    tree(here, "a/x.bbox", "a/skip.bbox", "b/skip.bbox")
    (here / "a" / "bbox-lark.toml").write_text('extend-exclude = ["skip.bbox"]\n', encoding="utf-8")
    assert found(["."]) == ["a/x.bbox", "b/skip.bbox"]


def test_a_named_excluded_file_or_folder_is_still_used(here: Path) -> None:
    tree(here, ".venv/a.bbox", "old/b.bbox")
    assert found([".venv/a.bbox"]) == [".venv/a.bbox"]
    assert found([".venv"]) == [".venv/a.bbox"]
    assert found(["old"], exclude=["old"]) == ["old/b.bbox"]


def test_a_folder_with_only_excluded_files_says_so(here: Path) -> None:
    tree(here, "logs/.venv/a.bbox", "logs/b.tmp.bbox")
    result = invoke(["check", "--extend-exclude", "*.tmp.bbox", "logs"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        "error: logs: no *.bbox, *.blackbox or *.rlog files in this directory"
        " (2 skipped by exclude patterns or .gitignore)"
    )


# -- duplicates and globs ----------------------------------------------------------------------


def test_a_path_given_twice_is_read_once(here: Path) -> None:
    tree(here, "a.bbox", "logs/b.bbox")
    (here / "link.bbox").symlink_to(here / "a.bbox")
    assert found(["a.bbox", "./a.bbox", ".", "logs", str(here / "a.bbox"), "link.bbox"]) == [
        "a.bbox",
        "logs/b.bbox",
    ]
    result = invoke(["check", "a.bbox", "a.bbox", "."])
    assert result.stdout.count("a.bbox:8:") == 1  # one W013 for a.bbox, not two
    assert "1 file(s) reformatted" in invoke(["fmt", "a.bbox", "./a.bbox"]).stderr


def test_stdin_given_twice_is_read_once(here: Path) -> None:
    assert found(["-", "-"]) == ["-"]
    result = invoke(["check", "-", "-"], stdin=MESSY)
    assert result.stdout == "<stdin>:8:13: W013 ASCII `->` used as the result arrow; use `→`\n"


def test_quoted_globs_are_expanded(here: Path) -> None:
    tree(
        here,
        "a.bbox",
        "b.rlog",
        "logs/2024-01/c.bbox",
        "logs/2024-02/d.rlog",
        "logs/2024-02/e.txt",
        "logs/f.bbox",
    )
    assert found(["*.bbox"]) == ["a.bbox"]
    assert found(["**/*.rlog"]) == ["b.rlog", "logs/2024-02/d.rlog"]
    assert found(["logs/*/*.txt"]) == ["logs/2024-02/e.txt"]  # a matched file is taken whatever its suffix
    assert found(["logs/2024-*"]) == [
        "logs/2024-01/c.bbox",
        "logs/2024-02/d.rlog",
    ]  # matched folders: searched
    assert found([str(here / "logs" / "*.bbox")]) == [str(here / "logs" / "f.bbox")]
    result = invoke(["check", "logs/*.bbox", "*.rlog"])
    assert result.stdout.splitlines()[0].startswith("logs/f.bbox:8:13: W013")
    assert result.stdout.splitlines()[1].startswith("b.rlog:8:13: W013")


def test_globs_honour_exclusions_and_gitignore(repo: Path) -> None:
    assert found(["**/*.bbox"]) == ["a.bbox", "logs/keep.bbox", "logs/old/y.bbox"]
    assert found(["**/*.bbox"], extend_exclude=["logs/old"]) == ["a.bbox", "logs/keep.bbox"]


def test_a_glob_that_matches_nothing_is_an_input_error(here: Path) -> None:
    tree(here, "a.bbox")
    result = invoke(["check", "*.rlog", "a.bbox"])
    assert result.exit_code == 2
    assert "error: *.rlog: no such file or directory, and no file matches it as a pattern" in result.stderr
    assert "a.bbox:8:13: W013" in result.stdout  # the other path is still checked


def test_an_existing_path_is_never_a_glob(here: Path) -> None:
    tree(here, "odd[1].bbox", "odd1.bbox")
    assert found(["odd[1].bbox"]) == ["odd[1].bbox"]


def test_split_glob() -> None:
    assert split_glob("logs/2024-*/*.bbox") == ("logs", "2024-*/*.bbox")
    assert split_glob("*.bbox") == ("", "*.bbox")
    assert split_glob("/tmp/x/**/a?.rlog") == ("/tmp/x", "**/a?.rlog")
    assert split_glob("/*.bbox") == ("/", "*.bbox")


def test_names_one_file(here: Path) -> None:
    tree(here, "a.bbox", "logs/b.bbox")
    assert names_one_file(["a.bbox"]) and names_one_file(["-"]) and names_one_file(["missing.bbox"])
    assert (
        not names_one_file(["logs"]) and not names_one_file(["*.bbox"]) and not names_one_file(["a.bbox"] * 2)
    )


def test_collect_inputs_is_kept_for_old_callers(here: Path) -> None:
    tree(here, "a.bbox", "logs/b.bbox", ".venv/c.bbox")
    (here / "bbox-lark.toml").write_text('extend-exclude = ["logs"]\n', encoding="utf-8")  # not read
    assert collect_inputs(["a.bbox", ".", "missing.bbox"]) == ["a.bbox", "logs/b.bbox", "missing.bbox"]


# -- one discovery for check, fmt, fix and stats -----------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["check"], ["fmt"], ["fmt", "--check"], ["fix", "--arrows", "--write"], ["stats"], ["stats", "--json"]],
)
def test_every_command_finds_the_same_files(repo: Path, command: list[str]) -> None:
    before = {path: path.read_bytes() for path in repo.rglob("*.bbox") if ".git" not in path.parts}
    result = invoke([*command, ".", "a.bbox"])
    assert result.exit_code in (0, 1), result.output
    changed = sorted(str(p.relative_to(repo)) for p, data in before.items() if p.read_bytes() != data)
    shown = result.stdout + result.stderr
    for name in ("a.bbox", "logs/keep.bbox", "logs/old/y.bbox"):
        assert name in shown, name
    for name in ("build/out.bbox", "skip.tmp.bbox", "old/x.bbox", "mine.bbox"):
        assert name not in shown, name
    if command[0] in ("fmt", "fix") and "--check" not in command:
        assert changed == ["a.bbox", "logs/keep.bbox", "logs/old/y.bbox"]
    else:
        assert changed == []


def test_stats_over_a_folder_counts_each_file_once(repo: Path) -> None:
    result = invoke(["stats", ".", "a.bbox", "logs"])
    assert result.stdout.count("File: ") == 3
    assert "Total: 3 file(s)" in result.stdout


def test_shutil_copies_of_the_repo_behave_the_same(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Without .git the copy is no work tree: its .gitignore files are plain files.
    copy = tmp_path_factory.mktemp("copy") / "c"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    os.chdir(copy)
    assert "build/out.bbox" in found(["."])


def test_a_folder_that_cannot_be_listed_is_an_input_error(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree(here, "logs/a.bbox", "logs/locked/b.bbox")
    real = os.scandir

    def scandir(path: str | os.PathLike[str]) -> object:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = invoke(["check", "logs"])
    assert result.exit_code == 2
    assert "error: logs/locked: cannot read: Permission denied" in result.stderr
    assert "logs/a.bbox:8:13: W013" in result.stdout  # the rest is still checked


@pytest.mark.parametrize("name", [*DEFAULT_EXCLUDE, "logs", "old-logs", "a.b-c_d", "x..y", "_tmp"])
def test_a_plain_name_matches_as_pathspec_compiles_it(name: str) -> None:
    """Plain names (every default exclude) are matched without importing pathspec, with the
    regular expression pathspec compiles for them."""
    from pathspec import GitIgnoreSpec

    from bbox_lark.files.globs import _compile, _Name

    ours = _compile(name)
    assert isinstance(ours, _Name)
    (theirs,) = GitIgnoreSpec.from_lines([name]).patterns
    assert ours.include is theirs.include is True
    assert ours.pattern == name
    parts = [name, name + "x", "x" + name, "a", "a.b", ".", "..", "", "é", "a b"]
    for depth in range(4):
        for combo in itertools.product(parts, repeat=depth):
            for text in ("/".join(combo), "/".join(combo) + "/", "/" + "/".join(combo)):
                assert (ours.match_file(text) is None) == (theirs.match_file(text) is None), text


@pytest.mark.parametrize(
    "pattern", ["*.bbox", "logs/", "/scratch", "!keep", "a b", "a\\b", "#x", "**/x", ".", ".."]
)
def test_other_patterns_go_through_pathspec(pattern: str) -> None:
    from bbox_lark.files.globs import _Name, compile_glob

    assert not isinstance(compile_glob(pattern), _Name)


# -- sessions: each session counted once (stats, export, query) ----------------------------


def test_sessions_are_sniffed_and_subagents_counted_in_their_parent(tmp_path: Path) -> None:
    import shutil

    from bbox_lark.files.config import Resolver
    from bbox_lark.files.discover import discover

    shutil.copytree(Path(__file__).parent / "fixtures" / "claude-code-subagents", tmp_path / "projects")
    (tmp_path / "projects" / "package.json").write_text('{"name": "not a session"}\n', encoding="utf-8")
    root = tmp_path / "projects"
    resolver = Resolver(isolated=True)
    # Before: a folder search found no *.jsonl, so `query ~/.claude/projects` found nothing.
    assert [item.path for item in discover([str(root)], resolver)] == [str(root)]
    found = discover([str(root), str(root / "sess-sub.jsonl")], resolver, sessions=True)
    counted = [(Path(i.path).name, i.counted_in and Path(i.counted_in).name, i.counted_why) for i in found]
    assert counted == [
        ("sess-sub.jsonl", None, None),
        ("agent-a1.jsonl", "sess-sub.jsonl", "a subagent log of its parent session"),
        ("agent-b2.jsonl", "sess-sub.jsonl", "a subagent log of its parent session"),
        ("sess-sub.jsonl", "sess-sub.jsonl", "the same file"),
    ]
    # A subagent log named alone (its parent not an input) is counted on its own.
    alone = discover([str(root / "sess-sub" / "subagents" / "agent-a1.jsonl")], resolver, sessions=True)
    assert [item.counted_in for item in alone] == [None]


def test_stats_counts_a_session_and_its_subagents_once(tmp_path: Path) -> None:
    import json
    import shutil

    from typer.testing import CliRunner

    from bbox_lark.cli import app

    shutil.copytree(Path(__file__).parent / "fixtures" / "claude-code-subagents", tmp_path / "p")
    parent = tmp_path / "p" / "sess-sub.jsonl"
    agents = sorted(str(p) for p in (tmp_path / "p").rglob("agent-*.jsonl"))
    runner = CliRunner()
    alone = json.loads(runner.invoke(app, ["stats", "--json", str(parent)]).stdout)
    # As a glob over ~/.claude/projects names them: the parent, its subagents, the parent again.
    result = runner.invoke(app, ["stats", "--json", str(parent), *agents, str(parent)])
    named = json.loads(result.stdout)
    assert named["totals"]["usage"] == alone["totals"]["usage"]
    assert named["totals"]["calls"] == alone["totals"]["calls"]
    assert [entry["why"] for entry in named["counted_in"]] == [
        "a subagent log of its parent session",
        "a subagent log of its parent session",
        "the same file",
    ]
    assert "counted once, in" in result.stderr
