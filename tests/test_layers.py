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


#: Modules over the size limit (``tools/layers.py`` ``MAX_LINES``, 600 lines), each with why it
#: stays for now (docs/design.md, "Layout by stage"). The list only shrinks.
KNOWN_LONG = {
    "write.writer": (
        "one class: the values it prepares read its blob store, scanner, clock and open calls;"
        " no seam without a mixin, and mutation testing of it is next (issue 32)"
    ),
    "report.page": "the page's sections, streamed in order",
    "numbers.session": "the session counter's one pass over the events",
    "numbers.stats": (
        "the stats record, its streaming counter and the sum over files share one set of count"
        " types; the seam is record+JSON / counter / combine, not done this turn"
    ),
}

#: Functions over ``MAX_FUNCTION_LINES`` (80), each with why it stays for now. Only shrinks.
KNOWN_LONG_FUNCTIONS = {
    "syntax.shape:event_node": "one dispatch over every line kind on the parse path (speed)",
    "convert.atif.reader:_import_step": "one ATIF step's fields in order",
    "report.page:_review": "the review section's parts in order",
    "convert.lightbox.chain:verify_lines": "the chain's checks in one pass",
    "write.writer:__init__": "the Writer's options, each checked at the call",
    "convert.lightbox.reader:read": "one Lightbox event's fields in order",
    "syntax.transform:build_result": "every result kind's values checked",
    "report.survey:survey": "the first pass over a session's lines",
    "convert.lightbox.reader:_build": "one Lightbox record into nodes",
    "convert.atif.jsontext:pieces": "the JSON encoder, one recursive function: a call per value is its speed",
}


def test_no_new_function_over_the_size_limit() -> None:
    found = set(REPORT["long_functions"])
    new = sorted(found - set(KNOWN_LONG_FUNCTIONS))
    assert not new, f"functions over {layers.MAX_FUNCTION_LINES} lines: {new}"
    gone = sorted(set(KNOWN_LONG_FUNCTIONS) - found)
    assert not gone, f"no longer over the limit: take them off KNOWN_LONG_FUNCTIONS: {gone}"


def test_imports_across_subpackages_go_the_allowed_way() -> None:
    assert REPORT["package_arrows"] == [], (
        "an import across subpackages that tools/layers.py PACKAGE_IMPORTS does not allow"
        f" (move the code, or argue for an exception): {REPORT['package_arrows']}"
    )
    assert REPORT["unused_package_exceptions"] == [], "take these off PACKAGE_EXCEPTIONS"


def test_the_package_check_can_fail() -> None:
    graph = {"syntax.scan": {"checks.base"}, "checks.base": {"syntax.scan"}}
    assert layers.package_arrows(graph) == [("syntax.scan", "checks.base")]


def test_no_new_module_over_the_size_limit() -> None:
    found = set(REPORT["long_modules"])
    new = sorted(found - set(KNOWN_LONG))
    assert not new, f"modules over {layers.MAX_LINES} lines: {new}"
    gone = sorted(set(KNOWN_LONG) - found)
    assert not gone, f"no longer over the limit: take them off KNOWN_LONG: {gone}"


def test_every_subpackage_says_what_it_may_import() -> None:
    import ast as python_ast

    for name in layers.PACKAGE_IMPORTS:
        init = layers.PACKAGE / name / "__init__.py"
        doc = python_ast.get_docstring(python_ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "May import" in doc or "may import" in doc, f"bbox_lark/{name}/__init__.py"


# -- each command, one library function (docs/design.md, "Layout by stage") --------------------


def _command_rows() -> dict[str, tuple[list[str], str]]:
    """The table of docs/design.md: command -> (the library functions named, the result)."""
    import re

    text = (layers.PACKAGE.parent / "docs" / "design.md").read_text(encoding="utf-8")
    table = text.split("<!-- commands: begin -->")[1].split("<!-- commands: end -->")[0]
    rows: dict[str, tuple[list[str], str]] = {}
    for line in table.strip().splitlines()[2:]:
        command, functions, result = (cell.strip() for cell in line.strip("|").split("|"))
        rows[command.strip("`")] = (re.findall(r"`(bbox_lark\.[\w.]+)`", functions), result.strip("`"))
    return rows


def _commands() -> dict[str, object]:
    """Every command of the CLI (``lightbox verify`` for a subcommand) and its function."""
    import typer.main

    from bbox_lark.cli.commands import app

    found: dict[str, object] = {}
    root = typer.main.get_command(app)
    context = root.context_class(root)

    def walk(group: object, prefix: str) -> None:
        for name in group.list_commands(context):  # type: ignore[attr-defined]
            command = group.get_command(context, name)  # type: ignore[attr-defined]
            if hasattr(command, "list_commands"):
                walk(command, f"{prefix}{name} ")
            else:
                found[prefix + name] = command.callback

    walk(root, "")
    return found


def test_every_command_names_its_library_function_in_the_design_table() -> None:
    import importlib
    import inspect
    import re

    rows, commands = _command_rows(), _commands()
    assert sorted(rows) == sorted(commands), "docs/design.md's command table and the CLI differ"
    for command, (functions, result) in rows.items():
        source = inspect.getsource(commands[command])  # type: ignore[arg-type]
        assert functions, command
        for dotted in functions:
            module, _, name = dotted.rpartition(".")
            assert callable(getattr(importlib.import_module(module), name)), dotted
        assert any(dotted.rpartition(".")[2] in source for dotted in functions), (
            f"{command}: calls none of {functions}"
        )
        first = functions[0].rpartition(".")
        returns = str(
            inspect.signature(getattr(importlib.import_module(first[0]), first[2])).return_annotation
        )
        named = re.search(rf"(?<![\w.]){re.escape(result)}(?!\w)", returns)
        assert named, f"{command}: {functions[0]} returns {returns}, the table says {result}"
