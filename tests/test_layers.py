"""The package's layers (``tools/layers.py``): no new import circle, no new arrow that runs
back up, no new import that registers something as a side effect.

Each allow-list below names what is known and only shrinks: a change that removes an entry
deletes it here; a change that needs a new one is a design change to argue for, not to add.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bbox_layers", ROOT / "tools" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bbox_layers"] = module
    spec.loader.exec_module(module)
    return module


layers = load_layers()
REPORT = layers.report()

#: Known circles, each a set of modules (a known circle may lose members, never gain one).
#: None left: the core circle (the nodes' entry points that built, printed and parsed through
#: function-local imports) went when the nodes became a leaf (the "Core v3" issue).
KNOWN_CIRCLES: list[set[str]] = []

#: Known upward arrows. None left: ``ast`` no longer reaches up into the builders, the
#: printer and the parser (Core v3).
KNOWN_UPWARD: set[tuple[str, str]] = set()

#: Function-local imports of the package allowed in the core, each with its reason. None:
#: in the core a function-local import could only hide an arrow.
KNOWN_CORE_LOCAL_IMPORTS: dict[str, str] = {}

#: None left: ``check --jobs`` (``parallel``) finds what it needs of the rules in
#: ``checks.base``, which registers nothing.
KNOWN_SIDE_EFFECTS: set[tuple[str, str]] = set()


def test_no_new_import_circle() -> None:
    for members in REPORT["circles"]:
        assert any(set(members) <= known for known in KNOWN_CIRCLES), f"a new import circle: {members}"


def test_the_core_has_no_import_circle() -> None:
    """No circle among the core and every module it imports, function-local imports
    included (``tools/layers.py`` reads them as arrows)."""
    assert REPORT["core_circles"] == [], f"import circles through the core: {REPORT['core_circles']}"


def test_the_core_has_no_function_local_import() -> None:
    found = set(REPORT["core_local_imports"])
    assert found <= set(KNOWN_CORE_LOCAL_IMPORTS), (
        f"function-local imports in the core (move them to module level, or move the function"
        f" up to the module that owns it): {sorted(found - set(KNOWN_CORE_LOCAL_IMPORTS))}"
    )


def test_the_tool_finds_a_circle_through_a_function_local_import() -> None:
    """The circle test can fail: a function-local import that closes a circle is found."""
    import ast

    nodes, parser = "syntax.nodes", "syntax.parser"
    graph: dict[str, set[str]] = {nodes: set(), parser: {nodes}, "syntax.grammar": set()}
    tree = ast.parse("def raw():\n    from bbox_lark.syntax.parser import parse_line\n")
    for target, top in layers._imports(tree, nodes, False):
        assert not top
        graph[nodes].add(target)
    assert layers.circles(graph) == [[nodes, parser]]
    assert layers.reachable(graph, [parser]) == {nodes, parser}


def test_no_new_upward_arrow() -> None:
    found = {tuple(arrow) for arrow in REPORT["upward"]}
    assert found <= KNOWN_UPWARD, f"arrows that run back up: {sorted(found - KNOWN_UPWARD)}"


def test_no_new_import_with_side_effects() -> None:
    found = {tuple(arrow) for arrow in REPORT["side_effects"]}
    assert found <= KNOWN_SIDE_EFFECTS, (
        f"imports that register as a side effect: {sorted(found - KNOWN_SIDE_EFFECTS)}"
    )


def test_no_module_imports_another_ones_private_names() -> None:
    assert REPORT["private_imports"] == []


def test_every_module_has_a_stage() -> None:
    assert REPORT["unplaced"] == [], "place these modules in tools/layers.py LAYERS"


def test_the_tool_finds_function_local_imports(tmp_path: Path) -> None:
    import ast

    tree = ast.parse(
        "def f():\n    from bbox_lark.syntax.parser import parse\nfrom bbox_lark.syntax import nodes\n"
    )
    found = sorted(layers._imports(tree, "syntax.printer", False))
    assert found == [("syntax.nodes", True), ("syntax.parser", False)]


#: Modules over the size limit (``tools/layers.py`` ``MAX_LINES``). The converters left this
#: list when each format became a package of small modules (issue 16).
KNOWN_LONG = {"cli.commands", "numbers.session"}


def test_no_new_module_over_the_size_limit() -> None:
    found = set(REPORT["long_modules"])
    assert found <= KNOWN_LONG, f"modules over {layers.MAX_LINES} lines: {sorted(found - KNOWN_LONG)}"
