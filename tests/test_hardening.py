"""Hostile input through the converters (issue 15, "Hardening 2"): every importer and
exporter takes any input without an exception, reports what it cannot read with its
location, writes only what can be read back (its output passes ``check`` without an error,
and can be encoded), round-trips exactly where it says so, and runs in time linear in its
input.

Each minimal input the issue lists is a case here; the fuzzer (``tools/fuzz.py``, its
converter targets) finds more of the same kind, and each of its finds becomes a case too.
Linear-time cases compare counted work or CPU time at n and 4n with generous factors, as
``tests/test_hostile.py`` does: never an absolute time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import bbox_lark
from bbox_lark.convert import RefusedInputError, convert, detect_format

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"


def errors(text: str) -> list[str]:
    """The error findings of a converter's bbox output (an importer's must have none)."""
    return [f"{d.code} {d.line}:{d.col} {d.message}" for d in bbox_lark.check(text) if d.severity == "error"]


def skipped(result: Any) -> list[str]:
    return [s.message for s in result.skipped]


# -- 1. type trust in JSON importers -------------------------------------------------------


def test_sniffing_a_record_whose_type_is_a_list() -> None:
    assert detect_format(None, b'{"type":[]}') is None
    assert detect_format(None, b'{"type":{}, "sessionId": "s"}\n') is None


def trajectory(bbox: dict[str, Any], lines: Any = None) -> str:
    """An ATIF trajectory as the bbox writer writes one, with ``extra.bbox`` as given."""
    step: dict[str, Any] = {"step_id": 1, "source": "user", "message": "hi"}
    if lines is not None:
        step["extra"] = {"bbox": {"lines": lines}}
    root = {"schema_version": "ATIF-v1.8", "session_id": "s", "agent": {"name": "a", "version": "1"}}
    return json.dumps({**root, "steps": [step], "extra": {"bbox": bbox}})


GOOD_HEADER = {"header": {"format": "bbox/1", "id": "s", "repo_sha": "215db51"}}


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("bbox", "lines", "message"),
    [
        (
            {"header": {"": ""}, "null": [{}]},
            None,
            "extra.bbox.header: `null[0]` must be a string, got an object; a header was written for it",
        ),
        (GOOD_HEADER, 1, "step 1: `extra.bbox.lines` must be an array, got a number"),
        (
            GOOD_HEADER,
            [{"n": 1, "kind": "agent", "text": []}],
            "extra.bbox record 1: `text` must be a string, got an array",
        ),
        (
            GOOD_HEADER,
            [{"n": 1, "kind": "", "result": {}}],
            "extra.bbox record 1: `result` must be a string, got an object",
        ),
        (
            GOOD_HEADER,
            [{"n": 1, "kind": "tool", "name": "x", "fields": [["id", 3]]}],
            "extra.bbox record 1: `fields[0][1]` must be a string or an array, got a number",
        ),
        (
            GOOD_HEADER,
            [{"n": 1, "kind": "tool", "name": "x", "args": [["a", None]]}],
            "extra.bbox record 1: `args[0][1]` must be a string, got null",
        ),
        (
            {"header": {"format": "bbox/1", "id": "s", "repo_sha": "x", "k": nested(330)}},
            None,
            "extra.bbox.header: the header nests more than 63 levels deep; a header was written for it",
        ),
    ],
    ids=["null-object", "lines-number", "text-array", "result-object", "field-number", "arg-null", "deep"],
)
def test_atif_records_of_the_wrong_shape_are_skipped_with_their_place(
    bbox: dict[str, Any], lines: Any, message: str
) -> None:
    result = convert(trajectory(bbox, lines), "atif", to="bbox")
    assert skipped(result) == [message]
    assert errors(result.text) == []


def test_a_header_nested_as_deep_as_a_header_may_comes_back() -> None:
    header = {"format": "bbox/1", "id": "s", "repo_sha": "215db51", "k": nested(20)}
    result = convert(trajectory({"header": header}), "atif", to="bbox")
    assert skipped(result) == []
    assert bbox_lark.parse(result.text).header["k"] == nested(20)


# -- 3. bbox → ATIF uses the typed step of `# metrics` --------------------------------------


@pytest.mark.parametrize("step", ["²", "9" * 4301, "٣"])
def test_a_metrics_step_that_is_no_step_goes_to_extra(step: str) -> None:
    text = HEADER + f"a: hi step=1\n# metrics step={step} prompt_tokens=3\n"
    assert "W014" in {d.code for d in bbox_lark.check(text)} or step == "٣"
    trajectory = json.loads(convert(text, "bbox", to="atif").text)
    assert "metrics" not in trajectory["steps"][0]
    back = convert(json.dumps(trajectory), "atif", to="bbox")
    assert back.text == text


# -- 4. a str holding a lone surrogate -------------------------------------------------------


@pytest.mark.parametrize("target", ["bbox", "jsonl", "atif", "compact"])
def test_a_lone_surrogate_in_a_str_is_refused(target: str) -> None:
    # Issue 26 point 5: no round trip could give it back (tests/test_surrogates.py).
    text = HEADER + "u: a\ud800b\n"
    with pytest.raises(RefusedInputError, match="U\\+D800"):
        convert(text, "bbox", to=target)


def test_an_unwritable_surrogate_from_json_becomes_a_replacement_character() -> None:
    records = [{"record": "header", "bbox": "1"}, {"line": 1, "kind": "user", "source": "u: \ud800"}]
    result = convert("".join(json.dumps(r) + "\n" for r in records), "jsonl", to="bbox")
    assert result.text == "u: \ufffd\n"
    assert "dropped lone surrogates UTF-8 cannot encode (written as U+FFFD): 1" in result.fidelity.render()


# -- 2. BB-7: a node builder's ValueError never escapes -------------------------------------


def chat(messages: list[Any], **keys: Any) -> str:
    return json.dumps({"version": 2, "messages": messages, **keys})


def test_a_bb7_model_that_is_only_whitespace_is_no_model_switch() -> None:
    message = {"role": "assistant", "model": "\u0085", "parts": [{"type": "text", "content": "hi"}]}
    result = convert(chat([message]), "bb7", to="bbox")
    assert result.text.endswith("---\na: hi\n")
    assert errors(result.text) == []


# -- 5. importer output passes check and can be written --------------------------------------


def test_a_header_value_too_long_for_the_header_goes_to_a_body_line() -> None:
    message = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
    result = convert(chat([message], model="m" * 70_000), "bb7", to="bbox")
    assert errors(result.text) == []
    document = bbox_lark.parse(result.text)
    assert "model" not in document.header
    moved = document.events[0]
    assert moved.text == "notes: header model (a JSON string)"
    assert json.loads("".join(c.text for c in moved.continuation)) == "m" * 70_000


LIGHTBOX = Path(__file__).parent / "fixtures" / "lightbox" / "session"


def lightbox_session(tmp_path: Path, change: dict[str, Any], meta: dict[str, Any] | None = None) -> Path:
    first = json.loads((LIGHTBOX / "events.jsonl").read_text().splitlines()[0])
    (tmp_path / "events.jsonl").write_text(json.dumps({**first, **change}) + "\n")
    (tmp_path / "meta.json").write_text(json.dumps(meta or json.loads((LIGHTBOX / "meta.json").read_text())))
    return tmp_path


@pytest.mark.parametrize(
    "change",
    [
        {"tool": "a\u0000b"},
        {"input": {"x": "a\u0000b"}},
        {"session_id": "\u0000"},
        {"input": {"x": "a\udc80b"}},
        {"timestamp_end": "\ud800"},
        {"output": "a\udfffb"},
    ],
    ids=["nul-tool", "nul-input", "nul-session", "dc80-input", "d800-end", "dfff-output"],
)
def test_lightbox_strings_no_line_can_hold_are_replaced(tmp_path: Path, change: dict[str, Any]) -> None:
    result = convert(b"", "lightbox", to="bbox", path=lightbox_session(tmp_path, change))
    result.text.encode("utf-8")
    assert errors(result.text) == []
    assert (
        "NUL characters and lone surrogates in JSON strings (written as U+FFFD)" in result.fidelity.render()
    )


@pytest.mark.parametrize(
    "meta", [{"session_id": "\u0085"}, {"session_id": "s", "lightbox_version": "v" * 70_000}]
)
def test_lightbox_meta_values_the_header_cannot_hold(tmp_path: Path, meta: dict[str, Any]) -> None:
    result = convert(b"", "lightbox", to="bbox", path=lightbox_session(tmp_path, {}, meta))
    assert errors(result.text) == []
    # A finding of the input is still reported at its own line (the moved value shifts none).
    assert all(s.line in (0, 1) for s in result.skipped), result.skipped


# -- 6. round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"a: x\r\r\n",
        b"a: x\r",
        (HEADER + "u: a\r\r\nu: b\r").encode(),
        b"---\r\r\nformat: bbox/1\r\r\n---\r",
        (HEADER + "u: a\r\r\n\r\r\n  c\r\r\n").encode(),
    ],
)
def test_jsonl_keeps_a_carriage_return_before_a_line_ending(data: bytes) -> None:
    back = convert(convert(data, "bbox", to="jsonl").text, "jsonl", to="bbox")
    assert skipped(back) == []
    assert back.text.encode("utf-8", "surrogateescape") == data


def test_jsonl_refuses_a_source_ending_in_a_carriage_return_before_a_newline() -> None:
    records = [
        {"record": "header", "bbox": "1"},
        {"line": 1, "kind": "unknown", "source": "x\r", "eol": "\n"},
    ]
    back = convert("".join(json.dumps(r) + "\n" for r in records), "jsonl", to="bbox")
    assert skipped(back) == ["record: 'source' is one line (no line break)"]


@pytest.mark.parametrize(
    "data",
    [
        "---\r\r\n\nu: y\nu: w\n",
        HEADER + "u: a\n---\r\r\n\nu: once a fence\r\r\nu: a return\rinside\n",
        "u: x\n---\r\r\n\n" + "u: y\n" * 60,
        HEADER + "u: a\rb\n",
        HEADER + "t:read a\rb → [ok]\n",
    ],
)
def test_compact_keeps_carriage_returns(data: str) -> None:
    out = convert(data, "bbox", to="compact").text
    back = convert(out, "compact", to="bbox").text
    from bbox_lark.syntax.printer import document_signature

    assert document_signature(bbox_lark.parse(back)) == document_signature(bbox_lark.parse(data))
    assert len(bbox_lark.parse(back).events) == len(bbox_lark.parse(data).events)


# -- 7. linear time (n vs 4n, as tests/test_hostile.py measures it) ---------------------------


def _bb7_chat(n: int) -> str:
    return chat([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}] * n)


LINEAR_SHAPES = {
    "atif-open-calls-one-id": (
        lambda n: HEADER + "t!:Bash id=toolu_01 → [running]\n" * n,
        lambda text: convert(text, "bbox", to="atif"),
        1500,
    ),
    "atif-open-calls-distinct-ids": (
        lambda n: HEADER + "".join(f"t!:Bash id=toolu_{i} → [running]\n" for i in range(n)),
        lambda text: convert(text, "bbox", to="atif"),
        1500,
    ),
    "atif-start-complete-one-id": (
        lambda n: HEADER + "t!:Bash id=toolu_01 → [running]\nt:Bash id=toolu_01 → [ok]\n" * n,
        lambda text: convert(text, "bbox", to="atif"),
        1000,
    ),
    "check-ignore-file-comments": (
        lambda n: HEADER + "# bbox-lark: ignore-file[W003]\nstatus: ok\n" * n,
        bbox_lark.check,
        2500,
    ),
    "iter-check-ignore-file-comments": (
        lambda n: HEADER + "# bbox-lark: ignore-file[W003,I010]\nstatus: ok\n" * n,
        lambda text: list(bbox_lark.iter_check(text)),
        2500,
    ),
    "bb7-messages": (_bb7_chat, lambda text: convert(text, "bb7", to="bbox"), 1500),
}


@pytest.mark.parametrize("shape", sorted(LINEAR_SHAPES))
def test_converters_and_suppressions_take_linear_time(shape: str) -> None:
    from test_hostile import assert_linear

    make, action, n = LINEAR_SHAPES[shape]
    assert_linear(make, n, action)


# -- the last-resort guard: no corpus or fuzz input reaches it ---------------------------------

CORPUS = Path(__file__).parent.parent / "corpus"
EXTERNAL = Path(__file__).parent.parent.parent / "shared" / "corpus-external"


def assert_no_internal_error(args: list[str]) -> None:
    """The CLI run ends with a verdict, never in its last-resort guard: "internal error" or
    a traceback in its output is a failure, whatever the exit code."""
    from typer.testing import CliRunner

    from bbox_lark.cli import app

    result = CliRunner().invoke(app, args)
    shown = " ".join(args)
    assert result.exit_code in (0, 1, 2), (shown, result.output[-2000:])
    assert "internal error" not in result.output, (shown, result.output[-2000:])
    assert "Traceback" not in result.output, (shown, result.output[-2000:])
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), (shown, repr(result.exception))


def test_reaching_the_guard_fails_the_test(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from bbox_lark.convert import atif

    def crash(*_args: object) -> None:
        raise RuntimeError("planted")

    monkeypatch.setattr(atif, "_Writer", crash)
    path = tmp_path / "a.bbox"
    path.write_text(HEADER + "u: hi\n")
    # In process the crash itself shows (the program's guard would print "internal error").
    with pytest.raises(AssertionError, match="RuntimeError"):
        assert_no_internal_error(["convert", str(path), "--to", "atif"])


def _corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in (".bbox", ".rlog", ".blackbox"))


@pytest.mark.parametrize("target", ["atif", "jsonl", "compact", "bbox"])
def test_no_corpus_file_reaches_the_guard(target: str) -> None:
    for path in _corpus_files():
        assert_no_internal_error(["convert", str(path), "--from", "bbox", "--to", target])


def _external_files() -> list[Path]:
    if not EXTERNAL.is_dir():
        return []
    return sorted(
        p for p in EXTERNAL.rglob("*") if p.is_file() and p.suffix != ".md" and "meta" not in p.name
    )


@pytest.mark.skipif(not EXTERNAL.is_dir(), reason="../shared/corpus-external is absent")
@pytest.mark.parametrize("target", ["bbox", "atif", "jsonl", "compact"])
def test_no_external_file_reaches_the_guard(target: str) -> None:
    for path in _external_files():
        assert_no_internal_error(["convert", str(path), "--to", target])


def test_no_fuzz_input_reaches_the_guard() -> None:
    # A short fixed sequence of the fuzzer's converter inputs through the CLI as files.
    import random
    import tempfile

    import fuzzgen

    pool = fuzzgen.Pool.load([fuzzgen.REPO_CORPUS])
    with tempfile.TemporaryDirectory() as folder:
        for index in range(24):
            rng = random.Random(f"guard:{index}")
            tagged = fuzzgen.convert_input(rng, pool, 8192)
            first, _, data = tagged.partition(b"\n")
            source = first[len(fuzzgen.FUZZ_TAG) :].decode()
            path = Path(folder) / f"input-{index}"
            path.write_bytes(data)
            assert_no_internal_error(["convert", str(path), "--from", source, "--to", "bbox"])
            if source in ("jsonl", "compact"):
                assert_no_internal_error(["convert", str(path), "--from", source, "--to", "atif"])


def test_atif_metrics_that_are_no_json_number_stay_text() -> None:
    text = HEADER + "a: hi step=1\n# metrics step=1 cost_usd=1e400 prompt_tokens=3\na: x # metrics cost=nan\n"
    written = convert(text, "bbox", to="atif").text

    def refuse(name: str) -> None:
        raise ValueError(name)

    trajectory = json.loads(written, parse_constant=refuse)  # strict JSON
    assert trajectory["steps"][0]["metrics"]["extra"]["cost_usd"] == "1e400"


def test_claude_code_values_too_long_for_the_header_are_moved_not_dropped() -> None:
    record = {"type": "user", "sessionId": "s" * 2000, "cwd": "c" * 3000, "uuid": "u"}
    result = convert(
        json.dumps({**record, "message": {"role": "user", "content": "hi"}}) + "\n", "claude-code", to="bbox"
    )
    assert errors(result.text) == []
    moved = [e for e in bbox_lark.parse(result.text).events if e.text.startswith("notes: header")]
    assert [e.text for e in moved] == [
        "notes: header id (a JSON string)",
        "notes: header cwd (a JSON string)",
    ]
    assert json.loads("".join(c.text for c in moved[1].continuation)) == "c" * 3000


@pytest.mark.parametrize("folder", ["valid", "invalid", "hostile"])
def test_every_corpus_file_round_trips_through_jsonl_and_compact(folder: str) -> None:
    from bbox_lark.syntax.printer import document_signature

    for path in sorted((CORPUS / folder).glob("*.bbox")):
        data = path.read_bytes()
        limit = 1 << 20 if folder == "hostile" else 1024
        back = convert(
            convert(data, "bbox", to="jsonl", max_line=limit).text, "jsonl", to="bbox", max_line=limit
        )
        assert back.text.encode("utf-8", "surrogateescape") == data, path.name
        compact = convert(data, "bbox", to="compact", max_line=limit).text
        again = bbox_lark.parse(convert(compact, "compact", to="bbox", max_line=limit).text, max_line=limit)
        assert document_signature(again) == document_signature(bbox_lark.parse(data, max_line=limit)), (
            path.name
        )


def test_a_bb7_value_nested_deeper_than_python_recurses() -> None:
    message = {"role": "user", "parts": [{"type": "text", "content": "hi"}], "extra": nested(900)}
    result = convert(chat([message]), "bb7", to="bbox")
    assert errors(result.text) == []
    assert result.text.endswith("---\nu: hi\n")


def test_an_atif_trajectory_with_surrogate_escapes_converts_to_writable_bbox() -> None:
    trajectory = {
        "schema_version": "ATIF-v1.8",
        "session_id": "\ud800",
        "agent": {"name": "a\udfff", "version": "1", "extra": {"k": "\udc80"}},
        "steps": [{"step_id": 1, "source": "user", "message": "hi \ud800"}],
    }
    result = convert(json.dumps(trajectory), "atif", to="bbox")
    result.text.encode("utf-8")
    assert errors(result.text) == []


# -- 8. memory of a long line (a raised --max-line) ---------------------------------------------


@pytest.mark.parametrize("line", ["t:x " + "k=v " * 100_000, "u: " + "word " * 80_000], ids=["call", "free"])
def test_a_long_line_is_lexed_without_memory_per_word(line: str) -> None:
    # Python's re kept backtracking state per repetition of CALL_TEXT / FREE_TEXT's group:
    # ~120 bytes per character at the peak. The scanners make it possessive (same matches).
    import tracemalloc

    from bbox_lark.syntax.parser import line_driver

    driver = line_driver()
    expected = driver.parse(line)  # warm: the state's scanners are compiled
    tracemalloc.start()
    try:
        assert driver.parse(line) == expected
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(line), peak


def test_possessive_scanners_match_as_the_grammar_does() -> None:
    # Differential: every scanner the driver compiled matches what Lark's own scanner of
    # that state matches, at every word start of every corpus line.
    from bbox_lark.syntax.parser import line_driver

    driver = line_driver()
    lines = [
        raw
        for path in _corpus_files()
        for raw in path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        if len(raw) <= 4096
    ]
    for raw in lines:
        driver.parse(raw)  # compiles the states the corpus reaches
    compared = 0
    for state, (scanners, _) in driver._states.items():
        originals = driver._lexers[state].scanner._mres
        for ours, theirs in zip(scanners, originals, strict=True):
            if ours is theirs:
                continue
            for raw in lines:
                for pos in [0, *(i + 1 for i, c in enumerate(raw) if c in " =→")][:40]:
                    a, b = ours.match(raw, pos), theirs.match(raw, pos)
                    assert (a and (a.span(), a.lastgroup)) == (b and (b.span(), b.lastgroup)), (raw, pos)
                    compared += 1
    assert compared > 1000
