"""Spans as OTLP messages: an ``ExportTraceServiceRequest`` in protobuf (built with
``opentelemetry-proto``, the ``otel`` extra) or in OTLP/JSON (written here, as the OTLP
specification lays it out: ids in hex, enums as numbers, 64-bit integers as strings)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bbox_lark.convert.otlp.parts import AttributeValue, Span
from bbox_lark.convert.otlp.tables import SCHEMA_URL, SCOPE_NAME, SERVICE_NAME
from bbox_lark.errors import MissingExtraError

#: The hint when ``opentelemetry-proto`` is missing.
MISSING_EXTRA = "OTLP protobuf needs opentelemetry-proto: pip install 'bbox-lark[otel]'"


class MissingOtelExtra(MissingExtraError):
    """``opentelemetry-proto`` is not installed (the ``otel`` extra)."""


def _version() -> str:
    from bbox_lark import __version__

    return __version__


def _resource_attributes(session_id: str) -> dict[str, AttributeValue]:
    return {
        "service.name": SERVICE_NAME,
        "telemetry.sdk.name": "bbox-lark",
        "telemetry.sdk.language": "python",
        "telemetry.sdk.version": _version(),
        "bbox.session.id": session_id,
    }


def load_proto() -> Any:
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
        from opentelemetry.proto.common.v1 import common_pb2
        from opentelemetry.proto.resource.v1 import resource_pb2
        from opentelemetry.proto.trace.v1 import trace_pb2
    except ImportError:
        raise MissingOtelExtra(MISSING_EXTRA) from None
    return trace_service_pb2, common_pb2, resource_pb2, trace_pb2


def _any_value(common: Any, value: AttributeValue) -> Any:
    if isinstance(value, bool):
        return common.AnyValue(bool_value=value)
    if isinstance(value, int):
        return common.AnyValue(int_value=value)
    if isinstance(value, float):
        return common.AnyValue(double_value=value)
    return common.AnyValue(string_value=value)


def _key_values(common: Any, attributes: dict[str, AttributeValue]) -> list[Any]:
    return [common.KeyValue(key=key, value=_any_value(common, value)) for key, value in attributes.items()]


def to_protobuf(spans: Sequence[Span], trace_id: bytes, session_id: str) -> bytes:
    """One ``ExportTraceServiceRequest`` holding ``spans`` (one resource, one scope), as
    protobuf bytes. Raises :class:`MissingOtelExtra` without ``opentelemetry-proto``."""
    service, common, resource, trace = load_proto()
    scope = common.InstrumentationScope(name=SCOPE_NAME, version=_version())
    made = [
        trace.Span(
            trace_id=trace_id,
            span_id=span.span_id,
            parent_span_id=span.parent_id,
            name=span.name,
            kind=span.kind,
            start_time_unix_nano=span.start_ns,
            end_time_unix_nano=span.end_ns,
            attributes=_key_values(common, span.attributes),
            status=trace.Status(code=span.status, message=span.status_message),
        )
        for span in spans
    ]
    request = service.ExportTraceServiceRequest(
        resource_spans=[
            trace.ResourceSpans(
                resource=resource.Resource(attributes=_key_values(common, _resource_attributes(session_id))),
                scope_spans=[trace.ScopeSpans(scope=scope, spans=made, schema_url=SCHEMA_URL)],
                schema_url=SCHEMA_URL,
            )
        ]
    )
    data: bytes = request.SerializeToString(deterministic=True)
    return data


def _json_value(value: AttributeValue) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value}


def _json_attributes(attributes: dict[str, AttributeValue]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _json_value(value)} for key, value in attributes.items()]


def to_json(spans: Sequence[Span], trace_id: bytes, session_id: str) -> str:
    """One ``ExportTraceServiceRequest`` holding ``spans``, as OTLP/JSON (one line)."""
    made = []
    for span in spans:
        item: dict[str, Any] = {
            "traceId": trace_id.hex(),
            "spanId": span.span_id.hex(),
            "name": span.name,
            "kind": span.kind,
            "startTimeUnixNano": str(span.start_ns),
            "endTimeUnixNano": str(span.end_ns),
            "attributes": _json_attributes(span.attributes),
            "status": {
                "code": span.status,
                **({"message": span.status_message} if span.status_message else {}),
            },
        }
        if span.parent_id:
            item["parentSpanId"] = span.parent_id.hex()
        made.append(item)
    request = {
        "resourceSpans": [
            {
                "resource": {"attributes": _json_attributes(_resource_attributes(session_id))},
                "scopeSpans": [
                    {
                        "scope": {"name": SCOPE_NAME, "version": _version()},
                        "spans": made,
                        "schemaUrl": SCHEMA_URL,
                    }
                ],
                "schemaUrl": SCHEMA_URL,
            }
        ]
    }
    return json.dumps(request, ensure_ascii=False, separators=(",", ":"))
