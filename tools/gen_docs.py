"""Regenerate the generated documentation in ``docs/``: ``checks.md`` (from the check
registry) and ``grammar.html`` (railroad diagrams of ``grammar/bbox.lark``).

    .venv/bin/python tools/gen_docs.py            # write docs/
    .venv/bin/python tools/gen_docs.py --check    # exit 1 when docs/ is stale

``tests/test_docs.py`` fails when the committed files differ from what this writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bbox_lark.cli.docsgen import stale_files, write_docs

DOCS = Path(__file__).resolve().parent.parent / "docs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DOCS, help="folder to write into (default: docs/)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when stale")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files(args.out)
        for path, why in stale:
            print(f"{path} is {why}; run tools/gen_docs.py", file=sys.stderr)
        return 1 if stale else 0
    for path in write_docs(args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
