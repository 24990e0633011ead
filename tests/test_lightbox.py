"""Lightbox sessions (``bbox_lark.convert.lightbox.chain``, ``bbox-lark lightbox verify``): the hash chain as
the spec and the reference recorder (``lightbox-rec`` 0.1.0) compute it, every kind of
tampering on a copy of a session, the ``meta.json`` anchor, the CLI's exit codes, and never a
traceback on garbage.

The external sample (``../shared/corpus-external/lightbox``) is used when it is there. The
interop test at the end runs the reference itself (it needs Python 3.12 and the package
index, and skips without them).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from bbox_lark.cli import app
from bbox_lark.convert.lightbox.chain import (
    ANCHOR_KEY,
    Anchor,
    CanonicalizationError,
    Status,
    canonical_json,
    chain,
    event_hash,
    verify,
    verify_bytes,
    write_session,
)

REPO = Path(__file__).resolve().parent.parent
SCHEMA = Draft202012Validator(
    json.loads((REPO / "docs" / "schema" / "lightbox-verify.schema.json").read_text(encoding="utf-8"))
)
EXTERNAL = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus-external" / "lightbox"
SAMPLE = EXTERNAL / "demo_session.events.jsonl"

runner = CliRunner()


def events(n: int = 4) -> list[dict[str, Any]]:
    """``n`` events as a converter would make them (no hashes yet), with non-ASCII text and
    optional fields."""
    made = []
    for index in range(1, n + 1):
        made.append(
            {
                "schema_version": "1",
                "session_id": "session_test",
                "invocation_id": f"inv_{index:05d}",
                "tool": "read" if index % 2 else "send_email",
                "input": {"path": f"docs/café-{index}.md", "note": "☃ 😀 naïve"},
                "output": {"lines": index * 10, "ok": True, "tags": ["a", None]},
                "status": "complete",
                "timestamp_start": f"2025-01-15T10:00:{index:02d}.000+00:00",
                "timestamp_end": f"2025-01-15T10:00:{index:02d}.500+00:00",
            }
        )
    if n > 1:
        made[1]["actor"] = "agent"
    return made


@pytest.fixture(params=["own", "external"])
def session(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A session folder to tamper with: one written by ``write_session`` (anchor removed, so
    it is what any Lightbox writer leaves), or a copy of the external sample."""
    folder = tmp_path / "session"
    if request.param == "external":
        if not SAMPLE.is_file():
            pytest.skip(f"no external Lightbox sample at {EXTERNAL}")
        folder.mkdir()
        shutil.copy(SAMPLE, folder / "events.jsonl")
        shutil.copy(EXTERNAL / "demo_session.meta.json", folder / "meta.json")
    else:
        write_session(folder, events(3))
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        del meta[ANCHOR_KEY]
        (folder / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return folder


def lines_of(folder: Path) -> list[bytes]:
    return (folder / "events.jsonl").read_bytes().splitlines(keepends=True)


def rewrite(folder: Path, lines: list[bytes]) -> None:
    (folder / "events.jsonl").write_bytes(b"".join(lines))


def edit_event(line: bytes, change: dict[str, Any]) -> bytes:
    """The line with fields changed, written the way the reference writes lines."""
    event = json.loads(line)
    event.update(change)
    return json.dumps(event, sort_keys=True, separators=(",", ":")).encode() + b"\n"


# -- the canonical form and the hash -----------------------------------------------------


def test_canonical_json_sorts_keys_without_spaces_or_ascii_escapes() -> None:
    value = {"b": [1, {"d": None, "c": True}], "a": "é ☃ 😀"}
    assert canonical_json(value) == '{"a":"é ☃ 😀","b":[1,{"c":true,"d":null}]}'


@pytest.mark.parametrize("bad", [1.5, float("nan"), {"x": [0.0]}, {1: "a"}, {"x": b"bytes"}, {"x": {1, 2}}])
def test_canonical_json_refuses_what_has_no_canonical_form(bad: Any) -> None:
    with pytest.raises(CanonicalizationError):
        canonical_json(bad)


def test_event_hash_is_sha256_of_the_utf8_canonical_form_without_hash() -> None:
    event = {"tool": "t", "input": {"q": "héllo"}, "hash": "ignored", "prev_hash": "ignored"}
    canonical = '{"input":{"q":"héllo"},"prev_hash":"ab","tool":"t"}'
    assert event_hash(event, "ab") == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    # ASCII escaping would give another hash: the canonical form is not the stored form.
    escaped = json.dumps({"input": {"q": "héllo"}, "prev_hash": "ab", "tool": "t"}, separators=(",", ":"))
    assert event_hash(event, "ab") != hashlib.sha256(escaped.encode()).hexdigest()


def test_event_hash_refuses_a_lone_surrogate() -> None:
    with pytest.raises(CanonicalizationError, match="surrogate"):
        event_hash({"input": {"q": "\ud800"}}, None)


# A line the reference (lightbox-rec 0.1.0) wrote: non-ASCII input, stored ASCII-escaped (an
# emoji as a surrogate pair), hashed over the UTF-8 canonical form.
REFERENCE_LINE = (
    b'{"hash":"d8589fbf35b00964fb79d318c2cac2f56ff11a99318bf09ae7d1c22ddc889b7a",'
    b'"input":{"q":"h\\u00e9llo \\u2603 \\ud83d\\ude00"},"invocation_id":"inv_00001",'
    b'"output":{"n":1},"prev_hash":null,"schema_version":"1","session_id":"s1",'
    b'"status":"complete","timestamp_end":"2026-11-23T00:27:24.367+00:00",'
    b'"timestamp_start":"2026-11-23T00:27:24.367+00:00","tool":"t"}\n'
)


def test_non_ascii_vector_from_the_reference() -> None:
    event = json.loads(REFERENCE_LINE)
    assert event["input"]["q"] == "héllo ☃ 😀"
    assert event_hash(event, None) == event["hash"]
    result = verify_bytes(REFERENCE_LINE)
    assert result.status is Status.VALID, result
    assert result.head == event["hash"]


def test_ascii_escaped_and_raw_utf8_lines_verify_alike(tmp_path: Path) -> None:
    chained = chain(events(2))
    escaped = b"".join(json.dumps(e, sort_keys=True).encode("ascii") + b"\n" for e in chained)
    raw = b"".join(json.dumps(e, ensure_ascii=False).encode("utf-8") + b"\n" for e in chained)
    assert b"\\u00e9" in escaped and "é".encode() in raw
    for data in (escaped, raw):
        assert verify_bytes(data).status is Status.VALID


def test_chain_links_every_event() -> None:
    chained = chain(events(3))
    assert chained[0]["prev_hash"] is None
    assert [e["prev_hash"] for e in chained[1:]] == [e["hash"] for e in chained[:-1]]
    for index, event in enumerate(chained):
        assert event["hash"] == event_hash(event, chained[index - 1]["hash"] if index else None)


# -- verifying: valid sessions ------------------------------------------------------------


def test_external_sample_is_valid() -> None:
    if not SAMPLE.is_file():
        pytest.skip(f"no external Lightbox sample at {EXTERNAL}")
    result = verify(SAMPLE)
    assert result.status is Status.VALID, result
    assert (result.events, result.exit_code) == (3, 0)
    assert result.head == json.loads(SAMPLE.read_bytes().splitlines()[-1])["hash"]
    assert result.summary() == "VALID: 3 events, head e67b4dd89667…"


def test_written_session_is_valid_with_its_anchor(tmp_path: Path) -> None:
    chained = write_session(tmp_path / "s", events(4))
    meta = json.loads((tmp_path / "s" / "meta.json").read_text(encoding="utf-8"))
    assert meta[ANCHOR_KEY] == {"head": chained[-1]["hash"], "events": 4}
    assert meta["session_id"] == "session_test" and meta["schema_version"] == "1"
    assert meta["created_at"] == chained[0]["timestamp_start"]
    data = (tmp_path / "s" / "events.jsonl").read_bytes()
    assert data.isascii() and data.count(b"\n") == 4
    for folder_or_file in (tmp_path / "s", tmp_path / "s" / "events.jsonl"):
        result = verify(folder_or_file)
        assert result.status is Status.VALID, result
        assert result.anchor == Anchor(chained[-1]["hash"], 4)
        assert (result.events, result.head) == (4, chained[-1]["hash"])


def test_write_session_is_deterministic_and_refuses_to_overwrite(tmp_path: Path) -> None:
    write_session(tmp_path / "a", events(2))
    write_session(tmp_path / "b", events(2))
    for name in ("events.jsonl", "meta.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    with pytest.raises(FileExistsError):
        write_session(tmp_path / "a", events(1))
    write_session(tmp_path / "a", events(1), overwrite=True)
    assert verify(tmp_path / "a").events == 1


def test_write_session_refuses_what_the_reference_would_reject(tmp_path: Path) -> None:
    broken = events(2)
    del broken[1]["tool"]
    with pytest.raises(ValueError, match="event 1: missing required field"):
        write_session(tmp_path / "a", broken)
    floating = events(2)
    floating[1]["output"] = {"cost": 0.25}
    with pytest.raises(CanonicalizationError, match=r"event 1: at output\.cost: float"):
        write_session(tmp_path / "b", floating)
    with pytest.raises(ValueError, match="session_id"):
        write_session(tmp_path / "c", [])
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    write_session(tmp_path / "d", [], {"session_id": "empty"})
    assert verify(tmp_path / "d").summary() == "VALID: 0 events, no head"


def test_last_line_without_a_line_ending_is_complete(session: Path) -> None:
    lines = lines_of(session)
    rewrite(session, [*lines[:-1], lines[-1].rstrip(b"\n")])
    result = verify(session)
    assert result.status is Status.VALID, result
    assert any("no line ending" in note for note in result.notes)


def test_crlf_and_blank_lines_are_read_as_the_reference_reads_them(session: Path) -> None:
    lines = lines_of(session)
    rewrite(session, [b"\n", *(line.replace(b"\n", b"\r\n") for line in lines), b"\n"])
    assert verify(session).status is Status.VALID


# -- verifying: tampering -----------------------------------------------------------------


def test_edited_line(session: Path) -> None:
    lines = lines_of(session)
    event = json.loads(lines[1])
    lines[1] = edit_event(lines[1], {"tool": "something_else"})
    rewrite(session, lines)
    result = verify(session)
    assert result.status is Status.TAMPERED
    assert (result.line, result.invocation_id) == (2, event["invocation_id"])
    assert result.summary().startswith(f"TAMPERED: line 2 (invocation {event['invocation_id']}): hash does")
    assert result.actual == event["hash"] and result.expected != event["hash"]


def test_reordered_lines(session: Path) -> None:
    lines = lines_of(session)
    rewrite(session, [lines[0], lines[2], lines[1]])
    result = verify(session)
    assert (result.status, result.line) == (Status.TAMPERED, 2)
    assert result.invocation_id == json.loads(lines[2])["invocation_id"]
    assert "prev_hash" in (result.reason or "")


def test_deleted_middle_line(session: Path) -> None:
    lines = lines_of(session)
    rewrite(session, [lines[0], *lines[2:]])
    result = verify(session)
    assert (result.status, result.line) == (Status.TAMPERED, 2)


def test_deleted_first_line(session: Path) -> None:
    rewrite(session, lines_of(session)[1:])
    result = verify(session)
    assert (result.status, result.line) == (Status.TAMPERED, 1)
    assert "first event" in (result.reason or "")


def test_deleted_last_line_without_anchor_is_valid_as_the_reference_says(session: Path) -> None:
    rewrite(session, lines_of(session)[:-1])
    result = verify(session)
    assert (result.status, result.events, result.anchor) == (Status.VALID, 2, None)


def test_deleted_last_line_with_anchor_is_truncated(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    write_session(folder, events(3))
    rewrite(folder, lines_of(folder)[:-1])
    result = verify(folder)
    assert (result.status, result.exit_code, result.events) == (Status.TRUNCATED, 2, 2)
    assert "records 3" in (result.reason or "") and "the last event is missing" in (result.reason or "")
    rewrite(folder, [])
    assert verify(folder).status is Status.TRUNCATED


def test_rewritten_chain_contradicts_its_anchor(tmp_path: Path) -> None:
    """Every hash recomputed after an edit: the chain is valid, the anchor is not."""
    folder = tmp_path / "s"
    write_session(folder, events(3))
    forged = [json.loads(line) for line in lines_of(folder)]
    forged[2]["output"] = {"lines": 0}
    rewrite(folder, [json.dumps(e, sort_keys=True).encode() + b"\n" for e in chain(forged)])
    result = verify(folder)
    assert (result.status, result.line) == (Status.TAMPERED, 3)
    assert ANCHOR_KEY in (result.reason or "")


def test_events_appended_after_the_anchor_are_noted(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    chained = write_session(folder, events(2))
    (more,) = chain([*chained, events(3)[2]])[2:]
    with (folder / "events.jsonl").open("ab") as stream:
        stream.write(json.dumps(more, sort_keys=True).encode() + b"\n")
    result = verify(folder)
    assert (result.status, result.events) == (Status.VALID, 3)
    assert any("first 2 of 3" in note for note in result.notes)


def test_malformed_anchor_is_a_parse_error(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    write_session(folder, events(1))
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    meta[ANCHOR_KEY] = {"head": "nope", "events": 1}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    result = verify(folder)
    assert result.status is Status.PARSE_ERROR and ANCHOR_KEY in (result.reason or "")
    (folder / "meta.json").write_bytes(b"\xff not json")  # not ours to judge: a note
    result = verify(folder)
    assert result.status is Status.VALID and result.notes


@pytest.mark.parametrize("cut", [1, 20, -2])
def test_truncated_last_line(session: Path, cut: int) -> None:
    lines = lines_of(session)
    rewrite(session, [*lines[:-1], lines[-1][:cut]])
    result = verify(session)
    assert (result.status, result.line, result.events) == (Status.TRUNCATED, 3, 2)
    assert "incomplete" in (result.reason or "")


def test_cut_inside_a_utf8_character_is_truncated(tmp_path: Path) -> None:
    first = json.dumps(chain(events(1))[0], ensure_ascii=False).encode("utf-8") + b"\n"
    cut = '{"input":{"path":"café'.encode()[:-1]
    assert verify_bytes(first + cut).status is Status.TRUNCATED


def test_cut_last_line_wins_over_earlier_tampering(session: Path) -> None:
    """The reference reports truncation first; so do we (DECISIONS §10: its statuses)."""
    lines = lines_of(session)
    rewrite(session, [edit_event(lines[0], {"tool": "x"}), lines[1], lines[2][:30]])
    assert verify(session).status is Status.TRUNCATED


def test_injected_field_is_tampering(session: Path) -> None:
    lines = lines_of(session)
    lines[1] = edit_event(lines[1], {"approved_by": "admin"})
    rewrite(session, lines)
    result = verify(session)
    assert (result.status, result.line) == (Status.TAMPERED, 2)


def test_injected_null_optional_field_is_tampering(session: Path) -> None:
    lines = lines_of(session)
    lines[0] = edit_event(lines[0], {"parent_invocation": None})
    rewrite(session, lines)
    assert verify(session).status is Status.TAMPERED


@pytest.mark.parametrize("value", [b"1.5", b"1e3", b"-0.0", b"NaN", b"Infinity"])
def test_float_is_a_parse_error(session: Path, value: bytes) -> None:
    lines = lines_of(session)
    event = json.loads(lines[1])
    assert b'"status":"complete"' in lines[1]
    lines[1] = lines[1].replace(b'"status":"complete"', b'"status":"complete","x":' + value)
    rewrite(session, lines)
    result = verify(session)
    assert (result.status, result.line) == (Status.PARSE_ERROR, 2)
    assert result.invocation_id == event["invocation_id"]
    assert (result.reason or "").startswith(f"float {value.decode()} at x:")


def test_float_nested_names_its_path(session: Path) -> None:
    lines = lines_of(session)
    lines[0] = lines[0].replace(b'"input":{', b'"input":{"rate":[1,0.5],')
    rewrite(session, lines)
    assert "at input.rate[1]" in (verify(session).reason or "")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"not json\n", "invalid JSON"),
        (b"[1,2]\n", "a JSON array"),
        (b'"text"\n', "a JSON string"),
        (b"{}\n", "missing required field"),
        (b"   \n", "invalid JSON"),
        (b"\xff\xfe{}\n", "not valid UTF-8"),
        (b'{"a":1,"a":2}\n', "duplicate key"),
        (b'{"a":"\\ud800"}\n', "missing required field"),
        (b"[" * 50_000 + b"\n", "nested too deeply"),
        (b'{"a":' + b"9" * 5000 + b"}\n", "more digits"),
    ],
)
def test_a_line_that_is_no_event_is_a_parse_error(session: Path, line: bytes, reason: str) -> None:
    lines = lines_of(session)
    rewrite(session, [lines[0], line, *lines[1:]])
    result = verify(session)
    assert (result.status, result.line) == (Status.PARSE_ERROR, 2), result
    assert reason in (result.reason or "")


def test_lone_surrogate_in_an_event_is_a_parse_error(session: Path) -> None:
    lines = lines_of(session)
    lines[1] = lines[1].replace(b'"input":{', b'"input":{"bad":"\\udc80",')
    rewrite(session, lines)
    result = verify(session)
    assert (result.status, result.line) == (Status.PARSE_ERROR, 2)
    assert "surrogate" in (result.reason or "")


def test_missing_schema_version_is_a_parse_error(session: Path) -> None:
    lines = lines_of(session)
    event = json.loads(lines[0])
    del event["schema_version"]
    rewrite(session, [json.dumps(event).encode() + b"\n", *lines[1:]])
    assert verify(session).status is Status.PARSE_ERROR


# -- not found ----------------------------------------------------------------------------


def test_not_found(tmp_path: Path) -> None:
    assert verify(tmp_path / "missing").status is Status.NOT_FOUND
    assert verify(tmp_path).status is Status.NOT_FOUND  # a folder without events.jsonl
    (tmp_path / "x.events.jsonl").write_bytes(b"")
    assert "x.events.jsonl" in (verify(tmp_path).reason or "")
    (tmp_path / "d" / "events.jsonl").mkdir(parents=True)
    result = verify(tmp_path / "d")
    assert (result.status, result.exit_code) == (Status.NOT_FOUND, 4)


def test_sibling_meta_of_a_named_events_file(tmp_path: Path) -> None:
    write_session(tmp_path / "s", events(2))
    (tmp_path / "s" / "events.jsonl").rename(tmp_path / "demo.events.jsonl")
    (tmp_path / "s" / "meta.json").rename(tmp_path / "demo.meta.json")
    assert verify(tmp_path / "demo.events.jsonl").anchor is not None


# -- the command line ---------------------------------------------------------------------


def test_cli_exit_codes_follow_the_statuses(tmp_path: Path) -> None:
    write_session(tmp_path / "valid", events(3))
    cases = {"valid": 0}
    for name, change in {
        "tampered": lambda ls: [ls[0], edit_event(ls[1], {"tool": "x"}), ls[2]],
        "truncated": lambda ls: [ls[0], ls[1], ls[2][:10]],
        "parse": lambda ls: [ls[0], b"{oops\n", *ls[1:]],
    }.items():
        shutil.copytree(tmp_path / "valid", tmp_path / name)
        rewrite(tmp_path / name, change(lines_of(tmp_path / name)))
    cases |= {"tampered": 1, "truncated": 2, "parse": 3, "missing": 4}
    for name, code in cases.items():
        result = runner.invoke(app, ["lightbox", "verify", str(tmp_path / name)])
        assert result.exit_code == code, (name, result.output)
        assert result.output.startswith(Status(code).name + ":"), result.output
        assert "Traceback" not in result.output
        shown = runner.invoke(app, ["lightbox", "verify", str(tmp_path / name), "--format", "json"])
        assert shown.exit_code == code
        document = json.loads(shown.output)
        assert (document["status"], document["exit_code"]) == (Status(code).name, code)
        errors = [e.message for e in SCHEMA.iter_errors(document)]
        assert not errors, (name, errors)


def test_cli_valid_line_and_json(tmp_path: Path) -> None:
    chained = write_session(tmp_path / "s", events(12))
    result = runner.invoke(app, ["lightbox", "verify", str(tmp_path / "s")])
    assert result.output == f"VALID: 12 events, head {chained[-1]['hash'][:12]}…\n"
    shown = json.loads(
        runner.invoke(app, ["lightbox", "verify", str(tmp_path / "s"), "--format", "json"]).output
    )
    assert shown["head"] == chained[-1]["hash"]
    assert shown["anchor"] == {"head": chained[-1]["hash"], "events": 12}
    assert shown["path"] == str(tmp_path / "s" / "events.jsonl")


def test_cli_tampered_line_names_the_line_and_invocation(tmp_path: Path) -> None:
    write_session(tmp_path / "s", events(3))
    lines = lines_of(tmp_path / "s")
    rewrite(tmp_path / "s", [lines[0], lines[1], edit_event(lines[2], {"status": "error"})])
    result = runner.invoke(app, ["lightbox", "verify", str(tmp_path / "s" / "events.jsonl")])
    assert result.exit_code == 1
    assert result.output.startswith("TAMPERED: line 3 (invocation inv_00003): hash does not match")


def test_the_documented_examples_are_real(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/formats/lightbox.md: each ``$ bbox-lark ...`` line of its first block is followed by its
    output; the JSON block after the ``--format json`` example is that command's output."""
    monkeypatch.chdir(REPO)
    page = (REPO / "docs" / "formats" / "lightbox.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```(\w+)\n(.*?)^```", page, flags=re.M | re.S)
    shown = [body for language, body in blocks if language == "sh" and "$ bbox-lark" in body]
    lines = shown[0].splitlines()
    assert len(lines) == 6
    for command, output in zip(lines[::2], lines[1::2], strict=True):
        result = runner.invoke(app, command.removeprefix("$ bbox-lark ").split())
        assert result.output == output + "\n"
    command = shown[1].strip().removeprefix("$ bbox-lark ")
    expected = next(body for language, body in blocks if language == "json" and '"status"' in body)
    assert runner.invoke(app, command.split()).output == expected


# -- never a traceback --------------------------------------------------------------------


@given(st.binary(max_size=300))
@example(b"\n\r\n\r")
@example(b"{")
@example(b"\x00" * 5)
@example(REFERENCE_LINE[:-1] + b"\r" + REFERENCE_LINE)
def test_any_bytes_get_a_status(data: bytes) -> None:
    result = verify_bytes(data)
    assert isinstance(result.status, Status)
    assert result.summary()
    json.dumps(result.to_json())


@given(st.integers(min_value=0), st.integers(min_value=0, max_value=255))
def test_one_changed_byte_is_caught_or_means_the_same(position: int, value: int) -> None:
    """Change one byte of a valid file: either the verdict is not VALID, or the file still
    says the same thing (``\\u00e9`` and ``\\u00E9`` are one character; ``\\r`` ends a line
    like ``\\n``)."""
    data = b"".join(json.dumps(e, sort_keys=True).encode() + b"\n" for e in chain(events(3)))
    at = position % len(data)
    changed = data[:at] + bytes([value]) + data[at + 1 :]
    if verify_bytes(changed).status is Status.VALID:
        meaning = [json.loads(line) for line in changed.splitlines() if line.strip(b"\r\n")]
        assert meaning == [json.loads(line) for line in data.splitlines()]


@given(st.binary(min_size=1, max_size=200))
def test_garbage_files_through_the_cli(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as temp:
        (Path(temp) / "events.jsonl").write_bytes(data)
        result = runner.invoke(app, ["lightbox", "verify", temp])
    assert result.exit_code in range(5), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


# -- the reference: lightbox-rec 0.1.0 ----------------------------------------------------

REFERENCE = "lightbox-rec==0.1.0"

#: Run in the reference's virtual environment: writes a session with the reference, then
#: verifies every session folder named on the command line; prints {name: status}.
REFERENCE_SCRIPT = """
import json, os, sys
from lightbox import Session, verify_session
if sys.argv[1] == "write":
    session = Session("ref_written")
    session.emit("read", {"path": "caf\\u00e9.md", "q": "\\u2603 \\U0001F600"}, {"lines": 3})
    pending = session.emit_pending("slow", {"n": 1}, actor="agent")
    session.emit_resolved(pending, {"ok": True})
    session.emit("send", {"to": "x"}, {"error": "no"}, status="error", retry_of="inv_00001")
    print("written")
else:
    statuses = {}
    for name in sys.argv[2:]:
        try:
            statuses[name] = verify_session(name).status.name
        except Exception as error:
            statuses[name] = "CRASH " + type(error).__name__
    print(json.dumps(statuses))
"""


def _python_312_or_later() -> str | None:
    """A Python >= 3.12 to run the reference (it requires 3.12): this one, else pyenv's."""
    if sys.version_info >= (3, 12):
        return sys.executable
    roots = []
    if os.environ.get("PYENV_ROOT"):
        roots.append(Path(os.environ["PYENV_ROOT"]))
    pyenv = shutil.which("pyenv")
    if pyenv:
        done = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=30, check=False)
        if done.returncode == 0 and done.stdout.strip():
            roots.append(Path(done.stdout.strip()))
    roots.append(Path.home() / ".pyenv")
    for root in roots:
        found = sorted((root / "versions").glob("3.1[2-9].*/bin/python"))
        if found:
            return str(found[0])
    for name in ("python3.12", "python3.13", "python3.14"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def _reference_python() -> str:
    """The reference's interpreter, from a virtual environment built once and kept in
    ``$XDG_CACHE_HOME/bbox-lark/lightbox-ref-venv`` (default ``~/.cache``). Skips when no
    Python 3.12+ exists or the package index is unreachable.

    The environment is built in place (a moved one has broken scripts) under a lock, and
    counts as built once its ``.complete`` marker exists; anything else there is rebuilt."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bbox-lark"
    venv = cache / "lightbox-ref-venv"
    python = venv / "bin" / "python"
    marker = venv / ".complete"
    if marker.is_file():
        return str(python)
    base = _python_312_or_later()
    if base is None:
        pytest.skip("the reference lightbox-rec needs Python >= 3.12; none found (pyenv install 3.12)")
    fcntl = pytest.importorskip("fcntl", reason="the cached reference environment is built on POSIX")
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / "lightbox-ref-venv.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test run may be building it
        if marker.is_file():
            return str(python)
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([base, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--timeout", "15", "--retries", "1"]
        done = subprocess.run([*pip, REFERENCE], capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            pytest.skip(f"cannot install {REFERENCE} (package index unreachable?): {done.stderr[-300:]}")
        marker.write_text(REFERENCE + "\n", encoding="utf-8")
    return str(python)


def _run_reference(python: str, root: Path, *args: str) -> str:
    env = {**os.environ, "LIGHTBOX_DIR": str(root), "NO_COLOR": "1"}
    done = subprocess.run(
        [python, "-c", REFERENCE_SCRIPT, *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.network
def test_reference_interop(tmp_path: Path) -> None:
    python = _reference_python()
    root = tmp_path / "lightbox"
    sessions = root / "sessions"

    # The reference writes, we verify.
    assert _run_reference(python, root, "write") == "written"
    written = sessions / "ref_written"
    result = verify(written)
    assert (result.status, result.events) == (Status.VALID, 4), result

    # We write, the reference verifies; and both judge the same tampered copies alike.
    ours = write_session(sessions / "ours", events(4))
    assert ours[-1]["hash"] == verify(sessions / "ours").head
    variants = {
        "ours": (lambda ls: ls, "VALID", "VALID"),
        "edited": (lambda ls: [ls[0], edit_event(ls[1], {"tool": "x"}), *ls[2:]], "TAMPERED", "TAMPERED"),
        "reordered": (lambda ls: [ls[0], ls[2], ls[1], ls[3]], "TAMPERED", "TAMPERED"),
        "deleted_middle": (lambda ls: [ls[0], *ls[2:]], "TAMPERED", "TAMPERED"),
        "cut_last": (lambda ls: [*ls[:3], ls[3][:25]], "TRUNCATED", "TRUNCATED"),
        "no_final_newline": (lambda ls: [*ls[:3], ls[3].rstrip(b"\n")], "VALID", "VALID"),
        "bad_json": (lambda ls: [ls[0], b"{nope\n", *ls[1:]], "PARSE_ERROR", "PARSE_ERROR"),
        "crlf": (lambda ls: [line.replace(b"\n", b"\r\n") for line in ls], "VALID", "VALID"),
        # Where bbox-lark is stricter (docs/formats/lightbox.md): the anchor, fields the reference does
        # not know, and floats (the reference's verify crashes on them).
        "deleted_last": (lambda ls: ls[:3], "VALID", "TRUNCATED"),
        "injected": (lambda ls: [ls[0], edit_event(ls[1], {"evil": 1}), *ls[2:]], "VALID", "TAMPERED"),
        "float": (lambda ls: [ls[0], edit_event(ls[1], {"tool": 1.5}), *ls[2:]], "CRASH", "PARSE_ERROR"),
    }
    source = lines_of(sessions / "ours")
    for name, (change, _, _) in variants.items():
        if name != "ours":
            shutil.copytree(sessions / "ours", sessions / name)
            rewrite(sessions / name, change(source))
    reference = json.loads(_run_reference(python, root, "verify", *variants))
    for name, (_, theirs, mine) in variants.items():
        assert reference[name].startswith(theirs), (name, reference[name])
        assert verify(sessions / name).status.name == mine, name


def test_the_module_imports_nothing_heavy() -> None:
    script = "import sys, bbox_lark.convert.lightbox.chain; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(done.stdout.split())
    heavy = {"lark", "yaml", "rich", "typer", "bbox_lark.cli", "bbox_lark.files.atomic", "bbox_lark.api"}
    assert not heavy & loaded
