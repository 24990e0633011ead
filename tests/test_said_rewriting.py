"""``fmt``, ``fix``, ``redact``, ``parse``, ``explain`` and ``docs --check`` decide what they say in
the library (issue 27.5): the runs of :mod:`bbox_lark.fix.runs` and the functions the other
commands call give the lines, and the command line prints exactly those."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bbox_lark.checks.workflow import find_inputs, parse_path
from bbox_lark.cli import app
from bbox_lark.cli.docsgen import check_docs, explain_check
from bbox_lark.errors import ConfigError, InputError
from bbox_lark.files.said import Said, Told
from bbox_lark.fix import FIXERS
from bbox_lark.fix.runs import fix_options, fix_run, fmt_run

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
REFUSED = CORPUS / "invalid" / "E002-nul-byte.bbox"
runner = CliRunner()


def _shown(line: Said) -> str:
    prefix = {"": "", "!": "! ", "error": "error: ", "refused": "✗ ", "done": "✓ ", "note": "note: "}
    return prefix[line.mark] + line.text


def _told(told: Told) -> list[str]:
    """The stderr lines of ``told``, as :func:`bbox_lark.cli.console.tell` prints them."""
    lines = [_shown(line) for line in told.before]
    lines += [f"{told.shown}:{n.line}:{n.col}: note {n.message}" for n in told.notes]
    lines += [f"{told.shown}:{d.line}:{d.col}: {d.code} {d.message}" for d in told.findings]
    return lines + [_shown(line) for line in told.said]


@pytest.mark.parametrize("extra", [[], ["--write"], ["--write", "--force"]])
def test_fix_prints_what_its_run_tells(extra: list[str], tmp_path: Path) -> None:
    for name in ("valid/arrows.bbox", "invalid/E002-nul-byte.bbox"):
        shutil.copy(CORPUS / name, tmp_path)
    paths = sorted(str(p) for p in tmp_path.iterdir())
    result = runner.invoke(app, ["fix", "--arrows", *extra, *paths])
    for name in ("valid/arrows.bbox", "invalid/E002-nul-byte.bbox"):  # as it was
        shutil.copy(CORPUS / name, tmp_path)
    run = fix_run(find_inputs(paths), [FIXERS["arrows"]], write="--write" in extra, force="--force" in extra)
    expected = [line for _, told in run for line in _told(told)] + [_shown(s) for s in run.summary()]
    assert result.stderr.splitlines() == expected
    assert result.exit_code == run.exit_code


def test_a_dry_run_says_once_that_write_would_refuse() -> None:
    [(_, told)] = list(fix_run(find_inputs([str(REFUSED)]), [FIXERS["arrows"]]))
    refused = [line for line in told.said if line.mark == "refused"]
    assert len(refused) == 1
    assert refused[0].text.endswith("; --write would not write it (fix them first, or pass --force)")


def test_fmt_check_counts_and_says_what_would_change(tmp_path: Path) -> None:
    shutil.copy(CORPUS / "valid" / "arrows.bbox", tmp_path)
    run = fmt_run(find_inputs([str(tmp_path)]), check=True)
    told = [told for _, told in run]
    assert run.exit_code in (0, 1)
    changed = run.counts["changed"]
    assert [line.text for t in told for line in t.said] == (
        [f"would reformat {told[0].shown}"] if changed else []
    )
    assert run.summary() == (Said(f"{changed} file(s) would be reformatted, {1 - changed} unchanged"),)


@pytest.mark.parametrize(
    ("write", "output", "paths", "message"),
    [
        (False, None, ["a"], "choose at least one fixer"),
        (True, Path("o"), ["a"], "--write and --output exclude each other"),
        (True, None, ["-"], "with - (stdin) use --output PATH"),
    ],
)
def test_fix_options_that_do_not_go_together(
    write: bool, output: Path | None, paths: list[str], message: str
) -> None:
    fixers = [] if message.startswith("choose") else [FIXERS["arrows"]]
    with pytest.raises(ConfigError, match=re.escape(message)):
        fix_options(fixers, paths, write=write, output=output)


def test_parse_json_keeps_only_the_findings_about_the_part_shown() -> None:
    path = str(CORPUS / "invalid" / "E002-nul-byte.bbox")
    whole, header = parse_path(path), parse_path(path, header_only=True)
    assert "body" not in header.json()
    assert len(header.json()["diagnostics"]) <= len(whole.json()["diagnostics"])
    assert whole.exit_code == 1 and whole.said and whole.said[0].text.startswith(whole.shown)
    with pytest.raises(ConfigError, match="exclude each other"):
        parse_path(path, header_only=True, body_only=True)
    with pytest.raises(InputError, match="is a directory"):
        parse_path(str(CORPUS))


def test_explain_suggests_close_codes() -> None:
    assert explain_check("W003") is not None
    assert explain_check(None, list_all=True) is None
    with pytest.raises(ConfigError, match=r"did you mean .*W003"):
        explain_check("W03")
    with pytest.raises(ConfigError, match="explain --list` lists every code"):
        explain_check("zzzzzz")


def test_docs_check_says_a_missing_folder(tmp_path: Path) -> None:
    found = check_docs(tmp_path / "none")
    assert found.exit_code == 1
    assert [line.mark for line in found.said] == ["refused"]
    assert found.said[0].text.startswith(f"{tmp_path / 'none'}: no such folder")
