"""Which tests guard a module: the tests that run its code, read from coverage contexts.

Grepping the tests for a module's or a check's name misses most of its guards: a check is
guarded above all by the corpus tests (``tests/test_corpus.py`` runs every file of
``corpus/`` through the checker and compares with a snapshot), which never name it. So the
map is measured instead: the suite runs once under ``coverage`` with one dynamic context per
test function (``dynamic_context = test_function``), and a test guards a module when it
executed at least one line of it. Usage::

    python tools/guards.py build                   # run the suite under coverage (minutes), write the map
    python tools/guards.py build -- tests/test_x.py  # only these tests (pytest arguments after --)
    python tools/guards.py bbox_lark/checks/lines.py   # the test files that guard it, most lines first
    python tools/guards.py bbox_lark.checks.lines      # a dotted name works too; a folder means its modules
    python tools/guards.py --functions bbox_lark/convert/jsonl   # test functions (pytest node ids)

The map is ``.guards.json`` at the repository root (not committed: it goes stale as tests
change; ``build`` again after adding tests). It records the commit it was built at, and a
lookup says when that is not the current one.

What it cannot see: code run in a child process (the CLI tests that start ``bbox-lark``)
and code run at import time (module bodies, ``describe(...)`` calls), which runs once, under
whichever test imported the module first. Neither matters for mutation testing, where the
map is used: a child process imports the unmutated package, and an import-time line is
guarded by every test of the module.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / ".guards.json"
PACKAGE = "bbox_lark"

_RCFILE = """\
[run]
source = {package}
dynamic_context = test_function
data_file = {data}
"""


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "unknown"


def _test_file(context: str) -> str | None:
    """``test_corpus.test_valid_corpus`` (coverage's label: the test module's import name and
    the function's qualified name) as the path of its test file, ``tests/test_corpus.py``."""
    head = context.split(".", 1)[0]
    if not head.startswith("test_"):
        return None
    return f"tests/{head}.py"


def _node_id(context: str) -> str | None:
    """The same label as a pytest node id (every parametrisation of the function)."""
    path = _test_file(context)
    if path is None:
        return None
    return path + "::" + context.split(".", 1)[1].replace(".", "::")


def build(pytest_args: list[str]) -> int:
    """Run the tests under coverage with one context per test; write :data:`MAP`."""
    try:
        from coverage import CoverageData
    except ImportError:
        print("guards: needs coverage (pip install -e '.[dev]')", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bbox-guards-") as tmp:
        data_file = Path(tmp) / ".coverage"
        rcfile = Path(tmp) / "coveragerc"
        rcfile.write_text(_RCFILE.format(package=PACKAGE, data=data_file), encoding="utf-8")
        command = [sys.executable, "-m", "coverage", "run", f"--rcfile={rcfile}", "-m", "pytest", "-q"]
        command += ["-p", "no:cacheprovider", *(pytest_args or ["tests"])]
        code = subprocess.run(command, cwd=ROOT, check=False).returncode
        if code not in (0, 1):  # 1: some test failed; the map of the others still holds
            print(f"guards: pytest exited {code}; no map written", file=sys.stderr)
            return code
        data = CoverageData(basename=str(data_file))
        data.read()
        modules: dict[str, dict[str, int]] = {}
        for measured in data.measured_files():
            relative = Path(measured).resolve().relative_to(ROOT).as_posix()
            lines_by_test: Counter[str] = Counter()
            for contexts in data.contexts_by_lineno(measured).values():
                for context in contexts:
                    node = _node_id(context)
                    if node is not None:
                        lines_by_test[node] += 1
            modules[relative] = dict(lines_by_test.most_common())
    MAP.write_text(json.dumps({"commit": _commit(), "modules": modules}, indent=1), encoding="utf-8")
    print(f"guards: {len(modules)} modules mapped into {MAP.name}", file=sys.stderr)
    return 0


def resolve(name: str) -> list[str]:
    """A module given as a path, a dotted name or a folder: its ``.py`` files, relative to the
    repository root."""
    path = Path(name)
    if not path.exists() and not name.endswith(".py"):
        dotted = ROOT / Path(*name.split("."))
        path = dotted if dotted.is_dir() else dotted.with_suffix(".py")
    path = path if path.is_absolute() else (Path.cwd() / path)
    if path.is_dir():
        files = sorted(path.rglob("*.py"))
    elif path.is_file():
        files = [path]
    else:
        raise SystemExit(f"guards: no module {name!r}")
    return [file.resolve().relative_to(ROOT).as_posix() for file in files]


def load() -> dict[str, dict[str, int]]:
    if not MAP.is_file():
        raise SystemExit("guards: no map yet; run `python tools/guards.py build` first (a few minutes)")
    stored = json.loads(MAP.read_text(encoding="utf-8"))
    if stored["commit"] != _commit():
        print(f"guards: the map was built at {stored['commit']}, not at HEAD; build again", file=sys.stderr)
    modules: dict[str, dict[str, int]] = stored["modules"]
    return modules


def guards(names: list[str], functions: bool = False) -> list[str]:
    """The tests that guard the modules ``names``: test files (or node ids with ``functions``),
    the one that runs the most of their lines first."""
    modules = load()
    lines: dict[str, int] = defaultdict(int)
    for name in names:
        for module in resolve(name):
            for node, count in modules.get(module, {}).items():
                key = node if functions else node.split("::", 1)[0]
                lines[key] += count
    return sorted(lines, key=lambda key: (-lines[key], key))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["build"]:
        rest = argv[1:]
        return build(rest[1:] if rest[:1] == ["--"] else rest)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("module", nargs="+", help="a module: bbox_lark/x.py, bbox_lark.x or a folder")
    parser.add_argument("--functions", action="store_true", help="test functions (node ids), not files")
    args = parser.parse_args(argv)
    found = guards(args.module, args.functions)
    if not found:
        print("guards: no test runs these modules", file=sys.stderr)
        return 1
    print("\n".join(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
