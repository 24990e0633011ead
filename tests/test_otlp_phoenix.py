"""``send`` judged by a real Arize Phoenix server on localhost: it ingests every span sent (real
logs, Claude Code samples, ATIF files), with the span kinds, token counts and parent-child tree
as sent, read back through Phoenix's REST API.

Phoenix is large (~850 MB installed) and pins its own dependencies, so it lives in a virtual
environment of its own: ``BBOX_LARK_PHOENIX_PYTHON`` names its interpreter (``.ci/run`` makes
it), else the tests' own interpreter is used when it imports ``phoenix``. Without either, the
module is skipped, saying why. The server keeps its SQLite database in a temporary folder
(``PHOENIX_WORKING_DIR``) and listens on free ports; readiness and ingestion are waited for in
bounded loops (Phoenix inserts spans asynchronously, a few hundred a second).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from otlp_support import Receiver, check_spans

pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason="the otel extra")

from bbox_lark.convert.otlp.send import send_paths

# One worker starts this module's Phoenix server once (pytest -n auto --dist loadgroup).
pytestmark = pytest.mark.xdist_group("phoenix")

REPO = Path(__file__).resolve().parent.parent
EXTERNAL = REPO.parent / "shared" / "corpus-external"
#: How long the server may take to start, and Phoenix to insert what it accepted (seconds).
START_LIMIT = 300
INGEST_LIMIT = 300


def _phoenix_python() -> str | None:
    given = os.environ.get("BBOX_LARK_PHOENIX_PYTHON")
    if given:
        return given if Path(given).is_file() else None
    try:
        import phoenix  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return None
    return sys.executable


PYTHON = _phoenix_python()
if PYTHON is None:
    pytest.skip(
        "Arize Phoenix is not installed (set BBOX_LARK_PHOENIX_PYTHON to a Python with arize-phoenix;"
        " .ci/run makes one)",
        allow_module_level=True,
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.load(answer)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix server on a free port, its database in a temporary folder; its base URL."""
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (work / "server.log").open("wb")
    assert PYTHON is not None
    server = subprocess.Popen(
        [PYTHON, "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_LIMIT
        while True:
            if server.poll() is not None:
                tail = (work / "server.log").read_text(errors="replace")[-2000:]
                pytest.fail(f"Phoenix exited with {server.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"Phoenix did not answer /healthz within {START_LIMIT} s")
            time.sleep(1)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def phoenix_spans(base: str, expected: int) -> list[dict[str, Any]]:
    """Every span of the default project, read page by page, once ``expected`` are there (or
    the ingestion limit is up)."""
    deadline = time.monotonic() + INGEST_LIMIT
    while True:
        spans: list[dict[str, Any]] = []
        cursor = None
        while True:
            url = f"{base}/v1/projects/default/spans?limit=1000" + (f"&cursor={cursor}" if cursor else "")
            page = _get(url)
            spans.extend(page["data"])
            cursor = page.get("next_cursor")
            if not cursor:
                break
        if len(spans) >= expected or time.monotonic() > deadline:
            return spans
        time.sleep(2)


def inputs() -> list[str]:
    """A handful of real logs (one with a subagent), the Claude Code samples, ATIF files."""
    chosen = [REPO / "tests" / "fixtures" / "claude-code-subagents" / "sess-sub.jsonl"]
    chosen += sorted((REPO / "tests" / "fixtures" / "claude-code").glob("*.jsonl"))[:3]
    if EXTERNAL.is_dir():
        real = EXTERNAL / "rlog-real"
        chosen += [
            real / "20251219__1609-say-hello-and-tell.rlog",
            real / "20251223__181156-call-issue-ready-now-to.rlog",
            real / "20251220__004813-start-working-second.rlog",
        ]
        chosen += [
            EXTERNAL / "claude-code" / "claude-code-log__representative_messages.jsonl",
            EXTERNAL / "atif" / "harbor-atif2otel__trajectory_pass.json",
            EXTERNAL / "atif" / "harbor-golden__terminus_2__linear-history.trajectory.json",
        ]
    return [str(path) for path in chosen if path.is_file()]


KINDS = {"invoke_agent": "AGENT", "chat": "LLM", "execute_tool": "TOOL"}


def test_phoenix_ingests_every_span_as_sent(phoenix: str) -> None:
    paths = inputs()
    with Receiver() as receiver:  # what send posts, decoded: the expectation
        assert send_paths(paths, receiver.url + "/v1/traces", {}).exit_code in (0, 1)
    sent = receiver.spans
    check_spans(sent)
    result = send_paths(paths, phoenix + "/v1/traces", {})
    assert result.unreachable is None
    assert all(not s.refused for s in result.sent), [s.refused for s in result.sent]
    assert sum(s.spans for s in result.sent) == len(sent)

    stored = phoenix_spans(phoenix, len(sent))
    by_id = {(s["context"]["trace_id"], s["context"]["span_id"]): s for s in stored}
    assert len(by_id) == len(sent), f"Phoenix holds {len(by_id)} of {len(sent)} spans"
    for span in sent:
        held = by_id[(span["trace_id"], span["span_id"])]
        assert held["name"] == span["name"]
        assert (held.get("parent_id") or "") == span["parent_id"]
        assert held["span_kind"] == KINDS[span["attributes"]["gen_ai.operation.name"]]
        attributes = held["attributes"]
        for key in ("llm.token_count.prompt", "llm.token_count.completion", "gen_ai.usage.input_tokens"):
            if key in span["attributes"]:
                assert attributes.get(key) == span["attributes"][key], (span["name"], key)
        status = {0: "UNSET", 1: "OK", 2: "ERROR"}[span["status"]]
        assert held["status_code"] == status


def test_resending_is_idempotent(phoenix: str) -> None:
    """The same log sends the same ids: Phoenix keeps one copy of each span."""
    path = str(REPO / "tests" / "fixtures" / "claude-code-subagents" / "sess-sub.jsonl")
    before = phoenix_spans(phoenix, 0)
    assert send_paths([path], phoenix + "/v1/traces", {}).exit_code == 0
    time.sleep(5)
    after = phoenix_spans(phoenix, len(before))
    assert len({s["id"] for s in after}) == len(
        {(s["context"]["trace_id"], s["context"]["span_id"]) for s in after}
    )
