"""The write policy of fmt, fix and convert (DECISIONS §11; bbox_lark/files/writepolicy.py): a file
is refused only when it cannot be read faithfully (REFUSING_CODES); every other error is
printed on stderr and the file is written (exit 0); --force overrides a refusal."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import CORPUS_MAX_LINE, corpus_files
from typer.testing import CliRunner, Result

import bbox_lark
from bbox_lark.cli import app
from bbox_lark.files.config import Settings
from bbox_lark.files.writepolicy import REFUSING_CODES, write_verdict
from bbox_lark.syntax.nodes import Diagnostic
from bbox_lark.syntax.printer import format_document
from bbox_lark.syntax.source import encode

REPO = Path(__file__).resolve().parent.parent
runner = CliRunner()

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
#: An empty `id:` (E010, which real writers leave) and an ASCII arrow to rewrite.
EMPTY_ID = "---\nformat: bbox/1\nid:\nrepo_sha: 215db51\nrunner: local\n---\nu:hi\nt:read a.rs -> [1 lines]\n"
#: An unterminated quote in a call part (E012): cannot be read faithfully.
UNTERMINATED = HEADER + 'u:hi\nt:grep "open -> [ok]\n'


def invoke(args: list[str], stdin: bytes | None = None) -> Result:
    result = runner.invoke(app, args, input=stdin)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def error(code: str) -> Diagnostic:
    return Diagnostic(code, "error", 1, 1, "x", "x")


# -- the library function ------------------------------------------------------------------


def test_the_codes() -> None:
    assert sorted(REFUSING_CODES) == [
        "E001",
        "E002",
        "E003",
        "E006",
        "E007",
        "E008",
        "E009",
        "E012",
        "E015",
        "E017",
    ]
    registry = bbox_lark.registry()
    assert all(registry[code].severity == "error" for code in REFUSING_CODES)


def test_the_codes_are_documented_in_one_table() -> None:
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = page.split("## Writing commands", 1)[1]
    assert re.findall(r"^\| (E\d{3}) \|", table, re.M) == sorted(REFUSING_CODES)


def test_write_verdict() -> None:
    warning = Diagnostic("W013", "warning", 2, 1, "x", "x")
    verdict = write_verdict([error("E010"), warning, error("E012")])
    assert [d.code for d in verdict.refusing] == ["E012"] and [d.code for d in verdict.other] == ["E010"]
    assert verdict.refused and verdict.exit_code == 1
    assert not write_verdict([error("E012")], force=True).refused
    assert write_verdict([error("E010"), error("E013")]).exit_code == 0
    ignoring = Settings(ignore=("E012",))
    assert write_verdict([error("E012")], settings=ignoring).errors == ()
    assert write_verdict([error("E012")], settings=Settings(select=("W",))).refused is False


INVALID_ERRORS = [f for f in corpus_files("invalid") if f.code.startswith("E") and f.code != "E016"]


@pytest.mark.parametrize("file", INVALID_ERRORS, ids=[f.id for f in INVALID_ERRORS])
def test_fmt_on_every_invalid_corpus_file(file: object, tmp_path: Path) -> None:
    """Refused exactly when the file has a refusing code; otherwise written, errors on stderr."""
    path = tmp_path / file.path.name  # type: ignore[attr-defined]
    shutil.copyfile(file.path, path)  # type: ignore[attr-defined]
    data = path.read_bytes()
    document = bbox_lark.parse(data, path=path, max_line=CORPUS_MAX_LINE)
    errors = {d.code for d in document.diagnostics if d.severity == "error"}
    refused = bool(errors & set(REFUSING_CODES))
    result = invoke(["fmt", "--max-line", str(CORPUS_MAX_LINE), str(path)])
    for code in errors:
        assert f": {code} " in result.stderr
    if refused:
        assert result.exit_code == 1
        assert "not formatted (fix them first, or pass --force)" in result.stderr
        assert path.read_bytes() == data
    else:
        assert result.exit_code == 0, result.output
        assert path.read_bytes() == encode(format_document(document))
    assert result.stdout == ""


# -- fmt -----------------------------------------------------------------------------------------


def test_fmt_writes_a_file_with_an_empty_id(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(EMPTY_ID, encoding="utf-8")
    result = invoke(["fmt", str(path)])
    assert result.exit_code == 0
    assert result.stderr == (
        f"{path}:3:1: E010 required header field `id` is empty\n"
        f"reformatted {path}\n1 file(s) reformatted, 0 unchanged\n"
    )
    assert path.read_text(encoding="utf-8").endswith("u: hi\nt:read a.rs → [1 lines]\n")


def test_fmt_refuses_e012_unless_forced(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(UNTERMINATED, encoding="utf-8")
    result = invoke(["fmt", str(path)])
    assert result.exit_code == 1
    assert f"{path}:8:8: E012" in result.stderr
    assert path.read_text(encoding="utf-8") == UNTERMINATED
    result = invoke(["fmt", "--force", str(path)])
    assert result.exit_code == 0
    assert f"! {path}: 1 error(s); formatted anyway (--force)" in result.stderr
    assert path.read_text(encoding="utf-8").endswith('u: hi\nt:grep "open → [ok]\n')


def test_fmt_stdin_follows_the_policy() -> None:
    assert invoke(["fmt", "-"], EMPTY_ID.encode()).exit_code == 0
    refused = invoke(["fmt", "-"], UNTERMINATED.encode())
    assert refused.exit_code == 1 and refused.stdout == ""


def test_configured_ignores_are_not_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a.bbox").write_text(UNTERMINATED, encoding="utf-8")
    Path("bbox-lark.toml").write_text('ignore = ["E012"]\n', encoding="utf-8")
    result = invoke(["fmt", "a.bbox"])
    assert (result.exit_code, result.stderr) == (
        0,
        "reformatted a.bbox\n1 file(s) reformatted, 0 unchanged\n",
    )


# -- fix -----------------------------------------------------------------------------------------


def test_fix_writes_a_file_with_an_empty_id(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(EMPTY_ID, encoding="utf-8")
    dry = invoke(["fix", "--arrows", str(path)])
    assert dry.exit_code == 0  # the dry run says what --write would do: write
    assert f"{path}:3:1: E010" in dry.stderr
    result = invoke(["fix", "--arrows", "--write", str(path)])
    assert result.exit_code == 0
    assert f"{path}:3:1: E010 required header field `id` is empty" in result.stderr
    assert path.read_text(encoding="utf-8").endswith("t:read a.rs → [1 lines]\n")


def test_fix_refuses_e012_unless_forced(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(UNTERMINATED.replace("u:hi", "t:x -> [ok]"), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    assert invoke(["fix", "--arrows"]).exit_code == 2
    dry = invoke(["fix", "--arrows", str(path)])
    assert dry.exit_code == 1 and "--write would not write it" in dry.stderr
    assert invoke(["fix", "--arrows", "--write", str(path)]).exit_code == 1
    assert path.read_text(encoding="utf-8") == before
    assert invoke(["fix", "--arrows", "--write", "--force", str(path)]).exit_code == 0
    assert "t:x → [ok]" in path.read_text(encoding="utf-8")


def test_fix_over_several_files(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    good = tmp_path / "logs" / "a.bbox"
    good.write_text(EMPTY_ID, encoding="utf-8")
    broken = tmp_path / "logs" / "b.bbox"
    broken.write_text(UNTERMINATED.replace("u:hi", "t:x -> [ok]"), encoding="utf-8")
    dry = invoke(["fix", "--arrows", str(tmp_path / "logs")])
    assert dry.exit_code == 1  # b.bbox would be refused
    assert dry.stdout.count("--- a/") == 2
    assert "✓ Rewrote 3 ASCII arrows as → in 2 files" in dry.stderr
    result = invoke(["fix", "--arrows", "--write", str(tmp_path / "logs")])
    assert result.exit_code == 1
    assert f"wrote {good}" in result.stderr and f"{broken}: 1 error(s); not written" in result.stderr
    assert "→" in good.read_text(encoding="utf-8") and "→" not in broken.read_text(encoding="utf-8")


# -- convert -------------------------------------------------------------------------------------


def test_convert_writes_a_file_with_an_empty_id(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(EMPTY_ID, encoding="utf-8")
    to_stdout = invoke(["convert", "--to", "compact", str(path)])
    assert to_stdout.exit_code == 0
    assert f"{path}:3:1: E010" in to_stdout.stderr
    out = tmp_path / "a.cbox"
    written = invoke(["convert", "-o", str(out), str(path)])
    assert written.exit_code == 0
    assert out.read_text(encoding="utf-8") == to_stdout.stdout


def test_convert_refuses_e012_unless_forced(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(UNTERMINATED, encoding="utf-8")
    out = tmp_path / "a.cbox"
    assert invoke(["convert", "-o", str(out), str(path)]).exit_code == 1
    assert not out.exists()
    to_stdout = invoke(["convert", "--to", "compact", str(path)])
    assert to_stdout.exit_code == 1 and to_stdout.stdout  # converted, but it cannot be read faithfully
    assert "converted anyway; it cannot be read faithfully" in to_stdout.stderr
    assert invoke(["convert", "-o", str(out), "--force", str(path)]).exit_code == 0
    assert out.exists()
