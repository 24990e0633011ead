"""What a command says is decided in the library and only rendered by the CLI (issue 27.5):
the marks of :class:`bbox_lark.files.said.Said` render as the commands always wrote them, and
the lines ``convert`` prints on stderr are exactly the ones the library's run says."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bbox_lark.cli import app
from bbox_lark.cli.console import say
from bbox_lark.convert.many import convert_paths
from bbox_lark.files.said import Said

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
runner = CliRunner()


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        (Said("plain"), "plain\n"),
        (Said("a warning", "!"), "! a warning\n"),
        (Said("bad input", "error"), "error: bad input\n"),
        (Said("not written", "refused"), "✗ not written\n"),
        (Said("sent", "done"), "✓ sent\n"),
        (Said("a note", "note"), "note: a note\n"),
        (Said("[red]not markup[/]", "refused"), "✗ [red]not markup[/]\n"),
    ],
)
def test_each_mark_renders_as_the_commands_write_it(
    said: Said, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    say([said])
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", shown)


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("valid/arrows.bbox", []),
        ("invalid/E003-line-too-long.bbox", []),
        ("invalid/E003-line-too-long.bbox", ["--force"]),
        ("invalid/S001-provider-credentials.bbox", []),
        ("invalid/S001-provider-credentials.bbox", ["--keep-secrets"]),
    ],
)
def test_convert_prints_what_the_library_says(name: str, extra: list[str], tmp_path: Path) -> None:
    source = CORPUS / name
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["convert", str(source), "-o", str(out), *extra])
    out.unlink(missing_ok=True)
    options = {"keep_secrets": True} if "--keep-secrets" in extra else {}
    run = convert_paths([str(source)], output=out, force="--force" in extra, options=options)
    expected: list[str] = []
    for done, lines in run:  # the input's findings as check shows them, then what is said
        expected += [f"{source}:{d.line}:{d.col}: {d.code} {d.message}" for d in done.verdict.errors]
        assert lines, "every conversion says something (where it went, or why not)"
        expected += [_shown(line) for line in lines]
    assert result.stderr.splitlines() == expected
    assert result.exit_code == run.exit_code


def _shown(line: Said) -> str:
    prefix = {"": "", "!": "! ", "error": "error: ", "refused": "✗ ", "done": "✓ ", "note": "note: "}
    return prefix[line.mark] + line.text
