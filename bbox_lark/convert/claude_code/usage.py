"""Usage merging: Claude Code restates an API message's usage on each of its records; the
lines carry it merged, and each message id counts once (see the package's docstring)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from bbox_lark.convert.claude_code.tables import DUPLICATE_USAGE, REMEMBERED, REPEATED_MESSAGE, USAGE_KEYS
from bbox_lark.convert.claude_code.values import short

if TYPE_CHECKING:
    from bbox_lark.syntax.nodes import Line


class UsageMerger:
    """The usage of the API message being written, one per thread: merged over its records,
    each counter the largest any gave; a message id counted before carries none (see the
    package's docstring, "Usage")."""

    def __init__(self, report: Any) -> None:
        self.report = report
        #: tid → (message id, usage, source line) of the API message being written.
        self.usage: dict[str, tuple[str, dict[str, int], int]] = {}
        #: Message ids whose usage was written (recent ones).
        self.counted: OrderedDict[str, None] = OrderedDict()
        self.totals = {"tokens_in": 0, "tokens_out": 0, "tokens_cached": 0}
        self.wrote_usage = False

    def account(
        self, message: dict[str, Any], number: int, tid: str | None
    ) -> tuple[list[Line], list[tuple[str, str]]]:
        """Hold this message's usage (merged with its earlier records'): the lines a new
        message ends, and the usage fields for this record's lines."""
        usage = message.get("usage")
        message_id = message.get("id")
        key = tid or ""
        out: list[Line] = []
        held = self.usage.get(key)
        # A held message without an id (held as "") ends at the next record whatever its id:
        # two records with an empty id are two messages, as two without one are.
        if held is not None and (held[0] != message_id or not held[0]):
            out += self.flush(tid)
            held = None
        if not isinstance(usage, dict):
            return out, []
        counts = {k: v for k, v in usage.items() if k in USAGE_KEYS and type(v) is int and v >= 0}
        for other in usage:
            if other not in counts and other not in USAGE_KEYS:
                self.report.dropped(f"`{short(str(other), 40)}` usage fields", number)
        if not isinstance(message_id, str) or not message_id:
            self.usage[key] = ("", counts, number)
            return out, self.usage_fields(counts, number)
        if message_id in self.counted:
            self.report.dropped(REPEATED_MESSAGE, number)
            return out, []
        if held is None:
            self.usage[key] = (message_id, counts, number)
            return out, self.usage_fields(counts, number)
        self.report.dropped(DUPLICATE_USAGE, number)
        merged = dict(held[1])
        for name, value in counts.items():
            merged[name] = max(merged.get(name, 0), value)
        self.usage[key] = (message_id, merged, held[2])
        return out, self.usage_fields(merged, number)

    @staticmethod
    def usage_values(counts: dict[str, int]) -> list[tuple[str, int]]:
        """``tokens_in`` (input not read from the cache: ``input_tokens`` +
        ``cache_creation_input_tokens``), ``tokens_out``, ``tokens_cached``, and
        ``tokens_cache_write`` (``cache_creation_input_tokens``, part of ``tokens_in``: the
        numbers price them as cache writes) where the message names them."""
        pairs: list[tuple[str, int]] = []
        if "input_tokens" in counts or "cache_creation_input_tokens" in counts:
            pairs.append(
                ("tokens_in", counts.get("input_tokens", 0) + counts.get("cache_creation_input_tokens", 0))
            )
        if "output_tokens" in counts:
            pairs.append(("tokens_out", counts["output_tokens"]))
        if "cache_read_input_tokens" in counts:
            pairs.append(("tokens_cached", counts["cache_read_input_tokens"]))
        if "cache_creation_input_tokens" in counts:
            pairs.append(("tokens_cache_write", counts["cache_creation_input_tokens"]))
        return pairs

    def usage_fields(self, counts: dict[str, int], number: int) -> list[tuple[str, str]]:
        pairs = [(name, str(value)) for name, value in self.usage_values(counts)]
        if pairs:
            self.report.kept(
                "API usage (tokens_in= tokens_out= tokens_cached= tokens_cache_write= on the message's"
                " lines)",
                number,
            )
        return pairs

    def flush(self, tid: str | None) -> list[Line]:
        """The API message held for thread ``tid`` ends: its usage joins the totals (once)."""
        held = self.usage.pop(tid or "", None)
        if held is None:
            return []
        message_id, counts, _ = held
        values = self.usage_values(counts)
        for name, value in values:
            if name in self.totals:
                self.totals[name] += value
        if values:
            self.wrote_usage = True
        if message_id:
            self.counted[message_id] = None
            while len(self.counted) > REMEMBERED:
                self.counted.popitem(last=False)
        return []
