"""The build backend: setuptools' own, plus mypyc when ``BBOX_LARK_COMPILE=1``.

``pip install .`` builds in a fresh environment with the ``[build-system] requires`` of
``pyproject.toml`` only. The compiled build (``setup.py``) needs mypy (mypyc ships with it)
and the types of what the compiled modules import (Lark, PyYAML's stubs); this backend asks
for them only when the switch is on, so the default, pure-Python install never downloads mypy.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every hook this module does not change)

#: What ``setup.py`` needs to compile: mypyc, and the types of the compiled modules' imports.
COMPILE_REQUIRES = ["mypy>=1.10", "lark>=1.2.2", "types-PyYAML>=6.0"]


def _compile_requires() -> list[str]:
    return COMPILE_REQUIRES if os.environ.get("BBOX_LARK_COMPILE", "") == "1" else []


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    return [*_setuptools.get_requires_for_build_wheel(config_settings), *_compile_requires()]


def get_requires_for_build_sdist(config_settings: Any = None) -> list[str]:
    return list(_setuptools.get_requires_for_build_sdist(config_settings))
