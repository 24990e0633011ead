"""Small value helpers both directions share: JSON as a line or lines, timestamps."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any


def _reject_float(literal: str) -> Any:
    raise ValueError(f"float {literal}")


def json_object(text: str) -> dict[str, Any] | None:
    """``text`` read as a JSON object without floats, else None."""
    try:
        value = json.loads(text, parse_float=_reject_float, parse_constant=_reject_float)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def compact_json(value: Any, *, ascii_only: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"), sort_keys=False, default=str)


def json_lines(value: Any) -> list[str]:
    """Indented JSON, ASCII only (so no character can end or break a line)."""
    return json.dumps(value, ensure_ascii=True, indent=2, default=str).split("\n")


def scalar_text(value: Any) -> str | None:
    """A JSON scalar as a field value's text, else None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    return None


def string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def args_list(value: Any) -> bool:
    """Positional arguments: strings, and lists of strings (bracketed lists)."""
    return isinstance(value, list) and all(isinstance(v, str) or string_list(v) for v in value)


def one_line(text: str) -> str:
    return " ".join(text.split())


def parse_time(value: Any) -> datetime | None:
    from bbox_lark.syntax.values import parse_timestamp

    return parse_timestamp(value) if isinstance(value, str) else None


def render_time(moment: datetime, like: str) -> str:
    """``moment`` in milliseconds, in the style of ``like`` (``Z`` or an offset)."""
    text = moment.isoformat(timespec="milliseconds")
    if like.endswith("Z") and text.endswith("+00:00"):
        text = text[: -len("+00:00")] + "Z"
    return text


def latency_between(start: Any, end: Any) -> int | None:
    """Milliseconds from ``start`` to ``end`` when ``end`` is ``start`` plus them, written
    as :func:`render_time` writes it; else None."""
    began, ended = parse_time(start), parse_time(end)
    if began is None or ended is None or ended < began:
        return None
    millis = (ended - began) // timedelta(milliseconds=1)
    if render_time(began + timedelta(milliseconds=millis), start) != end:
        return None
    return millis
