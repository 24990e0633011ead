"""Small helpers every part of the reader shares: JSON text, arguments, short quotes, image
placeholders, the first record of a log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bbox_lark.convert.claude_code.tables import UNSAFE


class Malformed(ValueError):
    """A record this reader cannot read (skipped, reported with its line)."""


def first_record(log: Path) -> dict[str, Any] | None:
    """The first JSON record of a log, or None."""
    try:
        with log.open("rb") as lines:
            for raw in lines:
                if raw.strip():
                    record = json.loads(raw)
                    return record if isinstance(record, dict) else None
    except (OSError, ValueError, RecursionError):
        return None
    return None


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def as_arg(text: str) -> str:
    from bbox_lark.syntax.scan import render_arg

    return render_arg(text)


def short(text: str, limit: int = 120) -> str:
    text = UNSAFE.sub("\ufffd", text).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def image_placeholder(block: dict[str, Any]) -> str:
    source = block.get("source")
    mime = source.get("media_type") if isinstance(source, dict) else None
    mime = mime if isinstance(mime, str) and mime and " " not in mime else "unknown"
    return f"[image {UNSAFE.sub('', mime)}]"
