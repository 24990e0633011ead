"""``convert`` on one input, as library calls (``bbox_lark.convert.files``), in this process:
where the output goes and when it is not written (the write policy, a provider credential),
what is said about it (:func:`said_for`), and the usage errors (exit 2) with their messages.
The CLI tests run the same code through Typer or a child process; these pin each behaviour
down where a mutation tester sees it (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from bbox_lark.convert import convert
from bbox_lark.convert.files import (
    HELD_IN_MEMORY,
    Converted,
    ConvertUsageError,
    Notes,
    _HeldOutput,
    convert_file,
    credential_lines,
    said_for,
    target_format,
    writable_names,
    write_report,
)
from bbox_lark.errors import ConversionError
from bbox_lark.files.said import Said
from bbox_lark.files.writepolicy import WriteVerdict
from bbox_lark.syntax.nodes import Diagnostic

ROOT = Path(__file__).resolve().parent.parent
CLAUDE_CODE = ROOT / "tests" / "fixtures" / "claude-code" / "comments.jsonl"
DEMO = ROOT / "examples" / "session.bbox"
LIGHTBOX = ROOT / "tests" / "fixtures" / "lightbox" / "session"
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
CLEAN = HEADER + "u: hi\na: hello\n"
KEY = "AKIA" + "Q3EGRAVE7EXAMPLE"  # an AWS access key shape (S001)
WITH_KEY = HEADER + f"a: the key is {KEY}\n"
GENERIC = HEADER + "a: password=Fk9q2LmZ7vXw4RtY8pQs\n"  # a generic secret (S002, a warning)
#: An input that cannot be read faithfully: a byte that is not UTF-8 (E001).
NOT_UTF8 = HEADER.encode() + b"a: caf\xe9\n"


def write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    return path


class Stdout(io.TextIOWrapper):
    """A text standard output over bytes, as the real one is."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", newline="")

    def value(self) -> bytes:
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue()


# -- where the output goes ----------------------------------------------------------------------


def test_a_file_is_written_atomically_where_asked(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    out = tmp_path / "a.jsonl"
    done = convert_file(str(source), to="jsonl", output=out)
    assert done == Converted(
        str(source),
        out,
        "bbox",
        "jsonl",
        WriteVerdict(),
        Notes(),
        report=done.report,
        report_data=done.report_data,
        written=True,
    )
    assert out.read_text(encoding="utf-8") == convert(CLEAN, "bbox", to="jsonl").text
    assert done.exit_code == 0 and not done.refused
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bbox", "a.jsonl"]  # no temporary file left


def test_standard_output_gets_the_converted_bytes(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    stdout = Stdout()
    done = convert_file(str(source), to="jsonl", stdout=stdout)
    assert stdout.value() == convert(CLEAN, "bbox", to="jsonl").text.encode()
    assert done.output is None and not done.written


def test_a_text_stream_without_bytes_gets_the_text(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    stdout = io.StringIO()
    convert_file(str(source), to="jsonl", stdout=stdout)
    assert stdout.getvalue() == convert(CLEAN, "bbox", to="jsonl").text
    stdout = io.StringIO()
    convert_file(str(source), to="jsonl", stdout=stdout, options={"keep_secrets": True})
    assert stdout.getvalue() == convert(CLEAN, "bbox", to="jsonl").text


def test_what_was_printed_before_comes_first(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    stdout = Stdout()
    stdout.write("before\n")  # held in the text layer: flushed before the bytes go under it
    convert_file(str(source), to="jsonl", stdout=stdout)
    assert stdout.value() == b"before\n" + convert(CLEAN, "bbox", to="jsonl").text.encode()


def test_bytes_that_are_not_utf8_pass_through_when_forced(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", NOT_UTF8)
    out = tmp_path / "out.bbox"
    done = convert_file(str(source), to="bbox", output=out, force=True)
    assert done.written and out.read_bytes() == NOT_UTF8
    stdout = Stdout()
    convert_file(str(source), to="bbox", stdout=stdout)
    assert stdout.value() == NOT_UTF8


def test_the_output_format_is_told_by_the_output_s_name(tmp_path: Path) -> None:
    assert target_format(None, tmp_path / "x.jsonl") == "jsonl"
    assert target_format("JSONL", None) == "jsonl"
    assert target_format("atif", tmp_path / "x.jsonl") == "atif"
    assert target_format(None, tmp_path / "x.json") == "atif"  # BB-7 is read only
    for output in (None, tmp_path / "x.unknown"):
        with pytest.raises(ConvertUsageError) as raised:
            target_format(None, output)
        assert str(raised.value) == f"give --to FORMAT (one of: {writable_names()})"
    with pytest.raises(ConvertUsageError) as raised:
        target_format("nope", None)
    assert "nope" in str(raised.value)


def test_the_writable_formats_are_named_in_order() -> None:
    assert writable_names() == "bbox, compact, atif, lightbox, jsonl, otlp"


def test_a_folder_format_is_written_through_a_staging_folder(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", DEMO.read_text(encoding="utf-8"))
    out = tmp_path / "box"
    done = convert_file(str(source), to="lightbox", output=out)
    assert done.written and out.is_dir() and any(out.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bbox", "box"]  # the staging folder is gone
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(source), to="lightbox")
    assert str(raised.value) == "lightbox output is a folder: give -o DIR"


def test_a_folder_format_refused_moves_nothing_in(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", NOT_UTF8)
    out = tmp_path / "box"
    done = convert_file(str(source), to="lightbox", output=out)
    assert done.refused and not done.written
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bbox"]


def test_a_folder_format_over_a_file_is_a_usage_error(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    out = write(tmp_path, "box", "a file")
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(source), to="lightbox", output=out)
    assert str(raised.value) == f"{out}: cannot write: not a folder"


def test_a_folder_format_that_cannot_be_moved_in_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bbox_lark.convert.files as files

    source = write(tmp_path, "a.bbox", DEMO.read_text(encoding="utf-8"))
    out = tmp_path / "box"

    class FailingOs:
        """``os`` as ``convert/files.py`` sees it, whose ``replace`` fails (moving in only)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        @staticmethod
        def replace(src: Any, dst: Any) -> None:
            raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files, "os", FailingOs())
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(source), to="lightbox", output=out)
    assert str(raised.value) == f"{out}: cannot write: Permission denied"


def test_an_output_where_nothing_can_be_written_is_a_usage_error(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(source), to="jsonl", output=tmp_path / "missing" / "a.jsonl")
    assert str(raised.value).startswith(f"{tmp_path / 'missing' / 'a.jsonl'}: cannot write: ")


def test_a_commit_that_fails_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.files.atomic import AtomicWriter

    source = write(tmp_path, "a.bbox", CLEAN)

    def failing(self: AtomicWriter) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(AtomicWriter, "commit", failing)
    out = tmp_path / "a.jsonl"
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(source), to="jsonl", output=out)
    assert str(raised.value) == f"{out}: cannot write: No space left on device"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bbox"]  # the temporary file is gone


# -- the write policy ---------------------------------------------------------------------------


def test_an_input_that_cannot_be_read_faithfully_is_not_written(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", NOT_UTF8)
    out = tmp_path / "out.bbox"
    done = convert_file(str(source), to="bbox", output=out)
    assert done.refused and not done.written and not out.exists()
    assert [d.code for d in done.verdict.refusing] == ["E001"]
    assert done.exit_code == 1
    assert said_for(done) == (
        Said(f"{source}: 1 error(s); not written (fix them first, or pass --force)", "refused"),
    )


def test_forced_it_is_written_and_said_so(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", NOT_UTF8)
    out = tmp_path / "out.bbox"
    done = convert_file(str(source), to="bbox", output=out, force=True)
    assert done.written and not done.refused and done.exit_code == 0
    assert said_for(done, force=True) == (
        Said(f"wrote {out} (bbox → bbox)"),
        Said(f"{source}: 1 error(s); written anyway (--force)", "!"),
    )


def test_on_a_stream_it_is_converted_and_said_so(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", NOT_UTF8)
    done = convert_file(str(source), to="bbox", stdout=Stdout())
    assert not done.refused and done.exit_code == 1
    assert said_for(done) == (
        Said(f"{source}: 1 error(s); converted anyway; it cannot be read faithfully", "!"),
    )


# -- provider credentials -----------------------------------------------------------------------


def test_a_provider_key_refuses_the_file_and_names_where_not_the_key(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", WITH_KEY)
    out = tmp_path / "out.jsonl"
    done = convert_file(str(source), to="jsonl", output=out)
    assert done.secrets_refused and done.refused and not done.written and not out.exists()
    assert done.exit_code == 1
    said = said_for(done)
    assert said[-1] == Said(
        f"{source}: holds provider credentials (S001); not written"
        " (--redact replaces them, --keep-secrets writes them as they are)",
        "refused",
    )
    assert KEY not in repr(done) and all(KEY not in s.text for s in said)


def test_a_provider_key_holds_standard_output_back(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", WITH_KEY)
    stdout = Stdout()
    done = convert_file(str(source), to="jsonl", stdout=stdout)
    assert done.secrets_refused and stdout.value() == b""


def test_a_provider_key_kept_or_redacted(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", WITH_KEY)
    stdout = Stdout()
    kept = convert_file(str(source), to="jsonl", stdout=stdout, options={"keep_secrets": True})
    assert KEY.encode() in stdout.value()
    assert not kept.secrets_refused and kept.exit_code == 0
    assert kept.notes.secrets == "1 secret(s) carried over (aws_access_key 1); --redact replaces them"
    said = said_for(kept)
    assert said[-1] == Said(f"{source}: {kept.notes.secrets}", "!")
    assert all(s.text.endswith("(kept: --keep-secrets)") for s in said[:-1])
    stdout = Stdout()
    redacted = convert_file(str(source), to="jsonl", stdout=stdout, options={"redact": True})
    assert KEY.encode() not in stdout.value() and b"[redacted:aws_access_key]" in stdout.value()
    assert redacted.credentials == () and redacted.notes.secrets == ""
    assert said_for(redacted, quiet=True) == ()


def test_a_generic_secret_is_carried_over_with_a_warning(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", GENERIC)
    out = tmp_path / "out.jsonl"
    done = convert_file(str(source), to="jsonl", output=out)
    assert done.written and not done.secrets_refused and done.credentials == ()
    assert done.notes.secrets == "1 secret(s) carried over (generic_secret 1); --redact replaces them"
    assert said_for(done, quiet=True) == (
        Said(f"wrote {out} (bbox → jsonl)"),
        Said(f"{source}: {done.notes.secrets}", "!"),
    )


def test_a_key_in_a_foreign_input_is_named_in_its_bbox_form(tmp_path: Path) -> None:
    data = CLAUDE_CODE.read_text(encoding="utf-8")
    record = {"type": "user", "uuid": "k1", "sessionId": "fx-comments", "timestamp": "2030-01-02T03:09:00Z"}
    line = json.dumps({**record, "message": {"role": "user", "content": f"my key {KEY}"}}) + "\n"
    source = write(tmp_path, "s.jsonl", data + line)
    done = convert_file(str(source), to="bbox", stdout=Stdout(), options={"keep_secrets": True})
    assert done.credentials
    assert all(c.startswith(f"{source}:") for c in done.credentials)
    assert all(c.endswith(" S001 aws_access_key (in its claude-code → bbox form)") for c in done.credentials)
    said = said_for(done, quiet=True)
    kept = tuple(Said(c + " (kept: --keep-secrets)") for c in done.credentials)
    assert said[: len(kept)] == kept
    refused = convert_file(str(source), to="bbox", stdout=Stdout())
    assert refused.secrets_refused and refused.credentials == done.credentials
    assert said_for(refused) == (
        *(Said(c) for c in done.credentials),
        Said(
            f"{source}: holds provider credentials (S001); not written"
            " (--redact replaces them, --keep-secrets writes them as they are)",
            "refused",
        ),
    )


def test_an_empty_report_says_nothing() -> None:
    assert said_for(Converted("a.bbox"), report=True) == ()


def test_credential_lines_leave_out_what_the_findings_show() -> None:
    class Result:
        source = "bbox"
        credentials = ((3, 5, "aws_access_key"), (4, 1, "github_token"))

    finding = Diagnostic("S001", "error", 3, 5, "an AWS key")
    assert credential_lines("a.bbox", Result(), WriteVerdict(other=(finding,))) == (
        "a.bbox:4:1: S001 github_token",
    )
    other = Diagnostic("S002", "error", 4, 1, "a generic secret")
    assert credential_lines("a.bbox", Result(), WriteVerdict(refusing=(other,))) == (
        "a.bbox:3:5: S001 aws_access_key",
        "a.bbox:4:1: S001 github_token",
    )


# -- what is said ------------------------------------------------------------------------------


def test_a_lossy_conversion_says_its_losses_unless_quiet(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", DEMO.read_text(encoding="utf-8"))
    out = tmp_path / "a.json"
    done = convert_file(str(source), to="atif", output=out)
    assert done.notes.losses
    said = said_for(done)
    assert said == (
        *(Said(f"{source}: {loss}") for loss in done.notes.losses),
        Said(f"wrote {out} (bbox → atif)"),
    )
    assert said_for(done, quiet=True) == (Said(f"wrote {out} (bbox → atif)"),)
    assert said_for(done, alone=False) == tuple(Said(f"{source}: {loss}") for loss in done.notes.losses)
    assert said_for(done, report=True) == (Said(done.report[:-1]), Said(f"wrote {out} (bbox → atif)"))
    assert done.report.endswith("\n") and str(source) in done.report
    assert done.report_data is not None
    assert (done.report_data["source"], done.report_data["target"]) == ("bbox", "atif")


def test_the_report_as_json_on_standard_error(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", DEMO.read_text(encoding="utf-8"))
    done = convert_file(str(source), to="atif", stdout=Stdout(), report_json=Path("-"))
    said = said_for(done, quiet=True, report_json=Path("-"))
    assert said == (Said(json.dumps(done.report_data, indent=2)),)
    assert said_for(done, quiet=True, report_json=tmp_path / "r.json") == ()


def test_write_report_writes_the_json_or_says_why_not(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", DEMO.read_text(encoding="utf-8"))
    done = convert_file(str(source), to="atif", stdout=Stdout())
    target = tmp_path / "r.json"
    assert write_report(done, target) is None
    assert target.read_text(encoding="utf-8") == json.dumps(done.report_data, indent=2) + "\n"
    missing = tmp_path / "missing" / "r.json"
    assert write_report(done, missing) == f"{missing}: cannot write: No such file or directory"


def test_skipped_records_are_said_even_when_quiet(tmp_path: Path) -> None:
    data = CLAUDE_CODE.read_bytes() + b"not a record\n"
    source = write(tmp_path, "s.jsonl", data)
    out = tmp_path / "s.bbox"
    done = convert_file(str(source), to="bbox", output=out)
    line = data.count(b"\n")
    skipped = f"{source}:{line}: skipped: not a JSON record (Expecting value at column 1)"
    assert done.notes.skipped == (skipped,)
    assert done.exit_code == 1 and done.written
    assert said_for(done, quiet=True) == (
        Said(f"wrote {out} (claude-code → bbox)"),
        Said(f"{source}: 1 record(s) skipped", "!"),
    )
    assert Said(skipped) in said_for(done)


def test_standard_input_is_shown_as_stdin() -> None:
    done = Converted("-", notes=Notes(skipped=("<stdin>:1: skipped: x",)))
    assert done.shown == "<stdin>"
    assert said_for(done, quiet=True) == (Said("<stdin>: 1 record(s) skipped", "!"),)


def test_an_error_is_all_that_is_said() -> None:
    done = Converted("a.bbox", error="a.bbox: cannot read: gone", notes=Notes(skipped=("x",)))
    assert said_for(done) == (Said("a.bbox: cannot read: gone", "error"),)
    assert done.exit_code == 2


def test_a_report_that_could_not_be_written_ends_what_is_said() -> None:
    done = Converted("a.bbox", Path("o"), notes=Notes(losses=("dropped x",)), report_error="r: cannot write")
    assert said_for(done) == (Said("a.bbox: dropped x"), Said("r: cannot write", "error"))
    assert done.exit_code == 2


def test_the_exit_codes_of_a_result() -> None:
    refusing = WriteVerdict(refusing=(Diagnostic("E001", "error", 1, 1, "x"),))
    assert Converted("a").exit_code == 0
    assert Converted("a", verdict=refusing).exit_code == 1
    assert Converted("a", verdict=refusing, output=Path("o")).refused
    assert not Converted("a", verdict=refusing).refused  # on a stream: converted anyway
    assert Converted("a", notes=Notes(skipped=("s",))).exit_code == 1
    assert (
        Converted("a", secrets_refused=True).exit_code == 1 and Converted("a", secrets_refused=True).refused
    )
    assert Converted("a", verdict=WriteVerdict(refusing=refusing.refusing, force=True)).exit_code == 0


# -- usage errors --------------------------------------------------------------------------------


def test_a_missing_input_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(tmp_path / "missing.bbox"), to="jsonl", stdout=Stdout())
    assert str(tmp_path / "missing.bbox") in str(raised.value)


def test_a_trajectory_is_converted_by_its_address(tmp_path: Path) -> None:
    demo = DEMO.read_text(encoding="utf-8")
    lines = [
        json.dumps(json.loads(convert(demo.replace("id: ", f"id: {n}-", 1), "bbox", to="atif").text))
        for n in ("one", "two")
    ]
    source = write(tmp_path, "two.jsonl", "\n".join(lines) + "\n")
    stdout = Stdout()
    done = convert_file(f"{source}#2", to="bbox", stdout=stdout)
    assert done.source == "atif" and b"id: two-" in stdout.value()
    with pytest.raises(ConversionError) as raised:
        convert_file(f"{source}#9", to="bbox", stdout=Stdout())
    assert str(raised.value) == f"{source}: no trajectory on line 9"


def test_an_input_a_format_cannot_read_is_a_usage_error(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(source), to="jsonl", from_="nope", stdout=Stdout())
    assert "nope" in str(raised.value)
    with pytest.raises(ConvertUsageError):
        convert_file(str(source), to="bbox", from_="otlp", stdout=Stdout())


def test_an_input_that_fails_to_read_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bbox_lark.convert

    source = write(tmp_path, "a.bbox", CLEAN)

    def failing(*args: object, **kwargs: object) -> object:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(bbox_lark.convert, "convert_stream", failing)
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(source), to="jsonl", stdout=Stdout())
    assert str(raised.value) == f"{source}: cannot read: Input/output error"


@pytest.mark.parametrize("where", ["a folder", "a missing folder"])
def test_a_report_that_cannot_be_written_stops_before_converting(where: str, tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    report = tmp_path if where == "a folder" else tmp_path / "missing" / "r.json"
    out = tmp_path / "out.jsonl"
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(source), to="jsonl", output=out, report_json=report)
    assert str(raised.value) == f"{report}: cannot write the report there"
    assert not out.exists()


def test_a_report_in_a_folder_that_cannot_be_written_stops_before_converting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bbox_lark.convert.files as files

    source = write(tmp_path, "a.bbox", CLEAN)
    locked = tmp_path / "locked"
    locked.mkdir()

    class LockedOs:
        """``os`` as ``convert/files.py`` sees it, with ``locked`` not writable (root writes anywhere)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        @staticmethod
        def access(path: Any, mode: int) -> bool:
            return Path(path) != locked and os.access(path, mode)

    monkeypatch.setattr(files, "os", LockedOs())
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(source), to="jsonl", stdout=Stdout(), report_json=locked / "r.json")
    assert str(raised.value) == f"{locked / 'r.json'}: cannot write the report there"
    convert_file(str(source), to="jsonl", stdout=Stdout(), report_json=tmp_path / "r.json")


def test_a_report_next_to_the_input_is_allowed(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", CLEAN)
    convert_file(str(source), to="jsonl", stdout=Stdout(), report_json=tmp_path / "r.json")
    convert_file(str(source), to="jsonl", stdout=Stdout(), report_json=Path("-"))


# -- standard output held back ------------------------------------------------------------------


def test_held_output_stays_in_memory_up_to_its_limit_then_moves_to_a_file() -> None:
    held = _HeldOutput(8)
    held.write(b"12345678")
    assert not held._rolled  # type: ignore[attr-defined]
    held.write(b"9")
    assert held._rolled  # type: ignore[attr-defined]
    held.seek(0)
    assert held.read() == b"123456789"
    held.close()


def test_one_write_over_the_limit_moves_it_first() -> None:
    held = _HeldOutput(4)
    held.write(b"123456")
    assert held._rolled  # type: ignore[attr-defined]
    held.seek(0)
    assert held.read() == b"123456"
    held.close()


def test_the_limit_is_eight_mebibytes() -> None:
    assert HELD_IN_MEMORY == 8 * 1024 * 1024


def test_held_output_released_to_a_text_stream_keeps_undecodable_bytes(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", NOT_UTF8)
    stdout = io.StringIO()  # no bytes under it: the held bytes are decoded as the input was
    done = convert_file(str(source), to="bbox", stdout=stdout)
    assert not done.secrets_refused
    assert stdout.getvalue() == NOT_UTF8.decode("utf-8", "surrogateescape")


def test_a_folder_format_is_staged_hidden_beside_its_output(tmp_path: Path) -> None:
    from bbox_lark.convert.files import _staging

    out = tmp_path / "box"
    staging = _staging(out)
    try:
        assert staging.parent == tmp_path and staging.is_dir()
        assert staging.name.startswith(".box.")  # hidden, and named for its output
    finally:
        staging.rmdir()


def test_a_folder_format_into_a_folder_that_exists(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", DEMO.read_text(encoding="utf-8"))
    out = tmp_path / "box"
    out.mkdir()
    done = convert_file(str(source), to="lightbox", output=out)
    assert done.written and any(out.iterdir())


def test_a_key_the_stream_scan_does_not_take_whole_refuses_the_file(tmp_path: Path) -> None:
    # the BEGIN line cut over a continuation: only the input's own S001 finding shows it
    body = (
        "a: key follows -----BEGIN\n  RSA PRIVATE KEY-----\n"
        "  MIIEFAKEkeyFORtestsONLYnotAREALkey0123456789abcdefFAKE\n  -----END RSA PRIVATE KEY-----\n"
    )
    source = write(tmp_path, "a.bbox", HEADER + body)
    out = tmp_path / "out.jsonl"
    done = convert_file(str(source), to="jsonl", output=out)
    assert done.secrets_refused and not out.exists() and done.exit_code == 1


def test_a_foreign_input_redacted_has_no_credentials_to_name(tmp_path: Path) -> None:
    data = CLAUDE_CODE.read_text(encoding="utf-8")
    record = {"type": "user", "uuid": "k1", "sessionId": "fx-comments", "timestamp": "2030-01-02T03:09:00Z"}
    line = json.dumps({**record, "message": {"role": "user", "content": f"my key {KEY}"}}) + "\n"
    source = write(tmp_path, "s.jsonl", data + line)
    stdout = Stdout()
    done = convert_file(str(source), to="bbox", stdout=stdout, options={"redact": True})
    assert done.credentials == () and not done.secrets_refused and KEY.encode() not in stdout.value()


def test_standard_input_is_named_stdin_in_its_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    data = CLAUDE_CODE.read_bytes() + b"not a record\n"

    class Stdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", Stdin())
    done = convert_file("-", to="bbox", stdout=Stdout())
    line = data.count(b"\n")
    assert done.notes.skipped == (
        f"<stdin>:{line}: skipped: not a JSON record (Expecting value at column 1)",
    )
    assert done.report.startswith("<stdin>: ")


def test_the_secrets_carried_over_name_each_kind() -> None:
    from bbox_lark.convert.files import _secrets_warning

    assert _secrets_warning({"aws_access_key": 1, "github_token": 2}, False) == (
        "3 secret(s) carried over (aws_access_key 1, github_token 2); --redact replaces them"
    )
    assert _secrets_warning({"aws_access_key": 1}, True) == ""
    assert _secrets_warning({}, False) == ""


def test_the_longest_line_reaches_the_conversion(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", HEADER + "a: " + "x" * 300 + "\n")
    assert convert_file(str(source), to="bbox", output=tmp_path / "o.bbox").written
    done = convert_file(str(source), to="bbox", output=tmp_path / "p.bbox", max_line=100)
    assert done.refused and [d.code for d in done.verdict.refusing] == ["E003"]


def test_the_configuration_beside_the_input_allows_its_secrets(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", WITH_KEY)
    assert convert_file(str(source), to="jsonl", output=tmp_path / "o.jsonl").secrets_refused
    write(tmp_path, "bbox-lark.toml", f'allowed-secrets = ["{KEY}"]\n')
    done = convert_file(str(source), to="jsonl", output=tmp_path / "p.jsonl")
    assert done.written and not done.secrets_refused and done.notes.secrets == ""


def test_standard_input_reads_no_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.chdir(tmp_path)
    write(tmp_path, "bbox-lark.toml", f'allowed-secrets = ["{KEY}"]\n')

    class Stdin:
        buffer = io.BytesIO(WITH_KEY.encode())

    monkeypatch.setattr(sys, "stdin", Stdin())
    assert convert_file("-", to="jsonl", stdout=Stdout()).secrets_refused


def test_an_input_refused_whole_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    class Stdin:
        buffer = io.BytesIO(b'{"schema_version": "ATIF-v1.6", "steps": "no"}')

    monkeypatch.setattr(sys, "stdin", Stdin())
    with pytest.raises(ConvertUsageError) as raised:
        convert_file("-", to="bbox", from_="atif", stdout=Stdout())
    assert str(raised.value).startswith("<stdin>: ")
    source = write(tmp_path, "t.json", '{"schema_version": "ATIF-v1.6", "steps": "no"}')
    with pytest.raises(ConvertUsageError) as raised:
        convert_file(str(source), to="bbox", stdout=Stdout())
    assert str(raised.value).startswith(f"{source}: ")


def test_kept_secrets_on_standard_output_keep_every_byte(tmp_path: Path) -> None:
    source = write(tmp_path, "a.bbox", NOT_UTF8)
    stdout = Stdout()
    convert_file(str(source), to="bbox", stdout=stdout, options={"keep_secrets": True})
    assert stdout.value() == NOT_UTF8


def _trajectories_with_key(folder: Path) -> Path:
    demo = DEMO.read_text(encoding="utf-8")
    lines = [
        json.dumps(
            json.loads(
                convert(
                    demo.replace("id: ", f"id: {n}-", 1) + f"a: the key {KEY}\n",
                    "bbox",
                    to="atif",
                    keep_secrets=True,
                ).text
            )
        )
        for n in ("one", "two")
    ]
    return write(folder, "run.jsonl", "\n".join(lines) + "\n")


def test_a_trajectory_reads_the_configuration_beside_its_file(tmp_path: Path) -> None:
    # as check and stats read it: an allowed key is no reason to refuse (it was, for FILE#LINE)
    source = _trajectories_with_key(tmp_path)
    assert convert_file(f"{source}#2", to="bbox", output=tmp_path / "a.bbox").secrets_refused
    write(tmp_path, "bbox-lark.toml", f'allowed-secrets = ["{KEY}"]\n')
    done = convert_file(f"{source}#2", to="bbox", output=tmp_path / "b.bbox")
    assert done.written and not done.secrets_refused


def test_a_folder_format_is_read_from_its_folder() -> None:
    stdout = Stdout()
    done = convert_file(str(LIGHTBOX), to="bbox", stdout=stdout)
    assert done.source == "lightbox" and stdout.value().startswith(b"---\nformat: bbox/1\n")


def test_a_report_on_standard_error_needs_no_writable_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bbox_lark.convert.files as files

    source = write(tmp_path, "a.bbox", CLEAN)

    class NothingWritable:
        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        @staticmethod
        def access(path: Any, mode: int) -> bool:
            return False

    monkeypatch.setattr(files, "os", NothingWritable())
    convert_file(str(source), to="jsonl", stdout=Stdout(), report_json=Path("-"))
    with pytest.raises(ConvertUsageError):
        convert_file(str(source), to="jsonl", stdout=Stdout(), report_json=tmp_path / "r.json")
