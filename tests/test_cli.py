"""The CLI: every example in ``docs/cli.md`` is run (exit code, documented output, syrupy
snapshot), JSON outputs are validated against ``docs/schema/``, and every command is
documented.

An example is a line ``$ bbox-lark ...  # exit N`` in a ``sh`` block of docs/cli.md; when a
``text`` block follows the ``sh`` block, it is the exact output of the block's last example.
Examples are found by reading the page, never listed here. They run from a scratch folder
holding copies of ``examples/`` and ``docs/``, so that writing commands (``docs --out``)
never touch the repository.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner, Result

import bbox_lark
from bbox_lark.cli import app
from bbox_lark.cli.docsgen import check_section
from bbox_lark.syntax.grammar import vocabulary

REPO = Path(__file__).resolve().parent.parent
CLI_MD = REPO / "docs" / "cli.md"
SCHEMAS = REPO / "docs" / "schema"
DEMO = REPO / "examples" / "demo.bbox"
FINDINGS = REPO / "docs" / "examples" / "findings.bbox"

runner = CliRunner()

_FENCE = re.compile(r"^(`{3,})(\w*)\s*$")
_EXIT = re.compile(r"#\s*exit\s+(\d+)\s*$")


@dataclass(frozen=True)
class Example:
    #: Line of docs/cli.md.
    line: int
    command: str
    exit: int | None
    #: The documented output, when a text block follows.
    output: str | None = None

    @property
    def slug(self) -> str:
        """The command as a test id (line numbers would change with every edit of the page)."""
        words = self.command.split("#")[0].removeprefix("bbox-lark")
        return re.sub(r"[^A-Za-z0-9.]+", "-", words).strip("-")


def read_examples(text: str) -> list[Example]:
    """Every ``$ bbox-lark ...`` line of the page, with its exit code and shown output."""
    found: list[Example] = []
    lines = text.splitlines()
    index = 0
    last_sh_block: list[int] = []  # indexes into `found` of the latest sh block's examples
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence is None:
            if lines[index].strip():
                last_sh_block = []
            index += 1
            continue
        ticks, language = fence[1], fence[2]
        body: list[str] = []
        index += 1
        while index < len(lines) and lines[index] != ticks:
            body.append(lines[index])
            index += 1
        start = index - len(body)
        index += 1
        if language == "sh":
            last_sh_block = []
            for offset, line in enumerate(body):
                if line.startswith("$ "):
                    command = line[2:]
                    exit_code = _EXIT.search(command)
                    found.append(
                        Example(start + offset + 1, command, int(exit_code[1]) if exit_code else None)
                    )
                    last_sh_block.append(len(found) - 1)
            continue
        if language == "text" and last_sh_block:
            last = found[last_sh_block[-1]]
            found[last_sh_block[-1]] = Example(last.line, last.command, last.exit, "\n".join(body) + "\n")
        last_sh_block = []
    return found


EXAMPLES = read_examples(CLI_MD.read_text(encoding="utf-8"))
EXAMPLE_IDS = [e.slug for e in EXAMPLES]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_example(command: str) -> Result:
    """Run one documented command line (``< file`` redirects standard input)."""
    words = shlex.split(command, comments=True)
    assert words[0] == "bbox-lark", command
    stdin: bytes | None = None
    if "<" in words:
        at = words.index("<")
        stdin = Path(words[at + 1]).read_bytes()
        words = words[:at] + words[at + 2 :]
    return runner.invoke(app, words[1:], input=stdin)


def test_examples_are_found() -> None:
    assert len(EXAMPLES) >= 15
    assert len(set(EXAMPLE_IDS)) == len(EXAMPLE_IDS), "two examples run the same command"
    assert sum(1 for e in EXAMPLES if e.output is not None) >= 6


@pytest.mark.parametrize("example", EXAMPLES, ids=EXAMPLE_IDS)
def test_documented_example(example: Example, workdir: Path, snapshot: SnapshotAssertion) -> None:
    assert example.exit is not None, f"docs/cli.md:{example.line}: give the exit code as `# exit N`"
    result = run_example(example.command)
    assert "Traceback" not in result.output
    assert result.exit_code == example.exit, result.output
    if example.output is not None:
        assert result.output == example.output
    assert result.output == snapshot


def test_every_command_is_documented() -> None:
    text = CLI_MD.read_text(encoding="utf-8")
    names = [
        command.name or (command.callback.__name__ if command.callback else "")
        for command in app.registered_commands
    ]
    for name in names:
        assert f"## `{name}`" in text, f"command {name} has no section in docs/cli.md"
        assert any(e.command.startswith(f"bbox-lark {name} ") for e in EXAMPLES), f"no example runs {name}"


def test_read_examples() -> None:
    page = (
        "```sh\n$ bbox-lark stats x  # exit 1\nplain\n$ bbox-lark parse y\n```\n\n"
        "```text\nout\n```\n\n"
        "words\n\n```text\nnot an output\n```\n"
        "````text\n```\n````\n"
    )
    assert read_examples(page) == [
        Example(2, "bbox-lark stats x  # exit 1", 1),
        Example(4, "bbox-lark parse y", None, "out\n"),
    ]


# -- JSON schemas -----------------------------------------------------------------------


@cache
def schema(name: str) -> Draft202012Validator:
    document = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document)


def assert_valid(validator: Draft202012Validator, value: Any) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(value)]
    assert not errors, errors


INPUTS = [
    DEMO,
    FINDINGS,
    *sorted((REPO / "corpus" / "valid").glob("*.bbox")),
    *sorted((REPO / "corpus" / "invalid").glob("*.bbox")),
]
INPUT_IDS = [p.relative_to(REPO).as_posix() for p in INPUTS]
SAMPLES = {
    "invalid-utf8": b"---\nformat: bbox/1\nid: \xe9\nrepo_sha: 215db51\n---\na: caf\xe9\n",
    "no-header": b"a: hi\n  more\n",
    "empty": b"",
    "blob-and-metrics": (
        b"---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\ntokens_total_in: 5\n---\n"
        b"a: x step=1 # metrics prompt=1 cost=$0.5\n@end tokens_in=4\n# tokens=9 cost=$1\n"
        b"t:read a attempt=2/3 level=warn latency_ms=4 ts=2025-01-01T00:00:00Z \xe2\x86\x92 "
        b"@blob sha256=ab12cd bytes=4 mime=text/plain\n"
        b'q: id=q1 \xe2\x86\x92 [auto: a, b, reason="x"]\nt:x \xe2\x86\x92 [retry 1/3]\n'
        b"o: \xe2\x86\x92 [selected: a]\nt:y \xe2\x86\x92 [redacted:key]\nt:z \xe2\x86\x92\n"
    ),
}


@pytest.mark.parametrize("path", INPUTS, ids=INPUT_IDS)
def test_json_outputs_match_their_schemas(path: Path) -> None:
    for args, name in (
        (["check", "--format", "json"], "check"),
        (["check", "--format", "json", "--strict"], "check"),
        (["parse", "--json"], "parse"),
        (["parse", "--json", "--header"], "parse"),
        (["parse", "--json", "--body"], "parse"),
        (["stats", "--json"], "stats"),
    ):
        result = runner.invoke(app, [*args, str(path)])
        assert result.exit_code in (0, 1), result.output
        assert_valid(schema(name), json.loads(result.stdout))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_json_outputs_of_odd_inputs_match_their_schemas(name: str) -> None:
    data = SAMPLES[name]
    for args, kind in ((["check", "--format", "json"], "check"), (["parse", "--json"], "parse")):
        assert_valid(schema(kind), json.loads(runner.invoke(app, [*args, "-"], input=data).stdout))
    assert_valid(schema("stats"), json.loads(runner.invoke(app, ["stats", "--json", "-"], input=data).stdout))


def test_check_schema_covers_unreadable_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = tmp_path / "a.bbox"
    good.write_bytes(DEMO.read_bytes())
    locked = tmp_path / "b.bbox"
    locked.write_bytes(DEMO.read_bytes())
    read_bytes = Path.read_bytes

    def refuse_b(self: Path) -> bytes:
        if self.name == "b.bbox":
            raise PermissionError(13, "Permission denied", str(self))
        return read_bytes(self)

    opener = Path.open

    def refuse_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.name == "b.bbox":  # check reads a file as a stream
            raise PermissionError(13, "Permission denied", str(self))
        return opener(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_bytes", refuse_b)
    monkeypatch.setattr(Path, "open", refuse_open)
    result = runner.invoke(app, ["check", "--format", "json", str(good), str(locked)])
    value = json.loads(result.stdout)
    assert result.exit_code == 2 and value["exit_code"] == 2
    assert [f["readable"] for f in value["files"]] == [True, False]
    assert_valid(schema("check"), value)


def test_schemas_reject_what_the_code_does_not_write() -> None:
    value = json.loads(runner.invoke(app, ["stats", "--json", str(DEMO)]).stdout)
    value["files"][0]["tokens"]["metrics"]["surprise"] = 1
    assert list(schema("stats").iter_errors(value))
    value = json.loads(runner.invoke(app, ["parse", "--json", str(DEMO)]).stdout)
    value["body"][0]["kind"] = "shouting"
    assert list(schema("parse").iter_errors(value))


def test_schema_enumerations_follow_the_code() -> None:
    parse_schema = json.loads((SCHEMAS / "parse.schema.json").read_text(encoding="utf-8"))
    event = parse_schema["$defs"]["event"]["properties"]
    assert event["kind"]["enum"] == list(vocabulary().event_kinds)
    assert parse_schema["$defs"]["result"]["properties"]["kind"]["enum"] == list(vocabulary().result_kinds)
    stats_schema = json.loads((SCHEMAS / "stats.schema.json").read_text(encoding="utf-8"))
    assert stats_schema["$defs"]["file"]["properties"]["events"]["required"] == list(vocabulary().event_kinds)
    run = stats_schema["$defs"]["run"]["properties"]["totals"]
    per_file = stats_schema["$defs"]["file"]["required"]
    assert run["required"] == [
        "files",
        *[key for key in per_file if key not in ("path", "version", "header")],
    ]


def test_stats_over_several_files_match_the_run_schema(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    shutil.copyfile(DEMO, tmp_path / "a.bbox")
    shutil.copyfile(DEMO, tmp_path / "sub" / "b.rlog")
    result = runner.invoke(app, ["stats", "--json", str(tmp_path), str(tmp_path / "missing.bbox")])
    assert result.exit_code == 2  # the missing path
    value = json.loads(result.stdout)
    assert_valid(schema("stats"), value)
    assert [f["path"] for f in value["files"]] == [str(tmp_path / "a.bbox"), str(tmp_path / "sub" / "b.rlog")]
    assert value["unreadable"] == [
        {
            "path": str(tmp_path / "missing.bbox"),
            "error": f"{tmp_path / 'missing.bbox'}: no such file or directory",
        }
    ]
    one = value["files"][0]
    totals = value["totals"]
    assert totals["files"] == 2
    assert totals["lines"]["total"] == 2 * one["lines"]["total"]
    assert totals["calls"]["tool"]["total"] == 2 * one["calls"]["tool"]["total"]
    assert totals["tokens"]["metrics"]["prompt"] == 2 * one["tokens"]["metrics"]["prompt"]
    assert totals["steps"]["min"] == one["steps"]["min"] and totals["steps"]["max"] == one["steps"]["max"]
    value["totals"]["header"] = {}
    assert list(schema("stats").iter_errors(value))  # totals have no header


def test_stats_text_over_several_files_ends_with_the_totals(tmp_path: Path) -> None:
    shutil.copyfile(DEMO, tmp_path / "a.bbox")
    shutil.copyfile(DEMO, tmp_path / "b.bbox")
    result = runner.invoke(app, ["stats", str(tmp_path / "*.bbox")])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("File: ") == 2
    totals = result.stdout.split("Total: 2 file(s)")[1]
    assert re.search(r"^  tool calls\s+10$", totals, re.M)
    assert re.search(r"# metrics\s+3,440\s+780\s+2,000\s+-\s+\$0\.0071\s+4 counted", totals)


def test_stats_json_has_one_shape_for_one_file_or_many(tmp_path: Path) -> None:
    # Issue 25: one file gave an object and several {"files": [...]}; scripts broke on the
    # second file. Now one file is a run of one (DECISIONS §13).
    one = json.loads(runner.invoke(app, ["stats", "--json", str(DEMO)]).stdout)
    assert_valid(schema("stats"), one)
    assert [f["path"] for f in one["files"]] == [str(DEMO)] and one["totals"]["files"] == 1
    shutil.copyfile(DEMO, tmp_path / "a.bbox")
    two = json.loads(runner.invoke(app, ["stats", "--json", str(DEMO), str(tmp_path / "a.bbox")]).stdout)
    assert set(two) == set(one)
    same = dict(two["files"][0], path=str(DEMO))
    assert same == one["files"][0]


# -- commands ---------------------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(bbox_lark.registry()))
def test_explain_prints_the_docs_section(code: str) -> None:
    info = bbox_lark.registry()[code]
    for spelling in (code, code.lower(), info.name):
        result = runner.invoke(app, ["explain", spelling])
        assert result.exit_code == 0
        assert result.stdout == check_section(info).rstrip("\n") + "\n"


def test_explain_suggests_close_codes() -> None:
    result = runner.invoke(app, ["explain", "unknown-lines"])
    assert result.exit_code == 2
    assert "did you mean unknown-line" in result.stderr


def test_stats_text_shows_calls_and_tokens() -> None:
    result = runner.invoke(app, ["stats", str(DEMO)])
    assert result.exit_code == 0
    assert re.search(r"^  tool calls\s+5$", result.stdout, re.M)
    assert re.search(r"^    github\.issues\s+1$", result.stdout, re.M)
    assert re.search(r"# metrics\s+1,720\s+390\s+1,000\s+-\s+\$0\.00355\s+2 counted", result.stdout)
    assert re.search(r"summary\s+1,720\s+390\s+-\s+-\s+\$0\.0036\s+stated", result.stdout)


def test_parse_json_matches_the_library() -> None:
    from bbox_lark.syntax.jsonout import document_to_json

    result = runner.invoke(app, ["parse", "--json", str(DEMO)])
    expected = document_to_json(bbox_lark.parse(DEMO.read_bytes(), path=DEMO))
    assert json.loads(result.stdout) == {"path": str(DEMO), **expected}
    header = json.loads(runner.invoke(app, ["parse", "--json", "--header", str(DEMO)]).stdout)
    assert "body" not in header and header["header"]["fields"]["id"] == "sess_demo_001"
    body = json.loads(runner.invoke(app, ["parse", "--json", "--body", str(DEMO)]).stdout)
    assert "header" not in body and body["body"][0]["line"] == 14


def test_parse_part_selection_keeps_the_findings_about_that_part() -> None:
    data = b"a: hi\n"  # E004 (no header) concerns the header; W-free body
    header = json.loads(runner.invoke(app, ["parse", "--json", "--header", "-"], input=data).stdout)
    assert [d["code"] for d in header["diagnostics"]] == ["E004"]
    body = json.loads(runner.invoke(app, ["parse", "--json", "--body", "-"], input=data).stdout)
    assert body["diagnostics"] == []
    text = runner.invoke(app, ["parse", "--header", "-"], input=data).stdout
    assert "(no header)" in text and "E004 error at 1:1" in text


def test_docs_writes_every_generated_file(tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = runner.invoke(app, ["docs", "--out", str(out)])
    assert result.exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["checks.md", "convert.md", "grammar.html"]
    assert runner.invoke(app, ["docs", "--check", "--out", str(out)]).exit_code == 0
    (out / "checks.md").write_text("stale\n", encoding="utf-8")
    result = runner.invoke(app, ["docs", "--check", "--out", str(out)])
    assert result.exit_code == 1
    assert "checks.md is stale" in result.stderr
    (out / "grammar.html").unlink()
    result = runner.invoke(app, ["docs", "--check", "--out", str(out)])
    assert result.exit_code == 1
    assert "grammar.html is missing" in result.stderr
    nowhere = runner.invoke(app, ["docs", "--check", "--out", str(tmp_path / "none")])
    assert nowhere.exit_code == 1
    assert "none: no such folder; --check compares the generated pages of a checkout" in nowhere.stderr


def test_docs_refuses_a_file_as_folder(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x", encoding="utf-8")
    result = runner.invoke(app, ["docs", "--out", str(target)])
    assert result.exit_code == 2
    assert "is not a directory" in result.stderr
