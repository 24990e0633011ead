"""The documentation site (mkdocs.yml, docs/): pages stay in step with the README and the
code they describe. CI builds the site itself with ``mkdocs build --strict``."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
import yaml
from typer.testing import CliRunner

from bbox_lark.cli import app

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


def load_tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_getting_started_has_the_readme_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = code_blocks(quick_start, "sh")
    assert len(commands) == 2
    page = code_blocks((DOCS / "getting-started.md").read_text(encoding="utf-8"), "sh")
    assert page[:2] == commands


def test_every_page_in_the_nav_exists() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(nav: object) -> list[str]:
        if isinstance(nav, str):
            return [nav]
        if isinstance(nav, list):
            return [page for item in nav for page in pages(item)]
        if isinstance(nav, dict):
            return [page for value in nav.values() for page in pages(value)]
        return []

    listed = pages(config["nav"])
    # Every page, in sub-folders too (docs/formats/), is in the nav.
    assert sorted(listed) == sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert (DOCS / "grammar.html").is_file()  # linked from reference.md, generated


def test_github_actions_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = (DOCS / "integrations.md").read_text(encoding="utf-8")
    workflow = next(block for block in code_blocks(page, "yaml") if "jobs:" in block)
    steps = yaml.safe_load(workflow)["jobs"]["check"]["steps"]
    commands = [step["run"] for step in steps if step.get("run", "").startswith("bbox-lark ")]
    assert commands == ["bbox-lark check --format github logs/", "bbox-lark fmt --check logs/"]
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "s.bbox").write_text(
        "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: ci\n---\nt:read a.rs -> [ok]\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    check = runner.invoke(app, commands[0].split()[1:])
    assert check.exit_code == 0
    assert "::warning file=logs/s.bbox,line=7,col=13,title=W013" in check.output
    assert runner.invoke(app, commands[1].split()[1:]).exit_code == 1  # `->` is not canonical


def test_griffe_extension_makes_docstrings_markdown() -> None:
    pytest.importorskip("griffe")
    markdown = load_tool("griffe_rest").markdown_docstring
    text = "See :func:`parse` and :class:`~bbox_lark.syntax.nodes.Event`.\n\n>>> 1 + 1\n2\n\nAfter."
    assert (
        markdown(text)
        == "See `parse` and `bbox_lark.syntax.nodes.Event`.\n\n```pycon\n>>> 1 + 1\n2\n```\n\nAfter."
    )


def test_mkdocs_hook_unlinks_source_files_only() -> None:
    hook = load_tool("mkdocs_hooks")
    page = SimpleNamespace(file=SimpleNamespace(src_uri="compact.md"))
    config = {"docs_dir": str(DOCS)}
    text = (
        "[`bbox_lark/numbers/stats.py`](../bbox_lark/numbers/stats.py), [fmt](fmt.md), [web](https://x.org/a),"
        " [gone](../nowhere.py), [rules](checks.md#w013-ascii-arrow)"
    )
    assert hook.on_page_markdown(text, page, config, None) == (
        "`bbox_lark/numbers/stats.py`, [fmt](fmt.md), [web](https://x.org/a), [gone](../nowhere.py),"
        " [rules](checks.md#w013-ascii-arrow)"
    )
