"""Streaming (Core v2, point 3): ``iter_nodes``, rules that see one node at a time, the
``check -`` pipe, bounded memory."""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CorpusFile, corpus_files

import bbox_lark
from bbox_lark.api import checker_for, iter_check
from bbox_lark.checks import RULES, Checker, Context, Rule, active_rules, selection
from bbox_lark.syntax.nodes import Event, Line
from bbox_lark.syntax.parser import Head, iter_nodes

CORPUS = [*corpus_files("valid"), *corpus_files("invalid"), *corpus_files("hostile")]
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"


def _pieces(data: bytes, size: int) -> Iterator[bytes]:
    """``data`` cut every ``size`` bytes: pieces that are not lines."""
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _sources(data: bytes) -> dict[str, object]:
    text = data.decode("utf-8", "surrogateescape")
    return {
        "bytes": data,
        "str": text,
        "binary file": io.BytesIO(data),
        "text file": io.StringIO(text, newline=""),
        "byte lines": io.BytesIO(data).readlines(),
        "text lines": io.StringIO(text, newline="").readlines(),
        "pieces": _pieces(data, 7),
    }


@pytest.mark.parametrize("file", CORPUS, ids=lambda f: f.id)
def test_iter_nodes_gives_the_nodes_of_parse(file: CorpusFile) -> None:
    data = file.data()
    document = bbox_lark.parse(data, max_line=file.max_line)
    for name, source in _sources(data).items():
        stream = iter_nodes(source, max_line=file.max_line)  # type: ignore[arg-type]
        items = list(stream)
        head = items[0]
        assert isinstance(head, Head), name
        assert (head.bom, head.header_lines, head.header_info) == (
            document.bom,
            document.header_lines,
            document.header_info,
        ), name
        assert tuple(items[1:]) == document.lines, name
        assert tuple(stream.faults) == document.source_faults, name


@pytest.mark.parametrize("file", CORPUS, ids=lambda f: f.id)
def test_check_of_a_stream_is_check_of_the_text(file: CorpusFile) -> None:
    data = file.data()
    expected = bbox_lark.parse(data, blobs=file.blobs, max_line=file.max_line).diagnostics
    for source in (data, io.BytesIO(data), _pieces(data, 5)):
        found = bbox_lark.check(source, blobs=file.blobs, max_line=file.max_line)  # type: ignore[arg-type]
        assert tuple(found) == expected
    # Streamed findings are the same set (an `ignore-file` applies from its own line on).
    if b"ignore-file" not in data:
        streamed = list(iter_check(io.BytesIO(data), blobs=file.blobs, max_line=file.max_line))
        assert sorted(streamed, key=lambda d: (d.line, d.col, d.code)) == list(expected)


def test_attach_false_gives_each_node_as_its_line_comes() -> None:
    text = HEADER + "a: one\n  more\n\n  still\nb: two\n"
    nodes = list(iter_nodes(text, attach=False))[1:]
    first = nodes[0]
    assert isinstance(first, Event) and first.continuation == ()
    assert [n.kind for n in nodes] == ["agent", "continuation", "blank", "continuation", "unknown"]
    assert [getattr(n, "owner", None) for n in nodes[1:4]] == [7, None, 7]
    attached = list(iter_nodes(text))[1:]
    assert isinstance(attached[0], Event) and [c.text for c in attached[0].continuation] == ["more", "still"]


def test_iter_nodes_reads_lazily() -> None:
    fed: list[str] = []

    def lines() -> Iterator[str]:
        for line in (HEADER + "a: one\nb: two\nc: three\n").splitlines(keepends=True):
            fed.append(line)
            yield line

    stream = iter_nodes(lines(), attach=False)
    assert isinstance(next(stream), Head)
    assert len(fed) == 6  # the header's lines: a closed header needs no look-ahead
    assert isinstance(next(stream), Event)
    assert len(fed) == 7
    next(stream)
    assert len(fed) == 8


def test_a_header_without_closing_fence_is_read_to_its_end_only() -> None:
    text = "---\nformat: bbox/1\nt:read a → [ok]\n" + "u: more\n" * 3
    stream = iter_nodes(text)
    head = next(stream)
    assert isinstance(head, Head) and head.body_start == 3 and head.header_info is not None
    assert head.header_info.close_line is None


# -- rules ---------------------------------------------------------------------------------


def test_every_code_belongs_to_one_rule() -> None:
    registry = bbox_lark.registry()
    owners: dict[str, str] = {}
    for cls in RULES:
        assert cls.codes <= registry.keys(), cls
        for code in cls.codes:
            assert code not in owners, (code, owners.get(code), cls)
            owners[code] = cls.__name__
    # I010 and I011 come from the suppressions, E016 from the runner.
    assert set(registry) - set(owners) == {"I010", "I011", "E016"}


def test_a_rule_that_can_report_no_selected_code_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.checks.correlation import CorrelationRule

    def boom(self: Rule, node: Line, ctx: Context) -> None:
        raise AssertionError("not selected: must not run")

    monkeypatch.setattr(CorrelationRule, "node", boom)
    text = HEADER + "t!:read a → [running]\nbogus\n"
    assert [d.code for d in bbox_lark.check(text, select=["W003"])] == ["W003"]
    assert [cls.__name__ for cls in active_rules(selection(["W003"]))] == ["LineRule"]
    assert CorrelationRule not in active_rules(selection(None, ["W0"]))
    with pytest.raises(AssertionError, match="must not run"):
        bbox_lark.check(text)


@pytest.mark.parametrize("file", corpus_files("invalid")[::3], ids=lambda f: f.id)
def test_selecting_one_rule_gives_its_findings(file: CorpusFile) -> None:
    data = file.data()
    every = bbox_lark.check(data, blobs=file.blobs, max_line=file.max_line)
    for cls in RULES:
        codes = sorted(cls.codes)
        alone = bbox_lark.check(data, blobs=file.blobs, max_line=file.max_line, select=codes)
        assert alone == [d for d in every if d.code in cls.codes], cls.__name__


def test_a_custom_checker_runs_over_any_stream() -> None:
    checker = Checker(select=["W003"])
    stream = iter_nodes([HEADER, "bogus\n", "a: fine\n"], attach=False)
    found = list(bbox_lark.api.run(checker, stream))
    assert [(d.code, d.line) for d in found] == [("W003", 7)]


def test_streamed_findings_come_as_their_line_arrives() -> None:
    arrived: list[str] = []

    def lines() -> Iterator[str]:
        for line in (HEADER + "bogus\na: fine\nt!:read a → [running]\nmore bogus\n").splitlines(True):
            arrived.append(line)
            yield line

    seen = []
    for diagnostic in iter_check(lines()):
        seen.append((diagnostic.code, diagnostic.line, len(arrived)))
    # W003 on line 7 once line 7 (+ nothing more) has arrived; W007 only at the end.
    assert seen == [("W003", 7, 7), ("W003", 10, 10), ("W007", 9, 10)]


def test_streamed_suppressions() -> None:
    body = "# bbox-lark: ignore[W003]\nbogus\nbogus\n# bbox-lark: ignore[W999]\n"
    streamed = [(d.code, d.line) for d in iter_check(HEADER + body)]
    assert streamed == [("W003", 9), ("I011", 10)]
    assert [(d.code, d.line) for d in bbox_lark.check(HEADER + body)] == [("W003", 9), ("I011", 10)]


# -- memory --------------------------------------------------------------------------------


def _clean_session(lines: int) -> str:
    out = [HEADER.rstrip("\n"), "@start id=s"]
    n = 0
    while len(out) < lines:
        n += 1
        out.append(f"t!:Read id=call_{n} file_path=/src/mod_{n % 97}.rs → [running] tokens_in={n % 900}")
        out.append(f"o: id=call_{n} → [ok] 128 tests passed")
        if n % 7 == 0:
            out.append(f"a: Step {n}: the change compiles. step={n // 7}")
    out.append("@end")
    return "\n".join(out) + "\n"


_MEASURE = textwrap.dedent(
    """
    import sys, tracemalloc
    import bbox_lark
    bbox_lark.check(open(sys.argv[1], "rb"))  # warm: the parser, the registry
    tracemalloc.start()
    with open(sys.argv[1], "rb") as file:
        found = bbox_lark.check(file)
    print(tracemalloc.get_traced_memory()[1], len(found))
    """
)


def test_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    """Not a timing test: traced allocation peaks of a 5k-line and a 50k-line clean log."""
    peaks = []
    for lines in (5_000, 50_000):
        path = tmp_path / f"s{lines}.bbox"
        path.write_text(_clean_session(lines), encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(path)],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        peak, found = map(int, proc.stdout.split())
        assert found == 0
        peaks.append(peak)
    # The keys seen (8 bytes each, SeenKeys) are the only state that grows: ~25k keys here.
    assert peaks[1] < peaks[0] * 1.5 + 512 * 1024, peaks


# -- check - on a pipe ---------------------------------------------------------------------


def _read_line(proc: subprocess.Popen[bytes], timeout: float = 60) -> bytes:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no finding within the timeout"
    return proc.stdout.readline()


@pytest.mark.skipif(sys.platform == "win32", reason="select() on pipes")
def test_check_stdin_prints_a_finding_as_soon_as_its_line_arrives() -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bbox_lark.cli", "check", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write((HEADER + "bogus line\n").encode())
        proc.stdin.flush()
        assert _read_line(proc) == b"<stdin>:7:1: W003 unknown line kind (kept verbatim)\n"
        proc.stdin.write("t!:Read id=1 → [running]\nmore bogus\n".encode())
        proc.stdin.flush()
        assert _read_line(proc) == b"<stdin>:9:1: W003 unknown line kind (kept verbatim)\n"
        time.sleep(0.2)
        proc.stdin.close()
        rest = proc.stdout.read()
        assert rest == b"<stdin>:8:1: W007 tool start `t!:Read` is never completed\n"
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_check_stdin_from_a_pipe_gives_full_and_json_output(tmp_path: Path) -> None:
    data = (HEADER + "bogus\nt!:Read id=1 → [running]\n").encode()
    run = [sys.executable, "-m", "bbox_lark.cli", "check"]
    full = subprocess.run([*run, "--format", "full", "-"], input=data, capture_output=True, check=False)
    assert b"7 | bogus" in full.stdout and b"8 | t!:Read id=1" in full.stdout
    assert full.stdout.index(b"W003") < full.stdout.index(b"W007")
    as_json = subprocess.run([*run, "--format", "json", "-"], input=data, capture_output=True, check=False)
    codes = [d["code"] for d in json.loads(as_json.stdout)["files"][0]["diagnostics"]]
    assert codes == ["W003", "W007"]


def test_checker_for_is_public_enough() -> None:
    checker = checker_for(None, None, ["W0"], None)
    assert isinstance(checker, Checker)


# -- check --jobs --------------------------------------------------------------------------


def _corpus_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    for kind in ("valid", "invalid", "hostile"):
        (folder / kind).mkdir(parents=True)
        for file in corpus_files(kind):
            (folder / kind / file.path.name).write_bytes(file.data())
    big = "".join(file.data().decode("utf-8", "surrogateescape") for file in corpus_files("valid"))
    (folder / "all-valid.bbox").write_text(big, encoding="utf-8", errors="surrogateescape")
    return folder


@pytest.mark.parametrize("output", ["concise", "json", "full"])
def test_check_jobs_output_is_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str
) -> None:
    from typer.testing import CliRunner

    from bbox_lark.cli import app
    from bbox_lark.files import runner as files_runner

    monkeypatch.setattr(files_runner, "PARALLEL_MIN_BYTES", 0)  # even a small run uses workers
    folder = _corpus_folder(tmp_path)
    runner = CliRunner()
    args = ["check", "--max-line", "1024", "--format", output, str(folder)]
    one = runner.invoke(app, [*args, "--jobs", "1"])
    three = runner.invoke(app, [*args, "--jobs", "3"])
    auto = runner.invoke(app, [*args, "--jobs", "auto"])
    assert one.stdout_bytes == three.stdout_bytes == auto.stdout_bytes
    assert one.exit_code == three.exit_code == auto.exit_code == 1
    assert one.stdout.count("\n") > 100


def test_check_jobs_spreads_files_over_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.checks import workflow
    from bbox_lark.files import runner as files_runner
    from bbox_lark.files.config import Resolver
    from bbox_lark.files.discover import discover

    monkeypatch.setattr(files_runner, "PARALLEL_MIN_BYTES", 0)
    seen: list[int] = []
    real = files_runner._in_pool

    def spy(*args: Any) -> Iterator[object]:
        seen.append(args[4])  # the number of workers
        return real(*args)

    monkeypatch.setattr(files_runner, "_in_pool", spy)
    folder = _corpus_folder(tmp_path)
    inputs = discover([str(folder)], Resolver(isolated=True))
    reports = list(workflow.check_inputs(inputs, jobs=2))
    assert seen == [2]
    assert [r.path for r in reports] == [i.path for i in inputs]
    serial = list(workflow.check_inputs(inputs, jobs=1))
    assert [r.diagnostics for r in reports] == [r.diagnostics for r in serial]


def test_jobs_option_is_checked() -> None:
    from typer.testing import CliRunner

    from bbox_lark.cli import app

    result = CliRunner().invoke(app, ["check", "--jobs", "0", "-"], input="")
    assert result.exit_code == 2
    assert "--jobs" in result.output + (result.stderr if result.stderr_bytes else "")


# -- a large file in parts -----------------------------------------------------------------

_ACROSS = (
    HEADER
    + "@start id=s\n"
    + "# t=00:00:05\n"
    + "t!:Read id=a1 file_path=x → [running]\n"  # closed in a later part
    + "t!:Grep → [running]\n"  # keyless: closed by the next `t:Grep` in a later part
    + "x:build id=b1 → [running]\n"  # never closed: W025 at the end
    + "a: step=1 one [redacted:email]\n"
    + "# bbox-lark: ignore[W003]\n"
    + "# a plain comment\n"
    + "bogus silenced across the cut\n"
    + "a: step=3 skips\n"
    + "t~:Read id=a1 progress of an open call\n"
    + "t!:Read id=a1 → [running]\n"  # W024: a1 still open
    + "  continuation of the start\n"
    + "\n"
    + "# t=00:00:02\n"  # W020: earlier than the mark in an earlier part
    + "o: id=a1 → [ok]\n"
    + "o: id=a1 → [ok]\n"
    + "t:Grep → [ok]\n"
    + "t~:Grep after its start closed\n"  # W001
    + "o: id=zz → [ok]\n"  # W002
    + "a: step=2 lower\n"  # W004
    + "# metrics step=7\n"  # I009
    + "# redactions=3\n"  # W018: the body has 1
    + "@end\n"
)


def _split_check(path: Path, part_bytes: int, **options: object) -> list[object]:
    from concurrent.futures import ProcessPoolExecutor

    from bbox_lark.checks.parallel import Options, check_split, plan

    max_line = int(options.pop("max_line", 1024 * 1024))  # type: ignore[call-overload]
    planned = plan(str(path), max_line, part_bytes)
    assert planned is not None
    select, ignore = options.get("select"), options.get("ignore")
    with ProcessPoolExecutor(2) as pool:
        return check_split(str(path), Options(None, select, ignore, max_line), pool, 3, planned)  # type: ignore[arg-type]


@pytest.mark.parametrize("part_bytes", [1, 40, 200])
def test_a_file_in_parts_gives_the_findings_of_one_pass(tmp_path: Path, part_bytes: int) -> None:
    path = tmp_path / "across.bbox"
    path.write_text(_ACROSS, encoding="utf-8")
    expected = bbox_lark.check(_ACROSS)
    codes = {d.code for d in expected}
    assert {"W001", "W002", "W004", "W018", "W020", "W024", "W025", "I007", "I009"} <= codes
    assert "W003" not in codes and "W007" not in codes and "I002" not in codes
    assert _split_check(path, part_bytes) == expected


@pytest.mark.parametrize(
    "options", [{}, {"select": ("W0",)}, {"ignore": ("I",)}], ids=["all", "select-W0", "ignore-I"]
)
def test_the_corpus_concatenated_in_parts(tmp_path: Path, options: dict[str, object]) -> None:
    data = b"".join(f.data() for f in CORPUS)
    path = tmp_path / "corpus.bbox"
    path.write_bytes(data)
    expected = bbox_lark.check(data, max_line=1024, **options)  # type: ignore[arg-type]
    for part_bytes in (1, 3000):
        assert _split_check(path, part_bytes, max_line=1024, **options) == expected


REAL = Path(__file__).resolve().parents[2] / "shared" / "corpus-external" / "rlog-real"


@pytest.mark.skipif(not REAL.is_dir(), reason="the real logs are not here")
def test_real_logs_in_parts() -> None:
    for path in sorted(REAL.iterdir())[:12]:
        if path.stat().st_size > 20_000:
            assert _split_check(path, 10_000) == bbox_lark.check(path.read_bytes()), path.name


def _far_apart(filler: int) -> str:
    """Calls whose observations come many parts after them: re-observed (seen, no W002),
    never registered (W002), registered only after their observation (W002)."""
    body = ["@start id=s", "t:Read id=early → [ok]", "t!:Grep id=open1 → [running]", "o: id=late → [ok]"]
    body += [f"u: filler line {n}" for n in range(filler)]
    body += [
        "o: id=early → [more]",  # seen long ago, closed: not W002
        "o: id=never → [ok]",  # W002
        "# bbox-lark: ignore[W002]",
        "o: id=silenced → [ok]",  # W002, suppressed by the comment above
        "o: id=late → [ok]",  # W002 again: `late` is registered only below
        "t:Read id=late → [ok]",
        "o: id=open1 → [ok]",  # open: completes the start, no second look needed
        "o: id=late → [ok]",  # seen just above: not W002
        "@end",
    ]
    return HEADER + "\n".join(body) + "\n"


@pytest.mark.parametrize("in_workers", [True, False], ids=["workers", "parent"])
def test_a_file_in_parts_settles_far_observations_afterwards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_workers: bool
) -> None:
    from bbox_lark.checks import parallel

    text = _far_apart(300)
    path = tmp_path / "far.bbox"
    path.write_text(text, encoding="utf-8")
    expected = bbox_lark.check(text)
    w002 = [d.line for d in expected if d.code == "W002"]
    assert w002 == [10, 312, 315]  # the header is 6 lines; 300 fillers from line 11
    assert not [d for d in expected if d.line == 314]  # silenced
    calls: list[int] = []
    real = parallel._first_seen

    def spy(*args: object) -> object:
        calls.append(len(args[-1]))  # type: ignore[arg-type]
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "_first_seen", spy)
    if not in_workers:
        monkeypatch.setattr(parallel, "FIRST_SEEN_IN_WORKERS", 0)
    assert _split_check(path, 200) == expected
    assert calls == [4]  # early, never, silenced, late: put aside, then settled by a second look


def _all_keys(data: bytes) -> frozenset[tuple[str, str]]:
    from bbox_lark.syntax.correlate import FAMILIES, call_key

    keys = set()
    for node in iter_nodes(data, max_line=1024):
        if isinstance(node, Event) and node.kind in FAMILIES:
            key = call_key(node)
            if key is not None:
                keys.add(key)
    return frozenset(keys)


def test_first_seen_searching_the_bytes_finds_what_parsing_every_line_finds(tmp_path: Path) -> None:
    """The second look of a file checked in parts reads only the lines that hold a key's
    value: it finds each key's first line in each part as parsing the whole file does
    (corpus keys, a quoted key with escapes, keys of other kinds and names that are not keys)."""
    from bbox_lark.checks.parallel import Options, first_seen, plan
    from bbox_lark.syntax.correlate import FAMILIES, call_key

    extra = (
        HEADER
        + 't:Read id="a \\"b\\" c" → [ok]\n'  # the value is: a "b" c
        + "u: a b c id=x1 is not a call\n"
        + "t:Read span=x1 → [ok]\n"
        + "o: id=x1 → [ok]\n"
        + "t:Read id=x1 → [ok]\n"
    )
    data = b"".join(f.data() for f in CORPUS) + extra.encode()
    path = tmp_path / "corpus.bbox"
    path.write_bytes(data)
    keys = _all_keys(data) | {("id", "never"), ("span", "a")}
    assert ("id", 'a "b" c') in keys and ("span", "x1") in keys
    planned = plan(str(path), 1024, 3000)
    assert planned is not None and len(planned[2]) > 20
    parts = planned[2]
    # What parsing the whole file says: each key's lines, then grouped by part.
    lines: dict[tuple[str, str], list[int]] = {}
    for node in iter_nodes(data, max_line=1024):
        if isinstance(node, Event) and node.kind in FAMILIES:
            key = call_key(node)
            if key is not None:
                lines.setdefault(key, []).append(node.line)
    options = Options(None, None, None, 1024)
    found = 0
    for part, following in zip(parts, [*parts[1:], None], strict=True):
        stop = following.first_line if following is not None else 1 << 60
        expected = {
            key: min(at)
            for key, numbers in lines.items()
            if (at := [n for n in numbers if part.first_line <= n < stop])
        }
        assert first_seen(str(path), part, keys, options) == expected, part
        found += len(expected)
    assert found > 50


def test_a_key_of_escaped_characters_only_is_looked_for_in_every_line(tmp_path: Path) -> None:
    from bbox_lark.checks.parallel import _value_finder

    assert _value_finder(frozenset({("id", '""')})) is None  # no run the bytes could be searched for
    assert _value_finder(frozenset({("id", '""'), ("id", "x")})) is None
    filler = "".join(f"u: filler {n}\n" for n in range(200))
    text = HEADER + '@start id=s\nt:Read id="\\"\\"" → [ok]\n' + filler + 'o: id="\\"\\"" → [more]\n@end\n'
    path = tmp_path / "quotes.bbox"
    path.write_text(text, encoding="utf-8")
    assert _split_check(path, 200) == bbox_lark.check(text) == []  # seen: found by parsing every line


def test_seen_keys_sorted_in_stay_with_their_own_set() -> None:
    # Every SeenKeys starts with one shared empty array per bucket (a checker is made for
    # every file); sorting keys in must replace a bucket, never fill the shared one.
    from bbox_lark.syntax.correlate import SeenKeys

    first, second = SeenKeys(), SeenKeys()
    keys = [("id", f"k{n}") for n in range(3 * SeenKeys.RECENT)]
    for key in keys:
        first.add(key)
    assert all(key in first for key in keys)
    assert not any(key in second for key in keys) and not any(key in SeenKeys() for key in keys)
    assert ("id", "never") not in first


def test_recent_keys_hold_two_parts_only() -> None:
    from bbox_lark.syntax.correlate import RecentKeys

    keys = RecentKeys()
    keys.add(("id", "a"))
    assert keys.holds(("id", "a")) is True and keys.holds(("id", "b")) is False
    keys.next_part()
    keys.add(("id", "b"))
    assert keys.holds(("id", "a")) is True and keys.holds(("id", "zz")) is False  # all there was
    keys.next_part()
    assert keys.holds(("id", "a")) is None  # forgotten: not known here
    assert keys.holds(("id", "b")) is True
    for n in range(1000):
        keys.add(("id", f"k{n}"))
        keys.next_part()
    assert len(keys._current) + len(keys._previous) <= 2  # nothing piles up


def test_a_clean_file_in_parts_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.checks import parallel

    body = "".join(f"t!:Read id=c{n} → [running]\no: id=c{n} → [ok]\n" for n in range(300))
    text = HEADER + "@start id=s\n" + body + "@end\n"
    path = tmp_path / "clean.bbox"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(parallel, "_first_seen", lambda *args: pytest.fail("read a second time"))
    assert _split_check(path, 200) == bbox_lark.check(text) == []


def test_check_jobs_splits_a_large_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from bbox_lark.checks import parallel
    from bbox_lark.cli import app

    path = tmp_path / "big.bbox"
    path.write_text(_ACROSS + "".join(_ACROSS.split("---\n", 2)[2] for _ in range(30)), encoding="utf-8")
    planned: list[int] = []
    real_plan = parallel.plan

    def spy(*args: object) -> object:
        result = real_plan(*args)  # type: ignore[arg-type]
        planned.append(len(result[2]) if result else 1)
        return result

    monkeypatch.setattr(parallel, "SPLIT_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "PART_BYTES", 500)
    monkeypatch.setattr(parallel, "plan", spy)
    runner = CliRunner()
    one = runner.invoke(app, ["check", "--jobs", "1", str(path)])
    two = runner.invoke(app, ["check", "--jobs", "2", str(path)])
    assert planned and planned[0] > 5
    assert one.stdout_bytes == two.stdout_bytes and one.exit_code == two.exit_code
    assert one.stdout.count("\n") > 100


# -- fmt and stats as streams agree with the whole-document paths ---------------------------


def _found(path: Path) -> object:
    from bbox_lark.files.config import Settings
    from bbox_lark.files.discover import FoundInput

    return FoundInput(str(path), Settings())


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.id)
def test_streamed_fmt_and_stats_agree_with_the_document(case: CorpusFile, tmp_path: Path) -> None:
    """``fmt`` formats and ``stats`` counts each line as it is read (docs/design.md, "Memory
    per command"): the bytes, the change, the findings and every figure are those of the parsed document
    (:func:`bbox_lark.syntax.printer.format_document`, :func:`bbox_lark.numbers.stats.compute_stats`)."""
    from bbox_lark.fix.rewrite import fmt_inputs
    from bbox_lark.numbers.stats import compute_stats
    from bbox_lark.numbers.stats_run import file_stats
    from bbox_lark.syntax.printer import format_document
    from bbox_lark.syntax.source import decode, encode

    data = case.path.read_bytes()
    copy = tmp_path / case.path.name
    copy.write_bytes(data)
    document = bbox_lark.parse(data, path=copy)
    expected = format_document(document)

    [checked] = fmt_inputs([_found(copy)], check=True)  # type: ignore[list-item]
    assert checked.changed == (expected != decode(data))
    [done] = fmt_inputs([_found(copy)])  # type: ignore[list-item]
    assert done.verdict is not None
    errors = [d for d in document.diagnostics if d.severity == "error"]
    assert list(done.verdict.errors) == errors
    if not done.verdict.refused:
        assert copy.read_bytes() == encode(expected)

    copy.write_bytes(data)
    counted = file_stats(_found(copy))  # type: ignore[arg-type]
    assert counted.stats == compute_stats(document)
    assert list(counted.errors) == errors
