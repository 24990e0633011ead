"""Nodes you can build (docs/design.md): one class per family of line kinds, built from values,
printed by ``emit`` from their values, read back by ``parse`` to equal values.

* Built nodes: drawn from values (kinds, names, keys and primitives from ``vocabulary()``;
  values that need quoting, lists, results of every kind, metrics, continuation lines), each
  must read back from ``emit`` as the node it was built from, field for field, columns
  included (a built node's columns are those of its emitted line).
* Parsed nodes: every event of the corpus, the examples and (when ``../shared/corpus-external``
  exists) the external ``bbox-docs`` and ``rlog-real`` logs must read back from ``emit`` with
  the same values; the few lines ``emit`` prints as written (``_source_only``) are checked to
  be exactly those corners.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from printer_support import ALPHABET, EXTERNAL, fuzz_settings, golden_files

import bbox_lark
from bbox_lark import (
    Event,
    Result,
    build,
    dumps,
    emit,
    format_document,
)
from bbox_lark.fix import FIXERS, apply_fixes
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.parser import parse_document, parse_line
from bbox_lark.syntax.printer import _source_only, emit_line
from bbox_lark.syntax.source import decode

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\n"


def reparse(text: str) -> Event:
    """The first event of ``text`` read as a body (after a header, so that nothing in the
    text can open one)."""
    return parse_document(HEADER + text).events[0]


def assert_reads_back(node: Event) -> None:
    again = reparse(emit(node))
    assert again.same_as(node), (emit(node), again.values(), node.values())


def assert_built_exactly(node: Event) -> None:
    """A built node is what the parser makes of its emitted line, columns included."""
    line = parse_line(emit_line(node), 0, node.eol)
    assert type(line) is type(node)
    assert dataclasses.replace(line, source=None, continuation=node.continuation) == node
    again = reparse(emit(node))
    assert [c.text for c in again.continuation] == [c.text for c in node.continuation]


# -- built from values: examples --------------------------------------------------------

EXAMPLES: list[tuple[Event, str]] = [
    (
        build.call(
            "tool",
            "read",
            ["src/a.rs"],
            fields={"id": "call_1"},
            result=build.result("count", number=186, unit="lines"),
        ),
        "t:read src/a.rs id=call_1 → [186 lines]",
    ),
    (
        build.call("t!", "test", fields={"span": "t1"}, result=build.result("running")),
        "t!:test span=t1 → [running]",
    ),
    (build.call("mode", "auto", fields={"afk": "true"}), "m:auto afk=true"),
    (
        build.call("question", args=["Keep the old API?"], fields={"options": ["yes", "no"]}),
        'q: "Keep the old API?" options=[yes, no]',
    ),
    (build.call("mcp", "github.issues", fields={"q": "login bug"}), 'c:github.issues q="login bug"'),
    (build.message("user", "Fix the login bug.", fields={"step": "2"}), "u: Fix the login bug. step=2"),
    (build.message("th", "# metrics is a word here"), "th:# metrics is a word here"),
    (
        build.observation(fields={"id": "call_1"}, result=build.result("ok", rest="128 passed")),
        "o: id=call_1 → [ok] 128 passed",
    ),
    (build.lifecycle("start", fields={"id": "sess_1", "step": "1"}), "@start id=sess_1 step=1"),
    (build.comment("metrics", fields={"step": "6", "cost_usd": "0.003"}), "# metrics step=6 cost_usd=0.003"),
    (build.comment("a plain comment"), "# a plain comment"),
    (build.unknown("tool: read src/main.rs"), "tool: read src/main.rs"),
    (
        build.call(
            "tool", "bash", ['echo "hi"', "a→b", "->", "x=1", ""], continuation=["first", "  indented"]
        ),
        't:bash "echo \\"hi\\"" "a→b" "->" "x=1" ""\n  first\n    indented',
    ),
    (
        build.call(
            "subagent", "explore", fields={"id": "sub_1"}, result=build.result("error", message="timeout")
        ),
        "x:explore id=sub_1 → [err: timeout]",
    ),
    (
        build.call("tool", "read", result=build.result("blob", sha256="ab" * 32, size=10, mime="text/plain")),
        f"t:read → @blob sha256={'ab' * 32} bytes=10 mime=text/plain",
    ),
    (
        build.call("question", result=build.result("auto_choice", choices=["yes"], message="tests pass")),
        'q: → [auto: yes, reason="tests pass"]',
    ),
    (build.call("tool", "x", metrics={"prompt_tokens": "12"}), "t:x # metrics prompt_tokens=12"),
    (build.call("tool", "x", result=build.result("empty")), "t:x →"),
]


@pytest.mark.parametrize(("node", "text"), EXAMPLES, ids=[text.split("\n")[0][:40] for _, text in EXAMPLES])
def test_built_node_emits_its_canonical_text(node: Event, text: str) -> None:
    assert emit(node) == text
    assert node.source is None and node.line == 0
    assert node.raw == text.split("\n")[0]
    assert_built_exactly(node)


def test_node_classes_by_family() -> None:
    doc = parse_document(HEADER + "u: hi\nt:read a\no: id=1\n@end\n# x\nwhat\n")
    assert [type(e).__name__ for e in doc.events] == [
        "Message",
        "Call",
        "Observation",
        "Lifecycle",
        "Comment",
        "Unknown",
    ]
    assert all(isinstance(e, Event) for e in doc.events)


def test_a_continuation_is_its_four_fields() -> None:
    # The parser makes a continuation with its owner by calling the class with these four
    # (syntax/parser.py, iter_attached: dataclasses.replace costs six times as much); a field
    # added here must be passed there too.
    from bbox_lark.syntax.nodes import Continuation

    assert [f.name for f in dataclasses.fields(Continuation)] == ["line", "raw", "eol", "owner"]
    doc = parse_document(HEADER + "t:bash ls → [ok]\n  one\n\n  two\n")
    attached = [(c.line, c.raw, c.owner) for c in doc.events[0].continuation]
    assert attached == [(7, "  one", 6), (9, "  two", 6)]


def test_typed_accessors_read_built_values() -> None:
    node = build.call(
        "tool",
        "x",
        fields={
            "step": "7",
            "ts": "2025-12-18T03:21:08Z",
            "attempt": "2/3",
            "level": "warn",
            "latency_ms": "12",
        },
    )
    assert (node.step, node.ts, node.attempt, node.level, node.latency_ms) == (
        7,
        "2025-12-18T03:21:08Z",
        (2, 3),
        "warn",
        12,
    )
    assert build.call("tool", "x", fields={"step": "x"}).step is None


@pytest.mark.parametrize(
    "build",
    [
        lambda: build.call("tool", None, ["a"]),  # `t: a` would read `a` as the name
        lambda: build.call("tool", "two words"),
        lambda: build.call("user", "x"),  # a message is not a call
        lambda: build.call("tool", "x", fields={"bad key": "1"}),
        lambda: build.lifecycle("1nope"),
        lambda: build.unknown("u: a message"),
        lambda: build.result("count", number=3, unit="a]b"),
        lambda: build.call("tool", "x", continuation=["   "]),
    ],
)
def test_values_that_would_not_read_back_are_refused(build: Any) -> None:
    with pytest.raises(ValueError):
        build()


def test_text_that_would_not_read_back_is_written_text() -> None:
    """Any text is accepted (DECISIONS §12, issue 18): what the line cannot carry as written
    is written as a quoted string, and reads back. These four were refused before."""
    assert emit(build.message("user", "a → b")) == 'u: "a → b"'
    assert emit(build.message("user", "two\nlines")) == 'u: "two\\nlines"'
    assert build.result("text", text="[ok]").text == '"[ok]"'
    node = build.call("tool", "x", result=build.result("text", text='a "'), metrics={"k": "v w"})
    assert emit(node) == 't:x → "a \\"" # metrics k="v w"'


# -- editing: no stale source -------------------------------------------------------------


def test_edited_drops_the_source_and_every_derived_value_follows() -> None:
    doc = bbox_lark.parse(HEADER + "t:read   a.rs  id=c1 step=3 -> [3 lines]\n  more\n")
    event = doc.events[0]
    edited = build.edited(event, fields={"id": "c1", "step": "4"})
    assert edited.source is None and edited.line == event.line
    assert edited.fields == {"id": "c1", "step": "4"} and edited.step == 4
    assert edited.raw == "t:read a.rs id=c1 step=4 → [3 lines]"
    assert [c.text for c in edited.continuation] == ["more"]
    lines = tuple(edited if line is event else line for line in doc.lines)
    text = dumps(dataclasses.replace(doc, lines=lines))
    assert text == HEADER + "t:read a.rs id=c1 step=4 → [3 lines]\n  more\n"
    assert format_document(dataclasses.replace(doc, lines=lines)) == text


def test_dataclass_replace_of_a_built_node_has_no_source_to_go_stale() -> None:
    """A built node's text is what its builder printed (the nodes never print): a value
    changed behind the builder's back is refused, never printed stale; ``build.edited``
    makes the changed node."""
    node = build.message("user", "hello")
    with pytest.raises(ValueError, match=r"build\.edited"):
        dataclasses.replace(node, text="bye").raw  # noqa: B018
    with pytest.raises(ValueError, match="never printed"):
        dataclasses.replace(reparse("u: hello\n"), source=None).raw  # noqa: B018
    assert build.edited(node, text="bye").raw == "u: bye"
    # What a node is placed with (its line, ending and continuation lines) is not its text.
    moved = dataclasses.replace(
        node, line=7, eol="\r\n", continuation=build.message("u", "x", continuation=["c"]).continuation
    )
    assert moved.raw == "u: hello"


def test_edited_rejects_values_the_family_does_not_have() -> None:
    with pytest.raises(TypeError):
        build.edited(build.comment("x"), args=["a"])


def test_reparse_reads_the_values_again() -> None:
    event = reparse("a: one step=5\n  cont\n")
    edited = bbox_lark.reparse(event, "a: one step=1")
    assert (edited.source, edited.fields, edited.step) == ("a: one step=1", {"step": "1"}, 1)
    assert edited.continuation == event.continuation


def test_fix_leaves_no_stale_fields() -> None:
    outcome = apply_fixes(HEADER + "a: one step=5\n# metrics step=5 cost=1\nt:x -> [ok]\n", FIXERS.values())
    from bbox_lark.fix import apply_edits

    fixed = apply_edits(
        outcome.document, [e for f in FIXERS.values() for e in f.edits(outcome.document).edits]
    )
    assert dumps(fixed) == outcome.new_text
    steps = [(e.raw, e.fields) for e in fixed.events]
    assert steps == [
        ("a: one step=1", {"step": "1"}),
        ("# metrics step=1 cost=1", {"step": "1", "cost": "1"}),
        ("t:x → [ok]", {}),
    ]
    assert fixed.events[2].arrow == "→"


# -- built from values: properties --------------------------------------------------------

_ANY = st.text(alphabet=ALPHABET + "\n\r\x0b'", max_size=12)
_KEYS = st.one_of(
    st.sampled_from(sorted(vocabulary().typed_fields)),
    st.from_regex(re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,6}"), fullmatch=True),
)
_VALUES = st.one_of(_ANY, st.lists(_ANY, max_size=3).map(tuple))
_FIELDS = st.lists(st.tuples(_KEYS, _VALUES), max_size=4)
_ARGS = st.lists(_VALUES, max_size=4)
_NAMES = st.text(
    alphabet=ALPHABET.replace(" ", "").replace("\t", "").replace("→", "").replace("\u00a0", ""),
    min_size=1,
    max_size=8,
)
_TEXT = st.text(alphabet=ALPHABET, max_size=30)
_CONTINUATION = st.lists(
    st.text(alphabet=ALPHABET, min_size=1, max_size=12).filter(lambda t: t.strip() and not t.endswith("\r")),
    max_size=2,
)


def _attempt(build: Any) -> Any:
    try:
        return build()
    except ValueError:
        assume(False)


@st.composite
def results(draw: st.DrawFn) -> Result | None:
    vocab = vocabulary()
    kind = draw(st.sampled_from([None, *vocab.result_kinds]))
    if kind is None:
        return None
    number = draw(st.integers(0, 10**6))
    values: dict[str, Any] = {
        "number": number,
        "unit": draw(st.one_of(st.none(), st.from_regex(r"[a-z]{1,6}( [a-z]{1,4})?", fullmatch=True))),
        "total": number + draw(st.integers(0, 5)),
        "message": draw(st.one_of(st.none(), st.from_regex(r"[a-z][a-z ]{0,8}[a-z]", fullmatch=True))),
        "choices": draw(st.lists(st.from_regex(r"[a-z]{1,5}", fullmatch=True), max_size=3)),
        "sha256": draw(st.from_regex(r"[0-9a-f]{6,64}", fullmatch=True)),
        "size": draw(st.integers(0, 999)),
        "fields": draw(_FIELDS.filter(bool)) if kind == "fields" else None,
        "text": draw(_TEXT).strip(),
        "rest": draw(_TEXT).strip() if kind not in ("fields", "text", "empty", "blob") else "",
    }
    if kind == "redacted":
        values["message"] = draw(st.from_regex(r"[a-z_]{1,8}", fullmatch=True))
    return _attempt(lambda: build.result(kind, **values))


_CALL_KINDS = sorted(
    {k for p, k in vocabulary().prefix_kinds.items() if p not in vocabulary().free_text_prefixes}
    - {"observation"}
)
_MESSAGE_KINDS = sorted(vocabulary().prefix_kinds[p] for p in vocabulary().free_text_prefixes)


@st.composite
def nodes(draw: st.DrawFn) -> Event:
    family = draw(st.sampled_from(["call", "message", "observation", "lifecycle", "comment", "unknown"]))
    common = {"continuation": draw(_CONTINUATION)}
    metrics = draw(st.one_of(st.none(), _FIELDS))
    if family == "call":
        kind = draw(st.sampled_from(_CALL_KINDS))
        named = kind == "mode" or any(
            vocabulary().prefix_kinds[p] == kind for p in vocabulary().named_prefixes
        )
        name = draw(_NAMES) if named else None
        return _attempt(
            lambda: build.call(
                kind,
                name,
                draw(_ARGS),
                fields=draw(_FIELDS),
                result=draw(results()),
                metrics=metrics,
                **common,
            )
        )
    if family == "observation":
        return _attempt(
            lambda: build.observation(
                draw(_ARGS), fields=draw(_FIELDS), result=draw(results()), metrics=metrics, **common
            )
        )
    if family == "lifecycle":
        name = draw(
            st.one_of(
                st.sampled_from(sorted(vocabulary().primitives)),
                st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,6}", fullmatch=True),
            )
        )
        return _attempt(
            lambda: build.lifecycle(
                name, draw(_ARGS), fields=draw(_FIELDS), result=draw(results()), metrics=metrics, **common
            )
        )
    if family == "message":
        kind = draw(st.sampled_from(_MESSAGE_KINDS))
        text = draw(_TEXT).strip()
        return _attempt(
            lambda: build.message(
                kind, text, fields=draw(_FIELDS), result=draw(results()), metrics=metrics, **common
            )
        )
    if family == "comment":
        text = draw(
            st.one_of(_TEXT, st.sampled_from(["metrics", "anchor", "budget:", "notes:", "memory"]))
        ).strip()
        return _attempt(lambda: build.comment(text, fields=draw(_FIELDS), **common))
    text = draw(_TEXT).strip()
    return _attempt(lambda: build.unknown(text, **common))


@fuzz_settings(400)
@given(nodes())
def test_built_nodes_read_back_from_emit(node: Event) -> None:
    assert_built_exactly(node)
    assert_reads_back(node)
    # Editing with no changes gives the same node back.
    assert build.edited(node) == node


@fuzz_settings(200)
@given(_ARGS, _FIELDS)
def test_any_arguments_and_fields_can_be_built(args: list[Any], fields: list[Any]) -> None:
    """Arguments and field values are quoted as needed: no value is refused."""
    node = build.call("tool", "x", args, fields=fields)
    assert_built_exactly(node)
    assert node.args == tuple(args)
    assert [(f.key, f.value) for f in node.field_nodes] == fields


@fuzz_settings(200)
@given(_TEXT, _TEXT)
@example("a", '"')
def test_free_text_builds_or_is_refused(text: str, result: str) -> None:
    """Free text is taken as written; what the grammar would read otherwise is refused."""
    try:
        node = build.message("agent", text.strip(), result=build.result("text", text=result.strip()))
    except ValueError:
        return
    assert_built_exactly(node)


# -- parsed nodes: every event of the corpus and of the external logs ----------------------


def _external() -> list[Path]:
    found: list[Path] = []
    for folder in ("bbox-docs", "rlog-real"):
        path = EXTERNAL / folder
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.is_file())
    return found


def _check_document_nodes(path: Path) -> None:
    document = parse_document(path.read_bytes())
    for event in document.events:
        text = emit(event)
        if _source_only(event):
            # Documented corner: printed as written (see docs/design.md).
            assert emit_line(event) == event.source
        again = reparse(text)
        assert again.same_as(event), (path.name, event.line, event.raw, text)
        # An edit that changes nothing gives a node with no source and the same values.
        if not _source_only(event):
            edited = build.edited(event)
            assert edited.source is None and edited.same_as(event), (path.name, event.line)


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: p.name)
def test_every_corpus_event_reads_back_from_emit(path: Path) -> None:
    _check_document_nodes(path)


@pytest.mark.skipif(not _external(), reason="../shared/corpus-external is absent")
def test_every_external_event_reads_back_from_emit() -> None:
    for path in _external():
        _check_document_nodes(path)


def test_an_emitted_document_reads_back_to_the_same_values() -> None:
    """Every node of a document rebuilt through ``build.edited`` prints a document that reads back
    to the same events (the whole-document form of the property)."""
    for path in golden_files():
        document = parse_document(path.read_bytes())
        rebuilt = tuple(
            build.edited(line) if isinstance(line, Event) and not _source_only(line) else line
            for line in document.lines
        )
        text = dumps(dataclasses.replace(document, lines=rebuilt))
        again = parse_document(text)
        assert [e.values() for e in again.events] == [e.values() for e in document.events], path.name
        assert decode(path.read_bytes()) == dumps(document)


def test_readme_build_example_runs() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    example = next(block for block in blocks if "build.call" in block)
    exec(compile(example, "README.md", "exec"), {})


@pytest.mark.parametrize(
    ("line", "changes", "expected"),
    [
        (
            "t:read a.rs -> [3 lines]",
            {"kind": "tool_start", "result": build.result("running")},
            "t!:read a.rs → [running]",
        ),
        ("t: read a.rs", {"name": "write"}, "t:write a.rs"),
        ("u:  two  spaces kept step=1", {"kind": "agent"}, "a: two  spaces kept step=1"),
        ("o: id=c1 -> [ok]", {"args": ["x y"]}, 'o: "x y" id=c1 → [ok]'),
        ("@start id=s1", {"name": "end"}, "@end id=s1"),
        ("#  metrics step=2", {"text": "anchor step=2"}, "# anchor step=2"),
        ("what is this   ", {"text": "still unknown"}, "still unknown"),
        ("t:x # metrics a=1", {"metrics": {"a": "2", "b": "x y"}}, 't:x # metrics a=2 b="x y"'),
    ],
)
def test_edited_changes_values_of_every_family(line: str, changes: dict[str, Any], expected: str) -> None:
    event = reparse(line + "\n")
    edited = build.edited(event, **changes)
    assert edited.raw == expected and edited.source is None
    assert_built_exactly(dataclasses.replace(edited, line=0))


def test_an_oversized_line_is_kept_as_written() -> None:
    document = bbox_lark.parse(HEADER + "u: " + "x" * 50 + "\n", max_line=20)
    event = document.events[0]
    assert event.oversized and emit(event) == event.raw == "u: " + "x" * 50


# -- documents from values (what converters build) ----------------------------------------


def test_build_document_prints_and_parses_back_with_its_line_numbers() -> None:
    from bbox_lark import BlankLine, build_document

    nodes = [
        bbox_lark.syntax.build.message("user", "hi there", fields={"step": 1}),
        bbox_lark.syntax.build.call(
            "tool", "read", ["a.rs"], fields={"ok": True, "l": [1, 2]}, continuation=["l1", "l2"]
        ),
        BlankLine(0, "", "\n"),
        bbox_lark.syntax.build.message("agent", "done"),
    ]
    header = {"format": "bbox/1", "id": "s", "repo_sha": "abcdef1", "tags": ["a", "b"], "n": "0123"}
    document = build_document(header, nodes)
    text = bbox_lark.dumps(document)
    back = bbox_lark.parse(text)
    assert back.header == {**header, "tags": ["a", "b"]}
    assert [(e.kind, e.line) for e in back.events] == [(e.kind, e.line) for e in document.events]
    assert [(e.kind, e.line) for e in back.events] == [("user", 10), ("tool", 11), ("agent", 15)]
    assert [e.values() for e in back.events] == [e.values() for e in document.events]
    assert back.events[1].fields == {"ok": "true", "l": ("1", "2")}
    assert [c.owner for c in document.events[1].continuation] == [11, 11]
    assert not [d for d in back.diagnostics if d.severity == "error"]


def test_an_oversized_line_is_an_unknown_node() -> None:
    document = bbox_lark.parse("u: " + "x" * 50 + "\n", max_line=20)
    (event,) = document.events
    assert isinstance(event, bbox_lark.Unknown)
    assert event.kind == "unknown" and event.oversized
    assert bbox_lark.dumps(document) == "u: " + "x" * 50 + "\n"


def _frozen_slot_classes() -> list[type]:
    import importlib
    import pkgutil

    import bbox_lark as package

    found: list[type] = []
    for info in pkgutil.walk_packages(package.__path__, "bbox_lark."):
        if info.name.endswith(("__main__", "pygments_lexer", "docsgen")):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and dataclasses.is_dataclass(value)
                and value.__dataclass_params__.frozen  # type: ignore[attr-defined]
                and "__slots__" in vars(value)
            ):
                found.append(value)
    return found


def test_frozen_slot_classes_build_as_dataclasses_would() -> None:
    """``bbox_lark._classes`` gives frozen classes with slots a faster ``__init__``: same
    signature and same instances as the ``__init__`` dataclasses made (defaults, a fresh
    value from each factory), and the instances stay frozen."""
    import inspect

    classes = _frozen_slot_classes()
    assert {"Field", "Event", "Call", "Result", "Head"} <= {cls.__name__ for cls in classes}
    replaced = [cls for cls in classes if hasattr(cls.__init__, "dataclass_init")]
    assert len(replaced) >= 20 and {"Field", "Call", "Result"} <= {cls.__name__ for cls in replaced}
    for cls in replaced:
        original = cls.__init__.dataclass_init
        assert inspect.signature(cls.__init__) == inspect.signature(original), cls
        required = [
            name
            for name, p in inspect.signature(cls).parameters.items()
            if p.default is inspect.Parameter.empty
        ]
        minimal = {name: f"v{n}" for n, name in enumerate(required)}
        every = {f.name: f"w{n}" for n, f in enumerate(dataclasses.fields(cls))}
        for values in (minimal, every):
            ours = cls(**values)
            theirs = object.__new__(cls)
            original(theirs, **values)
            for f in dataclasses.fields(cls):
                assert getattr(ours, f.name) == getattr(theirs, f.name), (cls, f.name)
                if f.default_factory is not dataclasses.MISSING and f.name not in values:
                    assert getattr(ours, f.name) is not getattr(cls(**values), f.name), (cls, f.name)
            assert ours == theirs
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(ours, dataclasses.fields(cls)[0].name, "changed")


def test_a_value_with_a_quote_after_an_opener_is_written_quoted() -> None:
    """Found by Hypothesis: ``attempt="="`` bare (``attempt=="``) reads as an unclosed string
    opened by the quote after ``=``; a quote after ``=``, ``[`` or ``,`` inside a value opens
    one (docs/reference.md#quotes), so such a value is quoted, unless that string closes in
    it (JSON written bare reads back as itself)."""
    fields = [("attempt", '="'), ("attempt", "→"), ("k", 'a,"b'), ("j", '{"a":1,"b":[2]}')]
    node = build.call("tool", "x", [], fields=fields)
    assert node.raw == 't:x attempt="=\\"" attempt="→" k="a,\\"b" j={"a":1,"b":[2]}'
    assert parse_line(node.raw).same_as(node)


# -- nodes are values (Core v4) ----------------------------------------------------------


def test_nodes_are_values_hashed_and_compared_by_value() -> None:
    text = HEADER + "t:read a.rs tags=[a, b] id=c1 → [ok] # metrics cost_usd=0.1\n"
    one, two = parse_document(text), parse_document(text)
    assert one == two and hash(one) == hash(two)
    assert hash(one.header_info) == hash(two.header_info)
    event = one.events[0]
    assert event.fields == {"tags": ("a", "b"), "id": "c1"}
    assert {event, two.events[0]} == {event}
    built = build.call("tool", "read", ["a.rs"], fields={"tags": ["a", "b"], "id": "c1"})
    assert hash(built) == hash(build.call("tool", "read", ["a.rs"], fields={"tags": ["a", "b"], "id": "c1"}))
    assert built.fields["tags"] == ("a", "b")


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("id", "x"),
        lambda d: d.__delitem__("id"),
        lambda d: d.update(id="x"),
        lambda d: d.pop("id"),
        lambda d: d.popitem(),
        lambda d: d.setdefault("new", "x"),
        lambda d: d.clear(),
    ],
)
def test_keyed_values_are_read_only(change: Any) -> None:
    document = parse_document(HEADER + "t:read id=c1 # metrics a=1\n")
    event = document.events[0]
    for mapping in (event.fields, event.metrics, document.header, document.header_info.key_lines):  # type: ignore[union-attr]
        with pytest.raises(TypeError, match="read-only"):
            change(mapping)
    assert event.id == "c1" and event.raw == "t:read id=c1 # metrics a=1"
    # A copy to change, and an edit that makes a new node.
    assert {**event.fields, "id": "x"} == {"id": "x"}
    assert build.edited(event, fields={"id": "x"}).raw == "t:read id=x # metrics a=1"


def test_read_only_mappings_pickle_and_copy() -> None:
    import copy
    import pickle

    event = parse_document(HEADER + "t:read tags=[a] # metrics a=1\n").events[0]
    for again in (pickle.loads(pickle.dumps(event)), copy.deepcopy(event), copy.copy(event)):
        assert again == event and hash(again) == hash(event)
        assert type(again.fields) is type(event.fields)
