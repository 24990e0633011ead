"""The opt-in compiled build: ``BBOX_LARK_COMPILE=1 pip install .`` compiles the modules on
``check``'s line path with mypyc (docs/design.md, "Core v3: compiled where it pays").

Everything else about the package is in ``pyproject.toml``. Without the switch (the default)
this file adds nothing and the install is pure Python. With it, the modules in
:data:`COMPILED` become C extensions; mypyc comes with mypy, which the build backend
(``tools/backend/compile_backend.py``) asks for only when the switch is on. If mypyc cannot be imported
anyway (``--no-build-isolation`` in an environment without mypy), the install falls back to
pure Python and says so. Not for editable installs: the compiled modules need their shared
runtime library installed beside them.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup

#: The modules ``check`` spends its time in, per line (a profile of ``check`` on real logs).
#: The rest (the CLI, converters, reports, the analytics) stays interpreted: compiling them
#: would not pay. Left out on purpose (docs/design.md, "Core v3: compiled where it pays"):
#: ``ast`` (as native classes the frozen nodes are made ~35% slower: the ``__init__`` that
#: ``dataclasses`` writes stays interpreted and sets each field through a checked native
#: descriptor), ``checks/base`` (every rule class is registered by a class decorator, which
#: makes it a plain Python class, and a plain class cannot subclass a native ``Rule``) and
#: ``checks/source`` (its example holds a lone surrogate, which mypyc cannot compile).
COMPILED = [
    "bbox_lark/syntax/values.py",
    "bbox_lark/syntax/source.py",
    "bbox_lark/syntax/scan.py",
    "bbox_lark/syntax/shape.py",
    "bbox_lark/syntax/parser.py",
    "bbox_lark/syntax/record.py",
    "bbox_lark/syntax/header.py",
    "bbox_lark/syntax/correlate.py",
    "bbox_lark/secrets/scanner.py",
    "bbox_lark/api.py",
    "bbox_lark/checks/__init__.py",
    "bbox_lark/checks/blobs.py",
    "bbox_lark/checks/comments.py",
    "bbox_lark/checks/correlation.py",
    "bbox_lark/checks/fields.py",
    "bbox_lark/checks/header.py",
    "bbox_lark/checks/lines.py",
    "bbox_lark/checks/redactions.py",
    "bbox_lark/checks/secrets.py",
    "bbox_lark/checks/session.py",
    "bbox_lark/checks/suppressions.py",
]


def compiled_modules() -> list[object]:
    """The C extensions to build: none unless ``BBOX_LARK_COMPILE=1``."""
    if os.environ.get("BBOX_LARK_COMPILE", "") != "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("BBOX_LARK_COMPILE=1 but mypyc (mypy) is not importable: building pure Python", file=sys.stderr)
        return []
    # Imports outside the compiled modules are followed for their types, their errors not
    # reported: the build environment has mypyc and the compiled modules' imports only.
    return list(mypycify(["--follow-imports=silent", *COMPILED], opt_level="3"))


setup(ext_modules=compiled_modules())
