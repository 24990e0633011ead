"""``stats`` over many inputs (``bbox_lark.numbers.stats_run``), called in this process: what
each input shows, the totals, the JSON and the exit code of :func:`stats_paths`, and the parts
it is made of (:func:`stats_inputs`, :func:`file_stats`). The CLI tests run the same code, but
in a child process or through Typer; these pin each behaviour down where a mutation tester
sees it (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import bbox_lark
from bbox_lark.checks.workflow import find_inputs
from bbox_lark.files.discover import FoundInput
from bbox_lark.files.said import Said
from bbox_lark.numbers import stats_run
from bbox_lark.numbers.stats import Stats, combine_stats, compute_stats, stats_run_json
from bbox_lark.numbers.stats_run import FileStats, Shown, file_stats, stats_inputs, stats_paths

ROOT = Path(__file__).resolve().parent.parent
CLAUDE_CODE = ROOT / "tests" / "fixtures" / "claude-code" / "comments.jsonl"
SUBAGENTS = ROOT / "tests" / "fixtures" / "claude-code-subagents"

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
#: A session whose header gives the usage source and the model (the counter reads the header).
PRICED = (
    "---\nformat: bbox/1\nid: p\nrepo_sha: 215db51\nrunner: local\nmodel: claude-sonnet-4-5\n"
    "usage_source: anthropic\n---\n"
    "u: hi\n"
    "a: hello  # tokens_in=1000 tokens_out=200\n"
    "t:read a.rs → [2 lines] #id=c1\n"
)
#: A session with one error (E004: the header after the body).
BROKEN = "u: before the header\n" + HEADER + "a: after\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def expected(path: Path) -> Stats:
    """The statistics of a bbox file, from its parsed document (the other path)."""
    return compute_stats(bbox_lark.parse(path.read_text(encoding="utf-8")))


def found(path: str | Path, **options: Any) -> FoundInput:
    (item,) = find_inputs([str(path)], sessions=True, **options)
    return item


# -- one file, several files ------------------------------------------------------------------------


def test_one_file_shows_its_table_and_no_totals(tmp_path: Path) -> None:
    path = write(tmp_path, "a.bbox", PRICED)
    run = stats_paths([str(path)])
    stats = expected(path)
    assert run.shown == (Shown(str(path), stats, (), ()),)
    assert run.total is None
    assert run.json == stats_run_json([(str(path), stats)], [], [])
    assert run.exit_code == 0


def test_the_header_s_fields_reach_the_counter(tmp_path: Path) -> None:
    path = write(tmp_path, "a.bbox", PRICED)
    (shown,) = stats_paths([str(path)]).shown
    assert shown.stats is not None
    assert shown.stats.to_json()["header"]["model"] == "claude-sonnet-4-5"
    assert shown.stats.to_json() == expected(path).to_json()


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "corpus" / "valid").glob("*.bbox")))
def test_counting_as_read_agrees_with_the_document(name: str) -> None:
    path = ROOT / "corpus" / "valid" / name
    counted = file_stats(found(path, isolated=True))
    assert counted.problem is None and counted.path == str(path)
    assert counted.stats == expected(path)


def test_several_files_show_each_and_their_totals(tmp_path: Path) -> None:
    one = write(tmp_path, "one.bbox", PRICED)
    two = write(tmp_path, "two.bbox", HEADER + "u: again\n")
    run = stats_paths([str(one), str(two)])
    first, second = expected(one), expected(two)
    assert [(s.path, s.stats) for s in run.shown] == [(str(one), first), (str(two), second)]
    assert run.total == combine_stats([first, second])
    assert run.json == stats_run_json([(str(one), first), (str(two), second)], [], [])
    assert run.exit_code == 0


def test_a_folder_is_several_files_even_with_one_inside(tmp_path: Path) -> None:
    write(tmp_path, "one.bbox", PRICED)
    run = stats_paths([str(tmp_path)])
    assert run.total == combine_stats([expected(tmp_path / "one.bbox")])


def test_errors_are_said_after_the_table_and_exit_1(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.bbox", BROKEN)
    run = stats_paths([str(path)])
    (shown,) = run.shown
    assert shown.stats == expected(path)
    assert shown.before == ()
    assert shown.after == (Said(f"{path}: 1 error(s); `bbox-lark check` lists them", "refused"),)
    assert run.exit_code == 1


def test_a_file_s_errors_are_its_errors_only(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.bbox", BROKEN + "# a comment\n")
    counted = file_stats(found(path))
    assert [(d.code, d.severity) for d in counted.errors] == [("E004", "error")]
    assert counted.exit_code == 1


def test_a_warning_alone_exits_0(tmp_path: Path) -> None:
    path = write(tmp_path, "w.bbox", HEADER + "tool: what is this\n")
    counted = file_stats(found(path))
    assert counted.errors == () and counted.exit_code == 0
    assert stats_paths([str(path)]).exit_code == 0


def test_the_configuration_s_ignore_applies_to_the_file_by_its_path(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.bbox", BROKEN)
    write(tmp_path, "other.bbox", BROKEN)
    write(tmp_path, "bbox-lark.toml", '[per-file-ignores]\n"broken.bbox" = ["E004"]\n')
    assert stats_paths([str(path)]).exit_code == 0
    assert stats_paths([str(tmp_path / "other.bbox")]).exit_code == 1


def test_the_selected_codes_only_are_errors(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.bbox", BROKEN)
    assert stats_paths([str(path)], select=["W"]).exit_code == 0
    assert stats_paths([str(path)], select=["E"]).exit_code == 1


def test_an_allowed_secret_is_no_error(tmp_path: Path) -> None:
    key = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"
    path = write(tmp_path, "key.bbox", HEADER + f"a: the key is {key}\n")
    assert stats_paths([str(path)], isolated=True).exit_code == 1
    write(tmp_path, "bbox-lark.toml", f'allowed-secrets = ["{key}"]\n')
    assert stats_paths([str(path)]).exit_code == 0


def test_the_longest_line_is_the_configuration_s(tmp_path: Path) -> None:
    path = write(tmp_path, "long.bbox", HEADER + "a: " + "x" * 300 + "\n")
    assert stats_paths([str(path)]).exit_code == 0
    run = stats_paths([str(path)], max_line=100)
    assert run.exit_code == 1
    (shown,) = run.shown
    assert shown.after == (Said(f"{path}: 1 error(s); `bbox-lark check` lists them", "refused"),)


# -- inputs that cannot be read ---------------------------------------------------------------------


def test_one_file_named_that_cannot_be_read_ends_the_run(tmp_path: Path) -> None:
    missing = tmp_path / "missing.bbox"
    run = stats_paths([str(missing)])
    (shown,) = run.shown
    assert shown.path == str(missing) and shown.stats is None and shown.after == ()
    ((said),) = shown.before
    assert said.mark == "error" and str(missing) in said.text
    assert (run.total, run.json, run.exit_code) == (None, None, 2)


def test_among_several_an_unreadable_input_is_listed_and_the_others_counted(tmp_path: Path) -> None:
    good = write(tmp_path, "good.bbox", PRICED)
    missing = tmp_path / "missing.bbox"
    run = stats_paths([str(good), str(missing)])
    assert run.exit_code == 2
    assert [s.path for s in run.shown] == [str(good), str(missing)]
    bad = run.shown[1]
    assert bad.stats is None and bad.after == ()
    (said,) = bad.before
    assert said.mark == "error" and str(missing) in said.text
    stats = expected(good)
    assert run.total == combine_stats([stats])
    assert run.json == stats_run_json([(str(good), stats)], [{"path": str(missing), "error": said.text}], [])


def test_a_folder_with_nothing_to_count_is_a_problem(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    item = found(empty)
    assert item.problem is not None
    assert file_stats(item) == FileStats(str(empty), problem=item.problem)
    assert file_stats(item).exit_code == 2


def test_a_path_that_is_gone_when_read_says_so(tmp_path: Path) -> None:
    path = write(tmp_path, "gone.bbox", HEADER)
    item = found(path)
    path.unlink()
    counted = file_stats(item)
    assert counted.path == str(path) and counted.stats is None
    assert counted.problem is not None and str(path) in counted.problem
    assert counted.exit_code == 2


def test_an_unreadable_file_counted_in_place_says_so(tmp_path: Path) -> None:
    path = write(tmp_path, "gone.bbox", HEADER)
    item = found(path)
    path.unlink()
    counted = stats_run._counted(item, str(path))
    assert counted.path == str(path) and counted.stats is None
    assert counted.problem is not None and str(path) in counted.problem


def test_a_read_that_fails_midway_is_a_problem_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bbox_lark.api

    path = write(tmp_path, "a.bbox", PRICED)

    def failing(*args: object, **kwargs: object) -> object:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(bbox_lark.api, "run", failing)
    counted = file_stats(found(path))
    assert counted == FileStats(str(path), problem=f"{path}: cannot read: Input/output error")


def test_a_conversion_that_cannot_read_is_a_problem_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bbox_lark.convert.files
    from bbox_lark.convert import ConvertError

    path = tmp_path / "session.jsonl"
    path.write_bytes(CLAUDE_CODE.read_bytes())

    def refusing(*args: object, **kwargs: object) -> object:
        raise ConvertError("not a session")

    monkeypatch.setattr(bbox_lark.convert.files, "bbox_file", refusing)
    assert file_stats(found(path)) == FileStats(str(path), problem=f"{path}: not a session")

    def unreadable(*args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(bbox_lark.convert.files, "bbox_file", unreadable)
    assert file_stats(found(path)) == FileStats(str(path), problem=f"{path}: cannot read: Permission denied")

    def bare(*args: object, **kwargs: object) -> object:
        raise OSError("no reason")

    monkeypatch.setattr(bbox_lark.convert.files, "bbox_file", bare)
    assert file_stats(found(path)) == FileStats(str(path), problem=f"{path}: cannot read: no reason")


def test_a_file_counted_closes_it(tmp_path: Path) -> None:
    path = write(tmp_path, "a.bbox", PRICED)
    before = len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").is_dir() else None
    for _ in range(5):
        file_stats(found(path))
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before


# -- standard input ---------------------------------------------------------------------------------


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_standard_input_is_shown_as_stdin_and_left_open(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = _Stdin(PRICED.encode())
    monkeypatch.setattr(sys, "stdin", stdin)
    run = stats_paths(["-"])
    stats = compute_stats(bbox_lark.parse(PRICED))
    assert run.shown == (Shown("<stdin>", stats, (), ()),)
    assert run.json == stats_run_json([("<stdin>", stats)], [], [])
    assert not stdin.buffer.closed


def test_standard_input_is_checked_without_a_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # the configuration's per-file ignores name paths: standard input has none, so none apply
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "bbox-lark.toml", '[per-file-ignores]\n"*" = ["E004"]\n')
    monkeypatch.setattr(sys, "stdin", _Stdin(BROKEN.encode()))
    assert stats_paths(["-"]).exit_code == 1


# -- each session once ------------------------------------------------------------------------------


def test_a_file_named_twice_is_counted_once_and_said_so(tmp_path: Path) -> None:
    path = write(tmp_path, "a.bbox", PRICED)
    run = stats_paths([str(path), str(path)])
    stats = expected(path)
    assert run.shown[0] == Shown(str(path), stats, (), ())
    why = "the same file"
    assert run.shown[1] == Shown(str(path), before=(Said(f"{path}: counted once, in {path} ({why})"),))
    assert run.total == combine_stats([stats])
    assert run.json == stats_run_json(
        [(str(path), stats)], [], [{"path": str(path), "counted_in": str(path), "why": why}]
    )
    assert run.exit_code == 0


def test_an_input_counted_in_another_is_not_read(tmp_path: Path) -> None:
    path = write(tmp_path, "a.bbox", PRICED)
    item = found(path)
    counted_in = FoundInput(item.path, item.settings, counted_in="other.bbox", counted_why="the same file")
    assert file_stats(counted_in) == FileStats(
        str(path), counted_in="other.bbox", counted_why="the same file"
    )
    assert file_stats(counted_in).exit_code == 0


def test_a_counted_input_without_a_reason_says_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "a.bbox", PRICED)
    merged = FileStats(str(path), counted_in="b.bbox")
    monkeypatch.setattr(stats_run, "stats_inputs", lambda inputs, **kw: iter([merged]))
    run = stats_paths([str(path)])
    assert run.json is not None
    assert run.json["counted_in"] == [{"path": str(path), "counted_in": "b.bbox", "why": ""}]


def test_a_subagent_log_is_counted_in_its_session(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    import shutil

    shutil.copytree(SUBAGENTS, folder)
    parent = folder / "sess-sub.jsonl"
    agents = sorted(str(p) for p in (folder / "sess-sub").rglob("*.jsonl"))
    assert agents
    alone = stats_paths([str(parent)])
    run = stats_paths([str(parent), *agents])
    assert run.shown[0] == alone.shown[0]
    assert all(s.stats is None and len(s.before) == 1 for s in run.shown[1:])
    assert all(f"counted once, in {parent}" in s.before[0].text for s in run.shown[1:])
    assert run.json is not None and [e["path"] for e in run.json["counted_in"]] == agents


# -- other formats, sessions inside one file ---------------------------------------------------------


def test_a_claude_code_session_is_counted_through_its_bbox_form(tmp_path: Path) -> None:
    from bbox_lark.convert import convert

    path = tmp_path / "session.jsonl"
    path.write_bytes(CLAUDE_CODE.read_bytes())
    run = stats_paths([str(path)])
    (shown,) = run.shown
    text = convert(CLAUDE_CODE.read_text(encoding="utf-8"), "claude_code", to="bbox").text
    assert shown.stats == compute_stats(bbox_lark.parse(text))
    assert shown.before == (Said(f"{path}: read as claude-code (converted to bbox first)"),)
    assert run.exit_code == 0
    counted = file_stats(found(path))
    assert (counted.read_as, counted.skipped) == ("claude-code", ())


def test_the_records_a_conversion_skipped_are_said_and_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    data = CLAUDE_CODE.read_bytes()
    path.write_bytes(data + b"not a record\n")
    line = data.count(b"\n") + 1
    run = stats_paths([str(path)])
    (shown,) = run.shown
    assert shown.stats is not None
    assert shown.before == (
        Said(f"{path}: read as claude-code (converted to bbox first)"),
        Said(f"{path}:{line}: skipped: not a JSON record (Expecting value at column 1)"),
        Said(f"{path}: 1 record(s) skipped (not counted)", "!"),
    )
    assert run.exit_code == 1
    assert file_stats(found(path)).skipped == (
        f"{path}:{line}: skipped: not a JSON record (Expecting value at column 1)",
    )


def test_a_claude_code_session_is_written_within_the_longest_line_set(tmp_path: Path) -> None:
    # the conversion cuts a long text into lines the check then allows: no E003
    path = tmp_path / "session.jsonl"
    path.write_bytes(CLAUDE_CODE.read_bytes())
    default = file_stats(found(path))
    short = file_stats(found(path, max_line=128))
    assert default.stats is not None and short.stats is not None
    assert short.errors == () and short.exit_code == 0
    assert short.stats.lines.total > default.stats.lines.total


def _two_trajectories(tmp_path: Path) -> Path:
    from bbox_lark.convert import convert

    demo = (ROOT / "examples" / "session.bbox").read_text(encoding="utf-8")
    lines = []
    for name in ("one", "two"):
        text = demo.replace("id: ", f"id: {name}-", 1)
        lines.append(json.dumps(json.loads(convert(text, "bbox", to="atif").text)) + "\n")
    path = tmp_path / "two.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_each_trajectory_of_an_atif_json_lines_file_is_a_session(tmp_path: Path) -> None:
    path = _two_trajectories(tmp_path)
    run = stats_paths([str(path)])
    assert [s.path for s in run.shown] == [f"{path}#1", f"{path}#2"]
    assert all(s.stats is not None for s in run.shown)
    first, second = (s.stats for s in run.shown)
    assert first is not None and second is not None
    assert first.to_json()["header"]["id"] != second.to_json()["header"]["id"]
    assert run.total is None  # one file named: its one-file form, as `stats --json FILE`
    assert run.json == stats_run_json([(f"{path}#1", first), (f"{path}#2", second)], [], [])


def test_one_trajectory_is_read_by_its_address(tmp_path: Path) -> None:
    from bbox_lark.convert.atif.lines import expand_sessions

    path = _two_trajectories(tmp_path)
    items = expand_sessions(find_inputs([str(path)], sessions=True))
    counted = [file_stats(item) for item in items]
    assert [c.path for c in counted] == [f"{path}#1", f"{path}#2"]
    assert all(c.read_as == "atif" and c.stats is not None for c in counted)


# -- the parts: the jobs, the progress, a worker that died ------------------------------------------


def test_stats_paths_passes_the_jobs_and_progress_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "a.bbox", PRICED)
    seen: list[dict[str, Any]] = []
    real = stats_run.stats_inputs

    def recording(inputs: Any, **kwargs: Any) -> Any:
        seen.append(kwargs)
        return real(inputs, **kwargs)

    monkeypatch.setattr(stats_run, "stats_inputs", recording)
    ticks: list[tuple[int, int]] = []
    stats_paths([str(path)], jobs=3, progress=lambda done, total: ticks.append((done, total)))
    assert seen[-1]["jobs"] == 3
    assert ticks == [(1, 1)]
    stats_paths([str(path)], jobs="auto")
    assert seen[-1]["jobs"] == "auto"
    write(tmp_path, "bbox-lark.toml", "jobs = 4\n")
    stats_paths([str(path)])
    assert seen[-1]["jobs"] == 4
    stats_paths([str(path)], jobs=1)
    assert seen[-1]["jobs"] == 1


def test_stats_inputs_runs_one_job_by_default_and_sizes_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "a.bbox", PRICED)
    seen: dict[str, Any] = {}

    def recording(items: Any, far: Any, here: Any, failed: Any, **kwargs: Any) -> Any:
        seen.update(kwargs, far=far, here=here, failed=failed, items=list(items))
        return iter(())

    monkeypatch.setattr(stats_run, "run_each", recording)
    list(stats_inputs(find_inputs([str(path)], sessions=True)))
    assert seen["jobs"] == 1 and seen["progress"] is None
    (item,) = seen["items"]
    assert seen["size"](item) == len(PRICED.encode())
    assert seen["far"](item) == (file_stats, (item,))
    assert seen["here"](item, None) == file_stats(item)
    assert seen["failed"](item, ValueError("boom")) == FileStats(str(path), problem="ValueError: boom")
    progress = print
    list(stats_inputs([item], jobs=2, progress=progress))
    assert seen["jobs"] == 2 and seen["progress"] is progress


@pytest.mark.parametrize(
    ("path", "problem", "counted_in"),
    [("-", None, None), ("a.bbox", "a problem", None), ("a.bbox", None, "b.bbox"), ("a.bbox", "x", "b.bbox")],
)
def test_only_a_readable_file_goes_to_a_worker(
    path: str, problem: str | None, counted_in: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = find_inputs([str(write(tmp_path, "a.bbox", PRICED))])[0].settings
    seen: dict[str, Any] = {}

    def recording(items: Any, far: Any, *args: Any, **kwargs: Any) -> Any:
        seen["far"] = far
        return iter(())

    monkeypatch.setattr(stats_run, "run_each", recording)
    list(stats_inputs([]))
    item = FoundInput(path, settings, problem=problem, counted_in=counted_in)
    assert seen["far"](item) is None


def test_stats_inputs_keeps_the_order_and_the_problems(tmp_path: Path) -> None:
    one = write(tmp_path, "one.bbox", PRICED)
    two = write(tmp_path, "two.bbox", HEADER)
    items = find_inputs([str(one), str(tmp_path / "missing.bbox"), str(two)], sessions=True)
    results = list(stats_inputs(items))
    assert [r.path for r in results] == [str(one), str(tmp_path / "missing.bbox"), str(two)]
    assert [r.stats is None for r in results] == [False, True, False]


def test_the_inputs_after_one_counted_in_another_are_counted(tmp_path: Path) -> None:
    a = write(tmp_path, "a.bbox", PRICED)
    b = write(tmp_path, "b.bbox", HEADER + "u: more\n")
    run = stats_paths([str(a), str(a), str(b)])
    assert [s.stats is not None for s in run.shown] == [True, False, True]
    assert run.total == combine_stats([expected(a), expected(b)])


def test_an_input_with_neither_statistics_nor_a_problem_is_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = write(tmp_path, "a.bbox", PRICED)
    b = write(tmp_path, "b.bbox", PRICED)
    monkeypatch.setattr(stats_run, "stats_inputs", lambda inputs, **kw: iter([FileStats(str(a))]))
    run = stats_paths([str(a), str(b)])
    assert run.shown == (Shown(str(a), before=(Said("unreadable", "error"),)),)
    assert run.json is not None and run.json["unreadable"] == [{"path": str(a), "error": "unreadable"}]


BLOB = "t:read src/lib.rs → @blob sha256=" + "0" * 64 + " bytes=4\n"


def test_a_file_s_blobs_are_looked_for_beside_it(tmp_path: Path) -> None:
    path = write(tmp_path, "a.bbox", HEADER + BLOB)
    assert stats_paths([str(path)]).exit_code == 0  # no blob folder: pointers not looked up
    (tmp_path / ".bbox-blobs").mkdir()
    run = stats_paths([str(path)])
    assert run.exit_code == 1  # the blob is missing from the folder beside the file (E013)
    assert [(d.code, d.line) for d in file_stats(found(path)).errors] == [("E013", 7)]


def test_standard_input_has_no_folder_to_look_for_blobs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".bbox-blobs").mkdir()
    monkeypatch.setattr(sys, "stdin", _Stdin((HEADER + BLOB).encode()))
    assert stats_paths(["-"]).exit_code == 0


def test_the_inputs_after_an_unreadable_one_are_counted(tmp_path: Path) -> None:
    missing = tmp_path / "missing.bbox"
    good = write(tmp_path, "good.bbox", PRICED)
    run = stats_paths([str(missing), str(good)])
    assert [s.stats is not None for s in run.shown] == [False, True]
    assert run.total == combine_stats([expected(good)])


def test_a_stream_that_fails_while_spooled_is_a_problem_of_the_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib

    import bbox_lark.files.inputs as inputs

    path = write(tmp_path, "a.bbox", PRICED)

    @contextlib.contextmanager
    def failing(item: str) -> Any:
        raise inputs.InputError(f"{item}: cannot read: Input/output error")
        yield item

    monkeypatch.setattr(inputs, "spooled", failing)
    assert file_stats(found(path)) == FileStats(str(path), problem=f"{path}: cannot read: Input/output error")
