"""A session's document stream as OpenTelemetry spans, in bounded memory.

:class:`SpanBuilder` takes the stream (a head, then body nodes) one item at a time and hands
out each :class:`Span` as soon as it ends: a call's span at its completion, a model
response's span when the next response of its thread begins, a subagent's span when the call
that launched it completes, the root span last. What it holds meanwhile is the open calls,
one response per thread and one span per open thread. The parts (the span record, the clock,
ids, the usage attributes) are in :mod:`.parts`, the mapping in :mod:`.tables`
(``docs/formats/otel.md``). Nothing here needs ``opentelemetry-proto``: :mod:`.encode` turns
spans into OTLP messages.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from bbox_lark.convert.otlp.parts import (
    SYNTHETIC_BASE_NS,
    AttributeValue,
    Clock,
    Open,
    Span,
    cut,
    estimate,
    trace_id_for,
    usage_attributes,
)
from bbox_lark.convert.otlp.tables import (
    AGENT_KEYS,
    HEADER_KEYS,
    KIND_INTERNAL,
    LAUNCHERS,
    OUTCOME_STATUS,
    RESPONSE_BREAKS,
    RESPONSE_KINDS,
    ROLES,
    SEMCONV_VERSION,
    STATUS_ERROR,
    STATUS_UNSET,
)
from bbox_lark.numbers.outcomes import call_outcome
from bbox_lark.numbers.usage import Usage, line_usage, read_totals
from bbox_lark.syntax.correlate import AMBIGUOUS, CALL, COMPLETION, FAMILIES, Pairer, call_key, is_start
from bbox_lark.syntax.nodes import Continuation, Event

if TYPE_CHECKING:
    from bbox_lark.convert.base import Fidelity
    from bbox_lark.syntax.nodes import Head


class SpanBuilder:
    """Spans of one session, as a stream: :meth:`feed` each body node, then :meth:`finish`."""

    def __init__(self, head: Head, report: Fidelity, *, content: bool = False) -> None:
        info = head.header_info
        fields: Mapping[str, Any] = info.fields if info is not None else {}
        session = fields.get("id")
        self.report = report
        self.content = content
        if isinstance(session, str) and session.strip():
            self.session_id = session
        else:
            text = "".join(line.raw + line.eol for line in head.header_lines)
            self.session_id = (
                "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
            )
            report.synthesized("session ids for the trace (the header has no id; from the header's text)")
        self.trace_id = trace_id_for(self.session_id)
        agent = next(
            (str(fields[k]) for k in AGENT_KEYS if isinstance(fields.get(k), str) and fields[k]), "agent"
        )
        self.agent = agent
        model = fields.get("model")
        self.model: str | None = model if isinstance(model, str) and model else None
        self.clock = Clock()
        self._start: int | None = None
        self._pairer = Pairer()
        self._calls: dict[int, Open] = {}  # position -> open call span, in start order
        self._starts: dict[int, list[int]] = {}  # start line -> positions (built lines share one)
        self._chats: dict[str | None, Open] = {}  # thread -> its current response
        self._threads: dict[str, Open] = {}  # tid -> its open invoke_agent span
        self._last_content: tuple[Open, str] | None = None
        self._pending_input: str | None = None
        self._first_input: str | None = None
        self._last_output: str | None = None
        self._stated_cost: Decimal | None = None
        self._synthetic_any = False
        self.spans = 0
        #: The body node being read, counted from 1 (its line in the bbox form of the
        #: session): with the role, what a span's id is made from.
        self.position = 0
        root_attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": self.session_id,
            "session.id": self.session_id,
            "openinference.span.kind": "AGENT",
            "bbox.semconv.version": SEMCONV_VERSION,
        }
        for key in HEADER_KEYS:
            value = fields.get(key)
            if isinstance(value, str) and value:
                root_attributes[f"bbox.header.{key}"] = cut(value, 1024)
        self.root = Span(
            self.span_id("agent", 0), b"", f"invoke_agent {agent}", KIND_INTERNAL, 0, 0, root_attributes
        )

    # -- ids and small helpers ----------------------------------------------------------

    def span_id(self, role: str, line: int) -> bytes:
        """A span's id: from the trace id, the span's role and its line in the session's bbox
        form (:attr:`position`)."""
        digest = hashlib.sha256(self.trace_id + f"{role}\0{line}".encode()).digest()
        return digest[:8] if any(digest[:8]) else digest[8:16]

    def _parent(self, tid: str | None, line: int, now: int) -> bytes:
        """The span a line of thread ``tid`` belongs under: its thread's agent span."""
        if tid is None:
            return self.root.span_id
        thread = self._threads.get(tid)
        if thread is None:
            thread = self._open_thread(tid, line, now)
        return thread.span.span_id

    def _open_thread(self, tid: str, line: int, now: int) -> Open:
        """A new ``tid=`` thread: an ``invoke_agent`` span under the open call that launched it
        (an ``x:`` call's own subagent span, else the latest open Task/Agent call, else the
        latest open call of another thread), else under the root."""
        candidates = [call for call in self._calls.values() if call.tid != tid and call.thread is None]
        launcher = next((c for c in candidates if c.child is not None), None)  # the oldest x: call
        if launcher is None:
            latest = candidates[::-1]
            launcher = next((c for c in latest if c.event is not None and c.event.name in LAUNCHERS), None)
            if launcher is None and latest:
                launcher = latest[0]
        parent = launcher.span.span_id if launcher is not None else self.root.span_id
        span = Span(
            self.span_id(f"thread:{tid}", self.position),
            parent,
            f"invoke_agent {tid}",
            KIND_INTERNAL,
            now,
            now,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": tid,
                "gen_ai.agent.id": tid,
                "gen_ai.conversation.id": self.session_id,
                "session.id": self.session_id,
                "openinference.span.kind": "AGENT",
                "bbox.tid": tid,
            },
            line=line,
        )
        opened = Open(span, False, tid=tid)
        if launcher is not None:
            launcher.thread = tid
        self._threads[tid] = opened
        self.report.kept("subagent threads (tid=) as invoke_agent spans", line)
        return opened

    def _text(self, value: str) -> str:
        """Content as it may leave: secrets replaced, cut to the attribute limit."""
        from bbox_lark.secrets.scanner import redact_secrets

        redacted, found = redact_secrets(value)
        if found:
            self.report.note("kept", "secrets in span content (redacted)", 0, len(found))
        return cut(redacted)

    def _emit(self, opened: Open, end: int) -> Span:
        span = opened.span
        span.end_ns = max(end, span.start_ns)
        if opened.synthetic:
            span.attributes["bbox.time.synthetic"] = True
        self.spans += 1
        return span

    # -- the stream ---------------------------------------------------------------------

    def feed(self, node: object) -> list[Span]:
        """Take the next body node; return the spans it ended."""
        self.position += 1
        if not isinstance(node, Event):
            if isinstance(node, Continuation):
                if self.content and self._last_content is not None:
                    opened, slot = self._last_content
                    if slot == "texts" and opened.texts:
                        opened.texts[-1] += "\n" + node.text
                    elif slot == "input" and opened.input_text is not None:
                        opened.input_text += "\n" + node.text
                    self.report.kept("continuation lines (in span content, --content)", node.line)
                else:
                    self.report.dropped(
                        "continuation lines (no span attribute; --content keeps text)", node.line
                    )
            return []
        now, synthetic = self.clock.at(event := node)
        if self._start is None:
            self._start = now
            self.root.start_ns = now
        if synthetic:
            self._synthetic_any = True
        kind = event.kind
        done: list[Span] = []
        self._last_content = None
        if kind == "comment":
            self._comment(event)
            return done
        if kind == "lifecycle":
            if event.name == "end":
                cost = read_totals(event.fields).cost
                if cost is not None:
                    self._stated_cost = cost
            self.report.dropped("lifecycle lines (times and the stated cost only)", event.line)
            return done
        if kind == "unknown":
            self.report.dropped("unknown lines", event.line)
            return done
        model = event.fields.get("model")
        if isinstance(model, str) and model:
            self.model = model
        tid = event.tid
        if tid is not None and tid in self._threads:
            thread = self._threads[tid].span
            thread.end_ns = max(thread.end_ns, now)
        if kind in RESPONSE_BREAKS:
            chat = self._chats.get(tid)
            if chat is not None:
                chat.ended = True
            if kind == "user":
                text = self._event_text(event)
                if self._first_input is None:
                    self._first_input = text
                self._pending_input = text
            if kind == "user":
                self.report.kept("user lines (as the next chat span's input)", event.line)
        if kind in RESPONSE_KINDS or kind in FAMILIES:
            done.extend(self._response_line(event, tid, now, synthetic))
        if event.metrics:
            self._attach_metrics(tid, event.step, event.metrics, event.line)
        outcome = self._pairer.feed(event)
        if outcome in (CALL, AMBIGUOUS):
            done.extend(self._call(event, tid, now, synthetic, outcome == AMBIGUOUS))
        elif outcome == COMPLETION:
            closed = self._opened(self._pairer.completed, event)
            if closed is not None:
                done.extend(self._complete(closed, event, now, synthetic))
        elif kind == "observation":
            self.report.dropped("observations that complete no call", event.line)
        return done

    def _event_text(self, event: Event) -> str:
        from bbox_lark.syntax.text import text_of

        return text_of(event)

    def _comment(self, event: Event) -> None:
        name = event.name
        if name == "model":
            text = event.raw.split(":", 1)[1].split() if ":" in event.raw else []
            if text:
                self.model = text[0]
            self.report.dropped("comment lines (# model: switches the model)", event.line)
        elif name == "metrics":
            self._attach_metrics(None, None, event.metrics or event.fields, event.line)
        elif name == "summary":
            cost = read_totals(event.fields).cost
            if cost is not None and self._stated_cost is None:
                self._stated_cost = cost
            self.report.dropped("comment lines (the summary's cost goes on the root span)", event.line)
        else:
            self.report.dropped("comment lines", event.line)

    def _response_line(self, event: Event, tid: str | None, now: int, synthetic: bool) -> list[Span]:
        """A line of a model response: it joins its thread's current response or starts one."""
        usage = line_usage(event)
        key = (usage.tokens_in, usage.tokens_cached) if usage is not None else None
        step = event.step
        chat = self._chats.get(tid)
        done: list[Span] = []
        joins = (
            chat is not None
            and not chat.ended
            and (key is None or chat.key is None or key == chat.key)
            and (step is None or chat.step is None or step == chat.step)
        )
        if event.kind not in RESPONSE_KINDS and chat is None:
            joins = False
        if not joins and event.kind not in RESPONSE_KINDS and chat is not None and not chat.ended:
            joins = key is None  # a call line without usage belongs to the response before it
        if joins and chat is not None:
            if key is not None and chat.key is None:
                chat.key = key
            chat.step = chat.step if chat.step is not None else step
            chat.span.end_ns = max(chat.span.end_ns, now)
            chat.synthetic = chat.synthetic or synthetic
        else:
            if event.kind not in RESPONSE_KINDS and usage is None:
                return done  # a call line outside any response
            if chat is not None:
                done.append(self._finish_chat(chat))
            chat = self._new_chat(event, tid, now, synthetic, key, step)
            self._chats[tid] = chat
        if usage is not None:
            held = chat.usage
            out = usage.tokens_out
            if held is not None and held.tokens_out is not None and (out is None or held.tokens_out > out):
                out = held.tokens_out
            chat.usage = Usage(usage.tokens_in, out, usage.tokens_cached)
        if event.kind in RESPONSE_KINDS and self.content:
            text = self._event_text(event)
            chat.texts.append(("[thinking] " if event.kind == "thinking" else "") + text)
            self._last_content = (chat, "texts")
            if event.kind == "agent":
                self._last_output = text
        return done

    def _new_chat(
        self, event: Event, tid: str | None, now: int, synthetic: bool, key: Any, step: int | None
    ) -> Open:
        model = self.model
        span = Span(
            self.span_id("chat", self.position),
            self._parent(tid, event.line, now),
            f"chat {model}" if model else "chat",
            ROLES["chat"][1],
            now,
            now,
            {
                "gen_ai.operation.name": "chat",
                "openinference.span.kind": "LLM",
                "session.id": self.session_id,
            },
            line=event.line,
        )
        if model:
            span.attributes.update(
                {"gen_ai.request.model": model, "gen_ai.response.model": model, "llm.model_name": model}
            )
        if step is not None:
            span.attributes["bbox.step"] = step
        chat = Open(span, synthetic, event, tid, key, step, model=model)
        if self.content and self._pending_input is not None:
            chat.input_text = self._pending_input
        self._pending_input = None
        self.report.kept("model responses as chat spans", event.line)
        return chat

    def _attach_metrics(
        self, tid: str | None, step: int | None, metrics: Mapping[str, Any], line: int
    ) -> None:
        """``# metrics`` (trailing, or a ``# metrics step=N`` line) go on the response of that
        step (the thread's current one)."""
        chat = self._chats.get(tid)
        if step is None:
            raw = metrics.get("step")
            step = int(raw) if isinstance(raw, str) and raw.isdigit() else None
        if chat is None or (step is not None and chat.step is not None and step != chat.step):
            self.report.dropped("# metrics matched to no model response", line)
            return
        chat.metrics = read_totals(metrics)
        cache_write = metrics.get("cache_creation_input_tokens") or metrics.get(
            "extra.cache_creation_input_tokens"
        )
        if isinstance(cache_write, str) and cache_write.isdigit():
            chat.span.attributes["gen_ai.usage.cache_creation.input_tokens"] = int(cache_write)
            chat.span.attributes["llm.token_count.prompt_details.cache_write"] = int(cache_write)
        self.report.kept("# metrics (usage and cost of the chat span of their step)", line)

    def _finish_chat(self, chat: Open) -> Span:
        """A response's span, with its usage (from ``# metrics`` when they state tokens, else
        from its lines) and cost (stated, else estimated)."""
        attributes = chat.span.attributes
        input_tokens: int | None = None
        cached: int | None = None
        output: int | None = None
        cost: Decimal | None = None
        metrics = chat.metrics
        if metrics is not None and (metrics.prompt is not None or metrics.completion is not None):
            cached = metrics.cached
            input_tokens = metrics.prompt
            if input_tokens is not None and cached is not None and cached > input_tokens:
                input_tokens += cached  # §13: then the prompt is taken as uncached
            output = metrics.completion
        elif chat.usage is not None:
            input_tokens = chat.usage.input_with_cache
            cached = chat.usage.tokens_cached
            output = chat.usage.tokens_out
        if metrics is not None and metrics.cost is not None:
            cost = metrics.cost
            attributes["bbox.cost.source"] = "stated"
        elif input_tokens is not None or output is not None:
            cost = self._estimate(chat.model, input_tokens, cached, output)
            if cost is not None:
                attributes["bbox.cost.source"] = "estimated"
        usage_attributes(attributes, input_tokens, cached, output, cost)
        if self.content:
            if chat.input_text is not None:
                text = self._text(chat.input_text)
                attributes["input.value"] = text
                attributes["gen_ai.input.messages"] = cut(
                    json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": text}]}], ensure_ascii=False
                    )
                )
            if chat.texts:
                text = self._text("\n".join(chat.texts))
                attributes["output.value"] = text
                attributes["gen_ai.output.messages"] = cut(
                    json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": text}]}],
                        ensure_ascii=False,
                    )
                )
        return self._emit(chat, chat.span.end_ns)

    def _estimate(
        self, model: str | None, input_tokens: int | None, cached: int | None, output: int | None
    ) -> Decimal | None:
        if model is None:
            return None
        uncached = None if input_tokens is None else input_tokens - (cached or 0)
        return estimate(model, uncached, output, cached)

    def _call(self, event: Event, tid: str | None, now: int, synthetic: bool, ambiguous: bool) -> list[Span]:
        name = event.name or event.kind
        key = call_key(event)
        span = Span(
            self.span_id("tool", self.position),
            self._parent(tid, event.line, now),
            f"execute_tool {name}",
            KIND_INTERNAL,
            now,
            now,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "tool.name": name,
                "openinference.span.kind": "TOOL",
                "session.id": self.session_id,
                "bbox.call.kind": event.kind,
            },
            line=event.line,
        )
        if key is not None:
            span.attributes["gen_ai.tool.call.id"] = key[1]
        if event.step is not None:
            span.attributes["bbox.step"] = event.step
        if ambiguous:
            span.attributes["bbox.call.pairing"] = "ambiguous"
        if self.content:
            arguments = {"args": list(event.args), "fields": {k: v for k, v in event.fields.items()}}
            text = self._text(json.dumps(arguments, ensure_ascii=False))
            span.attributes["gen_ai.tool.call.arguments"] = text
            span.attributes["input.value"] = text
        opened = Open(span, synthetic, event, tid)
        if event.kind == "subagent":
            child = Span(
                self.span_id("subagent", self.position),
                span.span_id,
                f"invoke_agent {name}",
                KIND_INTERNAL,
                now,
                now,
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": name,
                    "openinference.span.kind": "AGENT",
                    "session.id": self.session_id,
                },
                line=event.line,
            )
            opened.child = Open(child, synthetic, event, tid)
        if is_start(event):
            self._calls[self.position] = opened
            self._starts.setdefault(event.line, []).append(self.position)
            return []
        return self._complete(opened, None, now, synthetic)

    def _opened(self, line: int, completion: Event) -> Open | None:
        """The open call a completion closes: started on ``line`` (the pairer's answer) and,
        where lines built from one record share a number, with the completion's key."""
        positions = self._starts.get(line)
        if not positions:
            return None
        key = call_key(completion)
        chosen = positions[0]
        for position in positions:
            start = self._calls[position].event
            if start is not None and call_key(start) == key:
                chosen = position
                break
        positions.remove(chosen)
        if not positions:
            del self._starts[line]
        return self._calls.pop(chosen)

    def _complete(self, opened: Open, completion: Event | None, now: int, synthetic: bool) -> list[Span]:
        assert opened.event is not None
        outcome = call_outcome(opened.event, completion)
        span = opened.span
        span.status = OUTCOME_STATUS.get(outcome, STATUS_UNSET)
        span.attributes["bbox.call.outcome"] = outcome
        if span.status == STATUS_ERROR:
            result = (completion or opened.event).result
            span.status_message = cut(result.text if result is not None else outcome, 1024)
        opened.synthetic = opened.synthetic or synthetic
        if self.content:
            result = (completion or opened.event).result
            if result is not None:
                from bbox_lark.syntax.text import text_of

                text = self._text(text_of(result))
                span.attributes["gen_ai.tool.call.result"] = text
                span.attributes["output.value"] = text
        done: list[Span] = []
        named = completion.fields.get("session_id") if completion is not None else None
        tid = named if isinstance(named, str) and named in self._threads else opened.thread
        thread = self._threads.pop(tid, None) if tid is not None else None
        if thread is not None:
            # The thread's own span is this call's subagent (its parent is settled now: the
            # completion names the thread, else it was the call open when the thread began).
            thread.span.parent_id = span.span_id
            chat = self._chats.pop(tid, None)
            if chat is not None:
                done.append(self._finish_chat(chat))
            done.append(self._emit(thread, max(thread.span.end_ns, thread.span.start_ns)))
        elif opened.child is not None:
            done.append(self._emit(opened.child, now))
        self.report.kept("calls as execute_tool spans", span.line)
        done.append(self._emit(opened, now))
        return done

    def finish(self) -> list[Span]:
        """The spans still open, ended with the session: calls never completed (status
        UNSET, ``bbox.call.completed`` false), responses, threads, then the root."""
        end = self.clock.now if self.clock.now is not None else SYNTHETIC_BASE_NS
        if self._start is None:
            self.root.start_ns = end
            self.report.synthesized("span times (the session states no time; from 2000-01-01)")
        done: list[Span] = [self._finish_chat(chat) for chat in self._chats.values()]
        self._chats.clear()
        for opened in self._calls.values():
            span = opened.span
            span.status = STATUS_UNSET
            span.attributes["bbox.call.completed"] = False
            span.attributes["bbox.call.outcome"] = "pending"
            self.report.synthesized(
                "ends of calls never completed (at the session's end, status UNSET)", span.line
            )
            if opened.child is not None:
                done.append(self._emit(opened.child, end))
            done.append(self._emit(opened, end))
        self._calls.clear()
        self._starts.clear()
        for tid, thread in self._threads.items():
            if thread.span.end_ns < end:
                thread.span.end_ns = end
            if not any(s is thread.span for s in done):
                done.append(self._emit(thread, end))
            del tid
        self._threads.clear()
        if self.clock.synthetic_lines:
            self.report.synthesized(
                "line times (no ts=: the last time + 1 ms, bbox.time.synthetic)",
                0,
                self.clock.synthetic_lines,
            )
        root = self.root
        if self._stated_cost is not None:
            root.attributes["bbox.session.cost_usd"] = float(self._stated_cost)
            root.attributes["bbox.cost.source"] = "stated"
        if self.content:
            if self._first_input is not None:
                root.attributes["input.value"] = self._text(self._first_input)
            if self._last_output is not None:
                root.attributes["output.value"] = self._text(self._last_output)
        root.end_ns = max(end, root.start_ns)
        if self._synthetic_any:
            root.attributes["bbox.time.synthetic"] = True
        self.spans += 1
        done.append(root)
        return done


def session_spans(items: Iterator[Any], report: Fidelity, *, content: bool = False) -> Iterator[Span]:
    """The spans of one session's document stream (a head first), each as soon as it ends."""
    head = next(items, None)
    if head is None:
        return
    builder = SpanBuilder(head, report, content=content)
    for node in items:
        yield from builder.feed(node)
    yield from builder.finish()
