"""MkDocs hook (``hooks:`` in ``mkdocs.yml``): links from a page to a source file outside
``docs/`` (``[bbox_lark/numbers/stats.py](../bbox_lark/numbers/stats.py)``) work when the Markdown is read in
the repository, but the site has no copy of the source tree. On the site such a link becomes
its plain text, naming the file; every other link is left to MkDocs' own (strict) checks.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s#]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"]).resolve()
    folder = (docs / page.file.src_uri).parent

    def unlink(match: re.Match[str]) -> str:
        target = match[2]
        if "://" in target or target.startswith("/"):
            return match[0]
        resolved = (folder / target).resolve()
        if resolved.is_relative_to(docs) or not resolved.exists():
            return match[0]
        return match[1]

    return _LINK.sub(unlink, markdown)
