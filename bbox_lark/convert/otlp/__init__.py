"""OTLP: a session as OpenTelemetry GenAI traces (``--to otlp``; write only), the format
``bbox-lark send`` posts to a collector, Arize Phoenix or Langfuse. The full description is
``docs/formats/otel.md``; the mapping table is :data:`.tables.EXPORT_MAPPING`.

One trace per session: a root ``invoke_agent {agent}`` span, a ``chat {model}`` span per
model response, an ``execute_tool {tool}`` span per call, subagents as ``invoke_agent``
spans under the call that launched them; each span carries the OpenTelemetry GenAI semantic
conventions (:data:`.tables.SEMCONV_VERSION`) and OpenInference's names. Spans are built as
the document streams (:mod:`.spans`) and written in batches of at most
:data:`.tables.BATCH_SPANS`, each a whole ``ExportTraceServiceRequest``:

- ``protobuf`` (the default): the batches' bytes one after the other, which protobuf reads as
  one request (repeated fields of concatenated messages are appended);
- ``json``: one OTLP/JSON request per line (as the OpenTelemetry Collector's file exporter
  writes them).

Protobuf needs ``opentelemetry-proto`` (``pip install 'bbox-lark[otel]'``); JSON does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, TextIO

from bbox_lark.convert.base import ConvertError, Format, Option, WriteContext, flatten
from bbox_lark.convert.otlp.encode import MISSING_EXTRA, MissingOtelExtra, to_json, to_protobuf
from bbox_lark.convert.otlp.parts import Span, trace_id_for
from bbox_lark.convert.otlp.spans import SpanBuilder, session_spans
from bbox_lark.convert.otlp.tables import BATCH_SPANS, EXPORT_MAPPING, MAX_ATTRIBUTE_CHARS, SEMCONV_VERSION
from bbox_lark.syntax.nodes import Head

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item

__all__ = [
    "BATCH_SPANS",
    "EXPORT_MAPPING",
    "FORMAT",
    "MAX_ATTRIBUTE_CHARS",
    "MISSING_EXTRA",
    "SEMCONV_VERSION",
    "Batch",
    "MissingOtelExtra",
    "Span",
    "SpanBuilder",
    "batches",
    "session_spans",
    "trace_id_for",
    "write",
]

#: The encodings ``--otlp-encoding`` takes.
ENCODINGS = ("protobuf", "json")


class Batch:
    """At most :data:`BATCH_SPANS` spans of one session, with what encoding them needs."""

    __slots__ = ("session_id", "spans", "trace_id")

    def __init__(self, spans: list[Span], trace_id: bytes, session_id: str) -> None:
        self.spans = spans
        self.trace_id = trace_id
        self.session_id = session_id

    def protobuf(self) -> bytes:
        return to_protobuf(self.spans, self.trace_id, self.session_id)

    def json(self) -> str:
        return to_json(self.spans, self.trace_id, self.session_id)


def batches(items: Iterable[Item], ctx: WriteContext, size: int = BATCH_SPANS) -> Iterator[Batch]:
    """The session's spans in batches of at most ``size``, as they end (bounded memory)."""
    stream = iter(flatten(items))
    head = next(stream, None)
    if not isinstance(head, Head):
        return
    builder = SpanBuilder(head, ctx.report, content=bool(ctx.options.get("content")))
    held: list[Span] = []

    def spans() -> Iterator[Span]:
        for node in stream:
            yield from builder.feed(node)
        yield from builder.finish()

    for span in spans():
        held.append(span)
        if len(held) >= size:
            yield Batch(held, builder.trace_id, builder.session_id)
            held = []
    if held:
        yield Batch(held, builder.trace_id, builder.session_id)
    ctx.report.kept("spans written", 0, builder.spans)


def write(items: Iterable[Item], out: TextIO, ctx: WriteContext) -> None:
    """The stream as OTLP: protobuf bytes (carried by the text stream as ``surrogateescape``
    text, so a binary file gets them exactly) or OTLP/JSON lines."""
    encoding = ctx.options.get("otlp_encoding") or "protobuf"
    if encoding == "protobuf":
        try:
            from bbox_lark.convert.otlp.encode import load_proto

            load_proto()
        except MissingOtelExtra:
            raise ConvertError(MISSING_EXTRA) from None
    for batch in batches(items, ctx):
        if encoding == "json":
            out.write(batch.json() + "\n")
        else:
            out.write(batch.protobuf().decode("utf-8", "surrogateescape"))


def _sniff(text: str) -> int:
    del text
    return 0


FORMAT = Format(
    name="otlp",
    description="OpenTelemetry traces (OTLP protobuf or JSON; GenAI and OpenInference attributes), write"
    " only; docs/formats/otel.md",
    extensions=(".otlp", ".pb"),
    sniff=_sniff,
    read=None,
    write=write,
    fidelity="write only: one trace per session; calls, responses, usage, subagents and times as spans;"
    " text only with --content; comments, continuation and unknown lines are not carried",
    lossless=False,
    options=(
        Option(
            "otlp_encoding",
            "otlp output: protobuf (the default; needs the otel extra) or json (OTLP/JSON, one request"
            " a line).",
            default=None,
            choices=ENCODINGS,
        ),
        Option(
            "content",
            "otlp output: put message and tool text on the spans (secrets redacted; off by default).",
            default=False,
        ),
    ),
    export_mapping=EXPORT_MAPPING,
)
