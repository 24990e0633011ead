"""Claude Code session logs (``~/.claude/projects/*/*.jsonl``) → bbox/1, read only.

The mapping follows ``bbox-format-claude-code-extensions.md``; ``docs/formats/claude-code.md``
gives every decision with an example, and :data:`FORMAT` ``.import_mapping`` is the table.
In short: one JSON record per line; ``user`` text → ``u:``, assistant text → ``a:``,
thinking → ``th:``, ``tool_use`` → ``t!:Name id=<full id> … → [running]`` (``x:`` for
subagents, ``c:server.method`` for MCP tools, plus ``td:`` for ``TodoWrite``), its
``tool_result`` → ``o: id=<full id> → [ok] …`` or ``→ [error] …``, token usage →
``tokens_in= tokens_out= tokens_cached=`` on the message's lines (docs/reference.md#usage: one API
message id is one model response, counted once), ``summary`` / ``system`` / file-history snapshots / queue
operations → structured comments (``# notes:``, ``@compact``, ``# file-snapshot:``,
``# queue:``). Multi-line text goes on continuation lines. The subagent logs Claude Code keeps
beside a session (``<session>/subagents/agent-<id>.jsonl``, :func:`subagent_logs`) are read
in: each one's records as lines of thread ``tid=<id>``, right before the ``o:`` result of the
``Task`` call that launched it (found by the result's ``toolUseResult.agentId``, else by the
call's prompt), and that result names the log (``session_id=<id> path=<log>``).

The reader streams: it holds the nodes of the first few records until the header's values
are known (at most :data:`LOOKAHEAD` records), the usage of the API message being written
(one per thread), and bounded maps of recent message ids and open tool calls.

Usage. Claude Code writes one API message as several records (one per content block), each
restating the message's usage, ``output_tokens`` growing as it streams. Each record's lines
carry the usage of the message so far, each counter the largest any of its records gave, so
that :mod:`bbox_lark.numbers.session` (consecutive lines with equal ``tokens_in`` and
``tokens_cached`` are one response; its output is the largest ``tokens_out``) counts the
message once. ``tokens_in`` is ``input_tokens + cache_creation_input_tokens`` (input not
read from the cache: Anthropic's ``input_tokens`` excludes both cache reads and cache
writes), ``tokens_cached`` is ``cache_read_input_tokens``. A record of a message id already
counted, after other messages, carries no usage (reported).

The pieces: :mod:`.tables` (names, keys read, the mapping table), :mod:`.reader` (the reader,
user and assistant records, tool calls), :mod:`.records` (the other record types, one
function per type), :mod:`.usage` (usage merging), :mod:`.subagents` (the logs beside a
session) and :mod:`.values` (small shared helpers).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from bbox_lark.convert.base import REPO_SHA, Format, Input, ReadContext
from bbox_lark.convert.claude_code.reader import ClaudeCodeReader
from bbox_lark.convert.claude_code.subagents import subagent_logs
from bbox_lark.convert.claude_code.tables import (
    DUPLICATE_USAGE,
    EXTENSIONS,
    IMPORT_MAPPING,
    LOOKAHEAD,
    NAME,
    RECORD_TYPES,
    REPEATED_MESSAGE,
)
from bbox_lark.syntax.source import BOM

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item
    from bbox_lark.syntax.nodes import Line

__all__ = ["EXTENSIONS", "FORMAT", "IMPORT_MAPPING", "LOOKAHEAD", "NAME", "read", "sniff", "subagent_logs"]

#: The report rows of usage merging under the names the module had before it was a package.
_DUPLICATE_USAGE = DUPLICATE_USAGE
_REPEATED_MESSAGE = REPEATED_MESSAGE

# -- sniffing ----------------------------------------------------------------------------


_CUT_RECORD = re.compile(r'\{.*"type"\s*:\s*"(?:' + "|".join(sorted(RECORD_TYPES)) + ')"')
_CUT_ID = re.compile(r'"(?:sessionId|uuid|leafUuid|messageId)"\s*:\s*"')


def sniff(text: str) -> int:
    """4 when the first JSON records look like Claude Code's (a ``type`` of its record
    types and a ``sessionId``, ``uuid``, ``leafUuid`` or ``messageId``), else 0: other JSON
    Lines (the ``jsonl`` bbox records) score 0, so detection by content tells them apart."""
    found = seen = 0
    pieces = text.removeprefix(BOM).split("\n", 200)[:200]
    for index, raw in enumerate(pieces):
        line = raw.strip()
        if not line:
            continue
        seen += 1
        if seen > 50:
            break
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            # A record cut where the sniffed head ends (a first record over 64 KiB, a long
            # pasted prompt): the keys before the cut tell.
            if index == len(pieces) - 1 and _CUT_RECORD.match(line) and _CUT_ID.search(line):
                found += 1
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if not isinstance(kind, str) or kind not in RECORD_TYPES:
            continue
        if any(isinstance(record.get(key), str) for key in ("sessionId", "uuid", "leafUuid", "messageId")):
            found += 1
    return 4 if found else 0


def read(source: Input, ctx: ReadContext) -> Iterator[Item]:
    """The bbox document of a Claude Code log, record by record (see the package's docstring)."""
    reader = ClaudeCodeReader(ctx, subagent_logs(source.path), source.path)
    held: list[Line] = []
    head_written = False
    for number, raw in enumerate(source.lines(), 1):
        nodes = reader.line(raw, number)
        if head_written:
            yield from nodes
            continue
        held.extend(nodes)
        if reader.ready or number >= LOOKAHEAD:
            yield reader.head()
            yield from held
            held = []
            head_written = True
    tail = reader.finish()
    if not head_written:
        yield reader.head()
        yield from held
    yield from tail


FORMAT = Format(
    name=NAME,
    description="Claude Code session logs (JSON Lines), read only; docs/formats/claude-code.md",
    extensions=EXTENSIONS,
    sniff=sniff,
    read=read,
    write=None,
    fidelity="read only: conversation, tool calls and results, thinking, todos and usage are kept;"
    " record uuids and tool-specific result copies are dropped (reported)",
    lossless=False,
    options=(REPO_SHA,),
    import_mapping=IMPORT_MAPPING,
)
