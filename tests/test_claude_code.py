"""``convert --from claude-code``: Claude Code session logs (JSON Lines) → bbox/1.

Every external sample (``../shared/corpus-external/claude-code``, skipped when absent) and
every hand-written fixture (``tests/fixtures/claude-code``) must convert to bbox that
``bbox_lark.check`` finds no error in and that the printer gives back byte for byte. Each
mapping rule of docs/formats/claude-code.md has a fixture and a test reading the output with
the parser (not with the converter's own helpers); the fixtures' output is snapshot-tested.
"""

from __future__ import annotations

import io
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
from bbox_lark.cli import app
from bbox_lark.convert import (
    Conversion,
    Fidelity,
    Input,
    ReadContext,
    claude_code,
    convert,
    detect_format,
    get_format,
)
from bbox_lark.convert.claude_code import LOOKAHEAD, read, sniff
from bbox_lark.numbers.stats import sum_metrics
from bbox_lark.syntax.parser import Head
from bbox_lark.syntax.printer import dumps

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "claude-code"
EXTERNAL = ROOT.parent / "shared" / "corpus-external" / "claude-code"
MALFORMED = EXTERNAL / "agent-session-otel__cc-session-001.HAS-MALFORMED-LINE.jsonl"

runner = CliRunner()


def fixture_paths() -> list[Path]:
    return sorted(FIXTURES.glob("*.jsonl"))


def external_paths() -> list[Path]:
    return sorted(EXTERNAL.glob("*.jsonl")) if EXTERNAL.is_dir() else []


def run(data: bytes | str, **options: Any) -> Conversion:
    return convert(data, "claude-code", to="bbox", **options)


def errors(text: str) -> list[str]:
    return [f"{d.line}:{d.code} {d.message}" for d in bbox_lark.check(text) if d.severity == "error"]


def assert_sound(text: str) -> None:
    """No error from check, and the printer gives the text back byte for byte."""
    assert errors(text) == []
    assert dumps(bbox_lark.parse(text)) == text


def events(text: str) -> list[Any]:
    return list(bbox_lark.parse(text).events)


def fixture(name: str) -> Conversion:
    return run((FIXTURES / f"{name}.jsonl").read_bytes())


# -- every file ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", fixture_paths(), ids=lambda p: p.stem)
def test_fixtures_convert_soundly(path: Path, snapshot_text: SnapshotAssertion) -> None:
    result = run(path.read_bytes())
    assert_sound(result.text)
    assert result.text == snapshot_text


@pytest.mark.parametrize("path", external_paths(), ids=lambda p: p.stem)
def test_external_samples_convert_soundly(path: Path) -> None:
    result = run(path.read_bytes())
    assert_sound(result.text)
    doc = bbox_lark.parse(result.text)
    assert doc.header["format"] == "bbox/1" and doc.header["repo_sha"] == "unknown"
    assert any(e.kind == "user" for e in doc.events)
    # Every tool call is completed by an o: line with its full id, when the log has one.
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if _is_json(line)]
    results = {
        block["tool_use_id"]
        for r in records
        if isinstance(r, dict) and isinstance(r.get("message"), dict)
        for block in (r["message"].get("content") if isinstance(r["message"].get("content"), list) else [])
        if isinstance(block, dict) and block.get("type") == "tool_result"
    }
    observed = {e.fields.get("id") for e in doc.events if e.kind == "observation"}
    assert results <= observed


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


@pytest.mark.skipif(not MALFORMED.is_file(), reason="no external corpus")
def test_the_malformed_line_is_skipped_with_its_number(tmp_path: Path) -> None:
    out = tmp_path / "out.bbox"
    result = runner.invoke(app, ["convert", str(MALFORMED), "--to", "bbox", "-o", str(out)])
    assert "Traceback" not in result.output
    assert result.exit_code == 1, result.output
    assert f"{MALFORMED}:8: skipped: not a JSON record" in result.stderr
    text = out.read_text(encoding="utf-8")
    assert_sound(text)
    # The rest is converted: every record before the cut line is there.
    kinds = [e.kind for e in events(text)]
    assert kinds.count("user") == 1 and kinds.count("agent") == 2 and "observation" in kinds
    assert "# claude-code record agent_supervision_note" in text


def test_a_skipped_line_says_what_it_is_in_json_terms_and_where_in_the_line() -> None:
    result = run('{"type": "user", "broken":\nnull\n"text"\n{"type": "user", "x": 1 2}\n')
    assert [(s.line, s.message) for s in result.skipped] == [
        (1, "not a JSON record (the record ends too early: cut short?)"),
        (2, "a JSON null, not a record (an object)"),
        (3, "a JSON string, not a record (an object)"),
        (4, "not a JSON record (Expecting ',' delimiter at column 25)"),
    ]


def test_bad_lines_are_skipped_and_the_rest_converted() -> None:
    result = fixture("errors")
    skipped = [(s.line, s.message) for s in result.skipped]
    assert [line for line, _ in skipped] == [5, 6, 7, 8]
    assert all(message.startswith("not a JSON record (") for _, message in skipped[:2])
    assert skipped[2:] == [(7, "a JSON array, not a record (an object)"), (8, "a record without a `type`")]
    last = events(result.text)[-2]
    assert last.kind == "user" and last.text.startswith('Still here "after" the bad lines')


# -- the mapping rules ---------------------------------------------------------------------


def test_tool_results_link_to_full_ids_that_share_a_prefix() -> None:
    doc = events(fixture("tool-ids").text)
    calls = [e for e in doc if e.kind == "tool_start"]
    results = [e for e in doc if e.kind == "observation"]
    ids = ["toolu_01ABCDEFGHIJKLMNOPQRSTUVWX", "toolu_01ABCDEFGHIJKLMNOPQRSTUVWY"]
    assert [c.fields["id"] for c in calls] == ids
    assert [(c.name, c.result.kind) for c in calls] == [("Read", "running"), ("Read", "running")]
    # Results arrive in the other order; each names its own call.
    assert [r.fields["id"] for r in results] == ids[::-1]
    assert results[0].result.kind == "ok" and results[0].result.rest == "bee"
    assert [c.text for c in results[0].continuation] == ["line two → arrow"]
    # A quote in a tool input is escaped in the call part.
    assert calls[1].fields["file_path"] == '/work/b "quoted" name.txt'
    assert calls[1].fields["limit"] == "20"
    # No correlation warning: every call is completed by its own result.
    codes = {d.code for d in bbox_lark.check(fixture("tool-ids").text)}
    assert not codes & {"W002", "W007"}


def test_usage_is_counted_once_per_message_id() -> None:
    """One API message split over three records (usage restated, output growing) is one
    response (DECISIONS §12): its lines carry the usage so far, each counter's largest."""
    result = fixture("usage-once")
    usage = [
        (e.kind, e.fields.get("tokens_in"), e.fields.get("tokens_out"), e.fields.get("tokens_cached"))
        for e in events(result.text)
        if "tokens_out" in e.fields and e.kind != "comment"  # not the closing summary
    ]
    assert usage == [
        ("thinking", "10", "1", "100"),  # input 7 + cache creation 3
        ("agent", "10", "9", "100"),
        ("tool_start", "10", "12", "100"),  # after the arrow: no argument of the call
        ("agent", "20", "2", None),
    ]
    call = next(e for e in events(result.text) if e.kind == "tool_start")
    assert all(f.after_arrow for f in call.field_nodes if f.key.startswith("tokens_"))
    dropped = {e.what: e.lines for e in result.report if e.action == "dropped"}
    assert dropped[claude_code._DUPLICATE_USAGE] == (3, 4)
    assert "largest value of each counter" in claude_code._DUPLICATE_USAGE
    # `stats` (bbox_lark.numbers.session) counts each response once; the closing summary agrees.
    from bbox_lark.numbers.session import read_session
    from bbox_lark.numbers.usage import Usage

    totals = read_session(result.text, estimate=False).totals
    # Cache writes are named (tokens_cache_write=3, part of tokens_in), so they are priced as such.
    assert (totals.responses, totals.usage_source, totals.usage) == (2, "responses", Usage(30, 14, 100, 3))
    assert totals.summary_totals.usage == Usage(30, 14, 100)
    assert sum_metrics(events(result.text)).counted == 0  # no # metrics lines any more


def test_a_message_id_seen_again_later_carries_no_usage() -> None:
    def record(uuid: str, message_id: str, text: str) -> str:
        message = {"id": message_id, "role": "assistant", "content": [{"type": "text", "text": text}]}
        message["usage"] = {"input_tokens": 5, "output_tokens": 4}
        return json.dumps({"type": "assistant", "uuid": uuid, "sessionId": "s", "message": message})

    user = json.dumps(
        {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": "hi"}}
    )
    result = run("\n".join([record("a", "m1", "one"), user, record("b", "m1", "again")]).encode())
    lines = [e for e in events(result.text) if e.kind == "agent"]
    assert [e.fields.get("tokens_in") for e in lines] == ["5", None]
    assert claude_code._REPEATED_MESSAGE in {e.what for e in result.report}


def test_thinking_todos_and_arrows() -> None:
    doc = events(fixture("usage-once").text)
    thinking = next(e for e in doc if e.kind == "thinking")
    assert thinking.text.startswith("First idea") and [c.text for c in thinking.continuation] == [
        "second idea"
    ]
    todos = next(e for e in doc if e.kind == "todos")
    assert todos.text.startswith("[in_progress] Write tests [pending] Ship it")
    # An arrow in agent text would read as a result: the text goes on a continuation line.
    agent = next(e for e in doc if e.kind == "agent")
    assert agent.result is None and [c.text for c in agent.continuation] == ["The answer is x → y"]
    model = next(e for e in doc if e.kind == "comment" and e.name == "model")
    assert model.text == "model: model-fx-2"


def test_sidechain_records_keep_their_thread() -> None:
    doc = events(fixture("sidechain").text)
    subagent = next(e for e in doc if e.kind == "subagent")
    assert (subagent.name, subagent.fields["id"], subagent.result.kind) == (
        "Explore",
        "toolu_fx_task",
        "launched",
    )
    threads = [(e.kind, e.fields.get("tid")) for e in doc if e.kind != "comment"]
    assert threads == [
        ("user", None),
        ("subagent", None),
        ("user", "agent-7"),
        ("tool_start", "agent-7"),
        ("tool_progress", "agent-7"),
        ("observation", "agent-7"),
        ("observation", None),
    ]
    progress = next(e for e in doc if e.kind == "tool_progress")
    assert (progress.name, progress.fields["id"], progress.fields["matched"]) == (
        "Glob",
        "toolu_fx_glob",
        "2",
    )
    older = events(fixture("sidechain-no-agent").text)
    assert [e.fields.get("tid") for e in older if e.kind == "user"] == ["sidechain", None]


def test_summary_system_snapshot_and_queue_are_structured_comments() -> None:
    doc = events(fixture("comments").text)
    comments = [(e.kind, e.name, e.text) for e in doc if e.kind in ("comment", "lifecycle")]
    assert comments == [
        ("comment", "notes", "notes: summary leaf=d9"),
        ("comment", "file-snapshot", "file-snapshot: d1 files=1 ts=2030-01-02T03:04:05Z"),
        ("comment", "queue", 'queue: enqueue "also \\"fix\\" the docs" ts=2030-01-02T03:04:06Z'),
        ("comment", "queue", "queue: remove ts=2030-01-02T03:04:07Z"),
        (
            "comment",
            "notes",
            "notes: system subtype=informational extra.level=warning ts=2030-01-02T03:04:09Z",
        ),
        ("lifecycle", "compact", "reason=manual tokens_before=1234 ts=2030-01-02T03:04:10Z"),
        ("comment", None, "claude-code record custom-future-record"),
    ]
    summary = doc[0]
    assert [c.text for c in summary.continuation] == ["Fixture session", "with two lines"]
    unknown = doc[-1]
    assert json.loads(unknown.continuation[0].text)["payload"] == {"k": [1, 2]}


def test_is_error_interrupted_mcp_and_awkward_text() -> None:
    result = fixture("errors")
    doc = events(result.text)
    bash, mcp = (e for e in doc if e.kind in ("tool_start", "mcp"))
    assert bash.fields["command"] == "make # metrics" and json.loads(bash.fields["extra.input"]) == {
        "-n": True
    }
    assert (mcp.kind, mcp.name, mcp.fields["state"]) == ("mcp", "github.list_issues", "open")
    failed, listed = (e for e in doc if e.kind == "observation")
    assert failed.result.kind == "error" and failed.fields["interrupted"] == "true"
    # ` # metrics` in a result would read as a metrics comment: the text goes below.
    assert failed.metrics is None and [c.text for c in failed.continuation] == [
        "make: *** No rule # metrics prompt=1"
    ]
    assert listed.result.kind == "ok" and listed.result.rest == "[3 issues]"


def test_header_keys_and_repo_sha() -> None:
    doc = bbox_lark.parse(fixture("tool-ids").text)
    assert dict(doc.header) == {
        "format": "bbox/1",
        "id": "fx-ids",
        "repo_sha": "unknown",
        "agent": "claude-code",
        "model": "model-fx",
        "client_version": "9.9.9",
        "cwd": "/work",
        "branch": "dev",
    }
    given_sha = run((FIXTURES / "tool-ids.jsonl").read_bytes(), repo_sha="0123abcd")
    assert bbox_lark.parse(given_sha.text).header["repo_sha"] == "0123abcd"
    assert not any("repo_sha" in e.what for e in given_sha.report)


def test_a_log_without_a_session_id_gets_one_synthesized() -> None:
    result = run('{"type":"summary","summary":"s"}\n')
    assert bbox_lark.parse(result.text).header["id"].startswith("imported-")
    assert any(e.action == "synthesized" and "session ids" in e.what for e in result.report)


# -- detection -----------------------------------------------------------------------------


def test_detection_by_content() -> None:
    claude = (FIXTURES / "tool-ids.jsonl").read_text(encoding="utf-8")
    assert sniff(claude) > 0
    assert detect_format("session.jsonl", claude.encode()) == "claude-code"
    assert detect_format(None, claude.encode()) == "claude-code"
    # Other JSON Lines: bbox records (the spec's JSONL alternative, a header record) score 0.
    others = [
        '{"t":"u","c":"Add ads"}\n{"t":"a","c":"ok"}\n',
        '{"format":"bbox/1","id":"s","repo_sha":"abc123"}\n{"kind":"user","text":"hi"}\n',
        '{"type":"user","text":"no session"}\n',
        "not json\n",
        "",
    ]
    for text in others:
        assert sniff(text) == 0, text


def test_a_first_record_longer_than_the_sniffed_head_is_still_detected(tmp_path: Path) -> None:
    # A pasted prompt can make the first record longer than the 64 KiB detection reads.
    first = {"parentUuid": None, "sessionId": "s1", "type": "user", "uuid": "u1"}
    first["message"] = {"role": "user", "content": "x" * 100_000}
    second = {"sessionId": "s1", "type": "user", "uuid": "u2", "message": {"role": "user", "content": "hi"}}
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n", encoding="utf-8")
    cut = path.read_text(encoding="utf-8")[: 1 << 16]
    assert sniff(cut) > 0
    assert detect_format(None, cut) == "claude-code"
    result = CliRunner().invoke(app, ["convert", str(path), "--to", "bbox"])
    assert result.exit_code == 0, result.stderr
    assert "u: hi" in result.stdout


def test_it_is_read_only() -> None:
    assert get_format("claude-code").write is None
    assert get_format("claude_code").name == "claude-code"


# -- streaming -----------------------------------------------------------------------------


class _Counting(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, size: int | None = -1) -> bytes:
        piece = super().read(size)
        self.taken += len(piece)
        return piece


def test_the_reader_streams() -> None:
    record = {
        "type": "user",
        "sessionId": "big",
        "timestamp": "2030-01-02T03:04:05Z",
        "message": {"role": "user", "content": "x" * 200},
    }
    data = (json.dumps(record) + "\n").encode() * (LOOKAHEAD * 40)
    stream = _Counting(data)
    items = read(Input(stream=stream), ReadContext(Fidelity()))
    assert isinstance(next(items), Head)
    for _ in range(LOOKAHEAD + 10):
        next(items)
    assert stream.taken < len(data) // 4


# -- never a traceback ---------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.text(max_size=30),
    st.sampled_from(["", "→", '"', "\n\n", "# metrics x=1", "\x00", "\ud800", "\r"]),
)
_json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_types = st.sampled_from(
    ["user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation", "progress", "odd"]
)
_blocks = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["text", "thinking", "tool_use", "tool_result", "image", "redacted_thinking", "x"]
        )
    },
    optional={
        "text": _scalars,
        "thinking": _scalars,
        "id": st.sampled_from(["toolu_1", "toolu_1b", "", "a b"]),
        "tool_use_id": st.sampled_from(["toolu_1", "toolu_1b", ""]),
        "name": st.sampled_from(["Bash", "TodoWrite", "Task", "mcp__s__m", "a b", "", "→"]),
        "input": _json_values,
        "content": _json_values,
        "is_error": st.booleans(),
    },
)
_records = st.fixed_dictionaries(
    {"type": _types},
    optional={
        "sessionId": _scalars,
        "timestamp": st.sampled_from(["2030-01-02T03:04:05Z", "yesterday", 5]),
        "isSidechain": st.booleans(),
        "agentId": _scalars,
        "cwd": _scalars,
        "message": st.one_of(
            _json_values,
            st.fixed_dictionaries(
                {"content": st.one_of(_scalars, st.lists(st.one_of(_blocks, _scalars), max_size=4))},
                optional={
                    "id": st.sampled_from(["m1", "m2", 3]),
                    "model": _scalars,
                    "usage": st.dictionaries(
                        st.sampled_from(["input_tokens", "output_tokens", "cache_read_input_tokens", "z"]),
                        _scalars,
                    ),
                },
            ),
        ),
        "summary": _scalars,
        "content": _json_values,
        "operation": _scalars,
        "snapshot": _json_values,
        "toolUseID": st.sampled_from(["toolu_1", "x"]),
        "data": _json_values,
    },
)
_lines = st.one_of(
    _records.map(lambda r: json.dumps(r, ensure_ascii=False)),
    _json_values.map(json.dumps),
    st.text(max_size=40),
)


@fuzz_settings(150)
@given(st.lists(_lines, max_size=8))
def test_fuzz_never_a_traceback(lines: list[str]) -> None:
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    result = run(data)
    assert_sound(result.text)


def test_the_docs_example_is_current() -> None:
    page = (ROOT / "docs" / "formats" / "claude-code.md").read_text(encoding="utf-8")
    result = fixture("usage-once")
    assert "```text\n" + result.text + "```" in page
    for entry in result.fidelity.entries:
        assert f"{entry.stage}: {entry.render()}" in page


# -- subagent logs beside a session ------------------------------------------------------

SUBAGENTS = FIXTURES.parent / "claude-code-subagents"


def convert_path(path: Path) -> Conversion:
    return convert(path.read_bytes(), "claude-code", to="bbox", path=path)


def test_subagent_logs_beside_the_session_are_read() -> None:
    """``<session>.jsonl`` beside ``<session>/subagents/agent-<id>.jsonl`` (Claude Code's
    layout): each subagent's log comes in as ``tid=<agent id>`` lines before its Task's
    result, and the result names the log."""
    result = convert_path(SUBAGENTS / "sess-sub.jsonl")
    assert_sound(result.text)
    doc = events(result.text)
    threads = [(e.kind, e.tid) for e in doc if e.kind in ("user", "agent", "tool_start", "observation")]
    assert threads == [
        ("user", None),
        ("user", "a1"),
        ("tool_start", "a1"),
        ("observation", "a1"),
        ("agent", "a1"),
        ("observation", None),  # the Task's result, after its subagent's lines
        ("user", "b2"),
        ("tool_start", "b2"),
        ("observation", "b2"),
        ("agent", "b2"),
        ("observation", None),
        ("agent", None),
    ]
    results = [e for e in doc if e.kind == "observation" and e.tid is None]
    assert [(e.fields["session_id"], e.fields["path"]) for e in results] == [
        ("a1", "sess-sub/subagents/agent-a1.jsonl"),
        ("b2", "sess-sub/subagents/agent-b2.jsonl"),
    ]
    from bbox_lark.numbers.session import read_session
    from bbox_lark.numbers.usage import Usage

    totals = read_session(result.text, estimate=False).totals
    assert totals.calls == 4 and totals.outcome_count("ok") == 4  # 2 Task + 2 Glob
    # Each message once: parent 10+30 in, 40+12 out; each subagent 5+7 in, 8+6 out.
    assert totals.usage == Usage(64, 80, 4140)
    # In memory, without a path, there is nothing beside it: the parent alone.
    alone = run((SUBAGENTS / "sess-sub.jsonl").read_bytes())
    assert not [e for e in events(alone.text) if e.tid is not None]


def _copy_session(tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(SUBAGENTS, tmp_path / "s")
    return tmp_path / "s" / "sess-sub.jsonl"


def test_subagent_found_by_its_prompt_or_kept_at_the_end(tmp_path: Path) -> None:
    session = _copy_session(tmp_path)
    records = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]
    del records[3]["toolUseResult"]  # task a: found by its prompt ("Find the tests")
    records[4]["toolUseResult"] = {"status": "completed"}
    records[2]["message"]["content"][0]["input"]["prompt"] = "something else"  # task b: not found
    session.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = convert_path(session)
    assert_sound(result.text)
    doc = events(result.text)
    linked = [e.fields.get("session_id") for e in doc if e.kind == "observation" and e.tid is None]
    assert linked == ["a1", None]
    note = next(e for e in doc if e.kind == "comment" and e.text.startswith("notes: subagent"))
    assert note.fields == {"session_id": "b2", "path": "sess-sub/subagents/agent-b2.jsonl"}
    assert [e.tid for e in doc if e.line > note.line and e.kind != "comment"] == ["b2"] * 4


def test_a_subagent_log_of_another_session_is_skipped(tmp_path: Path) -> None:
    session = _copy_session(tmp_path)
    log = session.with_suffix("") / "subagents" / "agent-a1.jsonl"
    log.write_text(log.read_text(encoding="utf-8").replace('"fx-sub"', '"other"'), encoding="utf-8")
    result = convert_path(session)
    assert not [e for e in events(result.text) if e.tid == "a1"]
    assert any("another session" in s.message for s in result.skipped)


# -- generated sessions (tools/gen_claude_code.py) and harbor's converter ----------------------


def test_generated_session_is_realistic_and_seeded() -> None:
    import gen_claude_code

    text = gen_claude_code.generate(400, seed=3)
    assert text == gen_claude_code.generate(400, seed=3)
    assert text != gen_claude_code.generate(400, seed=4)
    records = [json.loads(line) for line in text.splitlines()]
    assert len(records) == 400
    by_message: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if record["type"] == "assistant":
            by_message.setdefault(record["message"]["id"], []).append(record)
    split = [group for group in by_message.values() if len(group) > 1]
    assert split, "responses split over records sharing message.id"
    for group in split:  # the usage restated, output growing as it streams
        outputs = [record["message"]["usage"]["output_tokens"] for record in group]
        assert outputs == sorted(outputs)
    parallel = [
        g for g in by_message.values() if sum(r["message"]["content"][0]["type"] == "tool_use" for r in g) > 1
    ]
    assert parallel, "parallel tool calls"
    assert max(len(line) for line in text.splitlines()) > 50_000, "a large output"
    converted = convert(text.encode(), "claude-code", to="bbox")
    assert not converted.skipped and not converted.secrets


def _harbor_python() -> str:
    import bench

    python, why = bench.harbor_python(None)
    if python is None:
        pytest.skip(why)
    return python


def test_calls_and_tokens_agree_with_harbor(tmp_path: Path) -> None:
    """harbor 0.25's own Claude Code → ATIF converter and ``stats --json`` count the same
    calls and tokens (skipped where harbor is not installed: tools/bench.py says how)."""
    import subprocess

    import bench
    import gen_claude_code

    python = _harbor_python()
    project = tmp_path / "logs" / "sessions" / "projects" / "-home-dev-project"
    project.mkdir(parents=True)
    session = project / "session.jsonl"
    gen_claude_code.write(session, 600, seed=11)
    done = subprocess.run(
        [python, "-c", bench._HARBOR_DRIVER, str(tmp_path / "logs"), "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    result = CliRunner().invoke(app, ["stats", "--json", str(session)])
    assert result.exit_code in (0, 1), result.output
    assert bench.ours_usage(result.stdout) == theirs
