"""The package's layers, read from its imports: import circles, arrows that run back up, and
modules over the size limit.

Every ``import`` and ``from ... import`` of ``bbox_lark`` is read with :mod:`ast`, at module
level and inside functions alike (a function-local import is still an arrow: it only hides
it from a reader). ``TYPE_CHECKING`` blocks are left out: they never run.

The layer order is data (:data:`LAYERS`), from ``shared/notes/architecture.md``: each stage
may import only the stages at or below its own. Usage::

    python tools/layers.py            # the report
    python tools/layers.py --json     # the same as JSON (the tests read it)
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bbox_lark"

#: Lines above which a module is reported as too long.
MAX_LINES = 600
#: Lines above which a function (or method) is reported as too long.
MAX_FUNCTION_LINES = 80

#: The subpackages (one per stage, docs/design.md "Layout") and the top-level modules each may
#: import. A top-level module (``api``, ``errors``, ``_classes``, ``dask``, ``testing``) is named
#: as itself. Every subpackage may import itself.
PACKAGE_IMPORTS: dict[str, frozenset[str]] = {
    "syntax": frozenset({"_classes", "errors"}),
    "files": frozenset({"_classes", "errors", "syntax"}),
    "secrets": frozenset({"_classes", "errors", "syntax", "files"}),
    "checks": frozenset({"_classes", "errors", "syntax", "files", "secrets", "api"}),
    "write": frozenset({"_classes", "errors", "syntax", "files", "secrets"}),
    "fix": frozenset({"_classes", "errors", "syntax", "files", "secrets", "checks", "api"}),
    "convert": frozenset({"_classes", "errors", "syntax", "files", "secrets", "checks", "api"}),
    "numbers": frozenset({"_classes", "errors", "syntax", "files", "secrets", "checks", "convert", "api"}),
    "report": frozenset(
        {"_classes", "errors", "syntax", "files", "secrets", "checks", "convert", "numbers", "api"}
    ),
    "cli": frozenset(
        {"_classes", "errors", "syntax", "files", "secrets", "checks", "convert", "numbers", "report"}
        | {"fix", "write", "api"}
    ),
}

#: Arrows between subpackages that the table above does not allow, each with its reason: a
#: module (or every module under a name) and what it may import. The list only shrinks
#: (``tests/test_layers.py``).
PACKAGE_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("syntax.text", "files.blobs"): "text_of reads a blob's content when a line points to one",
    ("files.config", "checks"): "a configuration's select/ignore codes are checked against the registry",
    ("files.discover", "convert"): "discovery sniffs a file's format to count each session once",
    (
        "files.discover",
        "convert.atif.lines",
    ): "an ATIF continuation is counted in the trajectory that names it",
    ("checks.usage", "numbers.usage"): "W027/W028 read a line's numbers by the rules stats counts with",
    ("convert", "numbers.usage"): "a converter writes a response's usage as stats counts it (§13)",
    ("convert", "numbers.session"): "ATIF final_metrics and OTLP session spans carry the session's totals",
    ("convert", "numbers.outcomes"): "an OTLP span's status is its call's outcome",
    ("convert", "numbers.prices"): "an OTLP span carries the estimated cost",
}


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _excepted(module: str, target: str) -> bool:
    return any(_under(module, a) and _under(target, b) for a, b in PACKAGE_EXCEPTIONS)


def _used(graph: dict[str, set[str]], source: str, target: str) -> bool:
    """Whether some import in ``graph`` is what the exception (source, target) allows."""
    return any(_under(m, source) and any(_under(t, target) for t in ts) for m, ts in graph.items())


#: The stages, lowest first; a module may import from its own stage and the ones below.
#: A module is placed by its longest matching name (``convert.base`` before ``convert``).
#: The nodes (``ast``) are the lowest stage above the foundation: everything that reads, prints
#: or builds lines imports them, and they import none of it (the "Core v3" issue). The
#: printer and the builders from values (``build``, the public functions, and ``transform``,
#: their machinery, which prints a node's line and reads it back as a check) sit above the
#: parser.
#: ``lightbox`` (the Lightbox format's own rules: hash chain, fields) sits below the converter
#: that uses it; ``render``/``check_output`` present what the workflows return, and
#: ``docsgen`` writes pages from everything below it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundation",
        (
            "_classes",
            "_moved",
            "_renamed",
            "errors",
            "syntax",
            "syntax.grammar",
            "syntax.values",
            "syntax.frozen",
            "syntax.deferred",
            "cli.ansi",
            "files",
            "files.globs",
            "files.atomic",
            "files.blobs",
            "secrets",
            "secrets.decoded",
            "secrets.patterns",
            "secrets.scanner",
        ),
    ),
    ("nodes", ("syntax.nodes",)),
    ("source", ("syntax.source", "files.inputs")),
    (
        "parser",
        ("syntax.parser", "syntax.header", "syntax.scan", "syntax.shape", "syntax.text", "syntax.record"),
    ),
    ("printer", ("syntax.printer", "syntax.transform", "syntax.build")),
    (
        "rules",
        (
            "checks",
            "syntax.correlate",
            "numbers.session",
            "numbers.usage",
            "numbers.prices",
            "numbers.outcomes",
            "numbers.review",
            "secrets.redaction",
            "syntax.jsonout",
            "files.config",
            "files.writepolicy",
            "syntax.pygments_lexer",
            "convert.lightbox.chain",
            "convert.lightbox.session",
            "convert.redact",
            "numbers",
        ),
    ),
    (
        "tools",
        (
            "fix",
            "convert",
            "numbers.stats",
            "api",
            "files.discover",
            "write",
            "write.writer",
            "write.values",
            "testing",
        ),
    ),
    (
        "workflows",
        (
            "checks.workflow",
            "fix.rewrite",
            "fix.runs",
            "convert.redact_run",
            "convert.files",
            "convert.many",
            "convert.asbbox",
            "checks.parallel",
            "numbers.stats_run",
            "numbers.tables",
            "numbers.csvtable",
            "numbers.export",
            "numbers.query",
            "dask",
            "convert.otlp.send",
        ),
    ),
    ("render", ("cli.render", "cli.check_output", "cli.console", "report")),
    ("docs", ("cli.docsgen",)),
    ("cli", ("cli", "cli.commands", "cli.options", "__init__", "__main__")),
)

#: The core: the nodes and what reads, prints and builds lines. It has no import circle, not
#: even through a function-local import, and no function-local import of the package at all
#: (one would only hide an arrow; the "Core v3" issue took the last ones out).
CORE: tuple[str, ...] = (
    "syntax.nodes",
    "syntax.build",
    "syntax.header",
    "syntax.parser",
    "syntax.printer",
    "syntax.scan",
    "syntax.shape",
    "syntax.source",
    "syntax.text",
    "syntax.transform",
)

#: Calls that register something in a registry when a module is imported (a check rule, a
#: check's description, a fixer, a format).
REGISTRARS = frozenset({"rule", "describe", "register"})


def module_name(path: Path) -> str:
    """``bbox_lark/convert/atif.py`` -> ``convert.atif``; a package's ``__init__`` is the package."""
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def stage_name(module: str) -> str:
    """The name of ``module``'s stage, or ``unplaced`` (a module :data:`LAYERS` does not name
    counts as the top stage until it is placed)."""
    index = layer_of(module)
    return LAYERS[index][0] if index < len(LAYERS) else "unplaced"


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of ``module``'s stage (the longest matching prefix)."""
    best, best_len = len(LAYERS), -1
    for index, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best_len:
                best, best_len = index, len(name)
    return best


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterable[tuple[str, bool]]:
    """(imported module, at module level) for each import of the package in ``tree``."""
    package_parts = module.split(".") if is_package else module.split(".")[:-1]

    def visit(node: ast.AST, top: bool) -> Iterable[tuple[str, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    yield from visit(other, top)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("bbox_lark."):
                        yield alias.name.removeprefix("bbox_lark."), top
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package_parts[: len(package_parts) - (child.level - 1)]
                    name = ".".join([*base, *([child.module] if child.module else [])])
                elif child.module == "bbox_lark":
                    name = ""
                elif child.module and child.module.startswith("bbox_lark."):
                    name = child.module.removeprefix("bbox_lark.")
                else:
                    continue
                for alias in child.names:
                    # `from bbox_lark.convert import atif` imports a module; `import x` from a
                    # module imports that module.
                    sub = f"{name}.{alias.name}" if name else alias.name
                    yield (sub if sub in MODULES else name), top
            else:
                inner = top and not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                yield from visit(child, inner)

    yield from visit(tree, True)


MODULES: set[str] = {module_name(p) for p in PACKAGE.rglob("*.py")}


def _registers(tree: ast.Module) -> bool:
    """True when a module calls a registrar (:data:`REGISTRARS`) at import time: as a
    decorator or a statement of its own at module level."""

    def called(node: ast.expr) -> bool:
        target = node.func if isinstance(node, ast.Call) else node
        return isinstance(target, ast.Name) and target.id in REGISTRARS

    for statement in tree.body:
        if isinstance(statement, ast.Expr) and called(statement.value):
            return True
        if isinstance(statement, ast.ClassDef | ast.FunctionDef) and any(
            called(d) for d in statement.decorator_list
        ):
            return True
    return False


REGISTERING: set[str] = set()


#: Each module's function-local imports of the package (filled by :func:`import_graph`).
LOCAL_IMPORTS: dict[str, set[str]] = {}


def import_graph() -> tuple[dict[str, set[str]], int, int, dict[str, int]]:
    """The graph (module -> modules it imports, function-local imports included), the counts
    of module-level and function-local imports, and each module's line count. The
    function-local imports are also kept by module in :data:`LOCAL_IMPORTS`."""
    graph: dict[str, set[str]] = {}
    top_level = local = 0
    sizes: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        text = path.read_text(encoding="utf-8")
        sizes[module] = len(text.splitlines())
        edges = graph.setdefault(module, set())
        tree = ast.parse(text)
        if _registers(tree):
            REGISTERING.add(module)
        for target, top in _imports(tree, module, path.name == "__init__.py"):
            if not target or target == module or target not in MODULES:
                continue
            edges.add(target)
            if top:
                top_level += 1
            else:
                local += 1
                LOCAL_IMPORTS.setdefault(module, set()).add(target)
    return graph, top_level, local, sizes


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def strong(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                strong(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            strong(node)
    return sorted(found)


def reachable(graph: dict[str, set[str]], roots: Iterable[str]) -> set[str]:
    """``roots`` and every module they import, directly or not."""
    seen: set[str] = set()
    todo = [root for root in roots if root in graph]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def core_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles among the core (:data:`CORE`) and everything it imports."""
    below = reachable(graph, CORE)
    return circles({module: graph[module] & below for module in below})


def upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The arrows from a module to one in a higher stage."""
    return sorted(
        (source, target)
        for source, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(source)
    )


def private_imports() -> list[str]:
    """Imports of another module's private names (``from bbox_lark.syntax.parser import _attach``):
    what one module needs from another is public there."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("bbox_lark"):
                continue
            source = (node.module or "").removeprefix("bbox_lark").removeprefix(".")
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and source != module:
                    found.append(f"{module} imports {source}.{alias.name}")
    return found


def side_effects(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports of a registering module from outside its package: importing it for a helper
    also registers its rules (the registry's own package loads them on purpose)."""
    return sorted(
        (source, target)
        for source, targets in graph.items()
        for target in targets
        if target in REGISTERING and source.split(".")[0] != target.split(".")[0]
    )


def package_of(module: str) -> str:
    """The subpackage ``module`` belongs to, or the module itself when it is top-level."""
    top = module.split(".", 1)[0]
    return top if top in PACKAGE_IMPORTS else module


def package_arrows(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports from one subpackage into another that :data:`PACKAGE_IMPORTS` does not allow
    and :data:`PACKAGE_EXCEPTIONS` does not list."""
    found = []
    for module, targets in sorted(graph.items()):
        source = package_of(module)
        allowed = PACKAGE_IMPORTS.get(source)
        if allowed is None:
            continue  # a top-level module: its stage (LAYERS) decides
        for target in sorted(targets):
            into = package_of(target)
            # The private helpers at the top (_classes, _renamed) are below every stage.
            if into == source or into in allowed or into.startswith("_") or _excepted(module, target):
                continue
            found.append((module, target))
    return found


def long_functions() -> dict[str, int]:
    """``module:function`` -> lines, for every function over :data:`MAX_FUNCTION_LINES`."""
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found[f"{module_name(path)}:{node.name}"] = lines
    return dict(sorted(found.items(), key=lambda item: -item[1]))


def report() -> dict[str, object]:
    graph, top_level, local, sizes = import_graph()
    return {
        "modules": len(graph),
        "imports_module_level": top_level,
        "imports_function_local": local,
        "circles": circles(graph),
        "core_circles": core_circles(graph),
        "core_local_imports": sorted(
            f"{module} -> {target}" for module in CORE for target in sorted(LOCAL_IMPORTS.get(module, ()))
        ),
        "upward": [list(arrow) for arrow in upward(graph)],
        "side_effects": [list(arrow) for arrow in side_effects(graph)],
        "private_imports": private_imports(),
        "long_modules": {m: n for m, n in sorted(sizes.items(), key=lambda i: -i[1]) if n > MAX_LINES},
        "long_functions": long_functions(),
        "package_arrows": [list(arrow) for arrow in package_arrows(graph)],
        "unused_package_exceptions": sorted(
            f"{a} -> {b}" for a, b in PACKAGE_EXCEPTIONS if not _used(graph, a, b)
        ),
        "unplaced": sorted(m for m in graph if layer_of(m) == len(LAYERS)),
    }


def main(argv: list[str]) -> int:
    found = report()
    if "--json" in argv:
        print(json.dumps(found, indent=2))
        return 0
    print(
        f"{found['modules']} modules; {found['imports_module_level']} module-level and"
        f" {found['imports_function_local']} function-local imports of the package"
    )
    circles_found = found["circles"]
    assert isinstance(circles_found, list)
    print(f"{len(circles_found)} import circle(s)")
    for members in circles_found:
        print(f"  circle of {len(members)}: {', '.join(members)}")
    core = found["core_local_imports"]
    assert isinstance(core, list)
    print(f"{len(core)} function-local import(s) in the core ({', '.join(CORE)})")
    for line in core:
        print(f"  {line}")
    arrows = found["upward"]
    assert isinstance(arrows, list)
    print(f"{len(arrows)} upward arrow(s) (stage order: {' -> '.join(name for name, _ in LAYERS)})")
    for source, target in arrows:
        print(f"  {source} ({stage_name(source)}) -> {target} ({stage_name(target)})")
    effects = found["side_effects"]
    assert isinstance(effects, list)
    print(f"{len(effects)} import(s) that register something as a side effect")
    for source, target in effects:
        print(f"  {source} -> {target}")
    private = found["private_imports"]
    assert isinstance(private, list)
    print(f"{len(private)} import(s) of another module's private names")
    for line in private:
        print(f"  {line}")
    long_modules = found["long_modules"]
    assert isinstance(long_modules, dict)
    arrows = found["package_arrows"]
    assert isinstance(arrows, list)
    print(f"{len(arrows)} import(s) across subpackages that PACKAGE_IMPORTS does not allow")
    for source, target in arrows:
        print(f"  {source} -> {target}")
    functions = found["long_functions"]
    assert isinstance(functions, dict)
    print(f"{len(functions)} function(s) over {MAX_FUNCTION_LINES} lines")
    for function, lines in functions.items():
        print(f"  {function}: {lines}")
    print(f"{len(long_modules)} module(s) over {MAX_LINES} lines")
    for module, lines in long_modules.items():
        print(f"  {module}: {lines}")
    unplaced = found["unplaced"]
    assert isinstance(unplaced, list)
    if unplaced:
        print(f"not placed in a stage (add them to LAYERS): {', '.join(unplaced)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
