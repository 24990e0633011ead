"""Shared by the OTLP tests: a local OTLP/HTTP receiver (the standard library's HTTP server in
a thread) that decodes what ``send`` posts with ``opentelemetry-proto``, and the checks of
every span against the mapping table (``docs/formats/otel.md``)."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bbox_lark.convert.otlp.tables import MAX_ATTRIBUTE_CHARS, ROLES

#: Attributes that hold text and appear only with ``--content``.
CONTENT_KEYS = frozenset(
    {
        "input.value",
        "output.value",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    }
)


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind is not None else None


def decode_protobuf(body: bytes) -> list[dict[str, Any]]:
    """The spans of a protobuf ``ExportTraceServiceRequest``, as plain dicts."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                spans.append(
                    {
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_id": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": span.kind,
                        "start": span.start_time_unix_nano,
                        "end": span.end_time_unix_nano,
                        "attributes": {kv.key: _value(kv.value) for kv in span.attributes},
                        "status": span.status.code,
                        "message": span.status.message,
                        "resource": {kv.key: _value(kv.value) for kv in resource.resource.attributes},
                    }
                )
    return spans


def _json_value(value: dict[str, Any]) -> Any:
    ((kind, held),) = value.items()
    return int(held) if kind == "intValue" else held


def decode_json(text: str) -> list[dict[str, Any]]:
    """The spans of OTLP/JSON requests (one per line), as plain dicts (the same as
    :func:`decode_protobuf` gives)."""
    spans = []
    for line in text.splitlines():
        if not line.strip():
            continue
        request = json.loads(line)
        for resource in request["resourceSpans"]:
            attributes = {a["key"]: _json_value(a["value"]) for a in resource["resource"]["attributes"]}
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    spans.append(
                        {
                            "trace_id": span["traceId"],
                            "span_id": span["spanId"],
                            "parent_id": span.get("parentSpanId", ""),
                            "name": span["name"],
                            "kind": span["kind"],
                            "start": int(span["startTimeUnixNano"]),
                            "end": int(span["endTimeUnixNano"]),
                            "attributes": {a["key"]: _json_value(a["value"]) for a in span["attributes"]},
                            "status": span["status"].get("code", 0),
                            "message": span["status"].get("message", ""),
                            "resource": attributes,
                        }
                    )
    return spans


def check_spans(spans: list[dict[str, Any]], *, content: bool = False) -> None:
    """Every span as the mapping table says: one root ``invoke_agent`` per trace, every
    parent in its trace, both vocabularies, usage in both, no span ending before it starts,
    text only with ``content``, attributes within the size limit."""
    assert spans
    ids = [(s["trace_id"], s["span_id"]) for s in spans]
    assert len(set(ids)) == len(ids), "span ids are unique"
    by_trace: dict[str, set[str]] = {}
    for span in spans:
        by_trace.setdefault(span["trace_id"], set()).add(span["span_id"])
    roots: dict[str, int] = {}
    for span in spans:
        attributes = span["attributes"]
        operation = attributes["gen_ai.operation.name"]
        name, kind, openinference = ROLES[
            {"invoke_agent": "agent", "chat": "chat", "execute_tool": "tool"}[operation]
        ]
        assert span["name"] == name or span["name"].startswith(name + " "), span["name"]
        assert span["kind"] == kind
        assert attributes["openinference.span.kind"] == openinference
        assert attributes.get("session.id") or attributes.get("gen_ai.conversation.id")
        assert span["end"] >= span["start"] > 0
        assert len(span["trace_id"]) == 32 and len(span["span_id"]) == 16
        if span["parent_id"]:
            assert span["parent_id"] in by_trace[span["trace_id"]], f"parent of {span['name']} is sent"
        else:
            assert operation == "invoke_agent"
            roots[span["trace_id"]] = roots.get(span["trace_id"], 0) + 1
        if operation == "execute_tool":
            tool = attributes["gen_ai.tool.name"]
            assert attributes["tool.name"] == tool and span["name"] == f"execute_tool {tool}"
            assert span["status"] in (0, 1, 2)
            if attributes.get("bbox.call.completed") is False:
                assert span["status"] == 0
        if operation == "chat":
            pairs = (
                ("gen_ai.usage.input_tokens", "llm.token_count.prompt"),
                ("gen_ai.usage.output_tokens", "llm.token_count.completion"),
                ("gen_ai.usage.cache_read.input_tokens", "llm.token_count.prompt_details.cache_read"),
                ("gen_ai.usage.cost", "llm.cost.total"),
            )
            for genai, openinference_key in pairs:
                assert attributes.get(genai) == attributes.get(openinference_key)
            if (
                "gen_ai.usage.cache_read.input_tokens" in attributes
                and "gen_ai.usage.input_tokens" in attributes
            ):
                cached = attributes["gen_ai.usage.cache_read.input_tokens"]
                assert attributes["gen_ai.usage.input_tokens"] >= cached
            if "gen_ai.usage.cost" in attributes:
                assert attributes["bbox.cost.source"] in ("stated", "estimated")
        held = CONTENT_KEYS & set(attributes)
        assert content or not held, f"content without --content: {held}"
        for value in attributes.values():
            if isinstance(value, str):
                assert len(value) <= MAX_ATTRIBUTE_CHARS
    assert roots == {trace: 1 for trace in by_trace}, "one root span per trace"


@dataclass
class Received:
    path: str
    #: Header names in lower case.
    headers: dict[str, str]
    body: bytes
    spans: list[dict[str, Any]] = field(default_factory=list)


class Receiver:
    """An OTLP/HTTP receiver on localhost: it decodes every request (protobuf or JSON, gzip
    or not) and answers with the statuses it is given first (``play``), then 200."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.answers: list[tuple[int, str, dict[str, str]]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with receiver.lock:
                    answer = receiver.answers.pop(0) if receiver.answers else (200, "", {})
                status, text, extra = answer
                if status == 200:
                    raw = gzip.decompress(body) if self.headers.get("Content-Encoding") == "gzip" else body
                    kind = self.headers.get("Content-Type", "")
                    if kind == "application/x-protobuf":
                        spans = decode_protobuf(raw)
                    elif kind == "application/json":
                        spans = decode_json(raw.decode("utf-8"))
                    else:
                        status, text, spans = 415, f"unsupported content type {kind!r}", []
                    with receiver.lock:
                        receiver.requests.append(
                            Received(self.path, {k.lower(): v for k, v in self.headers.items()}, raw, spans)
                        )
                payload = text.encode()
                self.send_response(status)
                for key, value in extra.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                del format, args

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def play(self, *answers: tuple[int, str] | tuple[int, str, dict[str, str]]) -> None:
        for answer in answers:
            self.answers.append((answer[0], answer[1], answer[2] if len(answer) > 2 else {}))  # type: ignore[misc]

    @property
    def spans(self) -> list[dict[str, Any]]:
        return [span for request in self.requests for span in request.spans]

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def tree(spans: Iterable[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(trace, span, parent) of each span: the parent-child tree as sent."""
    return {(s["trace_id"], s["span_id"], s["parent_id"]) for s in spans}
