"""Subagent logs beside a session (``<session>/subagents/agent-<id>.jsonl``): found, matched to
the ``Task`` result that names them, and read as lines of their own thread."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from bbox_lark.convert.claude_code.tables import NAME_UNSAFE, SIDECHAIN_TID
from bbox_lark.convert.claude_code.values import first_record, short

if TYPE_CHECKING:
    from bbox_lark.convert.claude_code.reader import ClaudeCodeReader
    from bbox_lark.syntax.nodes import Line


def subagent_logs(path: Path | None) -> dict[str, Path]:
    """The subagent logs Claude Code keeps beside a session log: ``<session>.jsonl`` beside
    ``<session>/subagents/agent-<agentId>.jsonl``, by agent id (none for standard input)."""
    if path is None or path.suffix != ".jsonl":
        return {}
    folder = path.with_suffix("") / "subagents"
    try:
        found = sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    except OSError:
        return {}
    return {log.name[len("agent-") : -len(".jsonl")]: log for log in found if log.is_file()}


def subagent_before_result(
    reader: ClaudeCodeReader, block: dict[str, Any], record: dict[str, Any], number: int
) -> list[Line]:
    """The lines of the subagent log a ``Task`` result comes from (read from the file
    beside the session), written before the result; the result then names the log
    (:attr:`ClaudeCodeReader.linked`)."""
    call = block.get("tool_use_id")
    if not reader.subagents or not isinstance(call, str) or call not in reader.subagent_calls:
        return []
    prompt = reader.subagent_calls.pop(call)
    details = record.get("toolUseResult")
    agent = details.get("agentId") if isinstance(details, dict) else None
    if not (isinstance(agent, str) and agent in reader.subagents):
        agent = agent_by_prompt(reader, prompt)
    if agent is None:
        return []
    return read_subagent(reader, agent, number, link=True)


def agent_by_prompt(reader: ClaudeCodeReader, prompt: str | None) -> str | None:
    """The unread subagent log whose first user message is ``prompt`` (for results that
    do not name their agent id)."""
    if not prompt:
        return None
    for agent, log in reader.subagents.items():
        first = first_record(log)
        message = first.get("message") if first is not None else None
        if isinstance(message, dict) and message.get("content") == prompt:
            return agent
    return None


def read_subagent(reader: ClaudeCodeReader, agent: str, number: int, *, link: bool) -> list[Line]:
    """A subagent log's records as lines of thread ``tid=<agent id>`` (the report names
    the session line that brought them in)."""
    log = reader.subagents.pop(agent)
    shown = relative(reader, log)
    first = first_record(log)
    session = first.get("sessionId") if first is not None else None
    if session is not None and session != reader.meta.get("session"):
        reader.report.skip(number, f"subagent log {shown}: another session ({short(str(session), 60)})")
        return []
    out: list[Line] = []
    saved = (reader.forced_tid, reader.line_no)
    reader.forced_tid = reader.clean(agent, number) if not NAME_UNSAFE.search(agent) else SIDECHAIN_TID
    try:
        with log.open("rb") as lines:
            for raw in lines:
                out += reader.line(raw, number)
        out += reader.api_usage.flush(reader.forced_tid)
    except OSError as error:
        reader.report.skip(number, f"subagent log {shown}: cannot be read ({error.strerror})")
    finally:
        reader.forced_tid, reader.line_no = saved
    if link:
        reader.linked[number] = (reader.clean(agent, number), shown)
        reader.report.kept("subagent logs beside the session (tid= lines before the Task result)", number)
    return out


def relative(reader: ClaudeCodeReader, log: Path) -> str:
    if reader.base is not None:
        try:
            return log.relative_to(reader.base).as_posix()
        except ValueError:
            pass
    return log.as_posix()
