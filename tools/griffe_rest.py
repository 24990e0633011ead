"""Griffe extension for the API page (``mkdocs.yml``, mkdocstrings' ``extensions``).

The package's docstrings are written for reading in the source and for ``help()``: Sphinx
roles (``:func:`parse```) and bare doctest blocks (``>>> parse(...)``). Rendered as Markdown,
a role shows its colons and a doctest block becomes nested block quotes. This extension
rewrites both while the docs are built (the source is never changed): a role becomes inline
code, a doctest block a ``pycon`` code block.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`~?([^`]+)`")


def markdown_docstring(text: str) -> str:
    """``text`` with Sphinx roles as inline code and doctest blocks fenced as ``pycon``."""
    out: list[str] = []
    in_doctest = False
    for line in _ROLE.sub(r"`\1`", text).split("\n"):
        if not in_doctest and line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            in_doctest = True
        elif in_doctest and not line.strip():
            out.append(f"{indent}```")
            in_doctest = False
        out.append(line)
    if in_doctest:
        out.append(f"{indent}```")
    return "\n".join(out)


class RestToMarkdown(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
