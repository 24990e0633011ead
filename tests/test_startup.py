"""Start-up stays cheap: what importing the package and running ``check`` may not import.

Speed itself is measured by ``tools/bench.py``, never asserted here; these tests catch the
regressions that cost it (an eager import of a subsystem, Typer pulling in pydantic, Rich
imported for plain output) and check that the plain-output path writes what Rich would.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

import bbox_lark
from bbox_lark import cli
from bbox_lark.cli import console

ROOT = Path(__file__).resolve().parent.parent
CLEAN = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\nu: hi\na: done → [ok]\n"


#: The scale extra and the modules that use it: only export, query and bbox_lark.dask load them.
SCALE = {"pyarrow", "duckdb", "dask", "distributed", "s3fs", "fsspec", "pandas", "bbox_lark.numbers.tables"}
SCALE |= {"bbox_lark.numbers.export", "bbox_lark.numbers.query", "bbox_lark.dask"}


def modules_after(code: str) -> set[str]:
    """The modules loaded in a fresh interpreter after running ``code``."""
    script = f"import json, sys\n{code}\nsys.__stdout__.write('\\n@@' + json.dumps(sorted(sys.modules)))\n"
    env = {key: value for key, value in os.environ.items() if key not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.rsplit("@@", 1)[1]))


def test_importing_the_package_imports_no_subsystem() -> None:
    loaded = modules_after("import bbox_lark")
    heavy = {"yaml", "lark", "rich", "typer", "bbox_lark.api", "bbox_lark.convert", "bbox_lark.fix"}
    heavy |= {"bbox_lark.numbers.stats", "bbox_lark.syntax.printer", "bbox_lark.checks"}
    heavy |= SCALE
    assert not heavy & loaded


def test_the_cli_module_imports_no_pydantic_and_no_rich() -> None:
    loaded = modules_after("import bbox_lark.cli")
    assert not {"pydantic", "rich", "bbox_lark.convert", "bbox_lark.numbers.stats"} & loaded


def test_check_on_a_file_imports_only_what_it_uses(tmp_path: Path) -> None:
    path = tmp_path / "small.bbox"
    path.write_text(CLEAN, encoding="utf-8")
    code = (
        "from bbox_lark.cli import main\n"
        f"sys.argv = ['bbox-lark', 'check', {str(path)!r}]\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert stop.code == 0, stop.code\n"
    )
    loaded = modules_after(code)
    assert "bbox_lark.checks" in loaded and "yaml" in loaded  # it did check the file
    unwanted = {"pydantic", "rich", "rich.console", "bbox_lark.convert", "bbox_lark.numbers.stats"}
    unwanted |= {"bbox_lark.cli.docsgen"} | SCALE
    assert not unwanted & loaded


def test_export_as_csv_imports_no_pyarrow(tmp_path: Path) -> None:
    # pyarrow's import alone is 41 MiB over the CLI's 28: CSV is written with the standard
    # library (numbers/csvtable.py), which keeps export within 2x check's memory.
    path = tmp_path / "small.bbox"
    path.write_text(CLEAN, encoding="utf-8")
    out = tmp_path / "tables"
    code = (
        "from bbox_lark.cli import main\n"
        f"sys.argv = ['bbox-lark', 'export', {str(path)!r}, '-o', {str(out)!r}, '--format', 'csv']\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert stop.code == 0, stop.code\n"
    )
    loaded = modules_after(code)
    assert "bbox_lark.numbers.csvtable" in loaded and (out / "events.csv").is_file()
    assert not {"pyarrow", "duckdb", "pandas"} & loaded


def test_every_public_name_loads_on_first_use() -> None:
    namespace: dict[str, object] = {}
    exec("from bbox_lark import *", namespace)
    assert set(bbox_lark.__all__) <= set(namespace)
    assert set(bbox_lark.__all__) <= set(dir(bbox_lark))
    assert bbox_lark.convert_text is __import__("bbox_lark.convert", fromlist=["convert"]).convert
    with pytest.raises(AttributeError, match="no_such_name"):
        bbox_lark.no_such_name  # noqa: B018


SAMPLES = [
    "✓ 3 file(s): 0 error(s), 0 warning(s), 1 info",
    "[red]✗[/] 1 file(s): 2 error(s)",
    "[bold red]error:[/] ",
    "[bold red]E006[/] ",
    "path/to/a.bbox:3:1: ",
    "a.bbox: no such file or directory",
    "C:\\logs\\a.bbox:1:1: note",
    "a:smile:b.bbox: missing",
    "x:b:y",
    "tab\there",
    "carriage\rreturn",
    "bell\x07",
    "line\u2028separator",
    "[x] literal brackets",
    "a\\[b] escaped",
    "trailing  ",
    "漢字 " * 60,
    "x" * 300,
    "😀 wide",
    "",
]


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("markup", [True, False])
@pytest.mark.parametrize("end", ["\n", ""])
def test_plain_output_is_what_rich_writes(
    text: str, markup: bool, end: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    expected = io.StringIO()
    Console(file=expected, highlight=False, soft_wrap=True).print(text, markup=markup, end=end)
    shown = io.StringIO()
    monkeypatch.setattr(sys, "stdout", shown)
    console.out.print(text, markup=markup, end=end)
    assert shown.getvalue() == expected.getvalue()


def test_plain_text_is_written_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)

    def no_rich(self: object) -> Console:
        raise AssertionError("plain text went through rich")

    monkeypatch.setattr(console.Output, "rich", property(no_rich))
    shown = io.StringIO()
    monkeypatch.setattr(sys, "stderr", shown)
    console.err.print("[bold red]error:[/] ", end="")
    console.err.print("a.bbox: no such file", markup=False)
    console.err.print("[green]✓[/] 1 file(s): 0 error(s), 0 warning(s), 1 info")
    assert shown.getvalue() == "error: a.bbox: no such file\n✓ 1 file(s): 0 error(s), 0 warning(s), 1 info\n"


def test_check_on_a_file_imports_no_typer_and_no_pathspec(tmp_path: Path) -> None:
    """A plain ``check`` command line is parsed without Typer (:func:`cli.check_arguments`),
    and the default excludes are matched without ``pathspec``, on a file and on a folder."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "small.bbox").write_text(CLEAN, encoding="utf-8")
    for target in (tmp_path / "logs" / "small.bbox", tmp_path / "logs"):
        code = (
            "import os\n"
            f"os.chdir({str(tmp_path)!r})\n"
            "from bbox_lark.cli import main\n"
            f"sys.argv = ['bbox-lark', 'check', '--quiet', {str(target)!r}]\n"
            "try:\n    main()\nexcept SystemExit as stop:\n    assert stop.code == 0, stop.code\n"
        )
        loaded = modules_after(code)
        assert "bbox_lark.checks" in loaded  # it did check the file
        assert (
            not {"typer", "click", "pathspec", "bbox_lark.cli.commands", "bbox_lark.fix", "difflib"} & loaded
        )


FINDINGS = ROOT / "docs" / "examples" / "findings.bbox"

#: Command lines the fast path takes; each must end exactly as through Typer.
FAST = [
    ["check", "{clean}"],
    ["check", "{findings}"],
    ["check", "{findings}", "{clean}", "{missing}"],
    ["check", "{missing}"],
    ["check", "--strict", "{findings}"],
    ["check", "{findings}", "--no-strict"],
    ["check", "-q", "{findings}"],
    ["check", "--quiet", "--exit-zero", "{findings}"],
    ["check", "--statistics", "{findings}"],
    ["check", "--statistics", "-f", "json", "{findings}"],
    *(["check", "--output-format", name, "{findings}"] for name in ("concise", "text", "json", "github")),
    ["check", "--format=sarif", "{findings}"],
    ["check", "-f", "junit", "{clean}", "{findings}"],
    ["check", "--select", "W0", "--select", "E", "{findings}"],
    ["check", "--select=W0,E012", "{findings}"],
    ["check", "--ignore", "E012", "{findings}"],
    ["check", "--select", "ZZZ9", "{findings}"],
    ["check", "--max-line", "20", "{findings}"],
    ["check", "--max-line", "0", "{findings}"],
    ["check", "--isolated", "{folder}"],
    ["check", "{folder}", "--exclude", "sub"],
    ["check", "--extend-exclude", "*.bbox", "{folder}"],
    ["check", "--exclude", "[", "{folder}"],
    ["check", "--config", "{missing}", "{clean}"],
    ["check", "--blobs", "{missing}", "{clean}"],
    ["check", "--blobs", "{folder}", "{clean}"],
    ["check", "-j", "1", "{findings}"],
    ["check", "--jobs", "auto", "{findings}"],
    ["check", "--jobs", "many", "{findings}"],
    ["check", "{folder}/*.bbox"],
]
#: Command lines the fast path leaves to Typer (help, errors, unusual spellings).
SLOW = [
    ["check"],
    ["check", "--help"],
    ["check", "--nope", "{clean}"],
    ["check", "-qf", "json", "{clean}"],
    ["check", "-fjson", "{clean}"],
    ["check", "--", "{clean}"],
    ["check", "--select", "-x", "{clean}"],
    ["check", "--select=", "{clean}"],
    ["check", "--max-line", "1_0", "{clean}"],
    ["check", "--max-line", " 7", "{clean}"],
    ["check", "-f", "JSON", "{clean}"],
    ["check", "--strict", "--strict", "{clean}"],
    ["check", "--blobs", "{folder}", "--blobs", "{folder}", "{clean}"],
    ["check", "--quiet=yes", "{clean}"],
    ["check", "--jobs"],
    ["check", "-x.bbox"],
    ["parse", "{clean}"],
    ["--version"],
    [],
]


def _argv(template: list[str], tmp_path: Path) -> list[str]:
    folder = tmp_path / "logs"
    if not folder.exists():
        (folder / "sub").mkdir(parents=True)
        (folder / "a.bbox").write_text(CLEAN, encoding="utf-8")
        (folder / "sub" / "b.bbox").write_text(FINDINGS.read_text(encoding="utf-8"), encoding="utf-8")
    names = {"clean": folder / "a.bbox", "findings": FINDINGS, "missing": tmp_path / "missing.bbox"}
    names["folder"] = folder
    return [arg.format(**{key: str(value) for key, value in names.items()}) for arg in template]


def _ended(run: Callable[[], object], capsys: pytest.CaptureFixture[str]) -> tuple[object, str, str]:
    try:
        run()
    except SystemExit as stop:
        code: object = stop.code
    else:
        code = "returned"
    shown = capsys.readouterr()
    return code, shown.out, shown.err


@pytest.mark.parametrize("template", FAST, ids=" ".join)
def test_the_fast_check_path_ends_as_typer_does(
    template: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    argv = _argv(template, tmp_path)
    arguments = cli.check_arguments(argv)
    assert arguments is not None, argv
    fast = _ended(lambda: cli._run_check(arguments), capsys)
    typer = _ended(lambda: cli.app(argv, prog_name="bbox-lark"), capsys)
    assert fast == typer
    monkeypatch.setattr(sys, "argv", ["bbox-lark", *argv])
    assert _ended(cli.main, capsys) == typer  # main takes the fast path


@pytest.mark.parametrize("template", SLOW, ids=lambda t: " ".join(t) or "(nothing)")
def test_other_command_lines_go_through_typer(
    template: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = _argv(template, tmp_path)
    assert cli.check_arguments(argv) is None
    typer = _ended(lambda: cli.app(argv, prog_name="bbox-lark"), capsys)
    monkeypatch.setattr(sys, "argv", ["bbox-lark", *argv])
    assert _ended(cli.main, capsys)[0] == typer[0]


def test_a_completion_request_goes_through_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_BBOX_LARK_COMPLETE", "complete_bash")
    assert cli.check_arguments(["check", "a.bbox"]) is None


def test_dataclass_methods_compile_once_then_come_from_the_cache(tmp_path: Path) -> None:
    """``bbox_lark._classes``: the first run compiles and writes the cache, the next compiles
    nothing; the classes behave as dataclasses either way; a cache file others may write
    is never read."""
    env = {**os.environ, "BBOX_LARK_CACHE": str(tmp_path)}
    code = (
        "import dataclasses\nfrom bbox_lark import _classes\nfrom bbox_lark.syntax.nodes import Field\n"
        "f = Field('id', 'x', 'x', 1, 4)\n"
        "assert dataclasses.replace(f, key='span').key == 'span' and f == Field('id', 'x', 'x', 1, 4)\n"
        "assert 'exec' not in vars(dataclasses)\n"
        "print(_classes._new)\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        for _ in range(2)
    ]
    assert [run.stdout.strip() for run in runs] == ["True", "False"], [run.stderr for run in runs]
    (cache,) = tmp_path.glob("bbox-lark-classes-*")
    cache.chmod(0o666)
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert again.stdout.strip() == "True", again.stderr
