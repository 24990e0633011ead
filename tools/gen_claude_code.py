"""Realistic generated Claude Code sessions (``~/.claude/projects/*/*.jsonl``), seeded.

For benchmarks (``tools/bench.py --only harbor``) and tests: the same seed and size give the
same bytes on every machine. What makes them realistic, as Claude Code writes sessions:

* one API response is several records, one content block each (thinking, text, every
  ``tool_use``), sharing ``message.id`` and ``requestId`` and restating the response's
  usage, ``output_tokens`` growing as it streams;
* parallel tool calls (one response with two to four ``tool_use`` blocks), each result a
  ``user`` record of its own with the tool-specific copy in ``toolUseResult``;
* outputs mostly of a few KB, one in about 33 of 50–200 KB (a build log, a large file);
  failed calls (``is_error``), ``TodoWrite`` lists, MCP tools, ``Task`` subagents (inline,
  no logs beside the session), new prompts, system records and file-history snapshots;
* cache reads growing over the session, as a long session's prompt cache does.

Nothing in a generated session looks like a credential: the text is drawn from a fixed
vocabulary, ids are hex of a seeded generator.

    python tools/gen_claude_code.py --records 10000 --seed 7 -o session.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

WORDS = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "as",
    "this",
    "be",
    "are",
    "we",
    "will",
    "now",
    "file",
    "test",
    "build",
    "run",
    "check",
    "value",
    "parser",
    "line",
    "field",
    "result",
    "error",
    "module",
    "function",
    "call",
    "return",
    "import",
    "class",
    "self",
    "data",
    "list",
    "read",
    "write",
    "path",
    "config",
    "session",
    "token",
    "output",
    "input",
    "cache",
    "step",
    "node",
    "event",
    "header",
    "format",
    "issue",
    "change",
    "commit",
    "branch",
    "review",
    "fix",
    "update",
    "add",
    "remove",
    "keep",
    "report",
    "before",
    "after",
    "first",
    "last",
    "next",
    "because",
    "should",
    "could",
    "would",
    "since",
    "then",
    "when",
    "where",
    "which",
    "while",
    "each",
    "every",
    "some",
    "more",
    "less",
]
IDENT = [
    "parser",
    "scanner",
    "printer",
    "writer",
    "reader",
    "checks",
    "report",
    "tables",
    "numbers",
    "stats",
    "source",
    "grammar",
]
MODEL = "claude-sonnet-4-5-20250929"
TOOLS = ("Bash", "Read", "Edit", "Grep", "Glob", "Write")


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(WORDS, k=rng.randint(low, high))
    return " ".join(words).capitalize() + "."


def _prose(rng: random.Random, chars: int) -> str:
    """About ``chars`` characters of sentences, in paragraphs."""
    parts: list[str] = []
    size = 0
    while size < chars:
        sentence = _sentence(rng, 6, 22)
        parts.append(sentence)
        size += len(sentence) + 1
        if rng.random() < 0.15:
            parts.append("\n\n")
    return " ".join(parts).replace(" \n\n ", "\n\n").strip()


def _code_lines(rng: random.Random, chars: int) -> str:
    """About ``chars`` characters of tool output: file listings, code, test and build logs."""
    lines: list[str] = []
    size = 0
    number = rng.randint(1, 400)
    while size < chars:
        shape = rng.random()
        module = rng.choice(IDENT)
        if shape < 0.3:
            line = (
                f"{number:>6}\t    {rng.choice(WORDS)}_{rng.choice(WORDS)} = {module}.{rng.choice(WORDS)}()"
            )
        elif shape < 0.55:
            line = f"bbox_lark/{module}.py:{number}: {_sentence(rng, 3, 10)}"
        elif shape < 0.75:
            status = "PASSED" if rng.random() < 0.9 else "FAILED"
            line = f"tests/test_{module}.py::test_{rng.choice(WORDS)}_{rng.choice(WORDS)} {status}"
        else:
            line = "    " + _sentence(rng, 4, 14)
        lines.append(line)
        size += len(line) + 1
        number += 1
    return "\n".join(lines)


class Session:
    """The state of one generated session: ids, clock, usage, the records written."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.session = self._uuid()
        self.clock = 1_800_000_000.0 + self.rng.randint(0, 10_000_000)
        self.parent: str | None = None
        self.cached = 12_000
        self.messages = 0
        self.calls = 0

    def _hex(self, digits: int) -> str:
        return f"{self.rng.getrandbits(digits * 4):0{digits}x}"

    def _uuid(self) -> str:
        h = self._hex(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def _ts(self) -> str:
        self.clock += self.rng.uniform(0.05, 4.0)
        whole = int(self.clock)
        millis = int((self.clock - whole) * 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"

    def _base(self, kind: str) -> dict[str, object]:
        uuid = self._uuid()
        record: dict[str, object] = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/project",
            "sessionId": self.session,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": self._ts(),
        }
        self.parent = uuid
        return record

    def prompt(self) -> dict[str, object]:
        record = self._base("user")
        record["message"] = {"role": "user", "content": _prose(self.rng, self.rng.randint(60, 600))}
        return record

    def _tool_input(self, name: str) -> tuple[str, dict[str, object]]:
        rng = self.rng
        path = f"/home/dev/project/bbox_lark/{rng.choice(IDENT)}.py"
        if name == "Bash":
            command = rng.choice(("pytest -q tests/test_", "ruff check bbox_lark/", "git diff -- bbox_lark/"))
            return name, {"command": command + rng.choice(IDENT), "description": _sentence(rng, 3, 8)}
        if name == "Read":
            return name, {"file_path": path}
        if name == "Edit":
            return name, {
                "file_path": path,
                "old_string": _code_lines(rng, rng.randint(80, 600)),
                "new_string": _code_lines(rng, rng.randint(80, 800)),
            }
        if name == "Write":
            return name, {"file_path": path, "content": _code_lines(rng, rng.randint(300, 2500))}
        if name == "Grep":
            return name, {
                "pattern": f"def {rng.choice(WORDS)}_",
                "path": "bbox_lark",
                "output_mode": "content",
            }
        if name == "Glob":
            return name, {"pattern": f"**/*{rng.choice(IDENT)}*.py"}
        if name == "TodoWrite":
            todos = [
                {
                    "content": _sentence(rng, 3, 9),
                    "status": rng.choice(("pending", "in_progress", "completed")),
                    "activeForm": _sentence(rng, 3, 6),
                }
                for _ in range(rng.randint(2, 6))
            ]
            return name, {"todos": todos}
        if name == "Task":
            return name, {
                "description": _sentence(rng, 2, 5),
                "prompt": _prose(rng, rng.randint(200, 900)),
                "subagent_type": "general-purpose",
            }
        return name, {"owner": "dev", "repo": "project", "issue_number": rng.randint(1, 400)}

    def _tool_name(self) -> str:
        draw = self.rng.random()
        if draw < 0.04:
            return "TodoWrite"
        if draw < 0.06:
            return "Task"
        if draw < 0.08:
            return "mcp__github__get_issue"
        return self.rng.choice(TOOLS)

    def response(self) -> Iterator[dict[str, object]]:
        """One API response: a record per content block, each restating the usage so far."""
        rng = self.rng
        self.messages += 1
        message_id = "msg_01" + self._hex(22)
        request = "req_011" + self._hex(21)
        fresh = rng.randint(1, 60)
        written = rng.choice((0, 0, rng.randint(200, 6000)))
        blocks: list[dict[str, object]] = []
        if rng.random() < 0.5:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": _prose(rng, rng.randint(200, 2000)),
                    "signature": "Eq" + self._hex(40) + "...",
                }
            )
        if rng.random() < 0.75:
            blocks.append({"type": "text", "text": _prose(rng, rng.randint(40, 900))})
        draw = rng.random()
        count = 0 if draw < 0.12 else 1 if draw < 0.65 else 2 if draw < 0.88 else rng.randint(3, 4)
        for _ in range(count):
            name, tool_input = self._tool_input(self._tool_name())
            self.calls += 1
            blocks.append(
                {"type": "tool_use", "id": "toolu_01" + self._hex(22), "name": name, "input": tool_input}
            )
        if not blocks:
            blocks.append({"type": "text", "text": _prose(rng, rng.randint(40, 400))})
        output = 0
        for index, block in enumerate(blocks):
            output += rng.randint(5, 300)
            record = self._base("assistant")
            record["requestId"] = request
            last = index == len(blocks) - 1
            record["message"] = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "stop_reason": ("tool_use" if count else "end_turn") if last else None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": fresh,
                    "cache_creation_input_tokens": written,
                    "cache_read_input_tokens": self.cached,
                    "cache_creation": {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": 0},
                    "output_tokens": output,
                    "service_tier": "standard",
                },
            }
            yield record
        self.cached += written + rng.randint(0, 400)
        for block in blocks:
            if block["type"] == "tool_use":
                yield self.result(block)

    def result(self, call: dict[str, object]) -> dict[str, object]:
        rng = self.rng
        draw = rng.random()
        size = rng.randint(50_000, 200_000) if draw < 0.03 else rng.randint(200, 4_000)
        error = rng.random() < 0.04
        text = f"Error: {_sentence(rng, 4, 10)}" if error else _code_lines(rng, size)
        record = self._base("user")
        record["message"] = {
            "role": "user",
            "content": [
                {"tool_use_id": call["id"], "type": "tool_result", "content": text, "is_error": error}
            ],
        }
        if call["name"] == "Bash":
            record["toolUseResult"] = {
                "stdout": text[:2000],
                "stderr": "",
                "interrupted": False,
                "isImage": False,
            }
        elif call["name"] == "Read":
            record["toolUseResult"] = {
                "type": "text",
                "file": {"filePath": "x.py", "numLines": text.count("\n") + 1},
            }
        else:
            record["toolUseResult"] = {"result": text[:300]}
        return record

    def other(self) -> dict[str, object]:
        draw = self.rng.random()
        if draw < 0.5:
            record = self._base("system")
            record.update(
                subtype="informational", level="info", content=_sentence(self.rng, 4, 12), isMeta=False
            )
            return record
        snapshot_of = self._uuid()
        return {
            "type": "file-history-snapshot",
            "messageId": snapshot_of,
            "snapshot": {
                "messageId": snapshot_of,
                "trackedFileBackups": {f"bbox_lark/{self.rng.choice(IDENT)}.py": {"version": 1}},
                "timestamp": self._ts(),
            },
            "isSnapshotUpdate": False,
        }


def records(count: int, seed: int = 7) -> Iterator[dict[str, object]]:
    """``count`` records of one generated session (the last response may be cut short)."""
    session = Session(seed)
    made = 0
    while True:
        draw = session.rng.random()
        if made == 0 or draw < 0.04:
            batch: Iterator[dict[str, object]] = iter((session.prompt(),))
        elif draw < 0.07:
            batch = iter((session.other(),))
        else:
            batch = session.response()
        for record in batch:
            if made >= count:
                return
            yield record
            made += 1


def generate(count: int, seed: int = 7) -> str:
    """The text of a generated session of ``count`` records (one JSON record a line)."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records(count, seed))


def write(path: Path, count: int, seed: int = 7) -> int:
    """Write a generated session of ``count`` records to ``path``; its size in bytes."""
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for record in records(count, seed):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=10_000, help="records in the session (default 10,000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
    args = parser.parse_args(argv)
    if args.output is None:
        for record in records(args.records, args.seed):
            sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        return 0
    size = write(args.output, args.records, args.seed)
    print(f"{args.output}: {args.records:,} records, {size / 1e6:.1f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
