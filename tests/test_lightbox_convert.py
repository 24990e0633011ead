"""``convert --from lightbox`` and ``convert --to lightbox -o DIR`` (docs/formats/lightbox.md,
"Converting").

The external sample (``../shared/corpus-external/lightbox``, skipped when absent) and a
session written here (``tests/fixtures/lightbox/session``, snapshot-tested) convert to bbox
that ``check`` finds no error in and that the printer reproduces. Every valid corpus file and
the demo convert to a session that verifies VALID and back to bbox with each call's name, id,
arguments, fields and result as the mapping promises; the comparison is written here, not
taken from the converter. Bad input is skipped line by line (exit 1), never a traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion
from test_lightbox import _reference_python, _run_reference
from typer.testing import CliRunner

import bbox_lark
from bbox_lark import Event
from bbox_lark.cli import app
from bbox_lark.convert import ConvertError, RefusedInputError, convert, detect_format
from bbox_lark.convert.lightbox.chain import Status, verify, write_session
from bbox_lark.syntax.correlate import FAMILIES
from bbox_lark.syntax.printer import dumps
from bbox_lark.syntax.values import parse_timestamp

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "lightbox" / "session"
EXTERNAL = ROOT.parent / "shared" / "corpus-external" / "lightbox"
SAMPLE = EXTERNAL / "demo_session.events.jsonl"
DEMO = ROOT / "examples" / "demo.bbox"
CORPUS = sorted((ROOT / "corpus" / "valid").glob("*.bbox"))

runner = CliRunner()


def invoke(*args: str, input: bytes | None = None) -> Any:
    result = runner.invoke(app, ["convert", *args], input=input)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def to_bbox(path: Path) -> Any:
    """``path`` (a session folder or an events file) converted to bbox, in memory."""
    return convert(path.read_bytes() if path.is_file() else b"", "lightbox", to="bbox", path=path)


def assert_clean_bbox(text: str) -> None:
    """No error from ``check``, and the printer gives the text back byte for byte."""
    errors = [d for d in bbox_lark.check(text) if d.severity == "error"]
    assert errors == [], errors
    assert dumps(bbox_lark.parse(text)) == text


# -- reading -----------------------------------------------------------------------------


def test_external_sample_converts() -> None:
    if not SAMPLE.is_file():
        pytest.skip(f"no external Lightbox sample at {EXTERNAL}")
    result = to_bbox(SAMPLE)
    assert result.skipped == ()
    assert_clean_bbox(result.text)
    doc = bbox_lark.parse(result.text)
    assert doc.header["id"] == "demo_weather_agent"
    assert doc.header["repo_sha"] == "unknown"
    calls = doc.events
    assert [(e.kind, e.name, e.id) for e in calls] == [
        ("tool", "get_weather", "inv_00001"),
        ("tool", "send_email", "inv_00002"),
        ("tool", "write_file", "inv_00003"),
    ]
    first = calls[0]
    assert first.ts == "2025-01-15T10:00:00.123+00:00"
    assert first.latency_ms == 1333  # 10:00:01.456 - 10:00:00.123
    assert first.fields["location"] == "San Francisco, CA"
    assert first.result is not None and first.result.kind == "fields"
    assert first.fields["conditions"] == "Partly cloudy"


def test_fixture_snapshot(snapshot: SnapshotAssertion) -> None:
    assert verify(FIXTURE).status is Status.VALID
    result = to_bbox(FIXTURE)
    assert result.skipped == ()
    assert_clean_bbox(result.text)
    assert result.text == snapshot


def test_fixture_constructs() -> None:
    doc = bbox_lark.parse(to_bbox(FIXTURE).text)
    events = {(e.id, e.kind): e for e in doc.events}
    error = events[("inv_00002", "tool")]
    assert error.result is not None and error.result.kind == "error"
    assert error.result.message == "SMTP 421: service not available"
    assert error.fields["api_key"] == "[redacted:secret]"
    assert error.fields["content_hashes.input.api_key"].startswith("5e884898")
    retry = events[("inv_00003", "tool")]
    assert (retry.fields["retry_of"], retry.attempt) == ("inv_00002", (2, None))
    start = events[("inv_00004", "tool_start")]
    assert start.result is not None and start.result.kind == "running"
    assert json.loads(start.fields["input"]) == {"query": {"city": "Zürich", "days": [1, 2, 3]}}
    resolved = events[("inv_00004", "tool")]
    assert resolved.latency_ms == 3250
    assert json.loads(resolved.result.text if resolved.result else "")["note"] == "multi\nline"
    # The start is completed by the resolved event: no W007.
    assert "W007" not in {d.code for d in bbox_lark.check(dumps(doc))}
    fetched = events[("inv_00005", "tool")]
    assert fetched.fields["body"] == "[redacted:size_limit]"
    assert (fetched.fields["chunk_count"], fetched.fields["parent_invocation"]) == ("25", "inv_00004")
    assert fetched.fields["redacted_bytes.output.body"] == "102400"
    sub = events[("inv_00007", "subagent")]
    assert (sub.name, sub.args, [c.text for c in sub.continuation]) == (
        "explore",
        ("find fog sources",),
        ["lake", "river", "valley"],
    )
    odd = events[("inv_00008", "tool")]
    assert odd.fields["ts_end"] == "2025-02-03T09:00:08.5+01:00"  # not start + whole ms
    assert json.loads(odd.fields["input"]) == {"1bad key": "x", "id": "user-file-7"}
    assert odd.fields["content"] == "line one\nline two"


def test_lightbox_to_bbox_to_lightbox_keeps_the_events(tmp_path: Path) -> None:
    """Back to Lightbox, every event says the same, but for the JSON types of scalar input
    and output values (bbox values are text), as the mapping says."""
    back = tmp_path / "back"
    text = to_bbox(FIXTURE).text
    result = convert(text, "bbox", to="lightbox", output_path=back)
    assert verify(back).status is Status.VALID
    assert result.skipped == ()

    def loose(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: loose(v) for k, v in value.items()}
        if isinstance(value, list):
            return [loose(v) for v in value]
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value) if isinstance(value, int) else value

    def lines(folder: Path) -> list[dict[str, Any]]:
        path = folder / "events.jsonl"
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for event in events:
            del event["hash"], event["prev_hash"]
        return events

    original = lines(FIXTURE)
    again = lines(back)
    assert [e["invocation_id"] for e in again] == [e["invocation_id"] for e in original]
    for before, after in zip(original, again, strict=True):
        for key in (
            "tool",
            "status",
            "timestamp_start",
            "timestamp_end",
            "retry_of",
            "error",
            "content_hashes",
        ):
            assert after.get(key) == before.get(key), (key, before["invocation_id"])
        assert loose(after["input"]) == loose(before["input"]), before["invocation_id"]
        assert loose(after["output"]) == loose(before["output"]), before["invocation_id"]
        for key in ("chunk_count", "total_bytes"):
            assert after.get(key) == before.get(key)


def test_a_broken_chain_is_converted_and_reported(tmp_path: Path) -> None:
    folder = tmp_path / "tampered"
    shutil.copytree(FIXTURE, folder)
    lines = (folder / "events.jsonl").read_bytes().splitlines(keepends=True)
    event = json.loads(lines[1])
    event["status"] = "complete"
    lines[1] = json.dumps(event, sort_keys=True).encode() + b"\n"
    (folder / "events.jsonl").write_bytes(b"".join(lines))
    result = to_bbox(folder)
    assert [(s.line, s.message.split(":")[0]) for s in result.skipped] == [(2, "hash chain TAMPERED")]
    assert len(bbox_lark.parse(result.text).events) == len(lines)
    cli = invoke(str(folder), "--to", "bbox")
    assert cli.exit_code == 1
    assert f"{folder}:2: skipped: hash chain TAMPERED" in cli.stderr


@pytest.mark.parametrize(
    ("bad", "line", "message"),
    [
        (b'{"tool": "x", "invocation_id": "inv_9", "status": "complete", "inp', 4, "last line cut"),
        (b"not json at all\n", 4, "not JSON"),
        (b'{"tool": "x", "invocation_id": "inv_9", "status": "done", "input": {}}\n', 4, "unknown status"),
        (b'["an", "array"]\n', 4, "a JSON array"),
        (b"null\n", 4, "a JSON null, not an event object"),
        (b'{"invocation_id": "inv_9", "status": "complete"}\n', 4, "no tool name"),
    ],
)
def test_bad_lines_are_skipped_with_their_line(tmp_path: Path, bad: bytes, line: int, message: str) -> None:
    folder = tmp_path / "bad"
    write_session(folder, _events(3))
    with (folder / "events.jsonl").open("ab") as stream:
        stream.write(bad)
    result = to_bbox(folder)
    assert [s.line for s in result.skipped] == [line]
    assert message in result.skipped[0].message
    assert len(bbox_lark.parse(result.text).events) == 3  # the rest is converted
    assert_clean_bbox(result.text)
    cli = invoke(str(folder / "events.jsonl"), "--to", "bbox")
    assert cli.exit_code == 1
    assert f":{line}: skipped:" in cli.stderr
    assert "1 record(s) skipped" in cli.stderr


def test_a_line_in_the_middle_is_skipped_and_named(tmp_path: Path) -> None:
    folder = tmp_path / "middle"
    write_session(folder, _events(3))
    lines = (folder / "events.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "events.jsonl").write_bytes(lines[0] + b"{oops\n" + b"".join(lines[1:]))
    result = to_bbox(folder)
    assert [s.line for s in result.skipped] == [2]
    assert [e.id for e in bbox_lark.parse(result.text).events] == ["inv_00001", "inv_00002", "inv_00003"]


def test_missing_folder_and_folder_without_events(tmp_path: Path) -> None:
    missing = invoke(str(tmp_path / "nope"), "--from", "lightbox", "--to", "bbox")
    assert missing.exit_code == 2
    assert "no such file" in missing.stderr
    empty = invoke(str(tmp_path), "--from", "lightbox", "--to", "bbox")
    assert empty.exit_code == 2
    assert "no events.jsonl in this folder" in empty.stderr
    with pytest.raises(RefusedInputError):
        to_bbox(tmp_path)


def test_detection() -> None:
    line = (FIXTURE / "events.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert detect_format(None, line + "\n") == "lightbox"
    assert detect_format("x/events.jsonl", "") == "lightbox"
    assert detect_format(None, '{"a": 1}\n') is None
    folder = invoke(str(FIXTURE), "--to", "bbox")  # a folder is recognised by its events.jsonl
    assert folder.exit_code == 0, folder.output
    assert folder.stdout == to_bbox(FIXTURE).text


def test_repo_sha_option() -> None:
    result = invoke(str(FIXTURE), "--to", "bbox", "--repo-sha", "0123abc")
    assert result.exit_code == 0
    assert bbox_lark.parse(result.stdout).header["repo_sha"] == "0123abc"


def _events(n: int) -> list[dict[str, Any]]:
    return [
        {
            "session_id": "s",
            "invocation_id": f"inv_{i:05d}",
            "tool": "read",
            "input": {"path": f"a{i}.rs"},
            "output": {"lines": str(i)},
            "status": "complete",
            "timestamp_start": f"2025-01-01T00:00:0{i}.000+00:00",
            "timestamp_end": f"2025-01-01T00:00:0{i}.500+00:00",
        }
        for i in range(1, n + 1)
    ]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_event_like = st.fixed_dictionaries(
    {},
    optional={
        "tool": st.text(max_size=10) | st.integers(),
        "invocation_id": st.text(max_size=8),
        "status": st.sampled_from(["pending", "complete", "error", "odd"]),
        "input": _json_values,
        "output": _json_values,
        "error": _json_values,
        "retry_of": st.text(max_size=8),
        "timestamp_start": st.sampled_from(["2025-01-01T00:00:00.000+00:00", "x", ""]),
        "timestamp_end": st.sampled_from(["2025-01-01T00:00:01.000+00:00", "2024-01-01T00:00:00Z", None]),
        "content_hashes": _json_values,
        "actor": _json_values,
        "chunk_count": _json_values,
    },
)
_lines = st.lists(
    st.one_of(
        _event_like.map(lambda e: json.dumps(e).encode()),
        st.binary(max_size=30),
        st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass")),
    ),
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(_lines, st.booleans())
def test_the_reader_never_tracebacks(lines: list[bytes], final_newline: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    result = convert(data, "lightbox", to="bbox")
    errors = [d for d in bbox_lark.check(result.text) if d.severity == "error"]
    assert errors == [], (errors, result.text)
    events = len(bbox_lark.parse(result.text).events)
    assert events + len(result.skipped) >= sum(1 for line in data.splitlines() if line.strip()) - 1


# -- writing -----------------------------------------------------------------------------


def _call_meaning(event: Event) -> dict[str, Any]:
    return {"kind": event.kind, "name": event.name, "args": event.args, "fields": dict(event.fields)}


def _same_result(before: Event, after: Event) -> bool:
    a, b = before.result, after.result
    if a is None or b is None:
        return (a is None or not a.text) == (b is None or not b.text) or bool(after.continuation)
    if (a.kind, a.text) == (b.kind, b.text):
        return True
    if a.kind == b.kind == "fields":  # Lightbox sorts the keys of its objects
        return _after_arrow(before) == _after_arrow(after)
    try:
        return json.loads(a.text) == json.loads(b.text)
    except ValueError:
        return False


def _after_arrow(event: Event) -> dict[str, Any]:
    return {f.key: f.value for f in event.field_nodes if f.after_arrow}


def _continuation_of(event: Event) -> Any:
    texts = [c.text for c in event.continuation]
    try:
        return json.loads("\n".join(texts))
    except ValueError:
        return texts


def assert_calls_survive(original: bbox_lark.Document, back: bbox_lark.Document) -> None:
    """Every call and completion of ``original`` comes back in order with its name, id,
    arguments, fields (the back line may add ts=, latency_ms=, id= and attempt=) and
    result; starts come back as starts (→ [running])."""
    from bbox_lark.syntax.correlate import COMPLETION, Pairer

    pairer = Pairer()
    expected: list[tuple[Event, bool, Event | None]] = []
    starts: dict[int, Event] = {}
    for index, event in enumerate(original.events, 1):
        outcome = pairer.feed(_renumbered(event, index))
        if outcome == COMPLETION:
            expected.append((event, True, starts[pairer.completed]))
        elif event.kind in FAMILIES:
            starts[index] = event
            expected.append((event, False, None))
    got = back.events
    assert len(got) == len(expected)
    ids = [e.id for e, done, _ in expected if not done and e.id]
    for (before, completion, start), after in zip(expected, got, strict=True):
        if completion and before.kind == "observation":
            assert start is not None and after.name == start.name
        else:
            assert (after.name, after.args) == (before.name, before.args)
        if before.id and not completion and ids.count(before.id) == 1:
            assert after.id == before.id
        own = {k: v for k, v in before.fields.items() if k not in ("id", "args", "span")}
        if parse_timestamp(str(before.fields.get("ts"))) is None:
            own.pop("latency_ms", None)
        if completion and before.kind == "observation":
            own = {k: v for k, v in own.items() if k in ("ts",)}
        for key, value in own.items():
            assert after.fields.get(key) == value, (before.raw, after.raw, key)
        bbox_start = (
            not completion
            and before.kind in FAMILIES
            and (
                before.kind == "tool_start"
                or (
                    before.result is not None
                    and before.result.kind in ("running", "pending", "started", "launched")
                )
            )
        )
        if bbox_start:
            assert after.result is not None and after.result.kind == "running"
        elif before.result is None or before.result.kind != "error" or before.result.rest:
            assert _same_result(before, after), (before.raw, after.raw)
            assert _continuation_of(after) == _continuation_of(before), (before.raw, after.raw)
        else:
            assert after.result is not None and after.result.kind == "error"
            assert after.result.message == before.result.message


def _renumbered(event: Event, line: int) -> Event:
    from dataclasses import replace

    return replace(event, line=line)


@pytest.mark.parametrize("path", [DEMO, *CORPUS], ids=lambda p: p.stem)
def test_bbox_to_lightbox_and_back(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "session"
    data = path.read_bytes()
    result = convert(data, "bbox", to="lightbox", output_path=out, path=path)
    assert result.skipped == ()
    checked = verify(out)
    assert checked.status is Status.VALID, checked.summary()
    again = convert(b"", "lightbox", to="bbox", path=out)
    assert again.skipped == ()
    assert_clean_bbox(again.text)
    original = bbox_lark.parse(data)
    back = bbox_lark.parse(again.text)
    assert back.header == original.header or not original.header.get("repo_sha")
    assert_calls_survive(original, back)
    # The same input gives the same bytes.
    second = tmp_path / "second"
    convert(data, "bbox", to="lightbox", output_path=second, path=path)
    assert (second / "events.jsonl").read_bytes() == (out / "events.jsonl").read_bytes()
    assert (second / "meta.json").read_bytes() == (out / "meta.json").read_bytes()


def test_demo_report_counts_what_lightbox_cannot_hold(tmp_path: Path) -> None:
    result = convert(DEMO.read_bytes(), "bbox", to="lightbox", output_path=tmp_path / "s", path=DEMO)
    dropped = {e.what: e.count for e in result.fidelity.entries if e.action == "dropped"}
    assert dropped["user lines (Lightbox has no place for them)"] == 1
    assert dropped["comment lines (Lightbox has no place for them)"] == 5
    assert dropped["tool_progress lines (Lightbox has no place for them)"] == 1
    synthesized = {e.what: e.count for e in result.fidelity.entries if e.action == "synthesized"}
    assert synthesized["invocation ids (id= none: inv_NNNNN)"] == 3
    assert synthesized["timestamps (the previous known ts=)"] == 12


def test_timestamp_rule_and_ids(tmp_path: Path) -> None:
    from bbox_lark import build, build_document

    header = {"format": "bbox/1", "id": "s1", "repo_sha": "abc1234"}
    lines = [
        build.call("tool", "a", fields={"id": "dup"}),
        build.message("user", "hi", fields={"ts": "2025-03-01T10:00:00Z"}),
        build.call("tool", "b", fields={"id": "dup", "latency_ms": 1500}, result=build.result("ok")),
        build.call("tool", "c", fields={"ts": "2025-03-01T11:00:00.250+02:00", "n": 1.5}),
    ]
    text = dumps(build_document(header, lines))
    out = tmp_path / "s"
    convert(text, "bbox", to="lightbox", output_path=out)
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert [e["timestamp_start"] for e in events] == [
        "1970-01-01T00:00:00.000+00:00",  # nothing earlier, nothing in the header
        "2025-03-01T10:00:00Z",  # the previous known ts= (the message's)
        "2025-03-01T11:00:00.250+02:00",
    ]
    assert events[1]["timestamp_end"] == "2025-03-01T10:00:01.500Z"
    assert [e["invocation_id"] for e in events] == ["dup", "inv_00001", "inv_00002"]
    assert events[2]["input"] == {"n": "1.5"}  # numbers stay strings: floats are prohibited
    assert events[1]["output"] == {"result": "[ok]"}


def test_cli_to_lightbox_needs_o_dir(tmp_path: Path) -> None:
    no_dir = invoke(str(DEMO), "--to", "lightbox")
    assert no_dir.exit_code == 2
    assert "give -o DIR" in no_dir.stderr
    out = tmp_path / "session"
    done = invoke(str(DEMO), "--to", "lightbox", "-o", str(out))
    assert done.exit_code == 0, done.output
    assert f"wrote {out} (bbox → lightbox)" in done.stderr
    assert "dropped user lines" in done.stderr
    assert verify(out).status is Status.VALID
    verified = runner.invoke(app, ["lightbox", "verify", str(out)])
    assert verified.exit_code == 0 and verified.stdout.startswith("VALID: 12 events")
    # Written again over the same folder: replaced, still valid.
    assert invoke(str(DEMO), "--to", "lightbox", "-o", str(out)).exit_code == 0
    assert verify(out).status is Status.VALID
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert invoke(str(DEMO), "--to", "lightbox", "-o", str(a_file)).exit_code == 2


def test_cli_refused_input_writes_no_folder(tmp_path: Path) -> None:
    findings = ROOT / "docs" / "examples" / "findings.bbox"
    out = tmp_path / "session"
    refused = invoke(str(findings), "--to", "lightbox", "-o", str(out))
    assert refused.exit_code == 1
    assert "not written" in refused.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no staging folder left behind
    forced = invoke(str(findings), "--to", "lightbox", "-o", str(out), "--force")
    assert forced.exit_code == 0
    assert verify(out).status is Status.VALID


def test_writer_without_a_folder_is_a_usage_error() -> None:
    with pytest.raises(ConvertError, match="-o DIR"):
        convert(DEMO.read_bytes(), "bbox", to="lightbox")


# -- the reference accepts what we write --------------------------------------------------


@pytest.mark.network
def test_reference_verifies_our_sessions(tmp_path: Path) -> None:
    python = _reference_python()
    root = tmp_path / "lightbox"
    sessions = root / "sessions"
    names = []
    for path in (
        DEMO,
        ROOT / "corpus" / "valid" / "redactions.bbox",
        ROOT / "corpus" / "valid" / "correlation-families.bbox",
    ):
        convert(path.read_bytes(), "bbox", to="lightbox", output_path=sessions / path.stem, path=path)
        names.append(path.stem)
    back = sessions / "fixture-again"
    convert(to_bbox(FIXTURE).text, "bbox", to="lightbox", output_path=back)
    names.append(back.name)
    statuses = json.loads(_run_reference(python, root, "verify", *names))
    assert statuses == dict.fromkeys(names, "VALID")


# -- the documented examples --------------------------------------------------------------


def test_the_documented_conversions_are_real(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """docs/formats/lightbox.md, "Converting": the bbox block after the first convert command is its
    output, and the text block after the tampered one is what it prints on stderr."""
    import re

    monkeypatch.chdir(ROOT)
    page = (ROOT / "docs" / "formats" / "lightbox.md").read_text(encoding="utf-8")
    section = page[page.index("## Converting") :]
    blocks = re.findall(r"^```(\w+)\n(.*?)^```", section, flags=re.M | re.S)
    commands = [body.strip() for language, body in blocks if language == "sh" and "$ bbox-lark" in body]
    bbox_block = next(body for language, body in blocks if language == "bbox")
    text_block = next(body for language, body in blocks if language == "text")
    first = invoke(*commands[0].removeprefix("$ bbox-lark convert ").split())
    assert first.exit_code == 0
    assert first.stdout == bbox_block
    args = commands[1].split("  #")[0].removeprefix("$ bbox-lark convert ").split()
    args[args.index("-o") + 1] = str(tmp_path / "tampered.bbox")
    second = invoke(*args)
    assert second.exit_code == 1
    shown = second.stderr.splitlines()
    for line in text_block.splitlines():
        assert line in shown
