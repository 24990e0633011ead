"""The one entry point every format plugs into (``bbox_lark.convert``): the registry, how a
format is told from a name or content, which options go to the reader and the writer, and
what :func:`convert_stream` refuses, counts and maps back to the input's lines."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bbox_lark.convert import (
    BUILTIN,
    ConvertError,
    Input,
    RefusedInputError,
    UndetectableFormatError,
    UnknownFormatError,
    UnsupportedOptionError,
    convert,
    convert_stream,
    detect_folder_format,
    detect_format,
    format_for_path,
    formats,
    get_format,
    split_options,
)

ROOT = Path(__file__).resolve().parent.parent
CLAUDE_CODE = ROOT / "tests" / "fixtures" / "claude-code" / "comments.jsonl"
LIGHTBOX = ROOT / "tests" / "fixtures" / "lightbox" / "session"
DEMO = ROOT / "examples" / "session.bbox"
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
KEY = "AKIA" + "Q3EGRAVE7EXAMPLE"


# -- the registry --------------------------------------------------------------------------------


def test_the_built_in_formats_in_order() -> None:
    assert BUILTIN == ("bbox", "compact", "atif", "lightbox", "claude_code", "jsonl", "bb7", "otlp")
    assert [f.name for f in formats()] == [
        "bbox",
        "compact",
        "atif",
        "lightbox",
        "claude-code",
        "jsonl",
        "bb7",
        "otlp",
    ]


@pytest.mark.parametrize("name", ["claude-code", "claude_code", "Claude_Code", "CLAUDE-CODE"])
def test_a_format_by_any_spelling(name: str) -> None:
    assert get_format(name).name == "claude-code"


def test_an_unknown_format_names_the_known() -> None:
    with pytest.raises(UnknownFormatError) as raised:
        get_format("xml")
    assert str(raised.value) == (
        "unknown format 'xml'; known formats: bbox, compact, atif, lightbox, claude-code, jsonl, bb7, otlp"
    )


def test_formats_for_a_name_longest_ending_first() -> None:
    assert [f.name for f in format_for_path("a.jsonl")] == ["lightbox", "claude-code", "jsonl"]
    assert [f.name for f in format_for_path("dir/A.BBOX")] == ["bbox"]
    assert [f.name for f in format_for_path("a.json")] == ["atif", "bb7"]
    assert format_for_path("a.txt") == []
    assert [f.name for f in format_for_path(Path("x.cbox"))] == ["compact"]


def test_a_longer_ending_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    import bbox_lark.convert as convert_module

    registry = convert_module._registry()
    longer = replace(registry["bb7"], name="bb7-long", extensions=(".chat.json",))
    monkeypatch.setitem(registry, "bb7-long", longer)
    assert [f.name for f in format_for_path("x.chat.json")] == ["bb7-long", "atif", "bb7"]


# -- telling the format --------------------------------------------------------------------------


def test_a_name_of_one_format_decides() -> None:
    assert detect_format("a.bbox", CLAUDE_CODE.read_bytes()) == "bbox"
    assert detect_format("a.cbox", HEADER + "u: hi\n") == "compact"


def test_standard_input_and_no_name_are_told_by_content() -> None:
    data = CLAUDE_CODE.read_bytes()
    assert detect_format(None, data) == "claude-code"
    assert detect_format("-", data) == "claude-code"
    assert detect_format("-", HEADER) == "bbox"


def test_a_name_of_several_formats_is_told_among_them_by_content() -> None:
    assert detect_format("s.jsonl", CLAUDE_CODE.read_bytes()) == "claude-code"
    bbox_lines = '{"record": "header", "bbox": "1", "format": "bbox/1"}\n'
    assert detect_format("s.jsonl", bbox_lines) == detect_format(None, bbox_lines)


def test_content_no_format_the_name_suggests_claims() -> None:
    # bbox text in a .jsonl file: no JSON Lines format claims it, bbox does
    assert detect_format("s.jsonl", HEADER + "u: hi\n") == "bbox"
    # content nobody claims: the name's first format
    assert detect_format("s.jsonl", "plain words\n") == "lightbox"
    assert detect_format("s.json", "plain words\n") == "atif"


def test_content_nobody_claims_without_a_name() -> None:
    assert detect_format(None, "plain words\n") is None
    assert detect_format("notes.txt", b"") is None


def test_a_folder_format_is_told_by_its_folder(tmp_path: Path) -> None:
    assert detect_folder_format(LIGHTBOX) == "lightbox"
    assert detect_folder_format(tmp_path) is None


# -- options -------------------------------------------------------------------------------------


def test_options_go_to_the_reader_and_the_writer_with_defaults() -> None:
    jsonl, bbox, atif = get_format("jsonl"), get_format("bbox"), get_format("atif")
    assert split_options(jsonl, bbox, {}) == ({"style": "full", "repo_sha": None}, {"canonical": False})
    read, write = split_options(jsonl, jsonl, {"style": "terse"})
    assert read["style"] == "terse" and write["style"] == "terse"
    read, write = split_options(bbox, atif, {"repo_sha": None, "atif_version": None})
    assert read == {} and write == {"atif_version": None}
    assert split_options(bbox, bbox, {"lossy": False}) == ({}, {"canonical": False})  # False: not given


def test_an_option_neither_side_takes_says_which_formats_take_it() -> None:
    bbox = get_format("bbox")
    with pytest.raises(UnsupportedOptionError) as raised:
        split_options(bbox, bbox, {"lossy": True})
    assert (
        str(raised.value)
        == "option 'lossy' does not apply to bbox input or bbox output; it applies to: compact"
    )
    with pytest.raises(UnsupportedOptionError) as raised:
        split_options(bbox, bbox, {"nonsense": 1})
    assert str(raised.value) == "option 'nonsense' does not apply to bbox input or bbox output"


def test_an_option_s_value_is_checked() -> None:
    jsonl = get_format("jsonl")
    with pytest.raises(ConvertError):
        split_options(jsonl, jsonl, {"style": "nope"})


# -- convert_stream ------------------------------------------------------------------------------


def test_a_format_that_only_writes_or_only_reads_is_refused() -> None:
    with pytest.raises(ConvertError, match=r"^otlp cannot be read, only written$"):
        convert(HEADER, "otlp", to="bbox")
    with pytest.raises(ConvertError, match=r"^claude-code cannot be written, only read$"):
        convert(HEADER, "bbox", to="claude-code")
    with pytest.raises(ConvertError, match=r"^lightbox output is a folder: give -o DIR$"):
        convert(HEADER, "bbox", to="lightbox")


def test_a_folder_no_format_reads_or_content_no_format_claims(tmp_path: Path) -> None:
    with pytest.raises(ConvertError) as raised:
        convert_stream(Input(tmp_path), io.StringIO(), to="bbox")
    assert str(raised.value) == f"{tmp_path}: is a folder that no format reads; give one file"
    with pytest.raises(UndetectableFormatError) as undetectable:
        convert("plain words\n", to="bbox")
    assert str(undetectable.value).startswith("<stdin>: cannot tell the input format")


def test_a_folder_format_reads_its_folder() -> None:
    done = convert(b"", to="bbox", path=LIGHTBOX)
    assert done.source == "lightbox" and done.text.startswith("---\nformat: bbox/1\n")


def test_secrets_are_counted_or_redacted_and_provider_keys_located() -> None:
    text = HEADER + f"a: the key {KEY}\n"
    carried = convert(text, "bbox", to="jsonl")
    assert carried.secrets == {"aws_access_key": 1} and not carried.redacted
    assert carried.credentials == ((7, 12, "aws_access_key"),)
    assert KEY in carried.text
    redacted = convert(text, "bbox", to="jsonl", redact=True)
    assert redacted.redacted and KEY not in redacted.text and "[redacted:aws_access_key]" in redacted.text
    allowed = convert(text, "bbox", to="jsonl", allowed_secrets=[KEY])
    assert allowed.secrets == {} and allowed.credentials == ()
    generic = convert(HEADER + "a: password=Fk9q2LmZ7vXw4RtY8pQs\n", "bbox", to="jsonl")
    assert generic.secrets == {"generic_secret": 1} and generic.credentials == ()


def test_a_bbox_output_states_its_redactions() -> None:
    text = HEADER + f"a: the key {KEY}\n"
    assert "redactions=1" in convert(text, "bbox", to="bbox", redact=True).text
    assert "redactions=" not in convert(text, "bbox", to="jsonl", redact=True).text


def test_keep_secrets_is_the_caller_s_policy() -> None:
    text = HEADER + f"a: the key {KEY}\n"
    assert convert(text, "bbox", to="bbox", keep_secrets=True).text == convert(text, "bbox", to="bbox").text


def test_redacting_needs_the_scanner() -> None:
    with pytest.raises(ConvertError, match=r"^redact needs the secret scanner \(scan=True\)$"):
        convert_stream(Input(None, HEADER.encode()), io.StringIO(), to="bbox", redact=True, scan=False)
    out = io.StringIO()
    done = convert_stream(Input(None, (HEADER + f"a: {KEY}\n").encode()), out, to="bbox", scan=False)
    assert done.secrets == {} and done.credentials == () and KEY in out.getvalue()


def test_the_stream_s_text_is_empty_and_convert_s_is_the_output() -> None:
    out = io.StringIO()
    done = convert_stream(Input(None, HEADER.encode()), out, to="bbox")
    assert done.text == "" and out.getvalue() == HEADER
    assert convert(HEADER.encode(), to="bbox").text == HEADER
    assert convert(HEADER, "bbox", to="bbox").text == HEADER


def test_a_string_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(RefusedInputError):
        convert(HEADER + "a: \udfff\n", "bbox", to="bbox")


def test_a_foreign_input_s_findings_are_at_its_own_lines() -> None:
    data = CLAUDE_CODE.read_text(encoding="utf-8")
    done = convert(data + "not a record\n", "claude-code", to="bbox")
    assert [s.line for s in done.fidelity.skipped] == [data.count("\n") + 1]
    compact = HEADER + "u:hi ⏎ there\ntool:what\n"
    found = convert(compact, "compact", to="bbox").diagnostics
    assert found and all(d.line in (7, 8) for d in found)


def test_the_reader_s_rows_are_the_read_stage() -> None:
    done = convert(CLAUDE_CODE.read_bytes(), "claude-code", to="atif")
    stages = {e.stage for e in done.fidelity.entries}
    assert "read" in stages and "write" in stages
    assert done.fidelity.stage == "write"


def test_an_atif_chain_is_one_trajectory(tmp_path: Path) -> None:
    import json

    head = json.loads(convert(DEMO.read_bytes(), "bbox", to="atif").text)
    tail = dict(head, session_id="tail")
    head["continued_trajectory_ref"] = "tail.json"
    (tmp_path / "head.json").write_text(json.dumps(head), encoding="utf-8")
    (tmp_path / "tail.json").write_text(json.dumps(tail), encoding="utf-8")
    done = convert_stream(Input(tmp_path / "head.json"), io.StringIO(), to="bbox")
    rows = [(e.stage, e.action, e.what) for e in done.fidelity.entries]
    assert ("read", "kept", "ATIF continuations (continued_trajectory_ref) read as one trajectory") in rows
    alone = convert_stream(Input(tmp_path / "tail.json"), io.StringIO(), to="bbox")
    assert all("continuations" not in e.what for e in alone.fidelity.entries)
    both, one = io.StringIO(), io.StringIO()
    convert_stream(Input(tmp_path / "head.json"), both, to="bbox")
    convert_stream(Input(tmp_path / "tail.json"), one, to="bbox")
    users = [line for line in both.getvalue().splitlines() if line.startswith("u:")]
    assert len(users) == 2 * len([line for line in one.getvalue().splitlines() if line.startswith("u:")]) > 0


def test_a_format_registered_is_found_and_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    import bbox_lark.convert as convert_module
    from bbox_lark.convert import register_format

    registry = convert_module._registry()
    monkeypatch.setattr(convert_module, "_REGISTRY", dict(registry))
    mine = replace(get_format("bbox"), name="mine", extensions=(".mine",))
    register_format(mine)
    assert get_format("mine") is mine and formats()[-1] is mine
    assert detect_format("a.mine", "anything") == "mine"


def test_a_weak_sign_is_enough_without_a_name() -> None:
    assert detect_format(None, "t:read a.rs → [1 line]\n") == "bbox"  # an event line: bbox's 1
    assert detect_format("s.jsonl", "u: hi\n") == "bbox"  # no JSON Lines format claims it; bbox does, weakly


def test_an_option_left_unset_does_not_stop_the_others() -> None:
    bbox = get_format("bbox")
    assert split_options(bbox, bbox, {"lossy": None, "canonical": True}) == ({}, {"canonical": True})


def test_every_row_is_the_reader_s_or_the_writer_s() -> None:
    # the stage is `read` while the reader runs, else `write`: rows noted between items too
    same = convert(HEADER + "u: hi\n# c\n", "bbox", to="bbox")
    assert {e.stage for e in same.fidelity.entries} == {"write"}
    foreign = convert(CLAUDE_CODE.read_bytes(), "claude-code", to="atif")
    assert {e.stage for e in foreign.fidelity.entries} == {"read", "write"}


def test_a_finding_in_a_foreign_input_is_at_its_own_column() -> None:
    compact = HEADER + f"u:hi ⏎⏎ x ⏎ a: key {KEY}\n"
    done = convert(compact, "compact", to="bbox")
    assert [(d.code, d.line, d.col) for d in done.diagnostics] == [("S001", 7, 20)]
    assert compact.splitlines()[6][19:23] == "AKIA"


def test_a_file_s_name_decides_its_format_in_a_stream(tmp_path: Path) -> None:
    path = tmp_path / "named.bbox"
    path.write_bytes(CLAUDE_CODE.read_bytes())  # Claude Code content, named as bbox
    assert convert_stream(Input(path), io.StringIO(), to="bbox").source == "bbox"


def test_a_compact_output_states_its_redactions_too() -> None:
    text = HEADER + f"a: the key {KEY}\n"
    done = convert(text, "bbox", to="compact", redact=True)
    assert "redactions=1" in done.text and done.target == "compact"
    rows = [(e.action, e.what) for e in done.fidelity.entries]
    assert ("dropped", "secrets (aws_access_key), replaced by [redacted:aws_access_key]") in rows


def test_a_folder_format_writes_into_the_folder_given(tmp_path: Path) -> None:
    done = convert(DEMO.read_bytes(), "bbox", to="lightbox", output_path=tmp_path / "box")
    assert done.target == "lightbox" and done.text == "" and any((tmp_path / "box").iterdir())


def test_a_lone_surrogate_written_is_reported(tmp_path: Path) -> None:
    lines = convert(HEADER + "u: hi\n", "bbox", to="jsonl").text
    lines = lines.replace('"source":"u: hi"', '"source":"u: hi \\ud800"').replace(
        '"text":"hi"', '"text":"hi \\ud800"'
    )
    done = convert(lines.encode(), "jsonl", to="bbox")
    assert done.text.endswith("u: hi \ufffd\n")
    assert ("dropped", "lone surrogates UTF-8 cannot encode (written as U+FFFD)") in [
        (e.action, e.what) for e in done.fidelity.entries
    ]


def test_the_reader_is_closed_even_while_the_error_is_held(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    import bbox_lark.convert as convert_module

    closed: list[str] = []

    def reader(source: Input, ctx: object):  # type: ignore[no-untyped-def]
        try:
            yield from get_format("bbox").read(source, ctx)  # type: ignore[misc]
        finally:
            closed.append("reader")

    def writer(items: object, out: object, ctx: object) -> None:
        next(iter(items))  # type: ignore[call-overload]
        raise RuntimeError("the writer failed")

    registry = convert_module._registry()
    monkeypatch.setitem(
        registry, "failing", replace(get_format("bbox"), name="failing", read=reader, write=writer)
    )
    with pytest.raises(RuntimeError) as raised:
        convert(HEADER + "u: hi\n", "failing", to="failing")
    assert raised.value.__traceback__ is not None  # the frames, and the reader in them, alive
    assert closed == ["reader"]
