"""``bbox-lark send``: sessions posted to an OTLP/HTTP endpoint (a collector, Arize Phoenix,
Langfuse), as library calls.

Each input is converted as ``convert --to otlp`` converts it (the same spans, the secrets
redacted) and each batch of at most :data:`bbox_lark.convert.otlp.BATCH_SPANS` spans is posted as it is
made: one ``ExportTraceServiceRequest`` in protobuf, gzip-compressed, with the headers given
(``--header K=V``) or those of ``OTEL_EXPORTER_OTLP_HEADERS``. HTTP is the standard
library's (``urllib``).

- 429, 502, 503 and 504 (and a connection that fails) are retried with exponential back-off
  (``Retry-After`` honoured, capped), :data:`RETRIES` times;
- any other answer that is not 2xx refuses that request: its status and the start of its
  body become one line of the input's result, and the other inputs are still sent;
- an endpoint that cannot be reached at all ends the run with one line saying so.

Nothing here prints; :mod:`bbox_lark.cli.commands` renders :class:`SendResult`.
"""

from __future__ import annotations

import gzip
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bbox_lark.errors import ConfigError, WriteError
from bbox_lark.files.said import Said

#: How many times a request is retried on 429/502/503/504 or a failed connection.
RETRIES = 5
#: The first back-off in seconds (doubled each retry).
BACKOFF = 0.5
#: The longest wait between two tries (a larger ``Retry-After`` is cut to it).
MAX_WAIT = 30.0
#: Seconds a request may take.
TIMEOUT = 30.0
#: How much of a refusal's body is shown.
BODY_SHOWN = 300
#: Statuses that mean "try again later".
RETRY_STATUSES = frozenset({429, 502, 503, 504})


class SendUsageError(ConfigError):
    """A bad endpoint or header: the command exits 2."""


class Unreachable(WriteError):
    """The endpoint cannot be reached (refused, no such host, timed out): the run ends."""


@dataclass(slots=True)
class Sent:
    """What ``send`` did with one input."""

    path: str
    #: Requests posted and accepted, spans in them, sessions sent.
    requests: int = 0
    spans: int = 0
    sessions: int = 0
    #: One line per refused request (``HTTP 415 Unsupported Media Type: …``).
    refused: list[str] = field(default_factory=list)
    #: Why the input could not be read or converted (exit 2 for that input).
    error: str | None = None
    #: Records the reader skipped, rendered.
    skipped: list[str] = field(default_factory=list)
    #: Retries made (429/503 ...).
    retries: int = 0

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return 2
        return 1 if self.refused or self.skipped else 0

    def said(self) -> tuple[Said, ...]:
        """What ``send`` says about this input: why it could not be sent, the records
        skipped, the requests refused (the first one's answer), and what was sent."""
        path = "<stdin>" if self.path == "-" else self.path
        if self.error is not None:
            return (Said(self.error, "error"),)
        said = [Said(line, "!") for line in self.skipped]
        if self.refused:
            more = f" (and {len(self.refused) - 1} more request(s))" if len(self.refused) > 1 else ""
            said.append(Said(f"{path}: refused: {self.refused[0]}{more}", "refused"))
        if self.requests or not self.refused:
            retried = f", {self.retries} retried" if self.retries else ""
            what = f"{self.spans} span(s) of {self.sessions} session(s) in {self.requests} request(s)"
            said.append(Said(f"{path}: {what}{retried}", "done"))
        return tuple(said)


@dataclass(slots=True)
class SendResult:
    """What ``send`` did: one :class:`Sent` per input, and why it stopped early if it did."""

    endpoint: str
    sent: list[Sent] = field(default_factory=list)
    #: The endpoint could not be reached: the message (the run stopped there).
    unreachable: str | None = None

    @property
    def exit_code(self) -> int:
        codes = [s.exit_code for s in self.sent]
        if self.unreachable is not None:
            codes.append(1)
        return max(codes, default=0)

    def said(self) -> tuple[Said, ...]:
        """What ``send`` says at the end: why it stopped early, if it did (each input's own
        lines are :meth:`Sent.said`, said as it is sent)."""
        return () if self.unreachable is None else (Said(self.unreachable, "error"),)


def parse_headers(text: str) -> dict[str, str]:
    """``OTEL_EXPORTER_OTLP_HEADERS``: ``k1=v1,k2=v2`` with percent-encoded values."""
    headers: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, equals, value = part.partition("=")
        if not equals or not key.strip():
            raise SendUsageError("OTEL_EXPORTER_OTLP_HEADERS: each header is KEY=VALUE, separated by commas")
        headers[urllib.parse.unquote(key.strip())] = urllib.parse.unquote(value.strip())
    return headers


def resolve_headers(given: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The headers to send: ``OTEL_EXPORTER_OTLP_HEADERS``, then
    ``OTEL_EXPORTER_OTLP_TRACES_HEADERS``, then each ``--header K=V`` (later wins)."""
    env = os.environ if environ is None else environ
    headers: dict[str, str] = {}
    for name in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"):
        if env.get(name):
            headers.update(parse_headers(env[name]))
    for item in given:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise SendUsageError(f"--header {key.strip() or item!r}: give KEY=VALUE")
        headers[key.strip()] = value
    return headers


def resolve_endpoint(given: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The URL to post to: ``--endpoint`` as given, else
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as given, else ``OTEL_EXPORTER_OTLP_ENDPOINT``
    with ``/v1/traces`` appended (as the OTLP exporters do)."""
    env = os.environ if environ is None else environ
    url = given or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if not url and env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        url = env["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + "/v1/traces"
    if not url:
        raise SendUsageError("give --endpoint URL (or set OTEL_EXPORTER_OTLP_ENDPOINT)")
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise SendUsageError(f"--endpoint {url!r}: an http:// or https:// URL")
    return url


class Poster:
    """Posts protobuf requests to one endpoint, gzip-compressed, retrying as documented."""

    def __init__(
        self,
        endpoint: str,
        headers: Mapping[str, str],
        *,
        retries: int = RETRIES,
        backoff: float = BACKOFF,
        timeout: float = TIMEOUT,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.endpoint = endpoint
        self.headers = {
            "Content-Type": "application/x-protobuf",
            "Content-Encoding": "gzip",
            "User-Agent": _user_agent(),
            **headers,
        }
        self.retries = retries
        self.backoff = backoff
        self.timeout = timeout
        self.sleep = sleep
        self.retried = 0

    def post(self, body: bytes) -> str | None:
        """Post one request; None when accepted, else the one-line reason it was refused.
        Raises :class:`Unreachable` when no answer came after the retries."""
        data = gzip.compress(body, mtime=0)
        attempt = 0
        while True:
            request = urllib.request.Request(self.endpoint, data=data, headers=self.headers, method="POST")
            wait = self.backoff * (2**attempt)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                    answer.read()
                    return None
            except urllib.error.HTTPError as error:
                body_text = _body(error)
                if error.code in RETRY_STATUSES and attempt < self.retries:
                    wait = _retry_after(error.headers.get("Retry-After"), wait)
                else:
                    reason = f"HTTP {error.code} {error.reason}".rstrip()
                    return f"{reason}: {body_text}" if body_text else reason
            except (urllib.error.URLError, OSError) as error:
                if attempt >= self.retries:
                    why = getattr(error, "reason", None) or error
                    raise Unreachable(f"cannot reach {self.endpoint}: {why}") from None
            attempt += 1
            self.retried += 1
            self.sleep(min(wait, MAX_WAIT))


def _user_agent() -> str:
    from bbox_lark import __version__

    return f"bbox-lark/{__version__} (OTLP/HTTP protobuf)"


def _body(error: urllib.error.HTTPError) -> str:
    try:
        raw = error.read(4096)
    except Exception:
        return ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else ""
    text = " ".join(text.split())
    return text if len(text) <= BODY_SHOWN else text[:BODY_SHOWN] + "…"


def _retry_after(value: str | None, default: float) -> float:
    if value is not None and value.strip().isdigit():
        return float(value.strip())
    return default


class _Sink:
    """The text stream ``convert_stream`` writes OTLP to: each write is one protobuf request
    (a batch, as :func:`bbox_lark.convert.otlp.write` writes them), posted at once."""

    def __init__(self, poster: Poster, sent: Sent) -> None:
        self.poster = poster
        self.sent = sent

    def write(self, text: str) -> int:
        body = text.encode("utf-8", "surrogateescape")
        refused = self.poster.post(body)
        if refused is None:
            self.sent.requests += 1
            self.sent.spans += _span_count(body)
        else:
            self.sent.refused.append(refused)
        return len(text)

    def flush(self) -> None:
        pass


def _span_count(body: bytes) -> int:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return sum(len(scope.spans) for spans in request.resource_spans for scope in spans.scope_spans)


def send_sessions(
    paths: Iterable[str],
    *,
    endpoint: str | None = None,
    headers: Iterable[str] = (),
    from_: str | None = None,
    content: bool = False,
    retries: int = RETRIES,
    timeout: float = TIMEOUT,
    on_sent: Callable[[Sent], None] | None = None,
) -> SendResult:
    """``bbox-lark send``: :func:`send_paths` to the endpoint given (or the environment's:
    :func:`resolve_endpoint`) with the headers given as ``KEY=VALUE`` added to the
    environment's (:func:`resolve_headers`). Raises :class:`SendUsageError` for a bad endpoint,
    header, ``retries`` (below 0) or ``timeout`` (0 or less)."""
    url = resolve_endpoint(endpoint)
    chosen = resolve_headers(headers)
    if retries < 0 or timeout <= 0:
        raise SendUsageError("--retries must be 0 or more and --timeout more than 0")
    return send_paths(
        paths, url, chosen, from_=from_, content=content, retries=retries, timeout=timeout, on_sent=on_sent
    )


def send_paths(
    paths: Iterable[str],
    endpoint: str,
    headers: Mapping[str, str],
    *,
    from_: str | None = None,
    content: bool = False,
    retries: int = RETRIES,
    backoff: float = BACKOFF,
    timeout: float = TIMEOUT,
    on_sent: Callable[[Sent], None] | None = None,
) -> SendResult:
    """Send each input (a file, or a folder searched as ``check`` searches it) to
    ``endpoint``. Raises :class:`bbox_lark.convert.otlp.MissingOtelExtra` without ``opentelemetry-proto``
    and :class:`SendUsageError` for inputs that cannot be found."""
    from bbox_lark.convert import ConvertError, Input, RefusedInputError, convert_stream
    from bbox_lark.convert.atif.lines import split_sessions
    from bbox_lark.convert.many import convert_inputs
    from bbox_lark.convert.otlp.encode import load_proto

    load_proto()
    poster = Poster(endpoint, headers, retries=retries, backoff=backoff, timeout=timeout)
    result = SendResult(endpoint)
    missing = [p for p in paths if p != "-" and not Path(p).exists()]
    if missing:
        raise SendUsageError(f"{missing[0]}: no such file or directory")
    for found in convert_inputs(list(paths), from_):
        sent = Sent(found.path)
        shown = "<stdin>" if found.path == "-" else found.path
        result.sent.append(sent)
        before = poster.retried
        try:
            for source, read_as, _name in split_sessions(Input(found.path), from_):
                conversion = convert_stream(
                    source,
                    _Sink(poster, sent),  # type: ignore[arg-type]
                    to="otlp",
                    from_=read_as,
                    check=False,
                    redact=True,
                    content=content or None,
                )
                sent.sessions += 1
                sent.skipped.extend(s.render(shown) for s in conversion.skipped)
        except Unreachable as error:
            result.unreachable = str(error)
            sent.retries = poster.retried - before
            break
        except RefusedInputError as error:
            sent.error = f"{shown}: {error}"
        except ConvertError as error:
            sent.error = f"{shown}: {error}"
        except OSError as error:
            sent.error = f"{shown}: cannot read: {error.strerror or error}"
        sent.retries = poster.retried - before
        if on_sent is not None:
            on_sent(sent)
    return result
