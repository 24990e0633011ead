"""No segfault path (issue 21, point 4): a name imported only under ``if TYPE_CHECKING:``
is never the type of a class-level annotation (a dataclass field, a slot, a class
attribute). Such an annotation is only a string to the interpreter, but compiled code
(mypyc) reads it at run time: the pattern once compiled into a segfault. Function
annotations are fine (they are not attributes)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted((ROOT / "bbox_lark").rglob("*.py"))


_BINDINGS = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _bound_names(node: ast.AST) -> Iterator[str]:
    """The names an import or an assignment binds (an alias ``Item = Head | Line`` too)."""
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            yield from (n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        return
    assert isinstance(node, ast.Import | ast.ImportFrom)
    for alias in node.names:
        if alias.asname is not None:
            yield alias.asname
        elif isinstance(node, ast.Import):
            yield alias.name.split(".", 1)[0]
        else:
            yield alias.name


def type_checking_names(tree: ast.Module) -> set[str]:
    """The names a module binds only in an ``if TYPE_CHECKING:`` block (at any depth)."""
    guarded: set[str] = set()
    elsewhere: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for inner in node.body:
                for item in ast.walk(inner):
                    if isinstance(item, _BINDINGS):
                        guarded.update(_bound_names(item))
            for inner in node.orelse:  # the run-time branch binds them for real
                for item in ast.walk(inner):
                    if isinstance(item, _BINDINGS):
                        elsewhere.update(_bound_names(item))
    for node in tree.body:  # what the module binds at run time, outside the guard
        if isinstance(node, _BINDINGS):
            elsewhere.update(_bound_names(node))
    return guarded - elsewhere


def annotation_names(annotation: ast.expr) -> Iterator[str]:
    """Every name an annotation reads (the root of ``a.b``), strings included
    (``"Node | None"``)."""
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                inner = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                continue
            yield from annotation_names(inner)


def violations(source: str, filename: str = "<module>") -> list[str]:
    """``file:line: class.attribute: name`` for each class-level annotation that uses a
    ``TYPE_CHECKING``-only name."""
    tree = ast.parse(source, filename)
    guarded = type_checking_names(tree)
    if not guarded:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if isinstance(item, ast.AnnAssign):
                used = sorted(set(annotation_names(item.annotation)) & guarded)
                target = ast.unparse(item.target)
                found += [f"{filename}:{item.lineno}: {node.name}.{target}: {name}" for name in used]
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_class_attribute_is_typed_with_a_type_checking_only_import(path: Path) -> None:
    found = violations(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "TYPE_CHECKING-only names as attribute types (import them for real):\n" + "\n".join(
        found
    )


def test_the_guard_finds_the_pattern() -> None:
    bad = (
        "from __future__ import annotations\n"
        "from dataclasses import dataclass\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pathlib import Path\n"
        "    import collections.abc as cabc\n"
        "    Alias = int | Path\n"
        "@dataclass\n"
        "class A:\n"
        "    path: Path | None = None\n"
        "    items: 'cabc.Sequence[int]' = ()\n"
        "    ok: int = 0\n"
        "    other: Alias\n"
        "    def f(self, p: Path) -> Path:\n"
        "        return p\n"
    )
    assert violations(bad) == [
        "<module>:10: A.path: Path",
        "<module>:11: A.items: cabc",
        "<module>:13: A.other: Alias",
    ]


def test_a_name_also_imported_at_run_time_is_fine() -> None:
    good = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pathlib import Path\n"
        "else:\n"
        "    from pathlib import Path\n"
        "class A:\n"
        "    path: Path\n"
    )
    assert violations(good) == []
