"""The opt-in compiled build (``setup.py``, ``BBOX_LARK_COMPILE=1``): what can be checked
without compiling. ``.ci/run`` builds it and runs the tests of the compiled modules against it; these catch
the commonest ways to break it early, in the pure-Python run (docs/design.md, "Core v3:
compiled where it pays")."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def compiled_paths() -> list[str]:
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "COMPILED" for target in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return [str(path) for path in value]
    raise AssertionError("setup.py has no COMPILED list")


def test_every_compiled_module_exists() -> None:
    paths = compiled_paths()
    assert paths and len(paths) == len(set(paths))
    for path in paths:
        assert (ROOT / path).is_file(), path
        assert path.startswith("bbox_lark/") and path.endswith(".py")


def test_no_lone_surrogate_in_a_compiled_modules_string_literals() -> None:
    # mypyc cannot compile one; write the regex escape (\\udc80) instead.
    lone = re.compile("[\ud800-\udfff]")
    for path in compiled_paths():
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert not lone.search(node.value), f"{path}:{node.lineno}: a lone surrogate in a literal"


def test_the_default_install_compiles_nothing() -> None:
    pytest.importorskip("setuptools")  # not in every venv (Python >= 3.12); pip's builds fetch it
    env = {key: value for key, value in os.environ.items() if key != "BBOX_LARK_COMPILE"}
    code = (
        "import runpy, setuptools; seen = {}; "
        "setuptools.setup = lambda **options: seen.update(options); "
        "runpy.run_path('setup.py'); print(seen['ext_modules'])"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout
    assert shown.strip() == "[]"
