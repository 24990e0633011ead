"""bbox → ATIF: the stream's lines placed in a trajectory's steps (see the package's docstring)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bbox_lark.convert.atif.records import read_attachments, record
from bbox_lark.convert.atif.schema import is_iso
from bbox_lark.convert.atif.spill import SpillMap, id_code, int_code, key_code
from bbox_lark.convert.atif.steps import CallRef, FewValues, StepStore
from bbox_lark.convert.atif.tables import (
    ATIF_COMMENT,
    EXTRA_KEY,
    SCHEMA_HEADER,
)
from bbox_lark.convert.base import WriteContext
from bbox_lark.numbers.session import SessionCounter
from bbox_lark.numbers.usage import Responses, Usage, line_usage
from bbox_lark.syntax.nodes import NO_FIELDS, BlankLine, Continuation, Event

if TYPE_CHECKING:
    from bbox_lark.syntax.parser import Head


#: The call kinds that become ATIF tool calls: every correlated family but plans.
_PLAN = "plan"


#: The key under which a step holds its model responses' usage until the document is made
#: (no JSON key is written from a step's own keys but the writer's: this one never is).
USAGE = "\x00usage"
#: A step's thread before any of its lines had one (:attr:`TrajectoryWriter.threads`).
NO_THREAD: Any = object()
#: A step whose lines are of more than one thread.
MIXED: Any = object()


class TrajectoryWriter:
    """Builds a trajectory from a bbox document stream."""

    def __init__(self, head: Head, ctx: WriteContext) -> None:
        from bbox_lark.syntax.correlate import Pairer

        self.ctx = ctx
        self.report = ctx.report
        self.header: dict[str, Any] = head.header_info.fields if head.header_info is not None else {}
        self.nulls = head.header_info.null_keys if head.header_info is not None else frozenset()
        #: True for a document that did not come from ATIF: every line is recorded.
        self.native = SCHEMA_HEADER not in self.header
        #: The steps, by index (``step_id`` - 1): the recent ones held, the others in a file.
        self.store = StepStore()
        self.current: dict[str, Any] | None = None
        self.reasoning: list[str] = []
        self.reasoning_extra: dict[str, Any] = {}
        self.pending: list[dict[str, Any]] = []
        self.pairer = Pairer()
        #: start line (sequence number) -> the call, while it is open; key -> the latest call
        #: (every call's: a later ``o:`` may reach any); every tool_call_id written. The two
        #: grow with the calls: their older entries are in a temporary file (:mod:`.spill`).
        self.starts: dict[int, CallRef] = {}
        self.by_key = SpillMap(key_code)
        self.used_ids = SpillMap(id_code)
        #: base id -> the last suffix tried, when over 1 (see :meth:`unique_id`).
        self.suffixes: dict[str, int] = {}
        #: The current step's tool_calls list, how many of it were read, their ids.
        self.step_ids: tuple[list[Any], list[int], set[str]] | None = None
        #: step= values -> the index of the step they went to.
        self.by_step = SpillMap(int_code)
        self.root: dict[str, Any] = {}
        self.sequence = 0
        self.seen_event = False
        #: Model usage stated on event lines (docs/reference.md#usage, :mod:`bbox_lark.numbers.session`): each
        #: open response's agent step (the index of the first its lines went to); once it ends,
        #: its usage waits in that step (:data:`USAGE`).
        self.responses = Responses()
        self.response_step: dict[int, int] = {}
        #: Some response went to an agent step.
        self.responded = False
        #: True when the line being placed starts a model response (:meth:`feed_response`).
        self.new_response = False
        #: The current step holds a response's usage already.
        self.current_has_response = False
        #: True once a ``# metrics`` gave a step its metrics: then they are the numbers.
        self.stated_metrics = False
        #: The session's numbers (``final_metrics``: its totals; no record per step or call).
        self.counter = SessionCounter(self.header, estimate=False, steps=False, calls=False)
        #: Each step's thread, by index: the ``tid=`` value of all its lines (None for the
        #: main one), :data:`MIXED`, or :data:`NO_THREAD`.
        self.threads = FewValues()
        #: Subagent references whose ``session_id`` may name a thread of this document: the
        #: step's index, the result's place in its ``observation.results``, the session.
        self.subagent_refs: list[tuple[int, int, str]] = []

    def close(self) -> None:
        """Remove the temporary files (the steps put away, the indices' older entries)."""
        self.store.close()
        for index in (self.by_key, self.used_ids, self.by_step):
            index.close()

    # -- steps ---------------------------------------------------------------------------

    def new_step(self, source: str, line: int) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": len(self.store) + 1, "source": source, "message": ""}
        self.store.pinned = self.store.add(step)
        self.threads.append(NO_THREAD)
        self.current = step
        self.current_has_response = False
        self.report.synthesized("step_ids", line)
        if self.pending:
            self.lines_of(step).extend(self.pending)
            self.pending = []
        if source == "agent" and (self.reasoning or self.reasoning_extra):
            self._take_reasoning(step)
        return step

    def _take_reasoning(self, step: dict[str, Any]) -> None:
        if self.reasoning:
            step["reasoning_content"] = "\n".join(self.reasoning)
        self.reasoning = []
        self.reasoning_extra = {}

    def agent_step(self, line: int) -> dict[str, Any]:
        """The agent step calls go to: the current one, else a new one (``th:`` lines
        pending: always a new one, which takes them; a call that starts another model
        response than the current step's: a new one, so each step holds one response)."""
        current = self.current
        if (
            current is not None
            and current["source"] == "agent"
            and not self.reasoning
            and not (self.new_response and self.current_has_response)
        ):
            return current
        return self.new_step("agent", line)

    def any_step(self, line: int) -> dict[str, Any]:
        if self.current is not None:
            return self.current
        self.report.synthesized("system steps (for lines before any step)", line)
        return self.new_step("system", line)

    def lines_of(self, step: dict[str, Any]) -> list[dict[str, Any]]:
        extra = step.setdefault("extra", {})
        held = extra.setdefault(EXTRA_KEY, {})
        lines: list[dict[str, Any]] = held.setdefault("lines", [])
        return lines

    def keep(self, node: Any, step: dict[str, Any] | None) -> None:
        """Record a line in a step's ``extra.bbox.lines`` (pending until a step exists)."""
        # A bbox document records every physical line, continuations too, so that their
        # order with blank lines survives; otherwise an event carries its continuations.
        rec = record(node, self.sequence, continuation=not self.native)
        if step is None:
            step = self.current
        if step is None:
            self.pending.append(rec)
        else:
            self.lines_of(step).append(rec)

    # -- lines ---------------------------------------------------------------------------

    def feed(self, node: Any) -> None:
        if isinstance(node, Continuation):
            if not self.native:
                if self.seen_event:
                    return  # its event carries it
                self.sequence += 1
                self.report.dropped("continuation lines", node.line)
                return
            # Most lines of a long tool output: recorded as record() records them.
            self.sequence += 1
            rec = {"n": self.sequence, "kind": "continuation", "text": node.text}
            step = self.current
            (self.pending if step is None else self.lines_of(step)).append(rec)
            self.report.extra("continuation lines", node.line)
            return
        self.sequence += 1
        if isinstance(node, BlankLine):
            if self.native:
                self.keep(node, None)
                self.report.extra(f"{node.kind} lines", node.line)
            else:
                self.report.dropped(f"{node.kind} lines", node.line)
            return
        self.seen_event = True
        self.feed_response(node)
        placed, step = self.event(node)
        self.count_response(node, step)
        if step is not None and node.kind != "comment":
            self.note_thread(self.store.index_of(step), node.tid)
        if self.native or not placed:
            self.keep(node, step)

    def note_thread(self, index: int, tid: str | None) -> None:
        held = self.threads[index]
        if held is NO_THREAD:
            self.threads[index] = tid
        elif held is not MIXED and held != tid:
            self.threads[index] = MIXED

    def feed_response(self, event: Event) -> None:
        """Group the line into model responses before it is placed: :attr:`new_response` is
        True when this line starts one (then a call goes to a step of its own: one agent step
        per model response, as harbor gives one per API message)."""
        self.counter.feed(event)
        for ended in self.responses.feed(event):
            self.response_ended(ended.ordinal, ended.usage)
        current = self.responses.current
        self.new_response = (
            current is not None and current.first_line == event.line and line_usage(event) is not None
        )

    def response_ended(self, ordinal: int, usage: Usage) -> None:
        """A model response's usage is final: it waits in its step (summed with the others
        there) until the end decides whether responses give the steps' metrics."""
        index = self.response_step.pop(ordinal, None)
        if index is None or usage is None:
            return
        step = self.store.get(index)
        held = step.get(USAGE)
        step[USAGE] = usage if held is None else held + usage

    def count_response(self, event: Event, step: dict[str, Any] | None) -> None:
        """Note which agent step a response's usage goes to (a ``th:`` line's: the next one's)."""
        current = self.responses.current
        if current is None:
            return
        if step is None or step.get("source") != "agent" or current.ordinal in self.response_step:
            return
        self.response_step[current.ordinal] = self.store.index_of(step)
        self.responded = True
        if step is self.current:
            self.current_has_response = True

    def event(self, event: Event) -> tuple[bool, dict[str, Any] | None]:
        """Map one event: whether it has a natural place, and the step it went to."""
        step = self.place(event)
        return step is not _UNPLACED, (None if step is _UNPLACED else step)

    def place(self, event: Event) -> Any:
        """Map one line to its place: the method named for its kind (``place_user``,
        ``place_comment``, ...), :meth:`call` for every call family but plans, else none
        (:data:`_UNPLACED`). Returns the step it went to (None for a line that waits for
        one, as ``th:`` does)."""
        from bbox_lark.syntax.correlate import FAMILIES

        placer = getattr(self, f"place_{event.kind}", None)
        if placer is None and event.kind in FAMILIES and event.kind != _PLAN:
            placer = self.call
        return self.unplaced(event) if placer is None else placer(event)

    def place_user(self, event: Event) -> Any:
        step = self.new_step("user", event.line)
        self.message(step, event)
        self.report.kept("user messages (u:)", event.line)
        return step

    def place_agent(self, event: Event) -> Any:
        step = self.new_step("agent", event.line)
        self.message(step, event)
        self.report.kept("agent messages (a:)", event.line)
        self.trailing_metrics(step, event)
        return step

    def place_thinking(self, event: Event) -> Any:
        text, found = self.text_of(event)
        self.reasoning.append(found.get("text", text))
        self.report.kept("thinking lines (th: → reasoning_content)", event.line)
        return None

    def place_observation(self, event: Event) -> Any:
        return self.observation(event)

    def place_comment(self, event: Event) -> Any:
        if event.name == "metrics":
            return self.metrics_comment(event)
        if event.text.split()[:1] == [ATIF_COMMENT]:
            return self.atif_comment(event)
        if event.name == "summary" and not self.native:
            # An imported trajectory's closing summary: its final_metrics, in # atif root.
            self.report.kept("the closing summary (→ final_metrics)", event.line)
            return None
        return self.unplaced(event)

    def unplaced(self, event: Event) -> Any:
        """A line with no natural place in ATIF: only its record keeps it."""
        self.report.extra(f"{event.kind} lines", event.line)
        return _UNPLACED

    def text_of(self, event: Event) -> tuple[str, dict[str, Any]]:
        """A message's text: the line's text without its fields, then its continuation text
        (``| …`` lines); and its attachments."""
        own = _without_fields(event)
        more, found = read_attachments(event.continuation)
        if more is None:
            return own, found
        return (own + "\n" + more if own else more), found

    def message(self, step: dict[str, Any], event: Event) -> None:
        text, found = self.text_of(event)
        step["message"] = found.pop("message", found.pop("text", text))
        self.step_fields(step, event, found)

    def step_fields(self, step: dict[str, Any], event: Event, found: dict[str, Any]) -> None:
        ts = event.fields.get("ts")
        if "timestamp" in found:
            step["timestamp"] = found.pop("timestamp")
        elif isinstance(ts, str):
            if event.ts is not None and is_iso(ts):
                step["timestamp"] = ts
            else:
                self.step_extra(step)["ts"] = ts
                self.report.extra("malformed ts= values", event.line)
        model = event.fields.get("model")
        if step["source"] == "agent":
            if "model_name" in found:
                step["model_name"] = found.pop("model_name")
            elif isinstance(model, str):
                step["model_name"] = model
        if event.step is not None:
            self.by_step[event.step] = self.store.index_of(step)
        for key in ("reasoning_effort", "llm_call_count", "is_copied_context", "tool_calls", "observation"):
            if key in found:
                step[key] = found.pop(key)
        if "extra" in found and isinstance(found["extra"], dict):
            step.setdefault("extra", {}).update(found.pop("extra"))
        if found and not self.native:
            self.step_extra(step)["attachments"] = found

    def step_extra(self, step: dict[str, Any]) -> dict[str, Any]:
        extra = step.setdefault("extra", {})
        held: dict[str, Any] = extra.setdefault(EXTRA_KEY, {})
        return held

    def trailing_metrics(self, step: dict[str, Any], event: Event) -> None:
        if event.metrics:
            self.set_metrics(step, event.metric_nodes, {}, event.line)

    def unique_id(self, wanted: str | None, event: Event, ambiguous: bool) -> str:
        if wanted and not ambiguous and wanted not in self._step_ids():
            self.used_ids.add(wanted)
            return wanted
        base = wanted or f"call_{self.sequence}"
        # Each base remembers the last suffix it tried: ids only get used, never freed, so
        # a suffix refused once stays refused (n calls sharing one id cost n, not n²).
        n = self.suffixes.get(base, 1)
        candidate = base if n == 1 else f"{base}~{n}"
        while candidate in self.used_ids or (wanted and candidate == wanted):
            n += 1
            candidate = f"{base}~{n}"
        if n > 1:  # (1 is what a base not held starts from)
            self.suffixes[base] = n
        self.used_ids.add(candidate)
        what = "unique tool_call_ids (an id reused while a call was open)" if wanted else "tool_call_ids"
        self.report.synthesized(what, event.line)
        return candidate

    def _step_ids(self) -> set[str]:
        """The tool_call_ids of the current step, kept up to date as its list grows (read
        again only when the list is another one), so that n calls in one step cost n."""
        calls = self.current.get("tool_calls") if self.current is not None else None
        if not isinstance(calls, list):
            return set()
        held = self.step_ids
        if held is None or held[0] is not calls:
            held = self.step_ids = (calls, [0], set())
        seen, ids = held[1], held[2]
        for tc in calls[seen[0] :]:
            if isinstance(tc, dict) and isinstance(tc.get("tool_call_id"), str):
                ids.add(tc["tool_call_id"])
        seen[0] = len(calls)
        return ids

    def call(self, event: Event) -> dict[str, Any]:
        from bbox_lark.syntax.correlate import AMBIGUOUS, COMPLETION, call_key, is_start

        seq_event = replace(event, line=self.sequence)
        outcome = self.pairer.feed(seq_event)
        if outcome == COMPLETION and self.pairer.completed in self.starts:
            started = self.starts.pop(self.pairer.completed)  # (completed once)
            started_step = self.store.get(started.step)
            self.result(started_step, started, event)
            self.report.kept(f"{event.kind} completions (→ the start's observation result)", event.line)
            return started_step
        _, found = self.text_of(event)
        step = self.agent_step(event.line)
        if event.step is not None:
            self.by_step.setdefault(event.step, self.store.index_of(step))
        key = call_key(event)
        wanted = found.pop("tool_call_id", event.id)
        reused = outcome == AMBIGUOUS or (self.native and wanted in self.used_ids)
        tc_id = self.unique_id(wanted, event, reused)
        name = found.pop("function_name", None)
        if name is None:
            name = event.name or event.kind
        tc: dict[str, Any] = {"tool_call_id": tc_id, "function_name": name}
        if "arguments" in found:
            tc["arguments"] = found.pop("arguments")
        else:
            arguments: dict[str, Any] = {}
            for f in event.field_nodes:
                if f.after_arrow or f.key == "id" or f.key in arguments:
                    continue
                arguments[f.key] = list(f.value) if isinstance(f.value, tuple) else f.value
            if event.args:
                arguments["args" if "args" not in arguments else "_args"] = [
                    list(a) if isinstance(a, tuple) else a for a in event.args
                ]
            tc["arguments"] = arguments
        extra: dict[str, Any] = dict(found.pop("extra", None) or {})
        if wanted is not None and tc_id != wanted:
            extra["id"] = wanted
        if event.kind not in ("tool", "tool_start"):
            extra["kind"] = event.kind
        if extra:
            tc["extra"] = extra
        step.setdefault("tool_calls", []).append(tc)
        self.report.kept(f"{event.kind} calls (→ tool_calls)", event.line)
        ref = CallRef.of(self.store.index_of(step), tc)
        if key is not None:
            self.by_key[key] = ref
        if is_start(event):
            self.starts[self.sequence] = ref
            if event.result is not None:
                tc.setdefault("extra", {})["status"] = event.result.text
        elif event.result is not None:
            self.result(step, ref, event)
        self.trailing_metrics(step, event) if step["source"] == "agent" else None
        return step

    def result(self, step: dict[str, Any], tc: CallRef | None, event: Event) -> None:
        """An observation result for ``tc`` (or for no call) from a result or ``o:``."""
        own = event.result.text if event.result is not None else ""
        more, found = read_attachments(event.continuation)
        content: Any = own if more is None else (own + "\n" + more if own else more)
        result: dict[str, Any] = {}
        referring = ""  # the session a subagent reference names
        if tc is not None:
            result["source_call_id"] = tc.tool_call_id
        if "content" in found:
            content = found.pop("content")
        if content is not None:
            result["content"] = content
        extra: dict[str, Any] = dict(found.pop("extra", None) or {})
        if "subagent_trajectory_ref" in found:
            result["subagent_trajectory_ref"] = found.pop("subagent_trajectory_ref")
        elif event.kind == "subagent" or (
            event.kind == "observation" and tc is not None and tc.kind == "subagent"
        ):
            path = event.fields.get("path")
            session = event.fields.get("session_id")
            if isinstance(path, str) and path:
                ref = {"trajectory_path": path}
                if isinstance(session, str) and session:
                    ref["session_id"] = session
                result["subagent_trajectory_ref"] = [ref]
                self.report.kept("x: path= (→ subagent_trajectory_ref)", event.line)
                if isinstance(session, str) and session:
                    referring = session
            elif isinstance(session, str) and session:
                extra["session_id"] = session
                self.report.extra("x: session_id= without path= (no valid reference since v1.7)", event.line)
        blob = event.result.blob if event.result is not None else None
        if blob is not None:
            extra["blob"] = {"sha256": blob.sha256, "bytes": blob.size, "mime": blob.mime}
            self.report.extra("blob pointers (with their hash)", event.line)
        if extra:
            result["extra"] = extra
        results = step.setdefault("observation", {"results": []})["results"]
        results.append(result)
        if referring:
            self.subagent_refs.append((self.store.index_of(step), len(results) - 1, referring))

    def observation(self, event: Event) -> dict[str, Any]:
        from bbox_lark.syntax.correlate import COMPLETION, call_key

        outcome = self.pairer.feed(replace(event, line=self.sequence))
        found_call = None
        if outcome == COMPLETION and self.pairer.completed in self.starts:
            found_call = self.starts.pop(self.pairer.completed)  # (completed once)
        else:
            key = call_key(event)
            if key is not None:
                found_call = self.by_key.get(key)
        if found_call is not None:
            step = self.store.get(found_call.step)
            self.result(step, found_call, event)
            self.report.kept("o: lines (→ observation.results of their call's step)", event.line)
            return step
        step = self.any_step(event.line)
        self.result(step, None, event)
        if event.id is not None:
            held = step["observation"]["results"][-1]
            held.setdefault("extra", {})["id"] = event.id
            self.report.extra("o: lines with an unknown call id (id in extra)", event.line)
        else:
            self.report.kept("o: lines without a call id", event.line)
        return step

    def metrics_comment(self, event: Event) -> Any:
        from bbox_lark.syntax.values import parse_int

        values = event.metrics or NO_FIELDS
        # The typed step (W014's reading: ASCII digits within range), never int() of the text.
        step_value = parse_int(values.get("step"))
        index = self.by_step.get(step_value) if step_value is not None else None
        target = self.store.get(index) if index is not None else None
        if target is None or target["source"] != "agent" or "metrics" in target:
            self.report.extra("# metrics lines with no agent step to go to", event.line)
            return _UNPLACED
        _, found = read_attachments(event.continuation)
        self.set_metrics(target, [n for n in event.metric_nodes if n.key != "step"], found, event.line)
        self.report.kept("# metrics step=N lines (→ that step's metrics)", event.line)
        return target

    def set_metrics(
        self, step: dict[str, Any], nodes: Iterable[Any], found: dict[str, Any], line: int
    ) -> None:
        from bbox_lark.numbers.usage import METRIC_ALIASES

        if step["source"] != "agent" or step.get("llm_call_count") == 0:
            self.report.extra("metrics of a step that takes none", line)
            return
        names = {
            "prompt": "prompt_tokens",
            "completion": "completion_tokens",
            "cached": "cached_tokens",
            "cost": "cost_usd",
        }
        metrics: dict[str, Any] = step.setdefault("metrics", {})
        self.stated_metrics = True
        extra: dict[str, Any] = dict(found.pop("extra", None) or {})
        for node in nodes:
            value = node.value
            target = names.get(METRIC_ALIASES.get(node.key, ""))
            if target is not None and target not in metrics and isinstance(value, str):
                parsed = json_number(value.removeprefix("$"), target == "cost_usd")
                if parsed is not None:
                    metrics[target] = parsed
                    continue
            extra.setdefault(node.key, list(value) if isinstance(value, tuple) else value)
        for key in ("prompt_token_ids", "completion_token_ids", "logprobs"):
            if key in found:
                metrics[key] = found.pop(key)
        if extra:
            metrics["extra"] = extra

    def atif_comment(self, event: Event) -> Any:
        words = event.text.split()
        text, found = read_attachments(event.continuation)
        if words == [ATIF_COMMENT, "root"]:
            self.root.update(found)
            return None
        if words == [ATIF_COMMENT, "system"]:
            step = self.new_step("system", event.line)
            found.pop("step_id", None)
            step["message"] = found.pop("message", found.pop("text", text or ""))
            self.step_fields(step, event, found)
            self.report.kept("# atif system lines (→ system steps)", event.line)
            return step
        self.report.extra("comment lines", event.line)
        return _UNPLACED


#: What :meth:`TrajectoryWriter.place` returns for a line that has no natural place in ATIF.
_UNPLACED: Any = object()


def json_number(text: str, real: bool) -> int | float | None:
    """The number ``text`` holds, or None (then it travels as text): JSON has no infinity
    or NaN (``1e400``, ``nan``), and ``int()`` refuses more than 4,300 digits."""
    import math

    try:
        number = float(text) if real else int(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _without_fields(event: Event) -> str:
    """A free-text line's text without its ``key=value`` fields, spaces between words kept."""
    text = event.text
    cuts = []
    for node in event.field_nodes:
        if node.after_arrow:
            continue
        start, end = node.col - event.text_col, node.end_col - event.text_col
        if start >= 0 and end <= len(text):
            cuts.append((start, end))
    if not cuts:
        return text
    pieces, last = [], 0
    for start, end in sorted(cuts):
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return " ".join(" ".join(pieces).split())
