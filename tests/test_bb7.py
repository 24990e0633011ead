"""``convert --from bb7``: BB-7 ``chat.json`` → bbox (docs/formats/bb7.md).

Every fixture of ``tests/fixtures/bb7/`` (written for these tests) and both BB-7 files of
``../shared/corpus-external/bb7`` (skipped when absent) must convert to bbox that
``bbox_lark.check`` finds no error in and that the printer reproduces byte for byte. Each
mapping rule is checked on the parsed output against values read from the JSON here; the
fixtures' output and report are snapshot-tested; bad inputs go through ``CliRunner``; random
JSON never ends in a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from printer_support import fuzz_settings
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

import bbox_lark
from bbox_lark import BlankLine, Continuation, Document, Event
from bbox_lark.cli import app
from bbox_lark.convert import Conversion, RefusedInputError, convert, detect_format, get_format
from bbox_lark.convert.bb7 import load_chat, migrate_chat, migrate_message, sniff
from bbox_lark.syntax.printer import dumps

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "bb7"
EXTERNAL = ROOT.parent / "shared" / "corpus-external" / "bb7"
needs_external = pytest.mark.skipif(not EXTERNAL.is_dir(), reason=f"no external corpus at {EXTERNAL}")

runner = CliRunner()


def fixture_paths() -> list[Path]:
    return sorted(FIXTURES.glob("*.json"))


def external_paths() -> list[Path]:
    return sorted(EXTERNAL.glob("*.json")) if EXTERNAL.is_dir() else []


def to_bbox(data: bytes | str, **options: Any) -> Conversion:
    return convert(data, "bb7", to="bbox", **options)


def assert_valid(text: str) -> Document:
    """No error from the checker, and the printer gives the text back byte for byte."""
    errors = [d for d in bbox_lark.check(text) if d.severity == "error"]
    assert errors == [], errors
    doc = bbox_lark.parse(text)
    assert dumps(doc) == text
    return doc


def chat(*messages: Any, **fields: Any) -> str:
    return json.dumps({"version": 2, "id": "c1", "model": "m", **fields, "messages": list(messages)})


def events(text: str) -> list[Event]:
    return list(bbox_lark.parse(text).events)


def conts(event: Event) -> list[str]:
    return [c.text for c in event.continuation]


def rows(result: Conversion) -> dict[tuple[str, str], int]:
    return {(e.action, e.what): e.count for e in result.fidelity.entries}


# -- every file converts to valid bbox ------------------------------------------------------


@pytest.mark.parametrize("path", fixture_paths(), ids=lambda p: p.stem)
def test_fixtures_convert_to_valid_bbox(path: Path) -> None:
    result = to_bbox(path.read_bytes())
    assert result.source == "bb7"
    assert_valid(result.text)


@needs_external
@pytest.mark.parametrize("path", external_paths(), ids=lambda p: p.stem)
def test_external_samples_convert_to_valid_bbox(path: Path) -> None:
    result = to_bbox(path.read_bytes())
    doc = assert_valid(result.text)
    assert result.skipped == ()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert doc.header["id"] == data["id"]
    assert doc.header["extra.title"] == data["name"]
    # One u:/a: line per message with text, in order, with the message's timestamp.
    said = [e for e in doc.events if e.kind in ("user", "agent")]
    assert [e.kind for e in said] == [
        {"user": "user", "assistant": "agent"}[m["role"]] for m in data["messages"]
    ]
    assert [e.fields["ts"] for e in said] == [m["timestamp"] for m in data["messages"]]


@needs_external
def test_external_v0_legacy_migrates_as_bb7_does() -> None:
    data = (EXTERNAL / "chat_v0_legacy.json").read_bytes()
    chat_, _, replaced = load_chat(data)
    assert "version" not in chat_ and replaced == 0
    migrated = migrate_chat(chat_)
    assert migrated["version"] == 2
    assert [m["parts"] for m in migrated["messages"]] == [
        [{"type": "text", "content": "Hello world"}],
        [{"type": "text", "content": "Hi there!"}],
        [{"type": "text", "content": "Already migrated"}],
    ]
    assert all("content" not in m for m in migrated["messages"])
    text = to_bbox(data).text
    assert [(e.kind, e.text.split(" ts=")[0]) for e in events(text)] == [
        ("user", "Hello world"),
        ("agent", "Hi there!"),
        ("agent", "Already migrated"),
    ]
    assert bbox_lark.parse(text).header["extra.bb7_version"] == "0"


@needs_external
def test_external_v2_context_event_and_snapshot() -> None:
    text = to_bbox((EXTERNAL / "chat_v2_from_spec.json").read_bytes()).text
    write = next(e for e in events(text) if e.kind == "tool")
    assert (write.name, write.args, write.fields["version"]) == ("write", ("math.cs",), "abcd1234")
    snapshot = next(e for e in events(text) if e.name == "file-snapshot")
    assert snapshot.fields["files"] == ("src/math.cs@a1b2c3d4", "src/utils.cs:10-50@11223344")


# -- migration (bb7-spec.md: legacy content → parts) ----------------------------------------


@pytest.mark.parametrize(
    ("message", "parts"),
    [
        ({"role": "user", "content": "hi"}, [{"type": "text", "content": "hi"}]),
        ({"role": "user", "content": "", "parts": []}, []),
        ({"role": "system", "content": ""}, None),
        (
            {"role": "user", "content": "old", "parts": [{"type": "text", "content": "new"}]},
            [{"type": "text", "content": "new"}],
        ),
        (
            {"role": "user", "parts": [{"type": "thinking", "content": "t"}]},
            [{"type": "thinking", "content": "t"}],
        ),
    ],
)
def test_migrate_message(message: dict[str, Any], parts: list[Any] | None) -> None:
    migrated = migrate_message(message)
    assert migrated.get("parts") == parts
    assert "content" not in migrated
    assert migrated["role"] == message["role"]


def test_legacy_fixture_migration_and_report() -> None:
    result = to_bbox((FIXTURES / "v0_legacy.json").read_bytes())
    found = events(result.text)
    assert [(e.kind, e.name) for e in found] == [
        ("user", None),
        ("agent", None),
        ("agent", None),
        ("lifecycle", "notify"),
        ("lifecycle", "notify"),
    ]
    assert conts(found[1]) == ["Add -lm to LDFLAGS."]
    assert found[2].text.startswith("Parts are kept")  # legacy content beside parts: BB-7 ignores it
    assert found[4].args == ("Response aborted by user.",)
    report = rows(result)
    assert report[("kept", "legacy content fields (migrated to one text part, as BB-7 loads them)")] == 3
    assert report[("dropped", "legacy content beside parts (BB-7 ignores it)")] == 1
    assert report[("kept", "messages with no part to show (an empty line of their role)")] == 1


def test_v1_is_migrated_and_model_switches_are_comments() -> None:
    found = events(to_bbox((FIXTURES / "v1_mixed.json").read_bytes()).text)
    assert [(e.kind, e.name) for e in found][:4] == [
        ("comment", "model"),
        ("user", None),
        ("thinking", None),
        ("agent", None),
    ]
    assert found[0].text == "model: anthropic/claude-3-haiku"
    assert found[4].text == "model: anthropic/claude-sonnet-4"
    assert sum(1 for e in found if e.name == "model") == 2


@pytest.mark.parametrize("version", [None, 0, 1, 2])
def test_every_known_version_is_read(version: int | None) -> None:
    fields = {} if version is None else {"version": version}
    data = json.dumps({"id": "v", "messages": [{"role": "user", "content": "x"}], **fields})
    text = to_bbox(data).text
    assert [e.text for e in events(text)] == ["x"]
    assert bbox_lark.parse(text).header["extra.bb7_version"] == str(version or 0)


# -- mapping rules ---------------------------------------------------------------------------


def test_parts_fixture_mapping() -> None:
    data = json.loads((FIXTURES / "v2_parts.json").read_text(encoding="utf-8"))
    result = to_bbox(json.dumps(data))
    doc = assert_valid(result.text)
    found = list(doc.events)
    kinds = [(e.kind, e.name) for e in found]
    assert kinds == [
        ("comment", "file-snapshot"),
        ("user", None),
        ("thinking", None),
        ("agent", None),
        ("agent", None),
        ("agent", None),
        ("tool", "write"),
        ("tool", "write"),
        ("tool", "write"),
        ("comment", "file-snapshot"),
        ("comment", "notes"),
    ]
    assistant = data["messages"][1]
    thinking = found[2]
    # The message's first line carries output_files, reasoning_effort and usage as metrics.
    assert thinking.fields["output_files"] == tuple(assistant["output_files"])
    assert thinking.fields["extra.reasoning_effort"] == "medium"
    assert thinking.metrics == {
        "prompt_tokens": "1200",
        "completion_tokens": "300",
        "cached_tokens": "800",
        "total_tokens": "1500",
        "cost_usd": "0.00045",
        "latency_ms": "2500",
    }
    # Every line of the message has its timestamp.
    assert {e.fields["ts"] for e in found[2:9]} == {assistant["timestamp"]}
    assert found[1].fields["ts"] == data["messages"][0]["timestamp"]
    # Multi-line text: continuation lines, an empty line a blank line between them.
    assert conts(thinking) == ["Then the loop."]
    assert conts(found[3]) == ["1. import fmt", "2. fix the loop"]
    assert [type(n).__name__ for n in doc.lines[doc.lines.index(found[3]) :][:4]] == [
        "Message",
        "BlankLine",
        "Continuation",
        "Continuation",
    ]
    # Code and raw parts: the text exactly, on continuation lines.
    code = found[4]
    assert (code.fields["extra.part"], code.fields["extra.language"]) == ("code", "go")
    assert "\n".join(conts(code)) == assistant["parts"][2]["content"]
    assert conts(found[5]) == ["  raw output, indented"]
    assert found[6].fields["extra.part"] == "file"
    assert (found[7].args, found[7].fields["version"]) == (("src/main.go",), "1f2e3d4c")
    assert (found[8].args, found[8].fields["added"]) == (("docs/new file.md",), "true")
    context = found[9]
    assert context.fields["readonly"] == ("/usr/include/math.h", "src/util.go:3-9")
    assert context.fields["external"] == ("/usr/include/math.h",)
    assert conts(found[10]) == data["draft"].split("\n")
    header = doc.header
    assert (header["id"], header["model"], header["extra.reasoning_effort"]) == (
        "parts2",
        "anthropic/claude-sonnet-4",
        "high",
    )
    assert header["repo_sha"] == "unknown"


EVENTS = {
    "UserAddFile": (
        "add-file",
        {"version": "00000001", "readonly": "false", "external": "false", "by": "user"},
    ),
    "UserAddSection": (
        "add-section",
        {"version": "00000002", "lines": "10-20", "readonly": "true", "by": "user"},
    ),
    "UserWriteFile": ("update-file", {"version": "00000003", "prev_version": "00000001", "by": "user"}),
    "UserSetReadOnly": ("set-readonly", {"readonly": "true", "by": "user"}),
    "UserApplyFile": ("apply", {"version": "00000004", "by": "user"}),
    "UserPartialApplyFile": ("partial-apply", {"version": "00000005", "by": "user"}),
    "UserSaveAs": ("save-as", {"original_path": "a.py", "by": "user"}),
    "UserRejectOutput": ("reject-output", {"prev_version": "00000007", "by": "user"}),
    "UserRemoveFile": ("remove-file", {"by": "user"}),
    "UserRemoveSection": ("remove-section", {"lines": "10-20", "by": "user"}),
    "UserRenameFile": ("context-event", {"action": "UserRenameFile"}),
}


def test_every_context_event_action() -> None:
    data = json.loads((FIXTURES / "v2_context_events.json").read_text(encoding="utf-8"))
    result = to_bbox(json.dumps(data))
    found = events(result.text)
    assert len(found) == len(data["messages"])
    for message, event in zip(data["messages"], found, strict=True):
        part = message["parts"][0]
        action = part["action"]
        assert event.fields["ts"] == message["timestamp"]
        if action.startswith("ForkWarning"):
            assert event.kind == "comment" and event.name == "notes"
            assert event.text.startswith("notes: fork-warning " + action.removeprefix("ForkWarning").lower())
            assert event.fields["path"] == part["path"]
            continue
        name, fields = EVENTS[action]
        assert (event.kind, event.name, event.args) == ("tool", name, (part["path"],))
        assert fields.items() <= event.fields.items(), (action, event.fields)
        assert event.result is None
    report = rows(result)
    assert report[("kept", "context events UserAddFile (t:add-file)")] == 1
    assert (
        report[("kept", "context events of an action the spec does not list (t:context-event action=…)")] == 1
    )


def test_text_that_would_break_a_line_still_checks_clean() -> None:
    data = json.loads((FIXTURES / "v2_hard_text.json").read_text(encoding="utf-8"))
    result = to_bbox(json.dumps(data))
    doc = assert_valid(result.text)
    found = list(doc.events)
    # An arrow in a message: the text goes on a continuation line, so it has no result.
    assert found[0].result is None and conts(found[0]) == ["map a → b please"]
    assert found[1].text.startswith("# metrics are ignored here") and found[1].metrics is None
    # Leading whitespace is kept on a continuation line.
    assert conts(found[2]) == ["    indented first line", "next"]
    # The message's own ts= wins over one in the text: the text goes on a continuation line.
    assert found[3].fields["ts"] == "2025-04-01T00:00:04Z"
    assert conts(found[3]) == ["set ts=yesterday and step=x"]
    # CRLF inside the text is a line break; trailing whitespace and empty last lines dropped.
    assert conts(found[4]) == ["windows line"]
    # NUL is written as U+FFFD; lines that look like bbox lines stay continuation lines.
    assert "\ufffd" in found[5].text and "ts" not in found[5].fields
    assert conts(found[5]) == ["@end", "# comment", "  two spaces"]
    assert conts(found[7]) == ["format: bbox/1", "---"]
    report = rows(result)
    assert report[("dropped", "NUL characters and unpaired surrogates (written as U+FFFD)")] == 1
    assert report[("dropped", "zero timestamps (Go's empty time, 0001-01-01)")] == 1
    assert report[("dropped", "timestamps that are not ISO 8601 with a zone")] == 1
    assert report[("dropped", "unknown message fields (surprise)")] == 1
    assert report[("dropped", "text parts with no text")] == 1
    assert report[("dropped", "trailing whitespace of text lines")] == 1


def test_long_text_lines_are_broken() -> None:
    from bbox_lark.convert.bb7 import LINE_LIMIT

    long = "x" * (LINE_LIMIT * 2 + 5)
    result = to_bbox(chat({"role": "user", "parts": [{"type": "text", "content": long}]}))
    (event,) = assert_valid(result.text).events
    assert "".join(conts(event)) == long
    assert rows(result)[("synthesized", f"line breaks in text lines over {LINE_LIMIT:,} characters")] == 2


def test_header_stays_small_and_synthesizes_what_is_missing() -> None:
    result = to_bbox(json.dumps({"name": "n" * 500, "messages": []}))
    doc = assert_valid(result.text)
    assert doc.header["id"].startswith("imported-")
    assert len(doc.header["extra.title"]) == 200
    report = rows(result)
    assert report[("synthesized", "session ids (the source has none)")] == 1
    assert report[("synthesized", "repo_sha: unknown (the source has none; give --repo-sha)")] == 1
    assert report[("dropped", "chat name characters beyond 200 (the header stays small)")] == 1


@pytest.mark.parametrize(("given", "written"), [("\r", None), (" ", None), ("a\n b", "a b"), (7, None)])
def test_blank_or_odd_chat_ids(given: Any, written: str | None) -> None:
    result = to_bbox(json.dumps({"id": given, "messages": []}))
    doc = assert_valid(result.text)
    if written is None:
        assert doc.header["id"].startswith("imported-")
    else:
        assert doc.header["id"] == written


def test_repo_sha_option() -> None:
    result = to_bbox(chat(), repo_sha="215db51")
    assert bbox_lark.parse(result.text).header["repo_sha"] == "215db51"
    assert not any("repo_sha" in what for _, what in rows(result))


def test_unknown_fields_are_reported() -> None:
    data = chat(
        {"role": "user", "parts": [{"type": "text", "content": "x", "colour": "red"}], "mood": "ok"},
        pinned=True,
    )
    report = rows(to_bbox(data))
    assert report[("dropped", "unknown chat fields (pinned)")] == 1
    assert report[("dropped", "unknown message fields (mood)")] == 1
    assert report[("dropped", "unknown part fields (colour)")] == 1


# -- skipped messages and refused files ------------------------------------------------------


def test_skipped_messages_keep_the_rest() -> None:
    result = to_bbox((FIXTURES / "v2_skips.json").read_bytes())
    assert [e.text for e in events(result.text)] == [
        "kept before",
        "kept beside a skipped part",
        "kept after",
    ]
    assert [(s.line, s.message.split(":")[0]) for s in result.skipped] == [
        (6, "message 1 (line 6, column 5)"),
        (7, "message 2 (line 7, column 5)"),
        (8, "message 3 (line 8, column 5)"),
        (9, "message 4, part 0 (line 9, column 37)"),
        (10, "message 5 (line 10, column 5)"),
    ]


def invoke(*args: str, input: bytes | None = None) -> Any:
    result = runner.invoke(app, ["convert", *args], input=input)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_cli_skips_exit_1_with_positions() -> None:
    path = FIXTURES / "v2_skips.json"
    result = invoke(str(path), "--to", "bbox")
    assert result.exit_code == 1
    assert f'{path}:7: skipped: message 2 (line 7, column 5): unknown role "tool"' in result.stderr
    assert (
        f'{path}:9: skipped: message 4, part 0 (line 9, column 37): unknown part type "image"'
        in result.stderr
    )
    assert f"! {path}: 5 record(s) skipped" in result.stderr
    assert "u: kept after" in result.stdout


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty file"),
        (b"hello", "not valid JSON at line 1, column 1: Expecting value"),
        (
            b'{\n  "messages": [\n    {"role": "user", "content": "cut',
            "not valid JSON at line 3, column 33: a string that never closes (cut short?)",
        ),
        (b'{"messages": [{"role": "user"}', "the JSON ends too early (cut short?)"),
        (b'{"version": 3, "messages": []}', "unknown BB-7 chat version 3 (this reader knows 0, 1, 2)"),
        (b'{"version": "2", "messages": []}', 'chat version "2" is not an integer'),
        (b'{"version": true, "messages": []}', "chat version true is not an integer"),
        (b"[1, 2]", "not a BB-7 chat: the JSON is an array, not an object"),
        (b'{"id": "x"}', "not a BB-7 chat: the JSON object has no messages list"),
        (b'{"messages": {}}', "has messages that are not a list"),
        (b'{"messages": ["\xff"]}', "not UTF-8 text (byte 15, line 1, column 16)"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"messages": [' + b"9" * 5000 + b"]}", "not valid JSON at line 1, column 15: a number too long"),
    ],
)
def test_refused_inputs(data: bytes, message: str, tmp_path: Path) -> None:
    with pytest.raises(RefusedInputError) as caught:
        to_bbox(data)
    assert message in str(caught.value)
    path = tmp_path / "chat.json"
    path.write_bytes(data)
    out = tmp_path / "out.bbox"
    result = invoke(str(path), "--from", "bb7", "--to", "bbox", "-o", str(out))
    assert result.exit_code == 2
    assert message in result.stderr
    assert not out.exists()


def test_a_bom_is_tolerated() -> None:
    assert [
        e.text
        for e in events(to_bbox(b"\xef\xbb\xbf" + chat({"role": "user", "content": "x"}).encode()).text)
    ] == ["x"]


# -- detection -------------------------------------------------------------------------------


def test_detection_by_content() -> None:
    bb7 = (FIXTURES / "v2_parts.json").read_text(encoding="utf-8")
    assert sniff(bb7) == 3
    assert (
        sniff(
            chat({"role": "user", "content": "x"}, context_files=None).replace('"context_files": null, ', "")
        )
        == 2
    )
    atif = json.dumps({"schema_version": "ATIF-v1.4", "session_id": "s", "steps": [], "messages": []})
    assert sniff(atif) == 0
    assert sniff("[]") == 0 and sniff("---\nformat: bbox/1\n") == 0
    assert detect_format("chat.json", bb7) == "bb7"
    assert detect_format(None, bb7) == "bb7"
    fmt = get_format("bb7")
    assert fmt.write is None and fmt.read is not None and fmt.import_mapping


def test_cli_detects_chat_json(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes((FIXTURES / "v1_mixed.json").read_bytes())
    result = invoke(str(path), "--to", "bbox", "--repo-sha", "0123456")
    assert result.exit_code == 0, result.output
    assert "repo_sha: '0123456'" in result.stdout or "repo_sha: 0123456" in result.stdout
    assert_valid(result.stdout)


def test_bb7_cannot_be_written() -> None:
    result = invoke(str(FIXTURES / "v1_mixed.json"), "--to", "bb7")
    assert result.exit_code == 2
    assert "bb7 cannot be written, only read" in result.stderr


# -- snapshots -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", fixture_paths(), ids=lambda p: p.stem)
def test_fixture_snapshot(path: Path, snapshot_text: SnapshotAssertion) -> None:
    result = to_bbox(path.read_bytes())
    report = result.fidelity.render()
    assert result.text + "\n## report\n" + report == snapshot_text


# -- fuzz ------------------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=30)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_part_types = st.sampled_from(["text", "thinking", "code", "file", "context_event", "raw", "image"])
_part = st.fixed_dictionaries(
    {"type": _part_types},
    optional={
        "content": st.text() | _json,
        "path": st.text(max_size=20) | _json,
        "action": st.sampled_from(["AssistantWriteFile", "UserAddFile", "ForkWarningDeleted", "X"]) | _json,
        "version": st.text(max_size=10),
        "start_line": st.integers(-2, 50) | _json,
        "end_line": st.integers(-2, 50),
        "readonly": st.booleans() | _json,
        "language": st.text(max_size=10),
    },
)
_message = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant", "system", "tool"]) | _json,
        "content": st.text() | _json,
        "parts": st.lists(_part | _json, max_size=4) | _json,
        "timestamp": st.sampled_from(["2025-01-01T00:00:00Z", ZERO := "0001-01-01T00:00:00Z", "x"]) | _json,
        "model": st.text(max_size=20) | _json,
        "output_files": st.lists(st.text(max_size=10), max_size=3) | _json,
        "usage": st.dictionaries(st.text(max_size=12), _scalars, max_size=4) | _json,
        "context_snapshot": st.lists(st.fixed_dictionaries({"path": st.text(max_size=10)}), max_size=2)
        | _json,
    },
)
_chat = st.fixed_dictionaries(
    {"messages": st.lists(_message | _json, max_size=5)},
    optional={
        "version": st.sampled_from([0, 1, 2, 3]) | _json,
        "id": st.text(max_size=20) | _json,
        "name": st.text(max_size=40) | _json,
        "model": st.text(max_size=20) | _json,
        "draft": st.text() | _json,
        "context_files": st.lists(st.fixed_dictionaries({"path": st.text(max_size=10)}), max_size=3) | _json,
    },
)


def _never_a_traceback(data: str | bytes) -> str | None:
    """The converted text (checked valid), or None when the input was refused with a message."""
    try:
        result = to_bbox(data)
    except RefusedInputError as error:
        assert str(error)
        return None
    assert_valid(result.text)
    return result.text


@fuzz_settings(150)
@given(_chat)
def test_fuzz_chat_shaped_json(value: dict[str, Any]) -> None:
    text = _never_a_traceback(json.dumps(value))
    # Go's empty time (a message's zero timestamp) is dropped, never written as a time.
    assert text is None or ZERO not in text


@fuzz_settings(100)
@given(_json)
def test_fuzz_any_json(value: Any) -> None:
    _never_a_traceback(json.dumps(value, ensure_ascii=False))


@fuzz_settings(100)
@given(st.binary(max_size=200) | st.text(max_size=200).map(lambda s: '{"messages": [' + s))
def test_fuzz_bytes(data: bytes | str) -> None:
    _never_a_traceback(data)


def test_node_classes_are_the_parsers() -> None:
    # The stream's nodes are what the parser makes of the output (continuations attached).
    text = to_bbox((FIXTURES / "v2_parts.json").read_bytes()).text
    doc = bbox_lark.parse(text)
    assert any(isinstance(n, BlankLine) for n in doc.lines)
    assert any(isinstance(n, Continuation) for n in doc.lines)


def test_the_docs_example_is_real_output() -> None:
    page = (ROOT / "docs" / "formats" / "bb7.md").read_text(encoding="utf-8")
    path = FIXTURES / "v1_mixed.json"
    assert "```json\n" + path.read_text(encoding="utf-8") + "```" in page
    result = to_bbox(path.read_bytes())
    assert "```bbox\n" + result.text + "```" in page
    assert "```text\n" + result.fidelity.render("tests/fixtures/bb7/v1_mixed.json") + "```" in page
