"""The Python API, table by table (DECISIONS §8-§10).

Every expected value is written out by hand: none is computed by the code under test.
"""

from __future__ import annotations

from typing import Any

import pytest

import bbox_lark
from bbox_lark import Continuation, Diagnostic, Document, Event

HEADER = "---\nformat: bbox/1\nid: sess_api\nrepo_sha: 215db51\nrunner: local\n---\n"
#: The line number of the first body line after HEADER.
FIRST = 7


def parse_body(body: str) -> Document:
    return bbox_lark.parse(HEADER + body)


def one_event(line: str) -> Event:
    """The single event of a one-line body."""
    events = parse_body(line + "\n").events
    assert len(events) == 1
    return events[0]


def found(body: str) -> list[tuple[str, int, int]]:
    """(code, line, col) of every diagnostic for a body under the clean header."""
    return [(d.code, d.line, d.col) for d in bbox_lark.check(HEADER + body)]


def header_doc(yaml: str, body: str = "u: hi\n") -> Document:
    return bbox_lark.parse("---\n" + yaml + "---\n" + body)


# ---------------------------------------------------------------- kinds and names (§8, §10)

#: DECISIONS §8: every value Event.kind can take.
EVENT_KINDS = [
    "user", "agent", "tool", "tool_start", "tool_progress", "observation", "skill", "plan", "mode",
    "recall", "subagent", "mcp", "question", "thinking", "todos", "comment", "lifecycle", "unknown",
]  # fmt: skip

KIND_TABLE = [
    # (line, kind, name)
    ("u: Fix the login bug", "user", None),
    ("a: Looking now.", "agent", None),
    ("t:read src/auth.rs → [186 lines]", "tool", "read"),
    ("t: read src/auth.rs", "tool", "read"),
    ("t!:test cargo test → [running]", "tool_start", "test"),
    ("t~:test [64/128 passed]", "tool_progress", "test"),
    ("o: id=call_1 → [ok]", "observation", None),
    ("s:deploy activate → [loaded]", "skill", "deploy"),
    ('p:create "Auth plan" → [ok]', "plan", "create"),
    ("m: auto", "mode", "auto"),
    ("m:auto afk=true", "mode", "auto"),
    ("m:plan", "mode", "plan"),
    ('r: "auth" → [2 matches]', "recall", None),
    ('x:explore "find auth failures" → [3 files]', "subagent", "explore"),
    ("c:github.issues state=open → [8 issues]", "mcp", "github.issues"),
    ("c:linear.issues.list → [5 issues]", "mcp", "linear.issues.list"),
    ("c:github", "mcp", "github"),
    ('q: "Which auth?" → [selected: OAuth]', "question", None),
    ("th: Analyzing the request... sig=Ep4E", "thinking", None),
    ("td: [pending] Fix bug [completed] Add test", "todos", None),
    ("# just a note", "comment", None),
    ("# metrics step=1 cost=0.1", "comment", "metrics"),
    ("@start id=sess_api duration=12h", "lifecycle", "start"),
    ("@wait-approval pr=47 timeout=2h → approved", "lifecycle", "wait-approval"),
    ("@phase explore", "lifecycle", "phase"),
    ("tool: read src/main.rs", "unknown", None),
    ("@", "unknown", None),
]


@pytest.mark.parametrize(("line", "kind", "name"), KIND_TABLE)
def test_kind_and_name(line: str, kind: str, name: str | None) -> None:
    event = one_event(line)
    assert (event.kind, event.name) == (kind, name)
    assert event.raw == line
    assert event.line == FIRST
    assert event.col == 1


def test_kind_table_covers_every_kind() -> None:
    assert sorted({kind for _, kind, _ in KIND_TABLE}) == sorted(EVENT_KINDS)


#: DECISIONS §10: a comment's name is its structured kind, else None.
COMMENT_TABLE = [
    ("# t=00:15:30", "elapsed"),
    ("# metrics step=3 prompt_tokens=520", "metrics"),
    ("# budget: $50.00 remaining=$47.23 tokens=12847", "budget"),
    ("# notes: CI outage caused 2h gap", "notes"),
    ('# model: haiku reason="topic detection"', "model"),
    ("# condense range=50-100 detail=summary", "condense"),
    ('# anchor step=75 reason="key decision"', "anchor"),
    ("# memory store=all target=vectordb", "memory"),
    ("# redactions=0", "redactions"),
    ("# file-snapshot: b2d8cc51 files=0", "file-snapshot"),
    ('# queue: enqueue "fix the tests"', "queue"),
    ("# tokens=487000 cost=$42.17 duration=12h", "summary"),
    ("# tokens_in=2847 tokens_out=1923 cost=$0.08", "summary"),
    ("# Check for past context", None),
    ("# metricsfoo is text", None),
    ("#", None),
]


@pytest.mark.parametrize(("line", "name"), COMMENT_TABLE)
def test_comment_name(line: str, name: str | None) -> None:
    event = one_event(line)
    assert (event.kind, event.name) == ("comment", name)


def test_comment_table_covers_every_structured_kind() -> None:
    expected = [
        "elapsed", "metrics", "budget", "notes", "model", "condense", "anchor", "memory",
        "redactions", "file-snapshot", "queue", "summary",
    ]  # fmt: skip
    assert sorted({name for _, name in COMMENT_TABLE if name}) == sorted(expected)


def test_every_lifecycle_primitive_parses_without_a_warning() -> None:
    primitives = [
        "start", "checkpoint", "pause", "resume", "end", "assess", "notify", "wait", "wait-approval",
        "escalate", "batch", "snapshot", "rotate", "compact", "phase", "init",
    ]  # fmt: skip
    body = "".join(f"@{p} explore\n" if p == "phase" else f"@{p}\n" for p in primitives)
    doc = parse_body(body)
    assert [e.name for e in doc.events] == primitives
    assert {e.kind for e in doc.events} == {"lifecycle"}
    assert [d.code for d in doc.diagnostics] == []


# ---------------------------------------------------------------- results (§4, §9, §10)

#: DECISIONS §10: every value Result.kind can take.
RESULT_KINDS = [
    "ok", "skip", "pending", "running", "started", "launched", "loaded", "auto", "count", "error",
    "retry", "selected", "auto_choice", "blob", "fields", "redacted", "text", "empty",
]  # fmt: skip
SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

RESULT_TABLE = [
    # (line, result kind, result text)
    ("t:read a.rs → [ok]", "ok", "[ok]"),
    ("t:read a.rs → [skip]", "skip", "[skip]"),
    ('q: id=q_1 "Which?" → [pending]', "pending", "[pending]"),
    ("t:test id=c1 → [running]", "running", "[running]"),
    ("t:build id=c2 → [started]", "started", "[started]"),
    ('x:explore id=s1 "scan" → [launched]', "launched", "[launched]"),
    ("s:deploy activate → [loaded]", "loaded", "[loaded]"),
    ('q: id=q_2 "Which?" → [auto]', "auto", "[auto]"),
    ("t:grep x → [4]", "count", "[4]"),
    ("t:read a.rs → [186 lines]", "count", "[186 lines]"),
    ("t:git push → [err: permission denied]", "error", "[err: permission denied]"),
    ("t:git push → [error]", "error", "[error]"),
    ("t:git push → [error: rejected]", "error", "[error: rejected]"),
    ("t!:git span=t1 push → [retry 2/3]", "retry", "[retry 2/3]"),
    ("q: id=q_3 → [selected: Auth, API]", "selected", "[selected: Auth, API]"),
    ('q: id=q_4 → [auto: OAuth, reason="x y"]', "auto_choice", '[auto: OAuth, reason="x y"]'),
    (f"t:read a.rs → @blob sha256={SHA} bytes=4", "blob", f"@blob sha256={SHA} bytes=4"),
    (
        f"t:git diff → @blob sha256={SHA} bytes=4 mime=text/x-diff",
        "blob",
        f"@blob sha256={SHA} bytes=4 mime=text/x-diff",
    ),
    ('x:explore id=s2 → session_id=s2 path=p summary="3"', "fields", 'session_id=s2 path=p summary="3"'),
    ("t:shell echo $KEY → [redacted:api_key]", "redacted", "[redacted:api_key]"),
    ("t:search ticker=GOOGL → $185.35", "text", "$185.35"),
    ("t:git log -5 →", "empty", ""),
    ("t:test → [ok] 128 tests passed", "ok", "[ok] 128 tests passed"),
    ("t:test→[ok]", "ok", "[ok]"),
    ("t:read a.rs →   [3 lines]   ", "count", "[3 lines]"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "kind", "text"), RESULT_TABLE)
def test_result(line: str, kind: str, text: str) -> None:
    result = one_event(line).result
    assert result is not None
    assert (result.kind, result.text) == (kind, text)


def test_result_table_covers_every_result_kind() -> None:
    assert sorted({kind for _, kind, _ in RESULT_TABLE}) == sorted(RESULT_KINDS)


@pytest.mark.parametrize("line", ["u: no arrow here", "t:read a.rs", "@resume", "# t=00:00:01"])
def test_no_arrow_means_no_result(line: str) -> None:
    assert one_event(line).result is None


def test_result_details() -> None:
    count = one_event("t:read a.rs → [186 lines]").result
    assert count is not None and (count.number, count.unit) == (186, "lines")
    retry = one_event("t!:git span=t1 push → [retry 2/3]").result
    assert retry is not None and (retry.number, retry.total) == (2, 3)
    error = one_event("t:git push → [err: permission denied] later").result
    assert error is not None and (error.message, error.rest) == ("permission denied", "later")
    choice = one_event('q: id=q_4 → [auto: OAuth, reason="existing infra"]').result
    assert choice is not None and (choice.choices, choice.message) == (("OAuth",), "existing infra")
    blob = one_event(f"t:git diff → @blob sha256={SHA} bytes=4 mime=text/x-diff").result
    assert blob is not None and blob.blob is not None
    assert (blob.blob.sha256, blob.blob.size_int, blob.blob.mime) == (SHA, 4, "text/x-diff")


# ---------------------------------------------------------------- one rich event (§8, §10)


def test_event_attributes() -> None:
    line = 't:read id=call_1 src/auth.rs "two words" [a, b] step=3 → [186 lines] # metrics cost=0.1'
    doc = parse_body(line + "\n  pub enum Tier { Free, Pro }\n")
    (event,) = doc.events
    assert event.kind == "tool"
    assert event.line == FIRST
    assert event.col == 1
    assert event.name == "read"
    assert event.fields == {"id": "call_1", "step": "3"}
    assert event.args == ("src/auth.rs", "two words", ("a", "b"))
    assert event.result is not None and event.result.text == "[186 lines]"
    assert event.result.col == 58
    assert event.metrics == {"cost": "0.1"}
    assert event.raw == line
    assert [c.text for c in event.continuation] == ["pub enum Tier { Free, Pro }"]
    assert event.continuation[0].line == FIRST + 1
    assert (event.id, event.step) == ("call_1", 3)


TYPED_TABLE = [
    # (field, accessor, value)
    ("step=12", "step", 12),
    ("latency_ms=3420", "latency_ms", 3420),
    ("attempt=2", "attempt", (2, None)),
    ("attempt=2/3", "attempt", (2, 3)),
    ("ts=2025-12-18T03:21:11Z", "ts", "2025-12-18T03:21:11Z"),
    ("ts=2025-12-18T04:21:11+01:00", "ts", "2025-12-18T04:21:11+01:00"),
    ("level=warn", "level", "warn"),
    ("id=call_1", "id", "call_1"),
    ("span=t91", "span", "t91"),
    ("tid=2", "tid", "2"),
    ("parent=x17", "parent", "x17"),
]


@pytest.mark.parametrize(("field", "accessor", "value"), TYPED_TABLE)
def test_typed_accessor(field: str, accessor: str, value: Any) -> None:
    event = one_event(f"t:curl api.example.com {field} → [ok]")
    assert getattr(event, accessor) == value
    assert found(f"t:curl api.example.com {field} → [ok]\n") == []


MALFORMED_TABLE = [
    # (line, accessor, diagnostic (code, col))
    ("t:a step=three → [ok]", "step", ("W014", 10)),
    ("t:a latency_ms=1.5s → [ok]", "latency_ms", ("W014", 16)),
    ("t:a attempt=4/3 → [ok]", "attempt", ("W014", 13)),
    ("t:a level=fatal → [ok]", "level", ("W014", 11)),
    ("t:a ts=2025-12-18T03:21:08 → [ok]", "ts", ("W005", 8)),
]


@pytest.mark.parametrize(("line", "accessor", "where"), MALFORMED_TABLE)
def test_malformed_typed_value_is_a_warning_at_its_column(
    line: str, accessor: str, where: tuple[str, int]
) -> None:
    if accessor != "attempt":  # 4/3 has the N/M shape; only the check rejects N > M
        assert getattr(one_event(line), accessor) is None
    assert found(line + "\n") == [(where[0], FIRST, where[1])]


# ---------------------------------------------------------------- fields (§4, §10)

FIRST_WINS_TABLE = [
    # (line, fields)
    ("t:run mode=first mode=second → [ok]", {"mode": "first"}),
    ("t:run mode=before → mode=after extra=1", {"mode": "before", "extra": "1"}),
    ("t:run → mode=one mode=two", {"mode": "one"}),
    ("o: id=call_1 → [ok] id=call_2", {"id": "call_1"}),
    ("a: note=first note=second", {"note": "first"}),
]


@pytest.mark.parametrize(("line", "fields"), FIRST_WINS_TABLE)
def test_first_occurrence_wins_and_the_arrow_never_overrides(line: str, fields: dict[str, str]) -> None:
    assert one_event(line).fields == fields


LIST_TABLE = [
    ("prs=[201,202]", ["201", "202"]),
    ("labels=[a, b]", ["a", "b"]),
    ('options=["JWT", "OAuth"]', ["JWT", "OAuth"]),
    ('mixed=["a, b", c]', ["a, b", "c"]),
    ("none=[]", []),
]


@pytest.mark.parametrize(("field", "value"), LIST_TABLE)
@pytest.mark.parametrize("template", ["t:gh {} → [ok]", "@end {}", "a: done {}"])
def test_list_values_are_tuples_of_strings(template: str, field: str, value: list[str]) -> None:
    # A tuple since Core v4 (a node's values are immutable); JSON writes it as an array.
    event = one_event(template.format(field))
    (got,) = event.fields.values()
    assert type(got) is tuple
    assert all(type(item) is str for item in got)
    assert got == tuple(value)


VALUE_TABLE = [
    # (field as written, value)
    ('msg="say \\"hi\\""', 'say "hi"'),
    ('msg="back\\\\slash"', "back\\slash"),
    ('msg="two\\nlines"', "two\nlines"),
    ('msg="a\\tb"', "a\tb"),
    ('msg="kept \\x as is"', "kept \\x as is"),
    ('msg=""', ""),
    ("msg=", ""),
    ("msg=https://x.y/z?a=b", "https://x.y/z?a=b"),
    ("msg=$12.30", "$12.30"),
]


@pytest.mark.parametrize(("field", "value"), VALUE_TABLE)
def test_field_values(field: str, value: str) -> None:
    assert one_event(f"t:write {field} → [ok]").fields == {"msg": value}


# ---------------------------------------------------------------- quotes (§9)

TOKEN_START_TABLE = [
    # (line, args, fields): a quote inside a word is an ordinary character
    ('t:echo it"s → [ok]', ('it"s',), {}),
    ('t:echo say"hi there" → [ok]', ('say"hi', 'there"'), {}),
    ('t:echo 5" wide → [ok]', ('5"', "wide"), {}),
    ('t:echo "a → b" → [ok]', ("a → b",), {}),
    ('t:echo a="b c" → [ok]', (), {"a": "b c"}),
    ('t:echo ["x y", z] → [ok]', (("x y", "z"),), {}),
]


@pytest.mark.parametrize(("line", "args", "fields"), TOKEN_START_TABLE)
def test_quotes_open_only_at_token_start(line: str, args: tuple[Any, ...], fields: dict[str, str]) -> None:
    event = one_event(line)
    assert (event.args, event.fields) == (args, fields)
    assert event.result is not None and event.result.kind == "ok"
    assert found(line + "\n") == []


UNTERMINATED_TABLE = [
    # (line, diagnostics, fields, result kind)
    ('t:grep "TODO src type=rs → [3 matches]', [("E012", FIRST, 8)], {"type": "rs"}, "count"),
    ('t:x msg="unclosed → [ok] after=1', [("E012", FIRST, 9)], {"msg": '"unclosed', "after": "1"}, "ok"),
    ('@notify "PR #47 ready', [("E012", FIRST, 9)], {}, None),
    ('x:e id=s1 → summary="Found 3', [("W015", FIRST, 21)], {"id": "s1", "summary": '"Found'}, "text"),
    ('a: note="truncated by the writer', [("W015", FIRST, 9)], {"note": '"truncated'}, None),
    ('u: he said "hi and left', [], {}, None),
]


@pytest.mark.parametrize(("line", "diagnostics", "fields", "result"), UNTERMINATED_TABLE)
def test_unterminated_quote(
    line: str, diagnostics: list[tuple[str, int, int]], fields: dict[str, str], result: str | None
) -> None:
    # E012 in the call part of a call-like line, W015 for a field value in free text or after
    # the arrow; either way the rest of the line is still read (the arrow, later fields).
    event = one_event(line)
    assert found(line + "\n") == diagnostics
    assert event.fields == fields
    assert (event.result.kind if event.result else None) == result


# ---------------------------------------------------------------- arrows (§4, §9)


@pytest.mark.parametrize("prefix", ["u", "a", "th", "td"])
def test_ascii_arrow_is_text_in_free_text_lines(prefix: str) -> None:
    line = f"{prefix}: login -> session -> token"
    event = one_event(line)
    assert (event.arrow, event.result) == (None, None)
    assert event.text == "login -> session -> token"
    assert found(line + "\n") == []


@pytest.mark.parametrize("prefix", ["u", "a", "th", "td"])
def test_unicode_arrow_splits_free_text_lines(prefix: str) -> None:
    event = one_event(f"{prefix}: is it done? → [ok]")
    assert event.arrow == "→"
    assert event.result is not None and event.result.kind == "ok"


ASCII_ARROW_TABLE = [
    # (line, arrow, result text, diagnostics)
    ("t:read a.rs -> [1 line]", "->", "[1 line]", [("W013", FIRST, 13)]),
    ("t:git log ->", "->", "", [("W013", FIRST, 11)]),
    ("t:sh cmd=a->b → [ok]", "→", "[ok]", []),
    ("t:sh x-> ->y → [ok]", "→", "[ok]", []),
    ('t:sh "a -> b" → [ok]', "→", "[ok]", []),
]


@pytest.mark.parametrize(("line", "arrow", "text", "diagnostics"), ASCII_ARROW_TABLE)
def test_ascii_arrow_in_call_lines(
    line: str, arrow: str, text: str, diagnostics: list[tuple[str, int, int]]
) -> None:
    event = one_event(line)
    assert event.arrow == arrow
    assert event.result is not None and event.result.text == text
    assert found(line + "\n") == diagnostics


# ---------------------------------------------------------------- names and unknown lines


def test_mcp_without_method_is_allowed() -> None:
    assert one_event("c:github").name == "github"
    assert found("c:github\nc:github → [ok]\n") == []


def test_bare_at_is_an_unknown_line() -> None:
    event = one_event("@")
    assert (event.kind, event.name) == ("unknown", None)
    assert found("@\n") == [("W003", FIRST, 1)]


def test_unknown_lines_are_kept_verbatim() -> None:
    event = one_event("User: hello → [ok]")
    assert (event.kind, event.raw, event.result) == ("unknown", "User: hello → [ok]", None)


# ---------------------------------------------------------------- metrics (§4, §9)

METRICS_TABLE = [
    # (line, fields, metrics, result text)
    ("t:read a.rs → [1 line] # metrics prompt=5 cost=0.1", {}, {"prompt": "5", "cost": "0.1"}, "[1 line]"),
    ("a: found it step=3 # metrics prompt=5 cached=2", {"step": "3"}, {"prompt": "5", "cached": "2"}, None),
    ("t:x step=1 → [ok] # metrics step=9", {"step": "1"}, {"step": "9"}, "[ok]"),
    ("a: issue # 5 and #203", {}, None, None),
    ("t:grep x → [2] # not metrics", {}, None, "[2] # not metrics"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "fields", "metrics", "text"), METRICS_TABLE)
def test_trailing_metrics_comment(
    line: str, fields: dict[str, str], metrics: dict[str, str] | None, text: str | None
) -> None:
    event = one_event(line)
    assert event.fields == fields
    assert event.metrics == metrics
    assert (event.result.text if event.result else None) == text


# ---------------------------------------------------------------- redactions (§4, §9)

REDACTION_TABLE = [
    # (body, diagnostics)
    ("a: key [redacted:api_key]\n# redactions=1\n", []),
    ("a: key [redacted:api_key]\n# redactions=2\n", [("W018", FIRST + 1, 14)]),
    # The comment stating the count is not counted, even when it holds a marker itself.
    ("a: key [redacted:api_key]\n# redactions=1 last=[redacted:api_key]\n", []),
    ("a: key [redacted:api_key]\n# tokens=5 cost=$1 redactions=1 [redacted:x]\n", []),
    # Continuations, comments and lifecycle lines are counted.
    ("t:cat .env →\n  KEY=[redacted:k]\n# rotated [redacted:k]\n@notify [redacted:k]\n# redactions=3\n", []),
]  # fmt: skip


@pytest.mark.parametrize(("body", "diagnostics"), REDACTION_TABLE)
def test_redaction_count(body: str, diagnostics: list[tuple[str, int, int]]) -> None:
    assert found(body) == diagnostics


# ---------------------------------------------------------------- continuations (§3, §10)


def test_continuation_attaches_across_blank_lines() -> None:
    doc = parse_body("a: first\n\n  second\n\n\n\tthird\nu: next\n")
    first, nxt = doc.events
    assert [c.text for c in first.continuation] == ["second", "third"]
    assert [c.line for c in first.continuation] == [FIRST + 2, FIRST + 5]
    assert nxt.continuation == ()
    owners = [line.owner for line in doc.lines if isinstance(line, Continuation)]
    assert owners == [FIRST, FIRST]
    assert [d.code for d in doc.diagnostics] == []


@pytest.mark.parametrize("owner", ["# a comment", "@checkpoint hour=4", "tool: unknown line"])
def test_continuation_attaches_to_comments_lifecycle_and_unknown_lines(owner: str) -> None:
    (event,) = parse_body(f"{owner}\n  more text\n").events
    assert [c.text for c in event.continuation] == ["more text"]


def test_continuation_text_is_opaque() -> None:
    (event,) = parse_body("t:git log →\n  id=x → [ok] step=9\n").events
    assert event.fields == {}
    assert event.result is not None and event.result.kind == "empty"
    assert event.step is None


def test_continuation_without_owner_is_a_warning() -> None:
    assert found("  stray\na: hello\n") == [("W023", FIRST, 1)]


# ---------------------------------------------------------------- correlation keys (§9)

CORRELATION_TABLE = [
    # (body, diagnostics): ids register on t t! x c q s p lines only
    ("t:test id=c1 → [running]\no: id=c1 → [ok]\n", []),
    ("s:deploy id=s1 activate → [loaded]\no: id=s1 → [ok]\n", []),
    ("p:create id=p1 → [ok]\no: id=p1 → [ok]\n", []),
    ("u: hi id=c1\no: id=c1 → [ok]\n", [("W002", FIRST + 1, 7)]),
    ("o: id=c1 → [ok]\nt:test id=c1 → [ok]\n", [("W002", FIRST, 7)]),
    ("t:test id=t9 → [running]\no: span=t9 → [ok]\n", [("W025", FIRST, 1), ("W002", FIRST + 1, 9)]),
]


@pytest.mark.parametrize(("body", "diagnostics"), CORRELATION_TABLE)
def test_correlation_keys(body: str, diagnostics: list[tuple[str, int, int]]) -> None:
    assert found(body) == diagnostics


# ---------------------------------------------------------------- header (§2, §9)

HEADER_VALUE_TABLE = [
    # (YAML line, key, value): scalars are their source text
    ("repo_sha: 0123456", "repo_sha", "0123456"),
    ("extra.n: 1e5", "extra.n", "1e5"),
    ("dirty: false", "dirty", "false"),
    ("tokens_total_in: 21890", "tokens_total_in", "21890"),
    ("version: 1.10", "version", "1.10"),
    ("extra.day: 2025-12-18", "extra.day", "2025-12-18"),
    ("extra.octal: 0o17", "extra.octal", "0o17"),
    ('notes: "quoted text"', "notes", "quoted text"),
    ("budget: $50", "budget", "$50"),
    ("skills: [code-review, 1]", "skills", ["code-review", "1"]),
    ("toolset: {git: 2.45, rg: 14.1}", "toolset", {"git": "2.45", "rg": "14.1"}),
    ("mcp:\n  - github\n  - linear", "mcp", ["github", "linear"]),
]


@pytest.mark.parametrize(("yaml", "key", "value"), HEADER_VALUE_TABLE)
def test_header_values_are_source_text(yaml: str, key: str, value: Any) -> None:
    base = "format: bbox/1\nid: s\nrunner: local\n"
    if key != "repo_sha":
        base += "repo_sha: 215db51\n"
    doc = header_doc(base + yaml + "\n")
    assert doc.header[key] == value
    assert doc.diagnostics == ()


def test_rlog_gets_only_the_alias_warning() -> None:
    doc = header_doc("format: rlog/1\nid: s\nrepo_sha: 215db51\nrunner: local\n", "@init\nth: hmm\n")
    assert [(d.code, d.line, d.col) for d in doc.diagnostics] == [("W010", 2, 1)]


def test_repo_sha_warning_points_at_its_line() -> None:
    text = "\n\n---\n# comment\nformat: bbox/1\n\nid: s\nrunner: local\nrepo_sha: abc\n---\nu: hi\n"
    assert [(d.code, d.line, d.col) for d in bbox_lark.check(text)] == [("W009", 9, 1)]


EMPTY_TABLE = [
    # (YAML, diagnostics): empty, ~ and null are errors at the key's line; missing at line 1
    ("format: bbox/1\nid:\nrepo_sha: 215db51\nrunner: local\n", [("E010", 3, 1)]),
    ("format: bbox/1\nid: ~\nrepo_sha: 215db51\nrunner: local\n", [("E010", 3, 1)]),
    ("format: bbox/1\nid: null\nrepo_sha: 215db51\nrunner: local\n", [("E010", 3, 1)]),
    ('format: bbox/1\nid: s\nrepo_sha: ""\nrunner: local\n', [("E010", 4, 1)]),
    ("format: bbox/1\nid: s\nrunner: local\n", [("E010", 1, 1)]),
    ("id: s\nrepo_sha: 215db51\nrunner: local\n", [("E010", 1, 1)]),
]


@pytest.mark.parametrize(("yaml", "diagnostics"), EMPTY_TABLE)
def test_required_fields_must_be_non_empty(yaml: str, diagnostics: list[tuple[str, int, int]]) -> None:
    assert [(d.code, d.line, d.col) for d in header_doc(yaml).diagnostics] == diagnostics


def test_no_header_is_an_error_and_the_body_is_still_checked() -> None:
    doc = bbox_lark.parse("u: hi\nt:x a=1 ts=bad → [ok]\n")
    assert doc.header == {}
    assert [e.kind for e in doc.events] == ["user", "tool"]
    assert [(d.code, d.line, d.col) for d in doc.diagnostics] == [("E004", 1, 1), ("W005", 2, 12)]


# ---------------------------------------------------------------- positions (§8, §9)

COLUMN_TABLE = [
    # (line, diagnostics): columns count code points, not bytes
    ("a: 😀😀 ts=bad", [("W005", FIRST, 10)]),
    ('t:echo ü "open → [ok]', [("E012", FIRST, 10)]),
    ("t:read données/résumé.md step=x → [ok]", [("W014", FIRST, 31)]),
    ("t:read 日本語 → [ok] latency_ms=z", [("W014", FIRST, 30)]),
]


@pytest.mark.parametrize(("line", "diagnostics"), COLUMN_TABLE)
def test_columns_count_code_points(line: str, diagnostics: list[tuple[str, int, int]]) -> None:
    assert found(line + "\n") == diagnostics


def test_result_column_counts_code_points() -> None:
    result = one_event("t:read é😀.rs → [ok]").result
    assert result is not None and result.col == 16


def test_lines_count_from_the_first_line_of_the_file() -> None:
    text = "\ufeff\n\n---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n\nt:x ts=bad\n"
    doc = bbox_lark.parse(text)
    # line 1 is the BOM and an empty line, line 3 the opening fence, line 10 the event
    assert [e.line for e in doc.events] == [10]
    assert [(d.code, d.line, d.col) for d in doc.diagnostics] == [("I005", 1, 1), ("W005", 10, 8)]


# ---------------------------------------------------------------- the API itself (§8, §10)


def test_parse_accepts_bytes_and_str_alike() -> None:
    text = HEADER + "u: café → [ok]\r\n  more\n"
    from_str, from_bytes = bbox_lark.parse(text), bbox_lark.parse(text.encode())
    assert from_str.events == from_bytes.events
    assert from_str.header == from_bytes.header
    assert from_str.diagnostics == from_bytes.diagnostics


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xff\xfe\x00",
        b"---\n",
        b"---\n: : :\n---\n",
        b"\x00\x00\x00\n\n\n",
        b'---\nformat: bbox/1\n---\n\xc3\x28 t:x "',
        "\u2028\u2029\x85\r\r\n".encode(),
    ],
)
def test_parse_never_raises(data: bytes) -> None:
    doc = bbox_lark.parse(data)
    assert isinstance(doc, Document)
    assert all(isinstance(d, Diagnostic) for d in doc.diagnostics)


def test_invalid_utf8_is_reported_and_the_rest_is_read() -> None:
    doc = bbox_lark.parse(HEADER.encode() + b"a: caf\xe9\nt:read a.rs \xe2\x86\x92 [ok]\n")
    assert [e.kind for e in doc.events] == ["agent", "tool"]
    assert [(d.code, d.line, d.col) for d in doc.diagnostics] == [("E001", FIRST, 7)]


def test_diagnostic_fields_and_order() -> None:
    diagnostics = bbox_lark.check(HEADER + "a: x step=2 ts=bad\na: y step=1\n@\n")
    assert [(d.code, d.severity, d.line, d.col) for d in diagnostics] == [
        ("W005", "warning", FIRST, 16),
        ("W004", "warning", FIRST + 1, 11),
        ("W003", "warning", FIRST + 2, 1),
    ]
    assert all(d.message for d in diagnostics)


def test_events_skip_blank_lines_and_continuations() -> None:
    doc = parse_body("\nu: hi\n  more\n\n# note\n   \n@end\n")
    assert [(e.line, e.kind) for e in doc.events] == [
        (FIRST + 1, "user"),
        (FIRST + 4, "comment"),
        (FIRST + 6, "lifecycle"),
    ]


@pytest.mark.parametrize(
    "line, kind",
    [("# metrics", "metrics"), ("# model:", "model"), ("# condense", "condense"), ("# memory  ", "memory")],
)
def test_a_lone_comment_keyword_is_still_structured(line: str, kind: str) -> None:
    (event,) = bbox_lark.parse(HEADER + line + "\n").events
    assert (event.kind, event.name) == ("comment", kind)


def test_a_quote_right_after_another_item_opens_nothing() -> None:
    # DECISIONS §9: `"` opens a string only at the text's start or after whitespace, = [ ,
    (event,) = bbox_lark.parse(HEADER + 't:x [a]"b  c" "d e"\n').events
    assert event.args == (("a",), '"b', 'c"', "d e")
