"""The trajectory document a :class:`~bbox_lark.convert.atif.writer.TrajectoryWriter` built:
its root (session, agent, totals, the header kept in ``extra.bbox``), subagent threads as
embedded trajectories, and what the chosen ``schema_version`` cannot hold."""

from __future__ import annotations

from typing import Any

from bbox_lark.convert.atif.tables import (
    DEFAULT_VERSION,
    EXTRA_KEY,
    HEADER_KEYS,
    SCHEMA_HEADER,
    VERSIONS,
)
from bbox_lark.convert.atif.writer import TrajectoryWriter, json_number
from bbox_lark.numbers.usage import Usage


def response_metrics(writer: TrajectoryWriter) -> None:
    """Steps' metrics from the usage stated on event lines, each response once
    (docs/reference.md#usage), when no ``# metrics`` gave any: ATIF's ``prompt_tokens`` include the cached
    tokens, the writers' ``tokens_in`` does not."""
    for ended in writer.responses.finish():
        writer.response_usage[ended.ordinal] = ended.usage
    if writer.stated_metrics or not writer.response_step:
        return
    per_step: dict[int, tuple[dict[str, Any], Usage]] = {}
    for ordinal, step in writer.response_step.items():
        usage = writer.response_usage.get(ordinal)
        if usage is None or step.get("llm_call_count") == 0:
            continue
        held = per_step.get(id(step))
        per_step[id(step)] = (step, usage if held is None else held[1] + usage)
    for step, usage in per_step.values():
        metrics: dict[str, Any] = {}
        for name, value in (
            ("prompt_tokens", usage.input_with_cache),
            ("completion_tokens", usage.tokens_out),
            ("cached_tokens", usage.tokens_cached),
        ):
            if value is not None:
                metrics[name] = value
        step["metrics"] = metrics
    writer.report.kept("usage on event lines (→ step metrics, each model response once)", 0)


def final_metrics(writer: TrajectoryWriter) -> dict[str, Any] | None:
    """The session's totals (:mod:`bbox_lark.numbers.session`, the numbers ``stats`` reports) for
    a document that did not come from ATIF: usage from ``# metrics`` (their prompt
    tokens as written) or else from event lines (``tokens_in + tokens_cached``, since
    ATIF's prompt tokens include the cached ones), and the cost the document states
    (never an estimate)."""
    totals = writer.counter.finish()[2]
    final: dict[str, Any] = {}
    if totals.usage_source == "metrics":
        stated = totals.metrics_totals
        values = (stated.prompt, stated.completion, stated.cached)
    else:
        usage = totals.response_usage
        values = (usage.input_with_cache, usage.tokens_out, usage.tokens_cached)
    for name, value in zip(("prompt", "completion", "cached"), values, strict=True):
        if value is not None:
            final[f"total_{name}_tokens"] = value
    cost = None if totals.stated_cost_usd is None else json_number(str(totals.stated_cost_usd), True)
    if cost is not None:  # JSON has no infinity: a cost of 1e400 stays in the step's extra
        final["total_cost_usd"] = cost
    if not final:
        return None
    final["total_steps"] = len(writer.steps)
    writer.report.synthesized("final_metrics (the session's usage and stated cost, as stats counts them)", 0)
    return final


def finish(writer: TrajectoryWriter) -> dict[str, Any]:
    response_metrics(writer)
    if writer.reasoning:
        writer.new_step("agent", 0)
        writer.report.synthesized("agent steps (for th: lines no step followed)", 0)
    if writer.pending or not writer.steps:
        writer.new_step("system", 0)
        writer.report.synthesized("system steps (the document has no step)", 0)
    version = schema_version(writer)
    header = writer.header
    root = writer.root
    out: dict[str, Any] = {"schema_version": version}
    if "session_id" in root:
        session = root.pop("session_id")
        if session is not None:
            out["session_id"] = session
    elif isinstance(header.get("id"), str) and header["id"] and "id" not in writer.nulls:
        out["session_id"] = header["id"]
    else:
        writer.report.dropped("an empty or missing id: (session_id left out; optional since v1.7)", 1)
    trajectory_id = root.pop("trajectory_id", None)
    if trajectory_id is None and not writer.native and isinstance(header.get("trajectory_id"), str):
        trajectory_id = header["trajectory_id"]
    if trajectory_id is not None:
        out["trajectory_id"] = trajectory_id
    agent: dict[str, Any] = {}
    for key, attached, name in (
        ("agent", "agent_name", "name"),
        ("version", "agent_version", "version"),
        ("model", "model_name", "model_name"),
    ):
        if attached in root:
            agent[name] = root.pop(attached)
            continue
        value = header.get(key)
        if key == "version" and not (isinstance(value, str) and value):
            value = header.get("client_version")  # what importers write the client's version as
        if isinstance(value, str) and (value or name != "model_name"):
            agent[name] = value
        elif name != "model_name":
            agent[name] = "unknown"
            writer.report.synthesized(f"agent {name} (the header has no {key}:)", 1)
    for key in ("tool_definitions", "extra"):
        if f"agent_{key}" in root:
            agent[key] = root.pop(f"agent_{key}")
    out["agent"] = agent
    embedded = embed_subagents(writer, out, version)
    out["steps"] = [audio(writer, step, version) for step in writer.steps]
    if embedded:
        out["subagent_trajectories"] = embedded
    for key in ("notes", "final_metrics", "continued_trajectory_ref", "extra", "subagent_trajectories"):
        if key in root:
            out[key] = root.pop(key)
    if writer.native and "final_metrics" not in out:  # (the session's, subagents included)
        final = final_metrics(writer)
        if final is not None:
            out["final_metrics"] = final
    if writer.native:
        extra: dict[str, Any] = out.setdefault("extra", {})
        held: dict[str, Any] = {"header": dict(header)}
        if writer.nulls:
            held["null"] = sorted(writer.nulls)
        extra[EXTRA_KEY] = held
        writer.report.extra("header keys (in extra.bbox.header)", 1, count=max(len(header), 1))
    else:
        for key in header:
            if key not in ("format", "id", "repo_sha", SCHEMA_HEADER, "trajectory_id", *HEADER_KEYS):
                writer.report.dropped(f"header key {key}: (no place in ATIF)", 1)
    return out


def embed_subagents(writer: TrajectoryWriter, out: dict[str, Any], version: str) -> list[dict[str, Any]]:
    """Subagents as embedded trajectories (ATIF ``subagent_trajectories``): the steps
    whose lines are all of a thread ``tid=T`` that a subagent call's result names
    (``session_id=T``, as the Claude Code importer writes it) leave the parent for a
    trajectory ``T`` of their own, and the result's reference gets ``trajectory_id: T``.
    Their ``extra.bbox`` line records stay in the parent (in the step before), so the
    document still comes back whole."""
    if not writer.native or "subagent_trajectories" in writer.root:
        return []
    named = {session for _, session in writer.subagent_refs}

    def thread_of(step: dict[str, Any]) -> str | None:
        tids = writer.step_threads.get(id(step), set())
        only = next(iter(tids)) if len(tids) == 1 else None
        return only if only in named else None

    if not any(thread_of(step) for step in writer.steps) or all(thread_of(step) for step in writer.steps):
        return []  # no subagent thread; or subagent lines alone, which stay the steps
    threads: dict[str, list[dict[str, Any]]] = {}
    parent: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []  # records of moved steps before any parent step
    for step in writer.steps:
        thread = thread_of(step)
        if thread is None:
            if waiting:
                writer.lines_of(step)[:0] = waiting
                waiting = []
            parent.append(step)
            continue
        threads.setdefault(thread, []).append(step)
        extra = step.get("extra") or {}
        held = extra.get(EXTRA_KEY) or {}
        records = held.pop("lines", [])
        if parent:
            writer.lines_of(parent[-1]).extend(records)
        else:
            waiting.extend(records)
        if not held:
            extra.pop(EXTRA_KEY, None)
        if not extra:
            step.pop("extra", None)
    for number, step in enumerate(parent, 1):
        step["step_id"] = number
    writer.steps = parent
    embedded = []
    for thread, steps in threads.items():
        for number, step in enumerate(steps, 1):
            step["step_id"] = number
        trajectory: dict[str, Any] = {"schema_version": version, "trajectory_id": thread}
        if "session_id" in out:
            trajectory["session_id"] = out["session_id"]
        trajectory["agent"] = dict(out["agent"])
        trajectory["steps"] = [audio(writer, step, version) for step in steps]
        embedded.append(trajectory)
    for ref, session in writer.subagent_refs:
        if session in threads:
            ref["trajectory_id"] = session
    writer.report.kept("subagent threads (tid= lines a subagent result names → subagent_trajectories)", 0)
    return embedded


def schema_version(writer: TrajectoryWriter) -> str:
    asked = writer.ctx.options.get("atif_version")
    if asked:
        return asked if asked.startswith("ATIF-") else f"ATIF-v{asked}"
    source = writer.header.get(SCHEMA_HEADER)
    if isinstance(source, str) and source in VERSIONS:
        return source
    if isinstance(source, str):
        writer.report.synthesized(f"schema_version {DEFAULT_VERSION} (the source was {source})", 1)
    return DEFAULT_VERSION


def audio(writer: TrajectoryWriter, step: dict[str, Any], version: str) -> dict[str, Any]:
    """``ATIF-v1.7`` has no audio content parts: each becomes a text part naming it."""
    if version != "ATIF-v1.7":
        return step
    holders: list[tuple[dict[str, Any], str]] = [(step, "message")]
    holders += [(r, "content") for r in (step.get("observation") or {}).get("results", ())]
    for holder, key in holders:
        parts = holder.get(key)
        if not isinstance(parts, list):
            continue
        new = []
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "audio":
                source = part.get("source") or {}
                new.append({"type": "text", "text": f"[audio: {source.get('path')}]"})
                writer.report.dropped("audio content parts (ATIF-v1.7 has none; a text part names each)", 0)
            else:
                new.append(part)
        holder[key] = new
    return step
