"""The trajectory document a :class:`~bbox_lark.convert.atif.writer.TrajectoryWriter` built:
its root (session, agent, totals, the header kept in ``extra.bbox``), subagent threads as
embedded trajectories, and what the chosen ``schema_version`` cannot hold.

The steps are in the writer's :class:`~bbox_lark.convert.atif.steps.StepStore`, mostly in its
file: the document's ``steps`` are :class:`Steps`, which make each step as it is read (a copy
loaded, then what the end of the stream decided applied: the metrics of its model responses,
the line records of the subagent steps after it, its new ``step_id``, the audio parts
``ATIF-v1.7`` cannot hold), so that the document is written a step at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from bbox_lark.convert.atif.tables import (
    DEFAULT_VERSION,
    EXTRA_KEY,
    HEADER_KEYS,
    SCHEMA_HEADER,
    VERSIONS,
)
from bbox_lark.convert.atif.writer import USAGE, TrajectoryWriter, json_number
from bbox_lark.numbers.usage import Usage


class Steps(list):  # type: ignore[type-arg]
    """A document's ``steps``: ``count`` steps, each made by ``make(position)`` as it is
    iterated (:func:`~bbox_lark.convert.atif.jsontext.pieces` writes one, then the next)."""

    def __init__(self, count: int, make: Callable[[int], dict[str, Any]]) -> None:
        super().__init__()
        self._count = count
        self._make = make

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return map(self._make, range(self._count))


class Layout:
    """Where each stored step goes, as the end of the stream decided: the parent's steps
    (indices, in order), each embedded thread's, and the metrics of model responses."""

    def __init__(self, writer: TrajectoryWriter, version: str) -> None:
        self.writer = writer
        self.version = version
        self.parents: Sequence[int] = range(len(writer.store))
        self.threads: dict[str, list[int]] = {}
        #: Steps get the metrics of their model responses (:func:`response_metrics`).
        self.responses = False
        #: A step's index -> the subagent references in it (result place, session).
        self.refs: dict[int, list[tuple[int, str]]] = {}

    @property
    def embedding(self) -> bool:
        return bool(self.threads)

    def parent(self, position: int) -> dict[str, Any]:
        writer, parents = self.writer, self.parents
        index = parents[position]
        step = self.base(index)
        if self.embedding:
            # The line records of the subagent steps moved out stay in the parent, in the step
            # before them (those before any parent step: at the start of the first one).
            if position == 0 and index > 0:
                waiting = [record for before in range(index) for record in self._records(before)]
                if waiting:
                    writer.lines_of(step)[:0] = waiting
            end = parents[position + 1] if position + 1 < len(parents) else len(writer.store)
            for after in range(index + 1, end):
                writer.lines_of(step).extend(self._records(after))
            step["step_id"] = position + 1
        return self.finished(index, step)

    def thread(self, thread: str) -> Callable[[int], dict[str, Any]]:
        indices = self.threads[thread]

        def make(position: int) -> dict[str, Any]:
            index = indices[position]
            step = self.base(index)
            extra = step.get("extra") or {}
            held = extra.get(EXTRA_KEY) or {}
            held.pop("lines", [])
            if not held:
                extra.pop(EXTRA_KEY, None)
            if not extra:
                step.pop("extra", None)
            step["step_id"] = position + 1
            return self.finished(index, step)

        return make

    def _records(self, index: int) -> list[dict[str, Any]]:
        extra = self.writer.store.load(index).get("extra") or {}
        records: list[dict[str, Any]] = (extra.get(EXTRA_KEY) or {}).get("lines", [])
        return records

    def base(self, index: int) -> dict[str, Any]:
        """Step ``index`` loaded, with its model responses' metrics."""
        step = self.writer.store.load(index)
        usage = step.pop(USAGE, None)
        if usage is not None and self.responses and step.get("llm_call_count") != 0:
            step["metrics"] = _metrics(usage)
        return step

    def finished(self, index: int, step: dict[str, Any]) -> dict[str, Any]:
        for place, session in self.refs.get(index, ()):
            if session in self.threads:
                step["observation"]["results"][place]["subagent_trajectory_ref"][0]["trajectory_id"] = session
        return audio(None, step, self.version)


def _metrics(usage: Usage) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for name, value in (
        ("prompt_tokens", usage.input_with_cache),
        ("completion_tokens", usage.tokens_out),
        ("cached_tokens", usage.tokens_cached),
    ):
        if value is not None:
            metrics[name] = value
    return metrics


def response_metrics(writer: TrajectoryWriter) -> bool:
    """Whether steps get their metrics from the usage stated on event lines, each response
    once (docs/reference.md#usage): when no ``# metrics`` gave any. ATIF's ``prompt_tokens``
    include the cached tokens, the writers' ``tokens_in`` does not. (Each step holds its
    responses' usage, :data:`~bbox_lark.convert.atif.writer.USAGE`; a step that takes no
    metrics, ``llm_call_count: 0``, gets none as it is made: :meth:`Layout.base`.)"""
    for ended in writer.responses.finish():
        writer.response_ended(ended.ordinal, ended.usage)
    if writer.stated_metrics or not writer.responded:
        return False
    writer.report.kept("usage on event lines (→ step metrics, each model response once)", 0)
    return True


def final_metrics(writer: TrajectoryWriter, total_steps: int) -> dict[str, Any] | None:
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
    final["total_steps"] = total_steps
    writer.report.synthesized("final_metrics (the session's usage and stated cost, as stats counts them)", 0)
    return final


def finish(writer: TrajectoryWriter) -> dict[str, Any]:
    """The trajectory, its ``steps`` made as they are read (:class:`Steps`); close the
    writer's store once the document is written."""
    responses = response_metrics(writer)
    if writer.reasoning:
        writer.new_step("agent", 0)
        writer.report.synthesized("agent steps (for th: lines no step followed)", 0)
    if writer.pending or not len(writer.store):
        writer.new_step("system", 0)
        writer.report.synthesized("system steps (the document has no step)", 0)
    writer.store.put_away()
    version = schema_version(writer)
    layout = Layout(writer, version)
    layout.responses = responses
    for index, place, session in writer.subagent_refs:
        layout.refs.setdefault(index, []).append((place, session))
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
    embedded = embed_subagents(writer, out, layout)
    report_audio(writer, layout.parents, version)
    out["steps"] = Steps(len(layout.parents), layout.parent)
    if embedded:
        out["subagent_trajectories"] = embedded
    for key in ("notes", "final_metrics", "continued_trajectory_ref", "extra", "subagent_trajectories"):
        if key in root:
            out[key] = root.pop(key)
    if writer.native and "final_metrics" not in out:  # (the session's, subagents included)
        final = final_metrics(writer, len(layout.parents))
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


def embed_subagents(writer: TrajectoryWriter, out: dict[str, Any], layout: Layout) -> list[dict[str, Any]]:
    """Subagents as embedded trajectories (ATIF ``subagent_trajectories``): the steps
    whose lines are all of a thread ``tid=T`` that a subagent call's result names
    (``session_id=T``, as the Claude Code importer writes it) leave the parent for a
    trajectory ``T`` of their own, and the result's reference gets ``trajectory_id: T``.
    Their ``extra.bbox`` line records stay in the parent (in the step before), so the
    document still comes back whole. (Decided here, done as each step is made: :class:`Layout`.)"""
    if not writer.native or "subagent_trajectories" in writer.root:
        return []
    named = {session for _, _, session in writer.subagent_refs}
    threads = writer.threads

    def thread_of(index: int) -> str | None:
        only = threads[index]
        return only if isinstance(only, str) and only in named else None

    count = len(writer.store)
    if not any(thread_of(i) for i in range(count)) or all(thread_of(i) for i in range(count)):
        return []  # no subagent thread; or subagent lines alone, which stay the steps
    parents: list[int] = []
    for index in range(count):
        thread = thread_of(index)
        if thread is None:
            parents.append(index)
        else:
            layout.threads.setdefault(thread, []).append(index)
    layout.parents = parents
    embedded = []
    for thread, indices in layout.threads.items():
        trajectory: dict[str, Any] = {"schema_version": layout.version, "trajectory_id": thread}
        if "session_id" in out:
            trajectory["session_id"] = out["session_id"]
        trajectory["agent"] = dict(out["agent"])
        report_audio(writer, indices, layout.version)
        trajectory["steps"] = Steps(len(indices), layout.thread(thread))
        embedded.append(trajectory)
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


_AUDIO = "audio content parts (ATIF-v1.7 has none; a text part names each)"


def report_audio(writer: TrajectoryWriter, indices: Sequence[int], version: str) -> None:
    """Report the audio parts of the steps ``indices`` that ``ATIF-v1.7`` turns into text
    (once, before the steps are made: :func:`audio` then reports nothing)."""
    if version != "ATIF-v1.7":
        return
    for index in indices:
        audio(writer, writer.store.load(index), version)


def audio(writer: TrajectoryWriter | None, step: dict[str, Any], version: str) -> dict[str, Any]:
    """``ATIF-v1.7`` has no audio content parts: each becomes a text part naming it (each
    reported to ``writer``'s report, if given)."""
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
                if writer is not None:
                    writer.report.dropped(_AUDIO, 0)
            else:
                new.append(part)
        holder[key] = new
    return step
