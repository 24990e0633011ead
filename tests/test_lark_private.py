"""The private parts of Lark the fast line driver reads (issue 27, point 6).

``pyproject.toml`` bounds Lark to ``>=1.2.2,<2``; inside that range a release may still move
one of :data:`bbox_lark.syntax.parser.LARK_PRIVATE_PARTS`. These tests fail naming the attribute,
so an upgrade says what broke instead of failing somewhere in the line loop.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from types import SimpleNamespace

import lark
import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from bbox_lark.syntax import parser
from bbox_lark.syntax.grammar import plain_parser

ROOT = Path(__file__).resolve().parent.parent


def test_the_installed_lark_has_every_private_part_the_driver_reads() -> None:
    problems = parser.lark_private_problems(plain_parser())
    assert not problems, "\n".join(problems)


def test_the_installed_lark_is_inside_the_declared_bounds() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (declared,) = [Requirement(d) for d in project["dependencies"] if Requirement(d).name == "lark"]
    assert Version(lark.__version__) in declared.specifier, (lark.__version__, str(declared.specifier))
    bounded = "Lark is bounded below 2: the driver reads its private parts"
    assert not declared.specifier.contains("2.0"), bounded


def test_a_moved_part_is_named() -> None:
    real = plain_parser()
    # A Lark whose frontend lost `_parse_tree_builder` and whose lexers lost `_mres`.
    lexers = {state: SimpleNamespace(callback={}) for state in real.parser.lexer.lexers}
    fake = SimpleNamespace(
        parser=SimpleNamespace(parser=real.parser.parser, lexer=SimpleNamespace(lexers=lexers))
    )
    problems = parser.lark_private_problems(fake)
    assert any("`Lark._parse_tree_builder.create_callback`" in p for p in problems), problems
    assert any("`Lark.parser.lexer.lexers[state].scanner._mres`" in p for p in problems), problems
    assert all("lark>=1.2.2,<2" in p for p in problems)


def test_the_driver_refuses_a_moved_part_with_that_message() -> None:
    fake = copy.copy(plain_parser())  # a real Lark object (the compiled build checks the type)
    fake.parser = SimpleNamespace()
    named = r"`Lark\.parser\.parser\.parser\.parse_table\.states` is not there"
    with pytest.raises(RuntimeError, match=named):
        parser.LineDriver(fake, shaper=parser.LineShaper())
