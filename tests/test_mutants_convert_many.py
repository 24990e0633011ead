"""``convert`` on many inputs, and the whole command as one call (``bbox_lark.convert.many``),
in this process: which runs convert many, the outputs' names, what a run says and its exit
code, and the usage errors. The CLI tests run the same code through Typer or a child process;
these pin each behaviour down where a mutation tester sees it (docs/testing.md)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from bbox_lark.convert import convert, many
from bbox_lark.convert.files import Converted, ConvertUsageError, Notes
from bbox_lark.convert.many import (
    ConvertRun,
    _convert_one,
    _jobs,
    convert_files,
    convert_inputs,
    convert_paths,
    converts_many,
    output_name,
    reads_as_folder,
)
from bbox_lark.files.config import Settings
from bbox_lark.files.discover import FoundInput
from bbox_lark.files.said import Said
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

ROOT = Path(__file__).resolve().parent.parent
LIGHTBOX = ROOT / "tests" / "fixtures" / "lightbox" / "session"
DEMO = ROOT / "examples" / "session.bbox"
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
CLEAN = HEADER + "u: hi\na: hello\n"
NOT_UTF8 = HEADER.encode() + b"a: caf\xe9\n"


def write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def trajectories(folder: Path, *names: str) -> Path:
    demo = DEMO.read_text(encoding="utf-8")
    lines = [
        json.dumps(json.loads(convert(demo.replace("id: ", f"id: {n}-", 1), "bbox", to="atif").text))
        for n in names
    ]
    return write(folder, "run.jsonl", "\n".join(lines) + "\n")


# -- output_name ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "to", "name"),
    [
        ("logs/a.bbox", "jsonl", "a.jsonl"),
        ("a.jsonl", "bbox", "a.bbox"),
        ("A.BBOX", "jsonl", "A.jsonl"),  # extensions are told case-blind
        ("a.rlog", "compact", "a.cbox"),
        ("a.blackbox", "atif", "a.json"),
        ("a.trajectory.json", "bbox", "a.trajectory.bbox"),  # the longest known extension goes
        ("notes.txt", "bbox", "notes.bbox"),  # an unknown one: the stem
        ("noext", "bbox", "noext.bbox"),
        (".bbox", "jsonl", ".bbox.jsonl"),  # a name that is only an extension stays whole
        ("run.jsonl#3", "bbox", "run-3.bbox"),  # a trajectory of an ATIF JSON Lines file
        ("run#x.jsonl", "bbox", "run#x.bbox"),  # not an address: kept
        ("a.bbox", "lightbox", "a"),  # a folder format: the stem alone
        ("a.bbox", "otlp", "a.otlp"),
    ],
)
def test_output_name(path: str, to: str, name: str) -> None:
    assert output_name(path, to) == name


# -- which runs convert many ---------------------------------------------------------------------


def test_one_file_is_one_input(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    assert not converts_many([str(source)], None)
    assert converts_many([str(source), str(source)], None)
    assert converts_many([], None)


def test_a_folder_is_many_unless_a_folder_format_reads_it(tmp_path: Path) -> None:
    write(tmp_path, "a.bbox", CLEAN)
    assert converts_many([str(tmp_path)], None)
    assert not converts_many([str(LIGHTBOX)], None)
    assert not converts_many([str(LIGHTBOX)], "lightbox")
    assert converts_many([str(LIGHTBOX)], "bbox")  # bbox reads no folder: search it


def test_an_atif_json_lines_file_is_many(tmp_path: Path) -> None:
    source = trajectories(tmp_path, "one", "two")
    assert converts_many([str(source)], None)
    assert converts_many([str(source)], "atif")
    assert not converts_many([str(source)], "jsonl")  # read as another format: one input


def test_reads_as_folder(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    assert reads_as_folder(str(LIGHTBOX), None)
    assert reads_as_folder(str(LIGHTBOX), "lightbox")
    assert not reads_as_folder(str(LIGHTBOX), "bbox")
    assert not reads_as_folder(str(LIGHTBOX), "no-such-format")
    assert not reads_as_folder(str(tmp_path), None)
    assert not reads_as_folder(str(source), "lightbox")


def test_convert_inputs(tmp_path: Path) -> None:
    a = write(tmp_path, "logs/a.bbox", CLEAN)
    b = write(tmp_path, "logs/b.bbox", CLEAN)
    run = trajectories(tmp_path, "one", "two")
    found = convert_inputs([str(LIGHTBOX), str(tmp_path / "logs"), str(run)], None)
    assert [item.path for item in found] == [str(LIGHTBOX), str(a), str(b), f"{run}#1", f"{run}#2"]
    assert found[0].settings == Settings()
    assert [item.path for item in convert_inputs([str(run)], "atif")] == [f"{run}#1", f"{run}#2"]
    assert [item.path for item in convert_inputs([str(run)], "jsonl")] == [str(run)]


def test_the_paths_are_searched_together(tmp_path: Path) -> None:
    # each path searched alone would not see the others: a session counted twice (report's index)
    a = write(tmp_path, "a.bbox", CLEAN)
    twice = convert_inputs([str(a), str(a)], None, sessions=True)
    assert [(item.path, item.counted_in, item.counted_why) for item in twice] == [
        (str(a), None, None),
        (str(a), str(a), "the same file"),
    ]
    assert [item.path for item in convert_inputs([str(a), str(a)], None)] == [str(a)]
    b = write(tmp_path, "b.bbox", CLEAN)
    mixed = convert_inputs([str(a), str(LIGHTBOX), str(b), str(a)], None)
    assert [item.path for item in mixed] == [str(a), str(b), str(LIGHTBOX)]  # where the first is named
    first = convert_inputs([str(LIGHTBOX), str(a)], None)
    assert [item.path for item in first] == [str(LIGHTBOX), str(a)]
    assert convert_inputs([str(LIGHTBOX)], None) == [FoundInput(str(LIGHTBOX), Settings())]


def test_a_subagent_log_named_beside_its_parent_is_counted_in_it(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(ROOT / "tests" / "fixtures" / "claude-code-subagents", tmp_path / "logs")
    parent = tmp_path / "logs" / "sess-sub.jsonl"
    agents = sorted(str(p) for p in (tmp_path / "logs" / "sess-sub").rglob("*.jsonl"))
    found = convert_inputs([str(parent), *agents], None, sessions=True)
    assert [(item.path, item.counted_in) for item in found] == [
        (str(parent), None),
        *((agent, str(parent)) for agent in agents),
    ]


# -- many inputs into a folder -------------------------------------------------------------------


def test_many_inputs_each_into_the_folder(tmp_path: Path) -> None:
    a = write(tmp_path, "in/a.bbox", CLEAN)
    b = write(tmp_path, "in/b.bbox", DEMO.read_text(encoding="utf-8"))
    out = tmp_path / "out" / "deep"
    run = convert_paths([str(a), str(b)], to="jsonl", output=out, jobs=1)
    results = list(run)
    assert [done.path for done, _ in results] == [str(a), str(b)]
    assert [done.output for done, _ in results] == [out / "a.jsonl", out / "b.jsonl"]
    assert all(done.written for done, _ in results)
    assert (out / "a.jsonl").read_text(encoding="utf-8") == convert(CLEAN, "bbox", to="jsonl").text
    assert all(not any(s.text.startswith("wrote ") for s in said) for _, said in results)
    assert run.into == (out, "jsonl")
    assert run.summary() == (Said(f"2 file(s) converted to {out} (jsonl)"),)
    assert run.exit_code == 0


def test_a_run_counts_what_was_refused_and_what_failed(tmp_path: Path) -> None:
    good = write(tmp_path, "in/good.bbox", CLEAN)
    bad = write(tmp_path, "in/bad.bbox", NOT_UTF8)
    missing = tmp_path / "in" / "missing.bbox"
    out = tmp_path / "out"
    run = convert_paths([str(good), str(bad), str(missing)], to="jsonl", output=out, jobs=1)
    results = list(run)
    assert [done.written for done, _ in results] == [True, False, False]
    assert results[1][0].refused and results[2][0].error is not None
    assert run.counts == {"written": 1, "refused": 1, "failed": 1}
    assert run.summary() == (
        Said(f"1 file(s) converted to {out} (jsonl), 1 not written (errors), 1 could not be converted"),
    )
    assert run.exit_code == 2
    assert sorted(p.name for p in out.iterdir()) == ["good.jsonl"]


def test_the_run_s_exit_code_is_the_highest(tmp_path: Path) -> None:
    good = write(tmp_path, "in/good.bbox", CLEAN)
    bad = write(tmp_path, "in/bad.bbox", NOT_UTF8)
    run = convert_paths([str(bad), str(good)], to="jsonl", output=tmp_path / "out", jobs=1)
    list(run)
    assert run.exit_code == 1
    assert run.summary() == (
        Said(f"1 file(s) converted to {tmp_path / 'out'} (jsonl), 1 not written (errors)"),
    )


def test_said_options_reach_each_result(tmp_path: Path) -> None:
    bad = write(tmp_path, "in/bad.bbox", NOT_UTF8)
    other = write(tmp_path, "in/other.bbox", NOT_UTF8)
    run = convert_paths([str(bad), str(other)], to="bbox", output=tmp_path / "out", force=True, jobs=1)
    (first, said), _ = list(run)
    assert first.written
    assert said == (Said(f"{bad}: 1 error(s); written anyway (--force)", "!"),)


def test_quiet_drops_the_losses(tmp_path: Path) -> None:
    demo = write(tmp_path, "in/demo.bbox", DEMO.read_text(encoding="utf-8"))
    other = write(tmp_path, "in/other.bbox", CLEAN)
    loud = [said for _, said in convert_paths([str(demo), str(other)], to="atif", output=tmp_path / "o1")]
    quiet = [
        said
        for _, said in convert_paths([str(demo), str(other)], to="atif", output=tmp_path / "o2", quiet=True)
    ]
    assert loud[0] and quiet[0] == ()


def test_an_output_name_taken_already_is_that_input_s_error(tmp_path: Path) -> None:
    a = write(tmp_path, "one/a.bbox", CLEAN)
    b = write(tmp_path, "two/a.bbox", CLEAN)
    out = tmp_path / "out"
    results = list(
        convert_files([FoundInput(str(a), Settings()), FoundInput(str(b), Settings())], out, to="jsonl")
    )
    assert results[0].written
    assert results[1] == Converted(
        str(b), error=f"{b}: its output {out / 'a.jsonl'} is {a}'s already; not converted"
    )


def test_standard_input_and_problems_are_errors_of_their_own(tmp_path: Path) -> None:
    out = tmp_path / "out"
    items = [FoundInput("-", Settings()), FoundInput("x", Settings(), problem="x: no such file")]
    assert list(convert_files(items, out, to="jsonl")) == [
        Converted("-", error="-: standard input is one input; convert it alone"),
        Converted("x", error="x: no such file"),
    ]


def test_a_folder_that_cannot_be_made_is_a_usage_error(tmp_path: Path) -> None:
    blocker = write(tmp_path, "file", "x")
    with pytest.raises(ConvertUsageError) as raised:
        next(iter(convert_files([], blocker / "out", to="jsonl")))
    assert str(raised.value).startswith(f"{blocker / 'out'}: cannot write: ")
    with pytest.raises(ConvertUsageError) as raised:
        next(iter(convert_files([], blocker, to="jsonl")))
    assert str(raised.value).startswith(f"{blocker}: cannot write: ")


def test_convert_files_passes_its_options_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = write(tmp_path, "in/a.bbox", NOT_UTF8)
    seen: list[tuple[Any, ...]] = []
    real = many._convert_one

    def recording(*args: Any) -> Converted:
        seen.append(args)
        return real(*args)

    monkeypatch.setattr(many, "_convert_one", recording)
    out = tmp_path / "out"
    options = {"keep_secrets": True}
    (done,) = convert_files(
        [FoundInput(str(a), Settings())],
        out,
        to="bbox",
        from_="bbox",
        force=True,
        max_line=99,
        options=options,
    )
    assert seen == [(str(a), out / "a.bbox", "bbox", "bbox", True, 99, options)]
    assert done.written


def test_a_worker_that_died_is_that_input_s_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = write(tmp_path, "in/a.bbox", CLEAN)
    seen: dict[str, Any] = {}

    def recording(items: Any, far: Any, here: Any, failed: Any, **kwargs: Any) -> Any:
        seen.update(kwargs, far=far, failed=failed, items=list(items))
        return iter(())

    monkeypatch.setattr("bbox_lark.files.runner.run_each", recording)
    out = tmp_path / "out"
    list(
        convert_files(
            [FoundInput(str(a), Settings()), FoundInput("-", Settings())], out, to="jsonl", jobs="2"
        )
    )
    entry, stdin = seen["items"]
    assert entry == (str(a), out / "a.jsonl")
    assert seen["jobs"] == 2 and seen["progress"] is None
    assert seen["size"](entry) == len(CLEAN) and seen["size"](stdin) == 0
    assert seen["far"](stdin) is None
    assert seen["far"](entry) == (
        _convert_one,
        (str(a), out / "a.jsonl", "jsonl", None, False, DEFAULT_MAX_LINE, {}),
    )
    died = seen["failed"](entry, RuntimeError("gone"))
    assert died.path == str(a) and died.output == out / "a.jsonl"
    assert died.error is not None and died.error.startswith(f"{a}: internal error (RuntimeError")


def test_one_input_s_usage_error_or_bug_is_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "missing.bbox"
    target = tmp_path / "out.jsonl"
    done = _convert_one(str(missing), target, "jsonl", None, False, 1000, {})
    assert done.path == str(missing) and done.output == target
    assert done.error is not None and str(missing) in done.error

    def broken(*args: object, **kwargs: object) -> Converted:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(many, "convert_file", broken)
    done = _convert_one("a.bbox", target, "jsonl", None, False, 1000, {})
    assert done.error is not None and done.error.startswith("a.bbox: internal error (ZeroDivisionError")
    assert done.output == target and done.path == "a.bbox"


def test_one_input_of_many_writes_nothing_to_standard_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(tmp_path, "a.bbox", CLEAN)
    done = _convert_one(str(a), tmp_path / "a.jsonl", "jsonl", None, False, 1000, {})
    assert done.written and capsys.readouterr().out == ""


@pytest.mark.parametrize(("given", "jobs"), [(None, None), (2, 2), ("3", 3), ("auto", "auto")])
def test_jobs(given: int | str | None, jobs: object) -> None:
    assert _jobs(given) == jobs


@pytest.mark.parametrize("given", ["x", 0, "0", "-1"])
def test_bad_jobs_are_a_usage_error(given: int | str) -> None:
    with pytest.raises(ConvertUsageError) as raised:
        _jobs(given)
    assert str(raised.value).startswith('--jobs: must be a positive integer or "auto", not ')


# -- the command's usage errors -----------------------------------------------------------------


def test_many_inputs_need_a_folder_a_format_and_no_report(tmp_path: Path) -> None:
    a = write(tmp_path, "a.bbox", CLEAN)
    paths = [str(a), str(a)]
    cases = [
        (
            {"to": "jsonl", "output": tmp_path / "o", "report": True},
            "--report and --report-json describe one",
        ),
        (
            {"to": "jsonl", "output": tmp_path / "o", "report_json": tmp_path / "r"},
            "--report and --report-json",
        ),
        ({"to": "jsonl"}, "several inputs convert into a folder: give -o DIR"),
        ({"to": "jsonl", "output": Path("-")}, "several inputs convert into a folder: give -o DIR"),
        ({"output": tmp_path / "o"}, "give --to FORMAT (one of: "),
    ]
    for options, message in cases:
        with pytest.raises(ConvertUsageError) as raised:
            convert_paths(paths, **options)
        assert str(raised.value).startswith(message), options


# -- one input -----------------------------------------------------------------------------------


def test_one_input_to_standard_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = write(tmp_path, "a.bbox", CLEAN)
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", stdout)
    run = convert_paths([str(a)], to="jsonl", output=Path("-"))
    ((done, said),) = list(run)
    stdout.flush()
    assert done.output is None and said == ()
    assert stdout.buffer.getvalue() == convert(CLEAN, "bbox", to="jsonl").text.encode()  # type: ignore[attr-defined]
    assert run.into is None and run.summary() == ()


def test_one_input_to_a_file_named_for_its_format(tmp_path: Path) -> None:
    a = write(tmp_path, "a.bbox", CLEAN)
    out = tmp_path / "o.jsonl"
    ((done, said),) = list(convert_paths([str(a)], output=out, max_line=4096, force=False))
    assert done.target == "jsonl" and done.written
    assert said == (Said(f"wrote {out} (bbox → jsonl)"),)


def test_one_input_passes_its_options_on(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.bbox", NOT_UTF8)
    out = tmp_path / "o.bbox"
    ((done, _),) = list(convert_paths([str(bad)], to="bbox", from_="bbox", output=out, force=True))
    assert done.written and out.read_bytes() == NOT_UTF8
    key = "AKIA" + "Q3EGRAVE7EXAMPLE"
    secret = write(tmp_path, "key.bbox", HEADER + f"a: {key}\n")
    ((done, _),) = list(convert_paths([str(secret)], to="bbox", output=out, options={"redact": True}))
    assert done.written and key not in out.read_text(encoding="utf-8")
    long = write(tmp_path, "long.bbox", HEADER + "a: " + "x" * 200 + "\n")
    ((done, _),) = list(convert_paths([str(long)], to="bbox", output=tmp_path / "l.bbox", max_line=100))
    assert done.refused


def test_one_input_s_report_is_written_unless_refused(tmp_path: Path) -> None:
    a = write(tmp_path, "a.bbox", DEMO.read_text(encoding="utf-8"))
    report = tmp_path / "r.json"
    ((done, said),) = list(convert_paths([str(a)], to="atif", output=tmp_path / "a.json", report_json=report))
    assert json.loads(report.read_text(encoding="utf-8")) == done.report_data and done.report_error is None
    bad = write(tmp_path, "bad.bbox", NOT_UTF8)
    report.unlink()
    ((done, _),) = list(convert_paths([str(bad)], to="bbox", output=tmp_path / "b.bbox", report_json=report))
    assert done.refused and not report.exists()
    ((done, said),) = list(
        convert_paths([str(a)], to="atif", output=tmp_path / "c.json", report_json=Path("-"))
    )
    assert not (tmp_path / "-").exists()
    assert Said(json.dumps(done.report_data, indent=2)) in said


def test_one_input_s_report_that_fails_is_its_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = write(tmp_path, "a.bbox", DEMO.read_text(encoding="utf-8"))
    monkeypatch.setattr(many, "write_report", lambda done, path: f"{path}: cannot write: full")
    report = tmp_path / "r.json"
    run = convert_paths([str(a)], to="atif", output=tmp_path / "a.json", report_json=report)
    ((done, said),) = list(run)
    assert done.report_error == f"{report}: cannot write: full"
    assert said[-1] == Said(f"{report}: cannot write: full", "error")
    assert run.exit_code == 2


def test_a_run_of_results_given() -> None:
    results = [
        Converted("a", Path("o")),
        Converted("b", error="b: gone"),
        Converted("c", secrets_refused=True),
    ]
    run = ConvertRun(results, {"quiet": True}, into=(Path("out"), "bbox"))
    assert [said for _, said in run] == [
        (),
        (Said("b: gone", "error"),),
        (
            Said(
                "c: holds provider credentials (S001); not written (--redact replaces them, --keep-secrets"
                " writes them as they are)",
                "refused",
            ),
        ),
    ]
    assert run.counts == {"written": 1, "refused": 1, "failed": 1} and run.exit_code == 2
    one = ConvertRun([Converted("a", Path("o"), source="bbox", target="jsonl", notes=Notes())], {})
    assert [said for _, said in one] == [(Said("wrote o (bbox → jsonl)"),)]


# -- what a many-file run passes on ----------------------------------------------------------------


def test_many_inputs_read_in_the_format_given(tmp_path: Path) -> None:
    text = HEADER + "u:hi ⏎ there\n"  # compact by its content
    a = write(tmp_path, "in/a.txt", text)
    b = write(tmp_path, "in/b.txt", text)
    out = tmp_path / "out"
    results = list(convert_paths([str(a), str(b)], to="jsonl", from_="bbox", output=out, jobs=1))
    assert all(done.source == "bbox" for done, _ in results)
    assert (out / "a.jsonl").read_text(encoding="utf-8") == convert(text, "bbox", to="jsonl").text


def test_many_inputs_keep_to_the_longest_line(tmp_path: Path) -> None:
    long = HEADER + "a: " + "x" * 300 + "\n"
    a = write(tmp_path, "in/a.bbox", long)
    b = write(tmp_path, "in/b.bbox", CLEAN)
    results = list(convert_paths([str(a), str(b)], to="jsonl", output=tmp_path / "out", max_line=100, jobs=1))
    assert [done.refused for done, _ in results] == [True, False]


def test_many_inputs_take_the_options(tmp_path: Path) -> None:
    key = "AKIA" + "Q3EGRAVE7EXAMPLE"
    a = write(tmp_path, "in/a.bbox", HEADER + f"a: {key}\n")
    b = write(tmp_path, "in/b.bbox", CLEAN)
    refused = list(convert_paths([str(a), str(b)], to="jsonl", output=tmp_path / "o1", jobs=1))
    assert refused[0][0].secrets_refused
    kept = list(
        convert_paths(
            [str(a), str(b)], to="jsonl", output=tmp_path / "o2", jobs=1, options={"keep_secrets": True}
        )
    )
    assert kept[0][0].written and key in (tmp_path / "o2" / "a.jsonl").read_text(encoding="utf-8")


def test_many_inputs_with_bad_jobs_are_a_usage_error(tmp_path: Path) -> None:
    a = write(tmp_path, "in/a.bbox", CLEAN)
    with pytest.raises(ConvertUsageError, match="--jobs"):
        list(convert_paths([str(a), str(a)], to="jsonl", output=tmp_path / "out", jobs="x"))


def test_a_format_given_decides_what_is_many(tmp_path: Path) -> None:
    run = trajectories(tmp_path, "one", "two")
    other = write(tmp_path, "x.bbox", CLEAN)
    one = convert_paths([str(run)], to="bbox", from_="jsonl", output=tmp_path / "one.bbox")
    assert one.into is None  # one input, read as jsonl: not a trajectory each
    found = convert_inputs([str(run), str(other)], "jsonl")
    assert [item.path for item in found] == [str(run), str(other)]  # not a trajectory each
    folder = convert_inputs([str(LIGHTBOX)], "bbox")  # bbox reads no folder: searched
    assert [item.problem is not None for item in folder] == [True]


def test_the_folder_may_exist(tmp_path: Path) -> None:
    a = write(tmp_path, "in/a.bbox", CLEAN)
    out = tmp_path / "out"
    out.mkdir()
    (done,) = convert_files([FoundInput(str(a), Settings())], out, to="jsonl")
    assert done.written


def test_the_inputs_after_one_in_error_are_converted(tmp_path: Path) -> None:
    a = write(tmp_path, "in/a.bbox", CLEAN)
    out = tmp_path / "out"
    results = list(
        convert_files([FoundInput("-", Settings()), FoundInput(str(a), Settings())], out, to="jsonl")
    )
    assert [r.error is None for r in results] == [False, True] and results[1].written


def test_convert_files_reports_progress(tmp_path: Path) -> None:
    a = write(tmp_path, "in/a.bbox", CLEAN)
    b = write(tmp_path, "in/b.bbox", CLEAN)
    ticks: list[tuple[int, int]] = []
    items = [FoundInput(str(a), Settings()), FoundInput(str(b), Settings())]
    list(
        convert_files(items, tmp_path / "out", to="jsonl", jobs=1, progress=lambda d, t: ticks.append((d, t)))
    )
    assert ticks == [(1, 2), (2, 2)]


def test_one_input_s_report_folder_is_checked_before_converting(tmp_path: Path) -> None:
    a = write(tmp_path, "a.bbox", DEMO.read_text(encoding="utf-8"))
    out = tmp_path / "a.json"
    with pytest.raises(ConvertUsageError):
        list(convert_paths([str(a)], to="atif", output=out, report_json=tmp_path / "missing" / "r.json"))
    assert not out.exists()


def test_one_input_s_report_on_standard_error_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    a = write(tmp_path, "a.bbox", DEMO.read_text(encoding="utf-8"))
    ((done, _),) = list(convert_paths([str(a)], to="atif", output=tmp_path / "c.json", report_json=Path("-")))
    assert not (tmp_path / "-").exists() and done.report_error is None


def test_one_input_is_read_in_the_format_given(tmp_path: Path) -> None:
    text = HEADER + "u:hi ⏎ there\n"
    a = write(tmp_path, "a.txt", text)
    ((done, _),) = list(convert_paths([str(a)], to="jsonl", from_="bbox", output=tmp_path / "a.jsonl"))
    assert done.source == "bbox"


def test_an_address_is_the_last_hash_and_its_line() -> None:
    assert output_name("a#b.jsonl#3", "bbox") == "a#b-3.bbox"


def test_the_longest_known_ending_goes_whatever_its_case(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    import bbox_lark.convert as convert_module
    from bbox_lark.convert import get_format

    registry = dict(convert_module._registry())
    registry["chat"] = replace(get_format("bb7"), name="chat", extensions=(".chat.json",))
    monkeypatch.setattr(convert_module, "_REGISTRY", registry)
    assert output_name("a.chat.json", "bbox") == "a.bbox"  # not a.chat.bbox: .chat.json before .json
    assert output_name("A.CHAT.JSON", "bbox") == "A.bbox"


def test_the_inputs_after_a_name_taken_are_converted(tmp_path: Path) -> None:
    a = write(tmp_path, "one/a.bbox", CLEAN)
    a2 = write(tmp_path, "two/a.bbox", CLEAN)
    b = write(tmp_path, "one/b.bbox", CLEAN)
    items = [FoundInput(str(p), Settings()) for p in (a, a2, b)]
    results = list(convert_files(items, tmp_path / "out", to="jsonl"))
    assert [r.written for r in results] == [True, False, True]


def test_a_many_run_finds_its_inputs_in_the_format_given(tmp_path: Path) -> None:
    run = trajectories(tmp_path, "one", "two")
    other = write(tmp_path, "x.bbox", CLEAN)
    every = list(convert_paths([str(run), str(other)], to="bbox", output=tmp_path / "o1", jobs=1))
    assert [done.path for done, _ in every] == [f"{run}#1", f"{run}#2", str(other)]
    given = list(
        convert_paths([str(run), str(other)], to="bbox", from_="jsonl", output=tmp_path / "o2", jobs=1)
    )
    assert [done.path for done, _ in given] == [str(run), str(other)]
