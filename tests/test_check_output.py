"""``check``'s output formats (``bbox_lark/cli/check_output.py``) and the command polish around them:
``--statistics``, ``--quiet``, ``--exit-zero``, ``--version``, ``explain --list``, help pages,
coloured diffs, the progress bar.

SARIF is validated against the official OASIS SARIF 2.1.0 schema
(``tests/fixtures/sarif/``, where its source is noted); JUnit is parsed with ``xml.etree``.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from functools import cache
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft4Validator
from rich.console import Console
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner, Result

import bbox_lark
from bbox_lark.checks.workflow import FileReport, check_paths
from bbox_lark.cli import app, console
from bbox_lark.cli.ansi import color_diff, wants_color
from bbox_lark.cli.check_output import (
    FORMATS,
    ReportOptions,
    Tally,
    artifact_uri,
    escape_data,
    escape_property,
    render,
    render_statistics,
    sarif_rules,
    statistics,
    window,
)
from bbox_lark.syntax.nodes import Diagnostic

REPO = Path(__file__).resolve().parent.parent
FINDINGS = REPO / "docs" / "examples" / "findings.bbox"
DEMO = REPO / "examples" / "demo.bbox"
SARIF_SCHEMA = REPO / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
CLI_MD = REPO / "docs" / "cli.md"
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
ANSI = re.compile("\x1b\\[[0-9;]*m")

runner = CliRunner()


def invoke(args: list[str], data: bytes | None = None, **env: str) -> Result:
    result = runner.invoke(app, args, input=data, env={"NO_COLOR": "", "FORCE_COLOR": "", **env})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the repository root, so that paths are shown relative."""
    monkeypatch.chdir(REPO)


@pytest.fixture
def odd_file(tmp_path: Path) -> Path:
    """Findings on lines with a tab, wide characters, an invalid byte, a control character
    and a very long line."""
    path = tmp_path / "odd.bbox"
    body = (
        b"t:read\tsrc/a.rs -> [1 lines]\n"  # W013 after a tab
        + "u: 日本語のテキスト step=x\n".encode()  # W014 after wide characters
        + b"a: caf\xe9 \x01 ts=nope\n"  # E001, W005 after an invalid byte and a control character
        + b"t:grep "
        + b"x" * 300
        + b' "open '
        + b"y" * 300
        + b" -> [2 lines]\n"  # E012 deep in a long line
    )
    path.write_bytes(HEADER.encode() + body)
    return path


# -- every format -------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["full", "concise", "github", "junit"])
def test_text_formats(output: str, in_repo: None, snapshot: SnapshotAssertion) -> None:
    result = invoke(["check", "--output-format", output, rel(FINDINGS), rel(DEMO)])
    assert result.exit_code == 1
    assert result.stdout == snapshot


def test_full_shows_the_source_line_and_what_to_do(odd_file: Path, snapshot: SnapshotAssertion) -> None:
    result = invoke(["check", "-f", "full", str(odd_file)])
    assert result.exit_code == 1
    text = result.stdout.replace(str(odd_file), "odd.bbox")
    assert text == snapshot
    # The caret sits under the column: tab copied, wide characters two cells, escapes as wide
    # as they are shown.
    blocks = text.split("\n\n")
    assert "7 | t:read\tsrc/a.rs -> [1 lines]\n  |       \t         ^" in blocks[0]
    assert "8 | u: 日本語のテキスト step=x\n  | " + " " * (3 + 2 * 8 + 6) + "^" in blocks[1]
    assert "9 | a: caf\\xe9 \\x01 ts=nope\n  |       ^" in blocks[2]
    assert "  = help: Re-encode the file as UTF-8" in blocks[2]
    assert "  = note: `bbox-lark explain E001` explains invalid-utf8, with examples" in blocks[2]
    long_block = next(b for b in blocks if ": E012 " in b)
    shown = next(line for line in long_block.splitlines() if line.startswith("10 | "))
    assert shown.startswith("10 | …") and shown.endswith("…")


def test_text_is_the_old_name_of_concise(in_repo: None) -> None:
    old = invoke(["check", "--format", "text", rel(FINDINGS)])
    new = invoke(["check", "--output-format", "concise", rel(FINDINGS)])
    assert old.stdout == new.stdout and old.exit_code == new.exit_code == 1


def test_the_default_is_full_on_a_terminal_and_concise_otherwise(
    in_repo: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = invoke(["check", rel(FINDINGS)]).stdout
    assert plain == invoke(["check", "-f", "concise", rel(FINDINGS)]).stdout
    monkeypatch.setattr(console, "isatty", lambda stream: True)
    assert invoke(["check", rel(FINDINGS)]).stdout == invoke(["check", "-f", "full", rel(FINDINGS)]).stdout


def test_colours_only_when_wanted(in_repo: None) -> None:
    for output in ("full", "concise"):
        plain = invoke(["check", "-f", output, rel(FINDINGS)]).stdout
        assert "\x1b[" not in plain
        coloured = invoke(["check", "-f", output, rel(FINDINGS)], FORCE_COLOR="1").stdout
        assert "\x1b[1;31mE012\x1b[0m" in coloured
        assert ANSI.sub("", coloured) == plain
    assert "\x1b[" not in invoke(["check", rel(FINDINGS)], FORCE_COLOR="1", NO_COLOR="1").stdout
    assert "\x1b[" not in invoke(["check", "-f", "json", rel(FINDINGS)], FORCE_COLOR="1").stdout


def test_every_format_survives_undecodable_paths_and_messages(tmp_path: Path) -> None:
    name = b"caf\xe9\x01.bbox".decode("utf-8", "surrogateescape")
    path = tmp_path / name
    path.write_bytes(HEADER.encode() + b"t:read a attempt=\xe9 \xe2\x86\x92 [ok]\nbad \x02\xff\n")
    for output in FORMATS:
        result = invoke(["check", "-f", output, str(path)])
        assert result.exit_code == 1, output
        assert "W014" in result.stdout, output
        if output == "junit":
            ET.fromstring(result.stdout)
        if output in ("json", "sarif"):
            json.loads(result.stdout)


# -- github -------------------------------------------------------------------------------


def test_github_escapes_file_and_title_like_the_actions_toolkit() -> None:
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("a,b:c%d\n.bbox") == "a%2Cb%3Ac%25d%0A.bbox"


def test_github_file_names_with_commas_colons_and_percents(tmp_path: Path) -> None:
    path = tmp_path / "a,b:c%d.bbox"
    path.write_text(HEADER + "tool: x\n")
    result = invoke(["check", "-f", "github", str(path)])
    assert result.exit_code == 0
    escaped = str(tmp_path).replace("%", "%25").replace(":", "%3A").replace(",", "%2C")
    expected = f"::warning file={escaped}/a%2Cb%3Ac%25d.bbox,line=7,col=1,title=W003 unknown-line::"
    assert result.stdout == expected + "unknown line kind (kept verbatim)\n"


def test_github_reports_an_unreadable_input(tmp_path: Path) -> None:
    result = invoke(["check", "-f", "github", str(tmp_path / "gone.bbox")])
    assert result.exit_code == 2
    assert result.stdout.startswith("::error title=bbox-lark::")
    assert "gone.bbox%3A" not in result.stdout and "gone.bbox: no such file" in result.stdout


# -- sarif --------------------------------------------------------------------------------


@cache
def sarif_validator() -> Draft4Validator:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


def assert_valid_sarif(value: Any) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in sarif_validator().iter_errors(value)]
    assert not errors, errors[:5]


def test_the_schema_rejects_what_sarif_forbids() -> None:
    value = json.loads(invoke(["check", "-f", "sarif", str(FINDINGS)]).stdout)
    assert_valid_sarif(value)
    value["runs"][0]["results"][0]["level"] = "fatal"
    assert list(sarif_validator().iter_errors(value))


def test_sarif_is_valid_for_every_corpus_file_at_once(tmp_path: Path) -> None:
    corpus = sorted(str(p) for p in (REPO / "corpus").glob("*/*.bbox"))
    result = invoke(["check", "-f", "sarif", *corpus, str(DEMO), str(tmp_path / "missing.bbox")])
    assert result.exit_code == 2
    value = json.loads(result.stdout)
    assert_valid_sarif(value)
    run = value["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    found = {r["ruleId"] for r in run["results"]}
    assert len(found) > 30
    for item in run["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        region = item["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    invocation = run["invocations"][0]
    assert invocation == {
        "executionSuccessful": False,
        "exitCode": 2,
        "toolExecutionNotifications": invocation["toolExecutionNotifications"],
    }
    assert "missing.bbox: no such file" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_sarif_rules_come_from_the_registry() -> None:
    rules = {rule["id"]: rule for rule in sarif_rules()}
    registry = bbox_lark.registry()
    assert list(rules) == [code for code, info in registry.items() if not info.retired]
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for code, rule in rules.items():
        info = registry[code]
        assert rule["name"] == info.name
        assert rule["shortDescription"]["text"] == info.summary
        assert rule["fullDescription"]["text"] == info.rationale
        assert rule["defaultConfiguration"]["level"] == levels[info.severity]
        assert info.fix in rule["help"]["text"] and f"bbox-lark explain {code}" in rule["help"]["text"]


def test_sarif_of_stdin_and_odd_inputs(odd_file: Path) -> None:
    for args, data in ((["-"], odd_file.read_bytes()), ([str(odd_file)], None), (["-"], b"")):
        value = json.loads(invoke(["check", "-f", "sarif", *args], data).stdout)
        assert_valid_sarif(value)
    location = value["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"description": {"text": "standard input"}}


def test_artifact_uris() -> None:
    assert artifact_uri("docs/a b#1.bbox") == "docs/a%20b%231.bbox"
    assert artifact_uri("/tmp/x.bbox") == "file:///tmp/x.bbox"
    assert artifact_uri(b"caf\xe9.bbox".decode("utf-8", "surrogateescape")) == "caf%E9.bbox"


def test_the_sarif_example_in_the_docs_is_what_check_writes(in_repo: None) -> None:
    page = CLI_MD.read_text(encoding="utf-8")
    sentence = "`bbox-lark check --output-format sarif --select W003 docs/examples/findings.bbox` writes"
    assert sentence in page
    documented = json.loads(page.split(sentence, 1)[1].split("```json\n", 1)[1].split("\n```", 1)[0])
    written = json.loads(invoke(["check", "-f", "sarif", "--select", "W003", rel(FINDINGS)]).stdout)
    rules = written["runs"][0]["tool"]["driver"].pop("rules")
    shown = documented["runs"][0]["tool"]["driver"].pop("rules")
    assert shown == [rule for rule in rules if rule["id"] == "W003"]
    assert documented == written


# -- junit --------------------------------------------------------------------------------


def test_junit_structure(in_repo: None, tmp_path: Path) -> None:
    result = invoke(["check", "-f", "junit", rel(FINDINGS), rel(DEMO), str(tmp_path / "gone.bbox")])
    assert result.exit_code == 2
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites" and root.get("name") == "bbox-lark"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [rel(FINDINGS), rel(DEMO), str(tmp_path / "gone.bbox")]
    findings, demo, gone = suites
    [case] = findings.findall("testcase")
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "E012" and case.get("line") == "12"
    assert "help: Close the string" in (failure.text or "")
    assert (findings.findtext("system-out") or "").count("\n") == 3  # the four warnings
    assert [c.get("name") for c in demo.findall("testcase")] == ["check"]
    assert demo.find("testcase/failure") is None
    assert gone.find("testcase/error") is not None
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")
    for suite in suites:
        assert int(suite.get("tests") or 0) == len(suite.findall("testcase"))


def test_junit_strict_makes_warnings_fail(in_repo: None) -> None:
    root = ET.fromstring(invoke(["check", "-f", "junit", "--strict", rel(FINDINGS)]).stdout)
    codes = [case.find("failure").get("type") for case in root.iter("testcase")]  # type: ignore[union-attr]
    assert codes == ["E012", "W004", "W013", "W003", "W002"]
    assert root.find("testsuite/system-out") is None


# -- statistics, quiet, exit-zero -------------------------------------------------------------


def test_statistics(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    path.write_text(HEADER + "tool: a\ntool: b\nt:x a -> [ok]\nbad\n")
    result = invoke(["check", "--statistics", str(path)])
    assert result.exit_code == 0
    assert result.stdout == "3  W003  unknown-line\n1  W013  ascii-arrow\n"
    assert "1 file(s): 0 error(s), 4 warning(s), 0 info" in result.stderr
    as_json = json.loads(invoke(["check", "--statistics", "-f", "json", str(path)]).stdout)
    assert as_json == [
        {"code": "W003", "name": "unknown-line", "severity": "warning", "count": 3},
        {"code": "W013", "name": "ascii-arrow", "severity": "warning", "count": 1},
    ]
    assert invoke(["check", "--statistics", "--strict", str(path)]).exit_code == 1
    assert invoke(["check", "--statistics", "--quiet", str(path)]).stderr == ""


def test_statistics_api() -> None:
    reports = list(check_paths([str(FINDINGS), str(DEMO)]))
    rows = statistics(reports)
    assert sum(row.count for row in rows) == 5
    assert "".join(render_statistics(reports, as_json=False)).startswith("1  E012  unterminated-quote\n")


def test_quiet_prints_findings_only(in_repo: None, tmp_path: Path) -> None:
    result = invoke(["check", "--quiet", rel(FINDINGS)])
    assert result.exit_code == 1
    assert result.stdout == invoke(["check", rel(FINDINGS)]).stdout
    assert result.stderr == ""
    result = invoke(["check", "-q", str(tmp_path / "gone.bbox")])  # an unreadable input still says so
    assert result.exit_code == 2 and "no such file" in result.stderr and "file(s)" not in result.stderr


def test_exit_zero(in_repo: None, tmp_path: Path) -> None:
    assert invoke(["check", "--exit-zero", "--strict", rel(FINDINGS)]).exit_code == 0
    value = json.loads(invoke(["check", "--exit-zero", "-f", "json", rel(FINDINGS)]).stdout)
    assert value["exit_code"] == 0 and value["totals"]["error"] == 1
    sarif = json.loads(invoke(["check", "--exit-zero", "-f", "sarif", rel(FINDINGS)]).stdout)
    assert sarif["runs"][0]["invocations"][0] == {"executionSuccessful": True, "exitCode": 0}
    # An input that cannot be read is not a finding: still 2.
    assert invoke(["check", "--exit-zero", rel(FINDINGS), str(tmp_path / "gone.bbox")]).exit_code == 2


def test_tally() -> None:
    bad = FileReport("a", (Diagnostic("W003", "warning", 1, 1, "x", "unknown-line"),))
    tally = Tally(ReportOptions(strict=True, exit_zero=False))
    assert list(tally.watch([bad, FileReport("b", error="b: gone")])) and tally.exit_code == 2
    assert tally.summary() == "1 file(s): 0 error(s), 1 warning(s), 0 info; 1 path(s) could not be read"
    zero = Tally(ReportOptions(strict=True, exit_zero=True))
    zero.add(bad)
    assert zero.worst == 1 and zero.exit_code == 0


def test_render_rejects_unknown_formats() -> None:
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        render([], "xml")
    assert invoke(["check", "-f", "xml", str(DEMO)]).exit_code == 2


# -- full: the source window --------------------------------------------------------------


def test_window() -> None:
    assert window("abc", 2) == ("abc", " ")
    assert window("abc", 4) == ("abc", "   ")  # just after the end
    assert window("\tx", 2) == ("\tx", "\t")
    assert window("日x", 2) == ("日x", "  ")
    assert window("e\u0301x", 3) == ("e\u0301x", " ")  # a combining mark takes no cell
    assert window("\x00x", 2) == ("\\x00x", "    ")
    assert window("\udce9x", 2) == ("\\xe9x", "    ")
    line = "".join(chr(ord("a") + i % 26) for i in range(1000))
    shown, indent = window(line, 500)
    assert shown.startswith("…") and shown.endswith("…") and len(shown) == 102
    assert shown[len(indent)] == line[499]
    shown, indent = window(line, 1)
    assert not shown.startswith("…") and indent == ""


def test_full_without_the_line(tmp_path: Path) -> None:
    result = invoke(["check", "-f", "full", "-"], b"")  # E004 on line 1 of an empty file
    assert result.exit_code == 1
    assert result.stdout.startswith("<stdin>:1:1: E004 ")
    assert "|" not in result.stdout and "  = help: Start the file with a header" in result.stdout


# -- what to do -----------------------------------------------------------------------------

#: Codes about which there is nothing to do (their finding is only information).
NOTHING_TO_DO = {"I005"}


def test_every_code_says_what_to_do() -> None:
    for code, info in bbox_lark.registry().items():
        if code in NOTHING_TO_DO:
            assert not info.fix, code
            continue
        assert info.fix.strip(), f"{code} needs a fix hint: what should the user do?"
        assert info.fix[0].isupper() and info.fix.endswith("."), code
        assert "\n" not in info.fix and len(info.fix) < 160, code


def test_explain_shows_what_to_do() -> None:
    result = invoke(["explain", "W013"])
    assert "### How to fix\n\nRun `bbox-lark fmt` or `bbox-lark fix --arrows`" in result.stdout
    assert "How to fix" not in invoke(["explain", "I005"]).stdout


# -- commands -------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag: str) -> None:
    result = invoke([flag])
    assert result.exit_code == 0
    from importlib.machinery import EXTENSION_SUFFIXES

    import bbox_lark.syntax.parser

    # The tests of the compiled modules, this one among them, run against the compiled build
    # too (.ci/run).
    compiled = bbox_lark.syntax.parser.__file__.endswith(tuple(EXTENSION_SUFFIXES))
    build = "compiled with mypyc" if compiled else "pure Python"
    assert result.stdout == f"bbox-lark {bbox_lark.__version__} ({build})\n"


def test_version_says_when_the_build_is_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    # What find_spec reports for the compiled build (tests/test_compiled_build.py and CI run
    # the real one): bbox_lark.syntax.parser loaded from a C extension.
    import importlib.util
    from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec

    def find_spec(name: str) -> ModuleSpec:
        return ModuleSpec(name, None, origin=f"/site/bbox_lark/parser{EXTENSION_SUFFIXES[0]}")

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    result = invoke(["--version"])
    assert result.stdout == f"bbox-lark {bbox_lark.__version__} (compiled with mypyc)\n"


def test_explain_list_covers_every_code() -> None:
    result = invoke(["explain", "--list"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    registry = bbox_lark.registry()
    assert [line.split()[0] for line in lines] == list(registry)
    for line, info in zip(lines, registry.values(), strict=True):
        assert re.fullmatch(rf"{info.code}  {info.severity} +{info.name} +{re.escape(info.summary)}", line)
    value = json.loads(invoke(["explain", "--list", "--json"]).stdout)
    assert [(v["code"], v["severity"], v["fix"]) for v in value] == [
        (i.code, i.severity, i.fix) for i in registry.values()
    ]


@pytest.mark.parametrize(
    "args", [["explain"], ["explain", "W003", "--list"], ["explain", "W003", "--json"]], ids=" ".join
)
def test_explain_usage_errors(args: list[str]) -> None:
    result = invoke(args)
    assert result.exit_code == 2 and "error:" in result.stderr


COMMANDS = [c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands]


@pytest.mark.parametrize("command", [[], *([name] for name in COMMANDS)], ids=lambda c: " ".join(c) or "root")
def test_help_pages_have_no_type_noise(command: list[str]) -> None:
    result = invoke([*command, "--help"])
    assert result.exit_code == 0
    assert "--help" in result.stdout
    for noise in ("<bool>", "list[", "<NoneType>"):
        assert noise not in result.stdout, (command, noise)


def test_completion_is_offered() -> None:
    result = invoke(["--help"])
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


# -- diffs ----------------------------------------------------------------------------------


def test_diffs_are_coloured_on_a_terminal_only(tmp_path: Path) -> None:
    path = tmp_path / "m.bbox"
    path.write_bytes(HEADER.encode() + b"u:hi  \r\nt:read a -> [ok]\r\n")
    for args in (["fmt", "--diff"], ["fix", "--arrows"]):
        plain = invoke([*args, str(path)]).stdout_bytes.decode()
        coloured = invoke([*args, str(path)], FORCE_COLOR="1").stdout_bytes.decode()
        assert "\x1b[" not in plain and "-t:read a -> [ok]\r\n" in plain  # CRLF kept
        assert "\x1b[31m-t:read a -> [ok]\x1b[0m\r\n" in coloured
        assert "\x1b[32m+t:read a → [ok]\x1b[0m\r\n" in coloured
        assert ANSI.sub("", coloured) == plain


def test_formatting_stdin_is_never_coloured() -> None:
    data = (HEADER + "u:hi\n").encode()
    assert invoke(["fmt", "-"], data, FORCE_COLOR="1").stdout == HEADER + "u: hi\n"


def test_color_diff_follows_the_hunks() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n--- not a header\n+++ nor this\n same\n"
    diff += "\\ No newline at end of file\n"
    lines = color_diff(diff).split("\n")
    assert lines[0] == "\x1b[1m--- a/x\x1b[0m"
    assert lines[2] == "\x1b[36m@@ -1,2 +1,2 @@\x1b[0m"
    assert lines[3] == "\x1b[31m--- not a header\x1b[0m"
    assert lines[4] == "\x1b[32m+++ nor this\x1b[0m"
    assert lines[5] == " same"
    assert ANSI.sub("", color_diff(diff)) == diff
    assert (
        color_diff("@@ -1 +1 @@\n-a\r\n+b\r\n")
        == "\x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-a\x1b[0m\r\n\x1b[32m+b\x1b[0m\r\n"
    )


def test_wants_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(StringIO):
        def isatty(self) -> bool:
            return True

    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    assert wants_color(Tty()) and not wants_color(StringIO())
    monkeypatch.setenv("TERM", "dumb")
    assert not wants_color(Tty())
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert wants_color(StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_color(Tty())


# -- progress -------------------------------------------------------------------------------


def test_progress_bar_shows_after_the_delay_on_a_terminal() -> None:
    shown = StringIO()
    progress = console.ProgressBar(enabled=True, console=Console(file=shown, force_terminal=True, width=80))
    progress.DELAY = 0.0
    with progress:
        progress.advance()
        progress.advance()
    assert "checking" in shown.getvalue() and "2 file(s)" in shown.getvalue()
    hidden = StringIO()
    with console.ProgressBar(enabled=True, console=Console(file=hidden, force_terminal=True)) as slow:
        slow.advance()  # within the first second: nothing yet
    assert hidden.getvalue() == ""
    off = console.ProgressBar(enabled=False, console=Console(file=hidden, force_terminal=True))
    off.DELAY = 0.0
    with off:
        off.advance()
    assert hidden.getvalue() == ""


def test_no_progress_bar_off_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console.ProgressBar, "DELAY", 0.0)
    for index in range(3):
        (tmp_path / f"{index}.bbox").write_text(HEADER)
    result = invoke(["check", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stderr == "✓ 3 file(s): 0 error(s), 0 warning(s), 0 info\n"


# -- anything at all ------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        *(b"---\n", b"format: bbox/1\n", b"t:", b"@", b"#", b"\xe2\x86\x92", b" -> ", b'"', b"\x00", b"\xe9"),
        *(b"\r", b"\n", b"\t", b"  ", b"=", b"[", b"]", b"step=", b"\x1b", b"<", b"&", b"]]>", b"\x7f"),
    ]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_PIECES, st.binary(max_size=6)), max_size=30).map(b"".join))
def test_arbitrary_bytes_render_in_every_format(data: bytes) -> None:
    report = FileReport("-", tuple(bbox_lark.check(data)), text=data.decode("utf-8", "surrogateescape"))
    for output in FORMATS:
        text = "".join(render([report], output, ReportOptions(color=True)))
        text.encode("utf-8")  # no lone surrogates left
        if output == "junit":
            ET.fromstring(text)
        if output == "sarif":
            assert_valid_sarif(json.loads(text))
