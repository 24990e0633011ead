"""The whole-run workflow of ``check`` (``bbox_lark/checks/workflow.py``): what mutation testing
showed no test pinned (docs/testing.md, "Mutation scores"). Each test names the behaviour it
guards: the internal-error finding, the exit codes, the source lines shown with a finding,
standard input read as a stream, the per-file settings, the loop of the writing commands
and ``parse``."""

from __future__ import annotations

import io
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import bbox_lark
from bbox_lark.checks import parallel, workflow
from bbox_lark.checks.workflow import (
    FileReport,
    InputRead,
    Parsed,
    check_input,
    check_inputs,
    check_paths,
    fails,
    in_header,
    internal_error,
    parse_path,
    read_inputs,
    run_exit_code,
    stdin_streams,
    stream_input,
    write_file,
)
from bbox_lark.errors import ConfigError
from bbox_lark.files.config import Settings
from bbox_lark.files.discover import FoundInput
from bbox_lark.files.inputs import InputError
from bbox_lark.syntax.nodes import Diagnostic

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"
#: W003 on lines 7 and 9, I002 on line 8.
BODY = "bogus line\n@start\nx\n"


def _d(code: str, severity: str, line: int = 1) -> Diagnostic:
    return Diagnostic(code, severity, line, 1, "m", "n")


# -- the internal-error finding -------------------------------------------------------------


def test_an_internal_error_names_the_exception_its_place_and_asks_for_a_report() -> None:
    try:
        raise ValueError("boom")
    except ValueError as error:
        found = internal_error(error, 3, 4)
    line = sys._getframe().f_lineno - 3  # the raise
    assert found == Diagnostic(
        "E016",
        "error",
        3,
        4,
        f"internal error (ValueError at test_mutants_checks_workflow.py:{line}: boom); the file was not"
        " fully checked. Please report this bug with the file",
        "internal-error",
    )


def test_an_internal_error_never_raised_has_no_place_and_defaults_to_line_one() -> None:
    found = internal_error(KeyError())
    assert (found.line, found.col) == (1, 1)
    assert found.message.startswith("internal error (KeyError); the file")
    long = internal_error(RuntimeError("x" * 300))
    assert "(RuntimeError: " + "x" * 200 + ");" in long.message


# -- what fails a run, and its exit code ------------------------------------------------


def test_errors_always_fail_warnings_only_when_strict_infos_never() -> None:
    assert fails([_d("E001", "error")], strict=False) is True
    assert fails([_d("W001", "warning")], strict=False) is False
    assert fails([_d("W001", "warning")], strict=True) is True
    assert fails([_d("I001", "info")], strict=True) is False
    assert fails([], strict=True) is False


def test_a_reports_exit_code() -> None:
    warning = FileReport("a", (_d("W003", "warning"),))
    assert warning.exit_code() == 0 and warning.exit_code(strict=True) == 1
    strict = FileReport("a", (_d("W003", "warning"),), strict=True)
    assert strict.exit_code() == 1 and strict.exit_code(strict=False) == 0
    assert FileReport("a", (_d("E001", "error"),)).exit_code() == 1
    unread = FileReport("a", error="a: gone")
    assert unread.exit_code() == 2 and not unread.readable and FileReport("a").readable
    crashed = FileReport("a", (_d("E016", "error"),))
    assert (
        crashed.crashed and crashed.exit_code() == 2 and not FileReport("a", (_d("E001", "error"),)).crashed
    )


def test_the_runs_exit_code_is_the_highest_of_its_files() -> None:
    reports = [FileReport("a"), FileReport("b", (_d("E001", "error"),)), FileReport("c")]
    assert run_exit_code(reports) == 1
    assert run_exit_code([*reports, FileReport("d", error="d: gone")]) == 2
    assert run_exit_code([FileReport("a", (_d("W003", "warning"),))], strict=True) == 1
    assert run_exit_code([FileReport("a", (_d("W003", "warning"),))]) == 0
    assert run_exit_code([]) == 0


def test_standard_input_is_shown_by_name() -> None:
    assert FileReport("-").shown == "<stdin>"
    assert FileReport("a.bbox").shown == "a.bbox"


# -- the source lines shown with the findings -------------------------------------------------


def test_source_lines_from_the_text_without_bom_or_ending() -> None:
    report = FileReport("-", text="\ufefffirst\r\nsecond\nthird\nfourth")
    assert report.source([1, 2, 4, 9]) == {1: "first", 2: "second", 4: "fourth"}
    assert report.source([]) == {}
    # Only the first line loses a BOM.
    assert FileReport("-", text="a\n\ufeffb\n").source([2]) == {2: "\ufeffb"}


def test_source_lines_from_the_lines_kept() -> None:
    report = FileReport("-", lines={3: "three", 5: "five"})
    assert report.source([3, 4]) == {3: "three"}


def test_source_lines_read_again_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\nth\xffree\nfour")
    report = FileReport(str(path))
    assert report.source([1, 3, 4]) == {1: "one", 3: "th\udcffree", 4: "four"}
    assert report.source([2, 7]) == {2: "two"}
    assert FileReport(str(tmp_path / "gone.bbox")).source([1]) == {}
    assert FileReport("-").source([1]) == {}  # standard input, nothing kept


def test_source_lines_stop_reading_at_the_last_wanted_line() -> None:
    read: list[int] = []

    class Lines:
        def __iter__(self):  # type: ignore[no-untyped-def]
            for n in range(1, 100):
                read.append(n)
                yield f"line {n}\n"

    assert workflow._pick_lines(Lines(), {2, 3}) == {2: "line 2", 3: "line 3"}
    assert read == [1, 2, 3, 4]
    assert workflow._pick_lines(Lines(), set()) == {}
    assert read == [1, 2, 3, 4]  # nothing read when nothing is wanted


def test_a_line_loses_its_ending_and_the_first_line_its_bom() -> None:
    assert workflow._line_text(b"\xef\xbb\xbfa\r\n", 1) == "a"
    assert workflow._line_text(b"\xef\xbb\xbfa\n", 2) == "\ufeffa"
    assert workflow._line_text(b"a\r", 2) == "a\r"
    assert workflow._line_text(b"a", 2) == "a"
    assert workflow._line_text(b"a\n\n", 2) == "a\n"


# -- standard input ---------------------------------------------------------------------


class _Stdin:
    def __init__(self, buffer: object) -> None:
        self.buffer = buffer


class _Pipe(io.BytesIO):
    def seekable(self) -> bool:
        return False


def test_standard_input_streams_when_it_is_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(_Pipe(b"")))
    assert stdin_streams() is True
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(b"")))
    assert stdin_streams() is False
    monkeypatch.setattr(sys, "stdin", object())  # no buffer at all
    assert stdin_streams() is False


def test_standard_input_streamed_reports_each_finding_then_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEAD + BODY
    monkeypatch.setattr(sys, "stdin", _Stdin(_Pipe(text.encode())))
    settings = Settings(strict=True)
    reports = list(stream_input("-", settings=settings))
    *partial, whole = reports
    expected = bbox_lark.check(text)
    # In the order they become known: the I002 at the end of the input.
    assert [r.diagnostics for r in partial] == [(expected[0],), (expected[2],), (expected[1],)]
    for report in partial:
        [d] = report.diagnostics
        assert report.partial and report.strict and report.path == "-"
        assert report.lines is not None and report.lines[d.line] == text.splitlines()[d.line - 1]
    assert not whole.partial and whole.strict
    assert whole.diagnostics == tuple(expected)
    assert whole.lines == {7: "bogus line", 8: "@start", 9: "x"}


def test_standard_input_not_streamed_gives_one_report(monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEAD + BODY
    monkeypatch.setattr(sys, "stdin", _Stdin(_Pipe(text.encode())))
    [report] = stream_input("-", stream=False, ignore=("I",))
    assert [d.code for d in report.diagnostics] == ["W003", "W003"]
    assert report.lines == {7: "bogus line", 9: "x"} and not report.partial and not report.strict


def test_a_clean_standard_input_keeps_no_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(_Pipe((HEAD + "u: hi\n").encode())))
    [report] = stream_input("-")
    assert report.diagnostics == () and report.lines is None


def test_standard_input_findings_past_the_recent_lines_are_shown_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With room for a few lines only, a finding reported after its line has left the recent
    # lines is held, with every later one, and shown from the spool at the end.
    monkeypatch.setattr(workflow._Tee, "BUDGET", 40)
    filler = "".join(f"u: filler line {n}\n" for n in range(10))
    text = HEAD + "t!:Read id=a → [running]\n" + filler + "bogus\n"  # W025 found at the end
    monkeypatch.setattr(sys, "stdin", _Stdin(_Pipe(text.encode())))
    reports = list(stream_input("-"))
    *partial, whole = reports
    lines = text.splitlines()
    assert partial and all(r.partial for r in partial)
    for report in partial:
        for d in report.diagnostics:
            assert report.lines is not None and report.lines[d.line] == lines[d.line - 1]
    assert {d for r in partial for d in r.diagnostics} == set(whole.diagnostics)
    assert sum(len(r.diagnostics) for r in partial) == len(whole.diagnostics) > 1
    assert whole.lines == {d.line: lines[d.line - 1] for d in whole.diagnostics}


def test_the_tee_keeps_the_recent_lines_within_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workflow._Tee, "BUDGET", 10)
    tee = workflow._Tee(io.BytesIO(b"aaaa\nbbbb\ncccc\ndddddddddddddddd\n"))
    try:
        assert list(tee) == [b"aaaa\n", b"bbbb\n", b"cccc\n", b"dddddddddddddddd\n"]
        assert tee.line(4) == "dddddddddddddddd" and tee.line(3) is None and tee.line(1) is None
        assert tee.lines({1, 3}) == {1: "aaaa", 3: "cccc"}
    finally:
        tee.close()
    tee = workflow._Tee(io.BytesIO(b"aaaa\nbbbb\ncc\n"))
    assert list(tee) and tee.line(2) == "bbbb" and tee.line(3) == "cc" and tee.line(1) is None
    tee.close()


def test_a_pipes_lines_come_one_at_a_time() -> None:
    assert list(workflow._lines_of(io.BytesIO(b"a\nb\n\nc"))) == [b"a\n", b"b\n", b"\n", b"c"]


# -- one input, with its settings ---------------------------------------------------------


def test_check_input_applies_the_settings_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEAD + BODY + "x" * 50 + "\n", encoding="utf-8")
    plain = check_input(str(path))
    assert [d.code for d in plain.diagnostics] == ["W003", "I002", "W003", "W003"]
    assert not plain.strict and plain.lines is None and plain.text is None
    settings = Settings(select=("W", "E"), strict=True, max_line=20)
    report = check_input(str(path), settings=settings, select=("I",))  # the settings win
    assert report.strict
    assert [d.code for d in report.diagnostics] == ["W003", "W003", "E003"]  # the long line: E003
    assert [d.code for d in check_input(str(path), ignore=("W",)).diagnostics] == ["I002"]
    assert [d.code for d in check_input(str(path), select=("I",)).diagnostics] == ["I002"]
    assert "E003" in {d.code for d in check_input(str(path), max_line=20).diagnostics}


def test_an_input_that_cannot_be_read_is_reported_with_its_settings_strictness(tmp_path: Path) -> None:
    gone = str(tmp_path / "gone.bbox")
    report = check_input(gone, settings=Settings(strict=True))
    assert report.error is not None and gone in report.error and report.strict
    assert report.diagnostics == () and report.path == gone


def test_a_bug_while_checking_is_an_internal_error_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bbox_lark.api

    path = tmp_path / "a.bbox"
    path.write_text(HEAD + BODY, encoding="utf-8")

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("broken rule")

    monkeypatch.setattr(bbox_lark.api, "run", broken)
    report = check_input(str(path), settings=Settings(strict=True))
    [found] = report.diagnostics
    assert found.code == "E016" and "RuntimeError" in found.message and report.strict
    assert report.exit_code() == 2


def test_a_read_failure_midway_is_an_unreadable_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bbox_lark.api

    path = tmp_path / "a.bbox"
    path.write_text(HEAD + BODY, encoding="utf-8")

    def failing(*args: object, **kwargs: object) -> object:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(bbox_lark.api, "run", failing)
    [report] = stream_input(str(path), settings=Settings(strict=True))
    assert report.error == f"{path}: cannot read: Input/output error" and report.strict
    assert report.path == str(path)


# -- many inputs --------------------------------------------------------------------------


def test_check_paths_upper_cases_the_codes_and_applies_the_line_limit(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEAD + BODY + "x" * 50 + "\n", encoding="utf-8")
    [report] = check_paths([str(path)], select=["w,i"], jobs=1)
    assert [d.code for d in report.diagnostics] == ["W003", "I002", "W003", "W003"]
    [report] = check_paths([str(path)], ignore=["i"], max_line=20, jobs=1)
    assert [d.code for d in report.diagnostics] == ["W003", "W003", "E003"]
    [report] = check_paths([str(path)], select=["i002"], jobs=1)
    assert [d.code for d in report.diagnostics] == ["I002"]


def test_check_paths_reads_no_configuration_without_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bbox-lark.toml").write_text('select = ["I"]\nstrict = true\n', encoding="utf-8")
    path = tmp_path / "a.bbox"
    path.write_text(HEAD + BODY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    [report] = check_paths(["a.bbox"])
    assert [d.code for d in report.diagnostics] == ["W003", "I002", "W003"] and not report.strict


def test_check_inputs_reports_each_problem_and_file_in_order(tmp_path: Path) -> None:
    good = tmp_path / "a.bbox"
    good.write_text(HEAD + BODY, encoding="utf-8")
    items = [
        FoundInput(str(tmp_path / "x"), Settings(strict=True), problem="x: no such file"),
        FoundInput(str(good), Settings(ignore=("I",))),
    ]
    first, second = check_inputs(items, jobs=1)
    assert first == FileReport(str(tmp_path / "x"), error="x: no such file", strict=True)
    assert [d.code for d in second.diagnostics] == ["W003", "W003"]


def _large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> FoundInput:
    monkeypatch.setattr(parallel, "SPLIT_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "PART_BYTES", 100)
    path = tmp_path / "big.bbox"
    path.write_text(text, encoding="utf-8")
    return FoundInput(str(path), Settings(strict=True, ignore=("I002",)))


def test_a_large_file_is_checked_in_parts_with_its_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = HEAD + "".join(f"bogus {n}\nu: fine {n}\n" for n in range(30)) + "@start\n"
    item = _large(tmp_path, monkeypatch, text)
    planned: list[object] = []
    real = parallel.plan
    monkeypatch.setattr(parallel, "plan", lambda *a: planned.append(a) or real(*a))
    with ThreadPoolExecutor(2) as pool:
        report = workflow._check_large(item, None, pool, 1)
    assert planned == [(item.path, item.settings.max_line)]
    assert report.strict and report.path == item.path
    assert list(report.diagnostics) == bbox_lark.check(text, ignore=("I002",))
    assert len(report.diagnostics) == 30


def test_a_large_file_of_one_part_is_checked_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    item = _large(tmp_path, monkeypatch, HEAD + BODY)
    monkeypatch.setattr(parallel, "check_split", lambda *a: pytest.fail("split"))
    with ThreadPoolExecutor(2) as pool:
        report = workflow._check_large(item, None, pool, 1)
    assert [d.code for d in report.diagnostics] == ["W003", "W003"] and report.strict


def test_a_large_file_that_fails_is_reported_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = _large(tmp_path, monkeypatch, HEAD + "".join(f"bogus {n}\n" for n in range(40)))

    def unreadable(*args: object) -> object:
        raise OSError(5, "Input/output error")

    def broken(*args: object) -> object:
        raise RuntimeError("broken")

    with ThreadPoolExecutor(2) as pool:
        monkeypatch.setattr(parallel, "check_split", unreadable)
        report = workflow._check_large(item, None, pool, 1)
        assert report.error == f"{item.path}: cannot read: Input/output error"
        monkeypatch.setattr(parallel, "check_split", broken)
        report = workflow._check_large(item, None, pool, 1)
        assert [d.code for d in report.diagnostics] == ["E016"] and report.strict
        assert report.path == item.path


def test_check_inputs_with_workers_splits_a_large_file_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = HEAD + "".join(f"bogus {n}\nu: fine {n}\n" for n in range(30))
    item = _large(tmp_path, monkeypatch, text)
    small = tmp_path / "small.bbox"
    small.write_text(HEAD + BODY, encoding="utf-8")
    calls: list[str] = []
    real = workflow._check_large
    monkeypatch.setattr(workflow, "_check_large", lambda item, *a: calls.append(item.path) or real(item, *a))
    monkeypatch.setattr(parallel, "SPLIT_MIN_BYTES", len(text.encode()))  # the small file stays whole
    items = [FoundInput("-", Settings(), problem="-: nothing"), item, FoundInput(str(small), Settings())]
    problem, big, whole = check_inputs(items, jobs=2)
    assert calls == [item.path]
    assert problem.error == "-: nothing"
    assert list(big.diagnostics) == bbox_lark.check(text, ignore=("I002",)) and big.strict
    assert [d.code for d in whole.diagnostics] == ["W003", "I002", "W003"]


# -- the loop of the writing commands ---------------------------------------------------


def test_read_inputs_gives_each_inputs_bytes_or_why_not(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_bytes(b"data")
    items = [
        FoundInput("x", Settings(), problem="x: refused"),
        FoundInput(str(path), Settings()),
        FoundInput(str(tmp_path / "gone.bbox"), Settings()),
    ]
    refused, read, gone = read_inputs(items)
    assert (refused.error, refused.data) == ("x: refused", b"")
    assert (read.error, read.data, read.path) == (None, b"data", path)
    assert gone.error is not None and "gone.bbox" in gone.error and gone.data == b""
    assert InputRead(FoundInput("-", Settings())).path is None


def test_write_file_says_why_it_cannot_write(tmp_path: Path) -> None:
    target = tmp_path / "out.bbox"
    assert write_file(target, b"data") is None and target.read_bytes() == b"data"
    message = write_file(tmp_path / "no" / "such" / "out.bbox", b"x")
    assert message is not None and message.startswith(
        f"{tmp_path / 'no' / 'such' / 'out.bbox'}: cannot write: "
    )
    assert "None" not in message


# -- parse ------------------------------------------------------------------------------


def test_a_finding_belongs_to_the_header_by_its_line_or_its_family() -> None:
    document = bbox_lark.parse(HEAD + BODY)
    assert in_header(document, _d("W026", "warning", 6))
    assert not in_header(document, _d("W003", "warning", 7))
    bare = bbox_lark.parse("bogus\n")
    assert in_header(bare, _d("E004", "error", 1))  # a header check, no header at all
    assert not in_header(bare, _d("W003", "warning", 1))
    assert not in_header(bare, _d("X999", "error", 1))  # no such code


def test_parse_shows_the_findings_of_the_part_shown(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text("---\nformat: bbox/1\nid: s\nid: t\nrepo_sha: abc1234\nrunner: local\n---\nbogus\n")
    whole = parse_path(str(path)).json()
    assert [d["code"] for d in whole["diagnostics"]] == ["W026", "W003"] and whole["path"] == str(path)
    header = parse_path(str(path), header_only=True)
    assert (header.header, header.body) == (True, False)
    assert [d["code"] for d in header.json()["diagnostics"]] == ["W026"]
    body = parse_path(str(path), body_only=True)
    assert (body.header, body.body) == (False, True)
    assert [d["code"] for d in body.json()["diagnostics"]] == ["W003"]
    assert body.exit_code == 0 and body.said == ()


def test_parse_says_how_many_errors_and_exits_one(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text("bogus\n", encoding="utf-8")
    parsed = parse_path(str(path))
    assert parsed.exit_code == 1
    assert [s.text for s in parsed.said] == [f"{path}: 1 error(s); `bbox-lark check` lists them"]
    assert isinstance(parsed, Parsed)


def test_parse_refuses_bad_options_and_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEAD + "x" * 50 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="exclude each other"):
        parse_path(str(path), header_only=True, body_only=True)
    with pytest.raises(ConfigError):
        parse_path(str(path), max_line=0)
    with pytest.raises(InputError, match="is a directory"):
        parse_path(str(tmp_path))
    codes = [d["code"] for d in parse_path(str(path), max_line=20).json()["diagnostics"]]
    assert "E003" in codes and "E003" not in [d["code"] for d in parse_path(str(path)).json()["diagnostics"]]
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(b"bogus\n")))
    stdin = parse_path("-")
    assert stdin.shown == "<stdin>" and stdin.exit_code == 1


def test_an_internal_errors_detail_loses_only_a_trailing_colon() -> None:
    assert internal_error(ValueError("TAX")).message.startswith("internal error (ValueError: TAX);")
    assert internal_error(ValueError("")).message.startswith("internal error (ValueError);")


def test_cannot_write_says_why_in_words() -> None:
    assert (
        workflow.cannot_write("o.bbox", OSError(13, "Permission denied"))
        == "o.bbox: cannot write: Permission denied"
    )
    assert workflow.cannot_write("o.bbox", OSError("disk gone")) == "o.bbox: cannot write: disk gone"


def test_parse_json_holds_the_parts_shown(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEAD + "u: hi\n", encoding="utf-8")
    whole = parse_path(str(path)).json()
    assert list(whole) == ["path", "version", "header", "bom", "body", "diagnostics"]
    assert whole["header"]["fields"]["id"] == "s" and whole["body"][0]["kind"] == "user"
    assert list(parse_path(str(path), header_only=True).json()) == [
        "path",
        "version",
        "header",
        "bom",
        "diagnostics",
    ]
    assert list(parse_path(str(path), body_only=True).json()) == ["path", "version", "body", "diagnostics"]


def test_a_file_checked_in_a_worker_uses_its_settings_and_blob_folder(tmp_path: Path) -> None:
    # What a worker process runs for each small file (run here, where mutation testing sees it).
    sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    path = tmp_path / "a.bbox"
    path.write_text(HEAD + BODY + f"t:read a.rs → @blob sha256={sha} bytes=4\n", encoding="utf-8")
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    report = workflow._check_file(str(path), blobs, Settings(ignore=("I",), strict=True))
    assert report.path == str(path) and report.strict
    assert [d.code for d in report.diagnostics] == ["W003", "W003", "E013"]
    (blobs / sha).write_bytes(b"test")
    assert [d.code for d in workflow._check_file(str(path), blobs, Settings()).diagnostics] == [
        "W003",
        "I002",
        "W003",
    ]


SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"  # of b"test"


def test_a_large_file_in_parts_gets_every_setting_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bbox_lark.files.config import PerFileIgnore
    from bbox_lark.files.globs import Glob

    key = "AKIAFAKE0123456789AB"
    body = "".join(
        f"bogus {n}\nu: key={key}\nt:read a.rs → @blob sha256={SHA} bytes=4\nu: {'x' * 60}\n# note {n}\n"
        for n in range(8)
    )
    monkeypatch.setattr(parallel, "SPLIT_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "PART_BYTES", 100)
    path = tmp_path / "big.bbox"
    body += "@start\n"  # I002, not selected
    path.write_text(HEAD + body, encoding="utf-8")
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    settings = Settings(
        select=("W", "E", "S"),
        max_line=40,
        allowed_secrets=(key,),
        per_file_ignores=(PerFileIgnore(Glob("big.bbox", tmp_path), ("W003",)),),
    )
    item = FoundInput(str(path), settings)
    with ThreadPoolExecutor(2) as pool:
        report = workflow._check_large(item, blobs, pool, 1)
    expected = bbox_lark.check(
        HEAD + body,
        blobs=blobs,
        select=("W", "E", "S"),
        ignore=("W003",),
        max_line=40,
        allowed_secrets=(key,),
    )
    assert list(report.diagnostics) == expected
    assert [d.code for d in expected] == ["E013", "E003", "E003"] * 8
    # The same settings when the file is one part only (checked whole).
    monkeypatch.setattr(parallel, "PART_BYTES", 1 << 20)
    with ThreadPoolExecutor(2) as pool:
        assert list(workflow._check_large(item, blobs, pool, 1).diagnostics) == expected


def test_an_unreadable_large_file_keeps_its_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    item = _large(tmp_path, monkeypatch, HEAD + "".join(f"bogus {n}\n" for n in range(40)))
    monkeypatch.setattr(parallel, "plan", lambda *a: (_ for _ in ()).throw(OSError(5, "Input/output error")))
    with ThreadPoolExecutor(2) as pool:
        report = workflow._check_large(item, None, pool, 1)
    assert report.path == item.path and report.error == f"{item.path}: cannot read: Input/output error"


def test_a_refused_input_keeps_its_item() -> None:
    item = FoundInput("x", Settings(), problem="x: refused")
    [read] = read_inputs([item])
    assert read.item is item


def test_a_streamed_first_line_is_shown_without_its_bom(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(_Pipe("\ufeffbogus\n".encode())))
    *partial, whole = stream_input("-")
    assert partial and all(r.lines == {1: "bogus"} for r in partial)
    assert whole.lines == {1: "bogus"}


def test_parse_names_the_option_it_refuses(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEAD, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^--header and --body exclude each other; give one or neither$"):
        parse_path(str(path), header_only=True, body_only=True)
    with pytest.raises(ConfigError, match=r"^--max-line: "):
        parse_path(str(path), max_line=0)


def test_parse_checks_blobs_beside_a_file_never_beside_standard_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".bbox-blobs").mkdir()  # beside the file, without the blob
    text = HEAD + f"t:read a.rs → @blob sha256={SHA} bytes=4\n"
    path = tmp_path / "a.bbox"
    path.write_text(text, encoding="utf-8")
    codes = [d["code"] for d in parse_path(str(path)).json()["diagnostics"]]
    assert codes == ["E013"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(text.encode())))
    assert parse_path("-").json()["diagnostics"] == []


def test_check_input_and_check_paths_use_the_blob_folder_given(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEAD + f"t:read a.rs → @blob sha256={SHA} bytes=4\n", encoding="utf-8")
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    assert [d.code for d in check_input(str(path)).diagnostics] == []
    assert [d.code for d in check_input(str(path), blobs=blobs).diagnostics] == ["E013"]
    [report] = check_paths([str(path)], blobs=blobs, jobs=1)
    assert [d.code for d in report.diagnostics] == ["E013"]


def test_the_tee_holds_lines_up_to_its_budget_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workflow._Tee, "BUDGET", 10)
    tee = workflow._Tee(io.BytesIO(b"aaaa\nbbbb\n"))  # ten bytes: all held
    assert list(tee) and tee.line(1) == "aaaa" and tee.line(2) == "bbbb"
    tee.close()
    tee = workflow._Tee(io.BytesIO(b"aaaa\nbbbbb\n"))  # eleven: the first goes
    assert list(tee) and tee.line(1) is None and tee.line(2) == "bbbbb"
    tee.close()


def test_find_inputs_applies_the_command_lines_options(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(HEAD, encoding="utf-8")
    (tmp_path / "b.bbox").write_text(HEAD, encoding="utf-8")
    (tmp_path / "bbox-lark.toml").write_text('exclude = ["a.bbox"]\n', encoding="utf-8")
    [found] = workflow.find_inputs([str(tmp_path)], extend_exclude=["b.bbox"])
    assert found.problem is not None and "2 skipped by exclude patterns" in found.problem
    found = workflow.find_inputs([str(tmp_path)], isolated=True, strict=True)
    assert sorted(Path(f.path).name for f in found) == ["a.bbox", "b.bbox"]
    assert all(f.settings.strict for f in found)


def test_find_inputs_counts_each_session_once_when_asked(tmp_path: Path) -> None:
    import json

    head = {
        "schema_version": "ATIF-v1.7",
        "session_id": "s",
        "steps": [],
        "continued_trajectory_ref": "c.json",
    }
    (tmp_path / "h.json").write_text(json.dumps(head), encoding="utf-8")
    (tmp_path / "c.json").write_text(json.dumps({**head, "continued_trajectory_ref": None}), encoding="utf-8")
    counted = {Path(f.path).name: f.counted_in for f in workflow.find_inputs([str(tmp_path)], sessions=True)}
    assert counted["h.json"] is None and Path(counted["c.json"] or "").name == "h.json"
    plain = {Path(f.path).name: f.counted_in for f in workflow.find_inputs([str(tmp_path)])}
    assert plain.get("c.json") is None


def test_an_unreadable_input_keeps_its_item(tmp_path: Path) -> None:
    item = FoundInput(str(tmp_path / "gone.bbox"), Settings())
    [read] = read_inputs([item])
    assert read.item is item and read.error is not None


def _explode(path: str, blobs: object, settings: object) -> object:
    raise RuntimeError("worker blew up")


def test_a_worker_that_fails_is_an_internal_error_of_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bbox_lark.files import runner

    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(workflow, "_check_file", _explode)  # forked workers see it too
    paths = []
    for name in ("a.bbox", "b.bbox"):
        (tmp_path / name).write_text(HEAD + BODY, encoding="utf-8")
        paths.append(str(tmp_path / name))
    items = [FoundInput(p, Settings(strict=True)) for p in paths]
    items.append(FoundInput(str(tmp_path / "x"), Settings(), problem="x: refused"))
    first, second, refused = check_inputs(items, jobs=2)
    for report, path in ((first, paths[0]), (second, paths[1])):
        [found] = report.diagnostics
        assert report.path == path and report.strict
        assert found.code == "E016" and "RuntimeError" in found.message and "worker blew up" in found.message
    assert refused.error == "x: refused" and refused.path == str(tmp_path / "x")


def test_check_inputs_tells_its_progress(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEAD, encoding="utf-8")
    seen: list[tuple[int, int]] = []
    items = [FoundInput(str(path), Settings()), FoundInput("x", Settings(), problem="x: refused")]
    reports = list(check_inputs(items, jobs=1, progress=lambda done, total: seen.append((done, total))))
    assert len(reports) == 2 and seen == [(1, 2), (2, 2)]


class _CountingPipe(_Pipe):
    reads = 0

    def readline(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        self.reads += 1
        return super().readline(size)


def test_a_streamed_finding_comes_before_the_rest_of_the_input_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = HEAD + "bogus\n" + "".join(f"u: line {n}\n" for n in range(50))
    pipe = _CountingPipe(text.encode())
    monkeypatch.setattr(sys, "stdin", _Stdin(pipe))
    reports = stream_input("-")
    first = next(reports)
    assert first.partial and [d.code for d in first.diagnostics] == ["W003"] and first.lines == {7: "bogus"}
    assert pipe.reads < 20  # the finding came long before the end of the input
    *_, whole = reports
    assert not whole.partial and pipe.reads > 50


def test_held_findings_keep_their_input_and_strictness(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workflow._Tee, "BUDGET", 40)
    filler = "".join(f"u: filler line {n}\n" for n in range(10))
    text = HEAD + "t!:Read id=a → [running]\n" + filler + "bogus\n"
    monkeypatch.setattr(sys, "stdin", _Stdin(_Pipe(text.encode())))
    *partial, _ = stream_input("-", settings=Settings(strict=True))
    assert len(partial) == 2
    assert all(r.path == "-" and r.strict and r.partial for r in partial)


def test_check_input_applies_per_file_ignores_and_allowed_secrets(tmp_path: Path) -> None:
    from bbox_lark.files.config import PerFileIgnore
    from bbox_lark.files.globs import Glob

    key = "AKIAFAKE0123456789AB"
    path = tmp_path / "a.bbox"
    path.write_text(HEAD + f"bogus\nu: key={key}\n", encoding="utf-8")
    assert [d.code for d in check_input(str(path)).diagnostics] == ["W003", "S001"]
    settings = Settings(
        allowed_secrets=(key,), per_file_ignores=(PerFileIgnore(Glob("a.bbox", tmp_path), ("W003",)),)
    )
    assert check_input(str(path), settings=settings).diagnostics == ()


def test_standard_input_has_no_blob_folder_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".bbox-blobs").mkdir()
    monkeypatch.chdir(tmp_path)
    text = HEAD + f"t:read a.rs → @blob sha256={SHA} bytes=4\n"
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(text.encode())))
    [report] = stream_input("-")
    assert report.diagnostics == ()
    (tmp_path / "a.bbox").write_text(text, encoding="utf-8")
    assert [d.code for d in check_input("a.bbox").diagnostics] == ["E013"]


def test_a_file_streamed_reports_each_finding_then_the_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEAD + BODY, encoding="utf-8")
    *partial, whole = stream_input(str(path))
    assert [r.diagnostics for r in partial] == [
        (d,) for d in (whole.diagnostics[0], whole.diagnostics[2], whole.diagnostics[1])
    ]
    assert all(r.partial and r.lines is None and r.path == str(path) for r in partial)
    assert whole.lines is None and [d.code for d in whole.diagnostics] == ["W003", "I002", "W003"]


def test_check_inputs_gives_a_large_file_the_blob_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = HEAD + "".join(f"t:read a.rs → @blob sha256={SHA} bytes=4\nu: line {n}\n" for n in range(20))
    item = _large(tmp_path, monkeypatch, text)
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    [report] = check_inputs([item], blobs=blobs, jobs=2)
    assert [d.code for d in report.diagnostics] == ["E013"] * 20
