"""Bad input never ends in a traceback (DECISIONS §1, §2, §10).

Every case goes through the API (``bbox_lark.check``) and the CLI (``check``, ``parse`` and
``stats``, text and JSON, through Typer's ``CliRunner``; a few through a real subprocess).
Each case asserts the diagnostic's code, line and column, the exit code, that nothing
printed a traceback, and that a valid-but-warned line *after* the bad one is still reported:
one bad line never stops the rest of the file from being checked.
"""

from __future__ import annotations

import json
import pathlib
import random
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

import bbox_lark
from bbox_lark.cli import app

HEADER = b"---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
#: A valid line with a warning (W013, ASCII arrow at column 13), placed after the bad part.
LATER = b"t:read a.rs -> [1 lines]\n"
LATER_COL = 13

runner = CliRunner()


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    #: The diagnostic the bad part must produce: (code, line, col).
    expect: tuple[str, int, int]
    #: Line of :data:`LATER` (its W013 must still be reported), or None.
    later: int | None
    #: ``check`` exit code (also ``parse``/``stats``: 1 when the file has errors).
    exit: int

    @property
    def later_line(self) -> int:
        assert self.later is not None
        return self.later


def _alias_bomb() -> bytes:
    """Billion laughs: nine levels of nine aliases each (expanded: 9**9 strings)."""
    lines = ["---", "format: bbox/1", "id: s", "repo_sha: 215db51", 'a0: &a0 ["lol","lol","lol","lol"]']
    for level in range(1, 10):
        ref = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([ref] * 9)}]")
    lines.append("---")
    return ("\n".join(lines) + "\n").encode()


def _binary() -> bytes:
    data = random.Random(7).randbytes(4096).replace(b"\n", b" ")
    # Ten plain characters, then a NUL at column 11: not a header, and a known position.
    return b"x" * 10 + b"\x00" + data + b"\n"


BIG = 10 * 1024 * 1024
ALIAS_BOMB = _alias_bomb()
BINARY = _binary()

CASES = [
    Case("invalid-utf8", HEADER + b"a: caf\xe9 au lait\n" + LATER, ("E001", 7, 7), 8, 1),
    Case("nul-byte", HEADER + b"a: x\x00y\n" + LATER, ("E002", 7, 5), 8, 1),
    Case("binary", BINARY + LATER, ("E002", 1, 11), 2, 1),
    Case(
        "ten-megabyte-line", HEADER + b"a: " + b"x" * BIG + b"\n" + LATER, ("E003", 7, 1024 * 1024 + 1), 8, 1
    ),
    Case("unterminated-quote", HEADER + b't:grep "TODO src\n' + LATER, ("E012", 7, 8), 8, 1),
    Case("unterminated-quote-then-arrow", HEADER + b't:grep "TODO src -> [3]\n', ("E012", 7, 8), None, 1),
    Case("header-not-a-mapping", b"---\n- format\n- id\n---\n" + LATER, ("E007", 2, 1), 5, 1),
    Case("header-scalar", b"---\njust words\n---\n" + LATER, ("E007", 2, 1), 4, 1),
    Case("alias-bomb", ALIAS_BOMB + LATER, ("E008", 5, 5), ALIAS_BOMB.count(b"\n") + 1, 1),
    Case(
        "header-over-64k",
        b"---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nnotes: " + b"x" * 70_000 + b"\n---\n" + LATER,
        ("E009", 1, 1),
        7,
        1,
    ),
    Case(
        "unclosed-header", b"---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n\n" + LATER, ("E005", 1, 1), 6, 1
    ),
    Case("no-header", LATER, ("E004", 1, 1), 1, 1),
    Case("empty-file", b"", ("E004", 1, 1), None, 1),
    Case(
        "crlf", HEADER.replace(b"\n", b"\r\n") + LATER.replace(b"\n", b"\r\n"), ("W013", 7, LATER_COL), 7, 0
    ),
    Case("bom", b"\xef\xbb\xbf" + HEADER + LATER, ("I005", 1, 1), 7, 0),
    Case("no-final-newline", HEADER + LATER.rstrip(b"\n"), ("W013", 7, LATER_COL), 7, 0),
    Case("lone-cr", HEADER + b"a: one\rtwo\n" + LATER, ("W013", 8, LATER_COL), 8, 0),
]
CASE_IDS = [case.name for case in CASES]


def found(data: bytes) -> set[tuple[str, int, int]]:
    return {(d.code, d.line, d.col) for d in bbox_lark.check(data)}


def invoke(args: list[str], data: bytes | None = None) -> Result:
    return runner.invoke(app, args, input=data)


def assert_clean_exit(result: Result, code: int) -> None:
    """The exit code is as documented and nothing escaped as an exception."""
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, result.output


# -- API --------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_api_reports_code_line_col(case: Case) -> None:
    diagnostics = found(case.data)
    assert case.expect in diagnostics
    if case.later is not None:
        assert ("W013", case.later, LATER_COL) in diagnostics


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_api_round_trips_bad_input(case: Case) -> None:
    document = bbox_lark.parse(case.data)
    printed = "\ufeff" * document.bom + "".join(h.raw + h.eol for h in document.header_lines)
    printed += "".join(line.raw + line.eol for line in document.lines)
    assert printed.encode("utf-8", "surrogateescape") == case.data


def test_text_input_is_accepted_too() -> None:
    assert ("E002", 7, 5) in {
        (d.code, d.line, d.col) for d in bbox_lark.check(HEADER.decode() + "a: x\x00y\n")
    }


def test_alias_bomb_is_not_expanded() -> None:
    document = bbox_lark.parse(ALIAS_BOMB)
    # The header is rejected, not built: no list of 9**9 strings anywhere.
    assert all(not isinstance(value, list) or len(value) < 100 for value in document.header.values())


def test_line_limit_is_configurable() -> None:
    data = HEADER + b"a: " + b"y" * 200 + b"\n" + LATER
    assert ("E003", 7, 101) in {(d.code, d.line, d.col) for d in bbox_lark.check(data, max_line=100)}
    assert "E003" not in {d.code for d in bbox_lark.check(data)}


# -- CLI: a file ------------------------------------------------------------------------


@pytest.fixture
def bad_file(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Case, Path]:
    case: Case = request.param
    path = tmp_path / "session.bbox"
    path.write_bytes(case.data)
    return case, path


@pytest.mark.parametrize("bad_file", CASES, ids=CASE_IDS, indirect=True)
def test_cli_check_text(bad_file: tuple[Case, Path]) -> None:
    case, path = bad_file
    result = invoke(["check", str(path)])
    assert_clean_exit(result, case.exit)
    code, line, col = case.expect
    assert f"{path}:{line}:{col}: {code} " in result.stdout
    if case.later is not None:
        assert f"{path}:{case.later}:{LATER_COL}: W013 " in result.stdout


@pytest.mark.parametrize("bad_file", CASES, ids=CASE_IDS, indirect=True)
def test_cli_check_json_and_github(bad_file: tuple[Case, Path]) -> None:
    case, path = bad_file
    result = invoke(["check", "--format", "json", str(path)])
    assert_clean_exit(result, case.exit)
    report = json.loads(result.stdout)
    assert report["exit_code"] == case.exit
    diagnostics = {(d["code"], d["line"], d["col"]) for d in report["files"][0]["diagnostics"]}
    assert case.expect in diagnostics
    if case.later is not None:
        assert ("W013", case.later, LATER_COL) in diagnostics
    result = invoke(["check", "--format", "github", str(path)])
    assert_clean_exit(result, case.exit)
    code, line, col = case.expect
    assert f"file={path},line={line},col={col},title={code} " in result.stdout


@pytest.mark.parametrize("bad_file", CASES, ids=CASE_IDS, indirect=True)
def test_cli_parse_and_stats(bad_file: tuple[Case, Path]) -> None:
    case, path = bad_file
    code, line, col = case.expect
    severity = bbox_lark.registry()[code].severity
    result = invoke(["parse", str(path)])
    assert_clean_exit(result, case.exit)
    assert f"{code} {severity} at {line}:{col}: " in result.stdout
    if case.later is not None:
        assert f"W013 warning at {case.later}:{LATER_COL}: " in result.stdout
    result = invoke(["parse", "--json", str(path)])
    assert_clean_exit(result, case.exit)
    value = json.loads(result.stdout)
    assert case.expect in {(d["code"], d["line"], d["col"]) for d in value["diagnostics"]}
    if case.later is not None:
        later = [node for node in value["body"] if node["line"] == case.later]
        assert later and later[0]["kind"] == "tool" and later[0]["result"]["kind"] == "count"
    for args in (["stats", str(path)], ["stats", "--json", str(path)]):
        assert_clean_exit(invoke(args), case.exit)


def test_cli_parse_shows_undecodable_bytes_as_escapes(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    path.write_bytes(HEADER + b"a: caf\xe9 \x00\n")
    result = invoke(["parse", "--body", str(path)])
    assert_clean_exit(result, 1)
    assert '"caf\\xe9 \\x00"' in result.stdout
    # JSON keeps the exact string: the lone surrogate is a JSON escape that reads back.
    value = json.loads(invoke(["parse", "--json", "--body", str(path)]).stdout)
    assert value["body"][0]["raw"] == "a: caf\udce9 \x00"


def test_cli_findings_about_undecodable_values_print(tmp_path: Path) -> None:
    # Messages quote field values; a value holding an invalid byte must still print.
    path = tmp_path / "s.bbox"
    path.write_bytes(HEADER + b"t:read a attempt=\xe9 ts=\xe9 \xe2\x86\x92 [ok]\n" + LATER)
    for output in ("text", "json", "github"):
        result = invoke(["check", "--format", output, str(path)])
        assert_clean_exit(result, 1)
        assert "W014" in result.stdout and "W005" in result.stdout and "W013" in result.stdout


# -- CLI: paths -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [["check"], ["parse"], ["stats"], ["parse", "--json"], ["stats", "--json"]]
)
def test_missing_path_exits_2(command: list[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.bbox"
    result = invoke([*command, str(missing)])
    assert_clean_exit(result, 2)
    assert f"{missing}: no such file or directory" in result.stderr


def test_missing_path_with_markup_characters_exits_2() -> None:
    result = invoke(["check", "[/red]nope[bold].bbox"])
    assert_clean_exit(result, 2)
    assert "[/red]nope[bold].bbox: no such file" in result.stderr


def test_directory_without_bbox_files_exits_2(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a: hi\n")
    result = invoke(["check", str(tmp_path)])
    assert_clean_exit(result, 2)
    assert "no *.bbox, *.blackbox or *.rlog files" in result.stderr


@pytest.mark.parametrize("command", ["parse"])
def test_directory_for_one_file_command_exits_2(command: str, tmp_path: Path) -> None:
    result = invoke([command, str(tmp_path)])
    assert_clean_exit(result, 2)
    assert "is a directory" in result.stderr


@pytest.mark.parametrize("command", ["stats", "fmt", "fix"])
def test_directory_without_bbox_files_exits_2_for_every_searching_command(
    command: str, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("a: hi\n")
    args = [command, str(tmp_path)] + (["--arrows"] if command == "fix" else [])
    result = invoke(args)
    assert_clean_exit(result, 2)
    assert f"{tmp_path}: no *.bbox, *.blackbox or *.rlog files in this directory" in result.stderr


def test_unreadable_file_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "locked.bbox"
    path.write_bytes(HEADER)

    def refuse(self: pathlib.Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    opener = pathlib.Path.open

    def refuse_open(self: pathlib.Path, *args: Any, **kwargs: Any) -> Any:
        if self == path:  # check reads a file as a stream
            raise PermissionError(13, "Permission denied", str(self))
        return opener(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "read_bytes", refuse)
    monkeypatch.setattr(pathlib.Path, "open", refuse_open)
    for command in (["check"], ["check", "--format", "json"], ["parse"], ["stats", "--json"]):
        result = invoke([*command, str(path)])
        assert_clean_exit(result, 2)
        assert "cannot read: Permission denied" in result.stderr


def test_missing_path_among_others_exits_2(tmp_path: Path) -> None:
    good = tmp_path / "good.bbox"
    good.write_bytes(HEADER + LATER)
    result = invoke(["check", str(tmp_path / "missing.bbox"), str(good)])
    assert_clean_exit(result, 2)


def test_bad_file_in_a_directory_does_not_stop_the_others(tmp_path: Path) -> None:
    directory = tmp_path / "logs"
    directory.mkdir()
    (directory / "a.bbox").write_bytes(HEADER + b"a: x\x00\n" + LATER)
    (directory / "b.bbox").write_bytes(HEADER + LATER)
    result = invoke(["check", str(directory)])
    assert_clean_exit(result, 1)
    assert f"{directory / 'a.bbox'}:7:5: E002" in result.stdout
    assert f"{directory / 'a.bbox'}:8:{LATER_COL}: W013" in result.stdout
    assert f"{directory / 'b.bbox'}:7:{LATER_COL}: W013" in result.stdout


def test_header_and_body_exclude_each_other(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    path.write_bytes(HEADER)
    result = invoke(["parse", "--header", "--body", str(path)])
    assert_clean_exit(result, 2)


# -- CLI: stdin -------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_stdin(case: Case) -> None:
    result = invoke(["check", "-"], case.data)
    assert_clean_exit(result, case.exit)
    code, line, col = case.expect
    assert f"<stdin>:{line}:{col}: {code} " in result.stdout
    if case.later is not None:
        assert f"<stdin>:{case.later}:{LATER_COL}: W013 " in result.stdout
    assert_clean_exit(invoke(["stats", "--json", "-"], case.data), case.exit)
    assert json.loads(invoke(["parse", "--json", "-"], case.data).stdout)["path"] == "<stdin>"


# -- a real process ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.name in ("binary", "invalid-utf8", "alias-bomb")],
    ids=lambda case: case.name,
)
def test_subprocess(case: Case, tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    path.write_bytes(case.data)
    for command in (["check"], ["parse"], ["stats"], ["check", "--format", "json"]):
        proc = subprocess.run(
            [sys.executable, "-m", "bbox_lark.cli", *command, str(path)], capture_output=True, check=False
        )
        assert b"Traceback" not in proc.stderr + proc.stdout
        assert proc.returncode == case.exit, proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "bbox_lark.cli", "check", "-"],
        input=case.data,
        capture_output=True,
        check=False,
    )
    code, line, col = case.expect
    assert f"<stdin>:{line}:{col}: {code} ".encode() in proc.stdout
    assert proc.returncode == case.exit


# -- anything at all --------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        *(b"---\n", b"format: bbox/1\n", b"t:", b"t!:", b"@", b"#", b" # metrics ", b"\xe2\x86\x92", b" -> "),
        *(b'"', b"\x00", b"\xe9", b"\xff", b"\r", b"\n", b"\t", b"  ", b"=", b"[", b"]", b"step=", b"ts="),
        *(b"@blob sha256=", b"[redacted:", b"&a", b"*a", b"!!python/name:x", b"id=", b"attempt=", b"mime="),
        *(b"x", b"\xef\xbb\xbf"),
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_PIECES, st.binary(max_size=8)), max_size=40).map(b"".join))
def test_arbitrary_bytes_never_crash_the_cli(data: bytes) -> None:
    for args in (
        ["check", "-"],
        ["check", "--format", "json", "-"],
        ["check", "--format", "github", "-"],
        ["parse", "-"],
        ["parse", "--json", "-"],
        ["stats", "-"],
        ["stats", "--json", "-"],
    ):
        result = invoke(args, data)
        assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
        assert result.exit_code in (0, 1), (args, result.output)


# -- operating-system errors are input errors (the "Hardening 3" issue) -------------------

#: Every command that takes an input path, in a form that writes nothing beside its output.
PATH_COMMANDS: dict[str, list[str]] = {
    "check": ["check"],
    "check-json": ["check", "--format", "json"],
    "parse": ["parse"],
    "parse-json": ["parse", "--json"],
    "stats": ["stats"],
    "stats-json": ["stats", "--json"],
    "fmt": ["fmt", "--check"],
    "fmt-write": ["fmt"],
    "fix": ["fix", "--arrows"],
    "redact": ["redact"],
    "redact-list": ["redact", "--list"],
    "convert": ["convert", "--to", "jsonl"],
    "report": ["report", "-o", "-"],
    "export": ["export", "--format", "csv", "-o", "{out}"],
    "query": ["query", "--sql", "select count(*) as n from events", "--format", "json"],
    "lightbox": ["lightbox", "verify"],
}

#: The commands that only read (run on a file no write may touch, such as /proc/sys).
READ_ONLY = [name for name in PATH_COMMANDS if name not in ("fmt-write",)]


def _os_inputs(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Paths the system refuses, each with the reason the message must give."""
    import socket

    (tmp_path / "loop.bbox").symlink_to("loop.bbox")
    (tmp_path / "plain").write_bytes(HEADER)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock.bbox"))
    server.close()
    return {
        "name-too-long": ("x" * 300 + ".bbox", "File name too long"),
        "symlink-loop": ("loop.bbox", "Too many levels of symbolic links"),
        "not-a-directory": ("plain/s.bbox", "Not a directory"),
        "socket": ("sock.bbox", "a socket, not a file"),
    }


@pytest.mark.parametrize("command", list(PATH_COMMANDS), ids=list(PATH_COMMANDS))
def test_os_errors_are_input_errors(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ENAMETOOLONG made Python 3.11's Path.is_file raise: "internal error … report this bug".
    monkeypatch.chdir(tmp_path)
    for name, (path, why) in _os_inputs(tmp_path).items():
        args = [arg.format(out=tmp_path / "out") for arg in PATH_COMMANDS[command]]
        result = invoke([*args, path])
        shown = path[:40]
        assert "internal error" not in result.output, (name, result.output)
        assert "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), (name, result.exception)
        # lightbox verify follows Lightbox's statuses: NOT_FOUND is 4 (docs/lightbox.md)
        assert result.exit_code == (4 if command == "lightbox" else 2), (name, result.output)
        line = next(text for text in result.output.splitlines() if shown in text and why in text)
        assert line.endswith(why), (name, line)


def _refused_for_everyone(tmp_path: Path) -> str:
    """A file that opening for reading refuses with EACCES, even for root: a file without
    read permission, or (root ignores the mode of an ordinary file) a write-only sysctl file,
    whose mode binds root too. Skips when there is none."""
    import os

    locked = tmp_path / "locked.bbox"
    locked.write_bytes(HEADER)
    locked.chmod(0)
    candidates = [str(locked), "/proc/sys/vm/compact_memory", "/proc/sys/net/ipv4/route/flush"]
    for candidate in candidates:
        try:
            with open(candidate, "rb"):
                pass
        except PermissionError:
            return candidate
        except OSError:
            continue
    pytest.skip(f"no file refuses reading here (euid {os.geteuid()} reads a file without read permission)")


@pytest.mark.parametrize("command", READ_ONLY, ids=READ_ONLY)
def test_permission_denied_is_an_input_error(command: str, tmp_path: Path) -> None:
    path = _refused_for_everyone(tmp_path)
    args = [arg.format(out=tmp_path / "out") for arg in PATH_COMMANDS[command]]
    result = invoke([*args, path])
    assert "internal error" not in result.output and "Traceback" not in result.output
    assert result.exit_code == (4 if command == "lightbox" else 2), result.output
    assert f"{path}: cannot read: Permission denied" in result.output


@pytest.mark.parametrize("command", ["parse", "report", "lightbox"])
def test_a_folder_for_one_file_is_an_input_error(command: str, tmp_path: Path) -> None:
    folder = tmp_path / "dir.bbox"
    folder.mkdir()
    args = {"parse": ["parse"], "report": ["report", "-o", "-"]}
    result = invoke([*args.get(command, ["lightbox", "verify"]), str(folder)])
    assert "internal error" not in result.output and "Traceback" not in result.output
    assert result.exit_code == (4 if command == "lightbox" else 2), result.output
    assert str(folder) in result.output


# -- one read of any input: `<(…)` and FIFOs (the "Hardening 3" issue) -------------------

PIPE_COMMANDS = [name for name in PATH_COMMANDS if name not in ("check-json", "parse", "stats", "redact")]

#: A session with a call, a failure, metrics and a warning: every command has something to say.
PIPED = (
    HEADER
    + b"u: hello\nt:read a.rs -> [12 lines]\nt:bash make \xe2\x86\x92 [error] exit 2\n"
    + b"# metrics step=1 prompt=10 completion=5 cost=0.01\n"
)


def _normalised(text: str, path: str) -> str:
    return text.replace(path, "X").replace("<stdin>", "X")


def _run(args: list[str], path: str, tmp_path: Path, shell: bool = False) -> tuple[int, str]:
    """Run a command on ``path`` in a process (``shell``: through bash, ``path`` being a
    shell word such as ``<(cat FILE)``); its exit code and output (and export's tables)."""
    out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
    argv = [sys.executable, "-m", "bbox_lark.cli", *(arg.format(out=out) for arg in args)]
    if shell:
        import shlex

        command = ["bash", "-c", " ".join(shlex.quote(arg) for arg in argv) + " " + path]
    else:
        command = [*argv, path]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    shown = path if not shell else "/dev/fd/"
    text = done.stdout + done.stderr
    if shell:
        text = re.sub(r"/dev/fd/\d+", "X", text)
    tables = "".join(p.read_text() for p in sorted(out.glob("*.csv"))) if out.is_dir() else ""
    if shell:
        tables = re.sub(r"/dev/fd/\d+", "X", tables)
    return done.returncode, _normalised(text.replace(str(out), "OUT") + tables, shown)


@pytest.mark.parametrize("command", PIPE_COMMANDS, ids=PIPE_COMMANDS)
def test_process_substitution_is_read_once(command: str, tmp_path: Path) -> None:
    # stats, report, export and query read such a path twice: a bogus E004, 0 events, a
    # near-empty page with exit 0.
    if command == "lightbox":
        source = Path(__file__).parent / "fixtures" / "lightbox" / "session" / "events.jsonl"
    else:
        source = tmp_path / "s.bbox"
        source.write_bytes(PIPED)
    args = PATH_COMMANDS[command]
    expected = _run(args, str(source), tmp_path)
    got = _run(args, f"<(cat {source})", tmp_path, shell=True)
    if command == "fmt-write":  # a pipe cannot be rewritten in place: the text goes to stdout
        assert got[0] == 0 and "t:read a.rs → [12 lines]" in got[1]
        return
    assert got == expected


@pytest.mark.parametrize("command", PIPE_COMMANDS, ids=PIPE_COMMANDS)
def test_fifo_with_one_writer_is_read_once(command: str, tmp_path: Path) -> None:
    # With one writer, a second read of a FIFO waits for ever: the timeout fails the test.
    import os
    import threading

    if command == "lightbox":
        data = (Path(__file__).parent / "fixtures" / "lightbox" / "session" / "events.jsonl").read_bytes()
    else:
        data = PIPED
    regular = tmp_path / "s.bbox"
    regular.write_bytes(data)
    args = PATH_COMMANDS[command]
    expected = _run(args, str(regular), tmp_path)
    fifo = tmp_path / "fifo.bbox"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as stream:
            stream.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        got = _run(args, str(fifo), tmp_path)
    finally:
        if writer.is_alive():  # the command never opened it: let the writer go
            with open(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK), "rb"):
                pass
        writer.join(5)
    expected = (expected[0], expected[1].replace("s.bbox", "fifo.bbox"))
    if command == "fmt-write":
        assert got[0] == 0 and "t:read a.rs → [12 lines]" in got[1]
        assert fifo.exists() and not fifo.is_file()  # the FIFO is not replaced by a file
        return
    assert got == expected
