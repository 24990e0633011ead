"""Write the public names' ``TYPE_CHECKING`` imports and ``__all__`` in ``bbox_lark/__init__.py``
from its one table, ``_PUBLIC`` (issue "One way to do each thing": the public names listed once).

    .venv/bin/python tools/gen_public.py            # rewrite the generated block
    .venv/bin/python tools/gen_public.py --check    # exit 1 when it is stale

The table is read with :mod:`ast` (nothing is imported); the block between the two marker
comments is replaced. ``tests/test_api_surface.py`` runs the check.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

INIT = Path(__file__).resolve().parent.parent / "bbox_lark" / "__init__.py"
BEGIN = "# -- written by tools/gen_public.py from _PUBLIC; do not edit by hand --\n"
END = "# -- end of what tools/gen_public.py writes --\n"


def public_table(source: str) -> dict[str, str]:
    """``_PUBLIC`` as written in ``source``."""
    for node in ast.parse(source).body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "_PUBLIC"
        ):
            value = ast.literal_eval(node.value) if node.value is not None else None
            assert isinstance(value, dict)
            return value
    raise SystemExit(f"{INIT}: no _PUBLIC table")


def _isort_key(entry: tuple[str, str, str]) -> tuple[str, int, str]:
    """ruff's isort order (``order-by-type``): by module, then constants, classes, the rest."""
    module, attribute, _ = entry
    kind = 0 if attribute.isupper() else 1 if attribute[:1].isupper() else 2
    return module, kind, attribute


def block(table: dict[str, str]) -> str:
    """The generated text: the imports mypy and editors see, and ``__all__``."""
    lines = ["if TYPE_CHECKING:  # what mypy and editors see; at run time each name loads on first use\n"]
    imports: list[tuple[str, str, str]] = []
    for name, target in table.items():
        module, _, attribute = target.partition(":")
        if not attribute:  # a module: imported from its package
            module, _, attribute = module.rpartition(".")
        imports.append((module, attribute, name))
    # One name per line, `x as x` marking the re-export, in the order ruff's isort keeps.
    for module, attribute, name in sorted(imports, key=_isort_key):
        lines.append(f"    from {module} import {attribute} as {name}\n")
    names = sorted([*table, "__version__"])
    lines.append("\n__all__ = [\n" + "".join(f'    "{name}",\n' for name in names) + "]\n")
    return "".join(lines)


def render(source: str) -> str:
    """``source`` with its generated block written afresh."""
    start, end = source.index(BEGIN) + len(BEGIN), source.index(END)
    return source[:start] + block(public_table(source)) + source[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when stale")
    args = parser.parse_args(argv)
    source = INIT.read_text(encoding="utf-8")
    wanted = render(source)
    if args.check:
        if wanted != source:
            print(f"{INIT} is stale; run tools/gen_public.py", file=sys.stderr)
            return 1
        return 0
    if wanted != source:
        INIT.write_text(wanted, encoding="utf-8")
        print(f"wrote {INIT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
