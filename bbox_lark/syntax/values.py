"""Typed values inside fields: timestamps, attempts, elapsed times, integers.

Their syntax is the grammar's (``TS_VALUE``, ``ELAPSED_VALUE``, ``INT``, ``ATTEMPT_VALUE``
in ``grammar/bbox.lark``); what this module adds is meaning: the value, and the rules a
pattern cannot say (a real date, N <= M, the integer range).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bbox_lark.syntax.grammar import compiled

#: The largest typed integer (``step``, ``latency_ms``, ``attempt``, counts, blob sizes,
#: elapsed hours): a signed 64-bit integer, what JSON readers and the interchange formats
#: take. A longer digit string is malformed, and it is never handed to ``int()`` (Python
#: refuses strings of more than 4,300 digits, and converting a long one is slow).
MAX_INT = 2**63 - 1
_MAX_DIGITS = len(str(MAX_INT))


def to_int(digits: str) -> int | None:
    """The value of a string of ASCII digits, or None when it is over :data:`MAX_INT`.
    The caller has checked that ``digits`` is only digits."""
    if len(digits) > _MAX_DIGITS or not digits.isascii():
        return None
    number = int(digits)
    return number if number <= MAX_INT else None


def is_oversized_int(value: object) -> bool:
    """True for a digit string that is well-formed but over :data:`MAX_INT`."""
    return isinstance(value, str) and compiled("INT").fullmatch(value) is not None and to_int(value) is None


def parse_timestamp(value: str) -> datetime | None:
    """An ISO 8601 date-time with a zone (``2025-12-18T03:21:11Z``), else None."""
    if not compiled("TS_VALUE").fullmatch(value):
        return None
    try:
        return datetime.fromisoformat(value.replace(",", "."))
    except ValueError:
        return None


def parse_elapsed(value: str) -> int | None:
    """``HH:MM:SS`` as seconds, else None."""
    match = compiled("ELAPSED_VALUE").fullmatch(value)
    hours = to_int(match[1]) if match is not None else None
    if match is None or hours is None:
        return None
    return hours * 3600 + int(match[2]) * 60 + int(match[3])


def parse_int(value: object) -> int | None:
    """A non-negative decimal integer, else None."""
    return to_int(value) if isinstance(value, str) and compiled("INT").fullmatch(value) else None


def parse_attempt(value: object) -> tuple[int, int | None] | None:
    """``N`` or ``N/M`` with N <= M, else None."""
    if not isinstance(value, str):
        return None
    if compiled("ATTEMPT_VALUE").fullmatch(value) is None:
        return None
    first, slash, second = value.partition("/")
    number = to_int(first)
    total = to_int(second) if slash else None
    if number is None or (slash and total is None):
        return None
    if total is not None and number > total:
        return None
    return number, total


def parse_number(value: object) -> float | None:
    """A token count or cost: ``520``, ``0.00045``, ``$12.30`` (the ``$`` is dropped)."""
    if not isinstance(value, str):
        return None
    text = value[1:] if value.startswith("$") else value
    try:
        return float(text)
    except ValueError:
        return None


def json_type(value: Any, *, article: bool = False) -> str:
    """What a JSON value is, in JSON's words (``null``, ``string``, ``array`` …, not
    Python's); with ``article``, as in a sentence (``a string``, ``an array``, ``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        name = "boolean"
    elif isinstance(value, int | float):
        name = "number"
    elif isinstance(value, str):
        name = "string"
    elif isinstance(value, list | tuple):
        name = "array"
    elif isinstance(value, dict):
        name = "object"
    else:
        name = type(value).__name__
    if not article:
        return name
    return ("an " if name[0] in "aeiou" else "a ") + name
