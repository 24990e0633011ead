"""ATIF, the Agent Trajectory Interchange Format (harbor RFC 0001): one JSON document per
trajectory. The full description, with the decisions where the RFC is silent, is
``docs/formats/atif.md``; the mapping tables below are the ones the docs render.

ATIF is one JSON object, so the writer collects the whole stream (:func:`collect`) before it
writes, and the reader loads the whole file. Nothing here needs the ``atif`` package: the
structure is checked by :func:`trajectory_problems` and :func:`step_problems` (the package's
Pydantic models are the judge in the tests only).

Two directions, two ways of keeping what the other side cannot hold:

- **bbox → ATIF.** Every body line is mapped the natural way (``u:`` → a user step, ``a:``
  → an agent step, ``th:`` → the next agent step's ``reasoning_content``, calls →
  ``tool_calls``, results → ``observation.results``, ``# metrics step=N`` → that step's
  ``metrics``) *and* recorded, as values, under ``extra.bbox.lines`` of the step it belongs
  to (the header under the root's ``extra.bbox.header``). Reading such a trajectory back
  rebuilds the lines from those records, in their order: ``bbox → ATIF → bbox`` keeps every
  line's kind, name, arguments, fields, result, metrics and continuation lines.
- **ATIF → bbox.** A trajectory from another producer (no ``extra.bbox``) is mapped to
  natural bbox lines; what bbox has no line for travels in *attachments*: continuation lines
  ``+key JSON`` (a JSON value, continued on ``+ …`` lines) beside ``| text`` lines that hold
  a message or an output line by line. ``ATIF → bbox → ATIF`` gives an equal trajectory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TextIO

from bbox_lark.ast import BlankLine, Continuation, Event
from bbox_lark.convert.base import (
    REPO_SHA,
    Format,
    Input,
    MappingRow,
    Option,
    ReadContext,
    RefusedInputError,
    WriteContext,
    collect,
    flatten,
    load_json,
)
from bbox_lark.numbers import Responses, SessionCounter, Usage, line_usage

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item
    from bbox_lark.parser import Head

#: The versions the writer writes (``--atif-version``), newest last.
VERSIONS = ("ATIF-v1.7", "ATIF-v1.8")
DEFAULT_VERSION = VERSIONS[-1]
#: The key under which bbox keeps, in an ``extra`` object, what ATIF cannot hold.
EXTRA_KEY = "bbox"
#: The header key an import writes the source's ``schema_version`` to.
SCHEMA_HEADER = "atif"
#: The keyword of the comments an import writes for the trajectory (``# atif root``) and
#: for system steps (``# atif system``).
ATIF_COMMENT = "atif"
#: Continuation lines: ``| text`` (a text line) and ``+key JSON`` (an attachment).
TEXT_MARK = "|"
ATTACH_MARK = "+"

_SNIFF = re.compile(r'\A\s*\{.*?"schema_version"\s*:\s*"ATIF', re.S)
_FIELD_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_ATTACH = re.compile(r"\+([A-Za-z_][A-Za-z0-9_]*)(?: (.*))?\Z", re.S)
# Characters a text line cannot hold as it is (line breaks, controls, lone surrogates).
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029\ud800-\udfff\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_FIELD_MAX = 200
_JSON_LINE = 4096
_HEADER_KEYS = ("agent", "version", "model")
#: The call kinds that become ATIF tool calls: every correlated family but plans.
_PLAN = "plan"

# -- the structure of a trajectory (what the atif package's models check) ---------------

_ROOT_KEYS = {
    "schema_version": "str",
    "session_id": "str?",
    "trajectory_id": "str?",
    "agent": "obj",
    "steps": "list",
    "notes": "str?",
    "final_metrics": "obj?",
    "continued_trajectory_ref": "str?",
    "extra": "obj?",
    "subagent_trajectories": "list?",
}
_AGENT_KEYS = {
    "name": "str",
    "version": "str",
    "model_name": "str?",
    "tool_definitions": "list?",
    "extra": "obj?",
}
_FINAL_KEYS = {
    "total_prompt_tokens": "int?",
    "total_completion_tokens": "int?",
    "total_cached_tokens": "int?",
    "total_cost_usd": "num?",
    "total_steps": "int?",
    "extra": "obj?",
}
_STEP_KEYS = {
    "step_id": "int",
    "timestamp": "str?",
    "source": "str",
    "model_name": "str?",
    "reasoning_effort": "effort?",
    "message": "content",
    "reasoning_content": "str?",
    "tool_calls": "list?",
    "observation": "obj?",
    "metrics": "obj?",
    "extra": "obj?",
    "llm_call_count": "int?",
    "is_copied_context": "bool?",
}
_CALL_KEYS = {"tool_call_id": "str", "function_name": "str", "arguments": "obj", "extra": "obj?"}
_RESULT_KEYS = {
    "source_call_id": "str?",
    "content": "content?",
    "subagent_trajectory_ref": "list?",
    "extra": "obj?",
}
_REF_KEYS = {"trajectory_id": "str?", "trajectory_path": "str?", "session_id": "str?", "extra": "obj?"}
_METRICS_KEYS = {
    "prompt_tokens": "int?",
    "completion_tokens": "int?",
    "cached_tokens": "int?",
    "cost_usd": "num?",
    "prompt_token_ids": "ints?",
    "completion_token_ids": "ints?",
    "logprobs": "nums?",
    "extra": "obj?",
}
_SOURCES = ("system", "user", "agent")
_AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")
_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_AUDIO_TYPES = (
    "audio/wav",
    "audio/mpeg",
    "audio/mp4",
    "audio/aac",
    "audio/ogg",
    "audio/flac",
    "audio/webm",
    "audio/aiff",
)
_AUDIO_ALIASES = {
    "audio/mp3": "audio/mpeg",
    "audio/mpga": "audio/mpeg",
    "audio/x-mpeg": "audio/mpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/x-m4a": "audio/mp4",
    "audio/m4a": "audio/mp4",
    "audio/x-aac": "audio/aac",
    "audio/x-flac": "audio/flac",
    "audio/x-aiff": "audio/aiff",
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _content_problems(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return []
    if not isinstance(value, list):
        return [f"{where}: must be a string or a list of content parts"]
    problems = []
    for n, part in enumerate(value):
        at = f"{where}[{n}]"
        if not isinstance(part, dict):
            problems.append(f"{at}: a content part must be an object")
            continue
        unknown = sorted(set(part) - {"type", "text", "source"})
        if unknown:
            problems.append(f"{at}: unknown key {unknown[0]!r}")
        kind = part.get("type")
        if kind == "text":
            if not isinstance(part.get("text"), str):
                problems.append(f"{at}: a text part needs a string `text`")
            if part.get("source") is not None:
                problems.append(f"{at}: a text part must omit `source`")
        elif kind in ("image", "audio"):
            source = part.get("source")
            if part.get("text") is not None:
                problems.append(f"{at}: an {kind} part must omit `text`")
            if not isinstance(source, dict) or not isinstance(source.get("path"), str):
                problems.append(f"{at}: an {kind} part needs a `source` with a string `path`")
                continue
            media = source.get("media_type")
            allowed = {"media_type", "path"} | ({"duration_sec"} if kind == "audio" else set())
            extra_keys = sorted(set(source) - allowed)
            if extra_keys:
                problems.append(f"{at}.source: unknown key {extra_keys[0]!r}")
            if kind == "image" and media not in _IMAGE_TYPES:
                problems.append(f"{at}.source.media_type: {media!r} is not an image type")
            if kind == "audio":
                norm = (
                    _AUDIO_ALIASES.get(media.strip().lower(), media.strip().lower())
                    if isinstance(media, str)
                    else media
                )
                if norm not in _AUDIO_TYPES:
                    problems.append(f"{at}.source.media_type: {media!r} is not an audio type")
                duration = source.get("duration_sec")
                if duration is not None and (not _is_num(duration) or duration < 0):
                    problems.append(f"{at}.source.duration_sec: must be a number >= 0")
        else:
            problems.append(f"{at}.type: {kind!r} is not one of text, image, audio")
    return problems


def _type_ok(kind: str, value: Any) -> bool:
    if kind in ("ints", "nums"):
        test = _is_int if kind == "ints" else _is_num
        return isinstance(value, list) and all(test(x) for x in value)
    if kind == "effort":
        return isinstance(value, str) or _is_num(value)
    if kind == "int":
        return _is_int(value)
    if kind == "num":
        return _is_num(value)
    wanted = {"str": str, "bool": bool, "obj": dict, "list": list}.get(kind)
    return wanted is None or isinstance(value, wanted)


def _shape(obj: Any, keys: Mapping[str, str], where: str) -> list[str]:
    """Problems of an object against a table of its keys and their types."""
    shown = where or "the document"
    if not isinstance(obj, dict):
        return [f"{shown}: must be an object"]
    problems = [f"{shown}: unknown key {key!r}" for key in obj if key not in keys]
    for key, spec in keys.items():
        optional = spec.endswith("?")
        kind = spec.rstrip("?")
        at = f"{where}.{key}" if where else key
        if key not in obj or obj[key] is None:
            if not optional:
                problems.append(f"{at}: required" if key not in obj else f"{at}: must not be null")
            continue
        value = obj[key]
        ok = _type_ok(kind, value)
        if not ok:
            wanted = {
                "str": "a string",
                "int": "an integer",
                "num": "a number",
                "bool": "a boolean",
                "obj": "an object",
                "list": "a list",
                "ints": "a list of integers",
                "nums": "a list of numbers",
                "effort": "a string or a number",
            }[kind]
            problems.append(f"{at}: must be {wanted}")
        elif kind == "content":
            problems += _content_problems(value, at)
    return problems


def step_problems(step: Any, index: int) -> list[str]:
    """What is wrong with ``steps[index]`` (empty when the models would accept it)."""
    label = f"steps[{index}]"
    if isinstance(step, dict) and _is_int(step.get("step_id")):
        label += f" (step_id {step['step_id']})"
    problems = _shape(step, _STEP_KEYS, label)
    if not isinstance(step, dict):
        return problems
    if _is_int(step.get("step_id")) and step["step_id"] < 1:
        problems.append(f"{label}.step_id: must be >= 1")
    source = step.get("source")
    if isinstance(source, str) and source not in _SOURCES:
        problems.append(f"{label}.source: {source!r} is not one of system, user, agent")
    stamp = step.get("timestamp")
    if isinstance(stamp, str) and not _iso(stamp):
        problems.append(f"{label}.timestamp: {stamp!r} is not ISO 8601")
    count = step.get("llm_call_count")
    if isinstance(count, int) and not isinstance(count, bool) and count < 0:
        problems.append(f"{label}.llm_call_count: must be >= 0")
    if source != "agent":
        problems += [
            f"{label}.{key}: only valid on agent steps" for key in _AGENT_ONLY if step.get(key) is not None
        ]
    elif count == 0:
        problems += [
            f"{label}.{key}: must be absent when llm_call_count is 0"
            for key in ("metrics", "reasoning_content")
            if step.get(key) is not None
        ]
    calls = step.get("tool_calls")
    ids = set()
    if isinstance(calls, list):
        for n, call in enumerate(calls):
            problems += _shape(call, _CALL_KEYS, f"{label}.tool_calls[{n}]")
            if isinstance(call, dict) and isinstance(call.get("tool_call_id"), str):
                ids.add(call["tool_call_id"])
    observation = step.get("observation")
    if isinstance(observation, dict):
        problems += _shape(observation, {"results": "list"}, f"{label}.observation")
        results = observation.get("results")
        for n, result in enumerate(results if isinstance(results, list) else []):
            at = f"{label}.observation.results[{n}]"
            problems += _shape(result, _RESULT_KEYS, at)
            if not isinstance(result, dict):
                continue
            refs = result.get("subagent_trajectory_ref")
            for r, ref in enumerate(refs if isinstance(refs, list) else []):
                problems += _shape(ref, _REF_KEYS, f"{at}.subagent_trajectory_ref[{r}]")
                if (
                    isinstance(ref, dict)
                    and ref.get("trajectory_id") is None
                    and ref.get("trajectory_path") is None
                ):
                    problems.append(
                        f"{at}.subagent_trajectory_ref[{r}]: needs trajectory_id or trajectory_path"
                        " (a session_id alone is no reference since ATIF-v1.7)"
                    )
            source_id = result.get("source_call_id")
            if isinstance(source_id, str) and calls is not None and source_id not in ids:
                problems.append(f"{at}.source_call_id: {source_id!r} matches no tool call of this step")
            elif isinstance(source_id, str) and calls is None:
                problems.append(f"{at}.source_call_id: {source_id!r}, but the step has no tool calls")
    metrics = step.get("metrics")
    if isinstance(metrics, dict):
        problems += _shape(metrics, _METRICS_KEYS, f"{label}.metrics")
    return problems


def trajectory_problems(data: Any, where: str = "") -> list[str]:
    """What is wrong with a trajectory as a whole (its steps are checked one by one by
    :func:`step_problems`; embedded subagent trajectories entirely)."""
    prefix = f"{where}." if where else ""
    if not isinstance(data, dict):
        return [f"{where or 'the document'}: must be a JSON object (an ATIF trajectory)"]
    problems = _shape(data, _ROOT_KEYS, where)
    version = data.get("schema_version")
    if isinstance(version, str) and not version.startswith("ATIF-v"):
        problems.append(f"{prefix}schema_version: {version!r} does not start with 'ATIF-v'")
    if isinstance(data.get("agent"), dict):
        problems += _shape(data["agent"], _AGENT_KEYS, f"{prefix}agent")
        tools = data["agent"].get("tool_definitions")
        if isinstance(tools, list) and not all(isinstance(t, dict) for t in tools):
            problems.append(f"{prefix}agent.tool_definitions: every item must be an object")
    if isinstance(data.get("final_metrics"), dict):
        problems += _shape(data["final_metrics"], _FINAL_KEYS, f"{prefix}final_metrics")
    subs = data.get("subagent_trajectories")
    if isinstance(subs, list):
        seen: set[str] = set()
        for n, sub in enumerate(subs):
            at = f"{prefix}subagent_trajectories[{n}]"
            problems += trajectory_problems(sub, at)
            if not isinstance(sub, dict):
                continue
            steps = sub.get("steps")
            for s, step in enumerate(steps if isinstance(steps, list) else []):
                problems += [f"{at}.{p}" for p in step_problems(step, s)]
                if isinstance(step, dict) and step.get("step_id") != s + 1:
                    problems.append(f"{at}.steps[{s}].step_id: not sequential (expected {s + 1})")
            tid = sub.get("trajectory_id")
            if tid is None:
                problems.append(f"{at}: an embedded trajectory must set trajectory_id")
            elif tid in seen:
                problems.append(f"{at}: duplicate trajectory_id {tid!r}")
            else:
                seen.add(tid)
    return problems


def _iso(text: str) -> bool:
    from datetime import datetime

    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


# -- attachments: text and JSON values in continuation lines ----------------------------


def _dumps(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if _UNSAFE.search(text):
        text = json.dumps(value, ensure_ascii=True)
    return text


def attachment(key: str, value: Any) -> list[str]:
    """The continuation texts of ``+key JSON`` (long JSON continued on ``+ …`` lines)."""
    text = _dumps(value)
    if len(text) <= _JSON_LINE:
        return [f"{ATTACH_MARK}{key} {text}"]
    pieces = json.dumps(value, ensure_ascii=bool(_UNSAFE.search(text)), indent=1).split("\n")
    return [f"{ATTACH_MARK}{key} {pieces[0]}", *(f"{ATTACH_MARK} {p}" for p in pieces[1:])]


def text_lines(text: str, key: str = "text") -> list[str]:
    """A text as ``| line`` continuation texts (``+key "…"`` when a line cannot hold it)."""
    if text == "":
        return []
    lines = text.split("\n")
    if any(_UNSAFE.search(line) for line in lines):
        return attachment(key, text)
    return [TEXT_MARK + (" " + line if line else "") for line in lines]


def read_attachments(continuation: Iterable[Continuation]) -> tuple[str | None, dict[str, Any]]:
    """The text of ``| …`` lines (None when there are none) and the attachments. Continuation
    lines that follow neither form are text lines as they are."""
    texts: list[str] = []
    found: dict[str, Any] = {}
    key: str | None = None
    pending: list[str] = []

    def close() -> None:
        if key is not None:
            try:
                found[key] = json.loads("\n".join(pending))
            except ValueError:
                texts.append("\n".join(pending))

    for line in continuation:
        text = line.text
        if text.startswith(ATTACH_MARK + " ") and key is not None:
            pending.append(text[2:])
            continue
        match = _ATTACH.match(text)
        if match:
            close()
            key, pending = match[1], [match[2] or ""]
            continue
        close()
        key, pending = None, []
        if text == TEXT_MARK:
            texts.append("")
        elif text.startswith(TEXT_MARK + " "):
            texts.append(text[2:])
        else:
            texts.append(text)
    close()
    return ("\n".join(texts) if texts else None), found


# -- records: a bbox line as values, in JSON ----------------------------------------------


def _pairs(nodes: Iterable[Any]) -> list[list[Any]]:
    """Fields as ``[key, value]`` (``[key, value, true]`` when the value was quoted)."""
    return [
        [f.key, list(f.value) if isinstance(f.value, tuple) else f.value, *([True] if f.quoted else [])]
        for f in nodes
    ]


def _fields(pairs: Iterable[Any]) -> list[Any]:
    from bbox_lark.ast import Field

    out: list[Any] = []
    for key, value, *quoted in pairs:
        value = tuple(value) if isinstance(value, list) else value
        out.append(Field(key, value, "", 0, 0, quoted=bool(quoted and quoted[0])))
    return out


def record(node: Any, n: int, *, continuation: bool = True) -> dict[str, Any]:
    """A body line as JSON values (what :func:`restore` builds it from again). Without
    ``continuation`` an event's continuation lines are left out (they are recorded as lines
    of their own, so that blank lines between them come back in place)."""
    from bbox_lark.transform import values_of

    if isinstance(node, BlankLine):
        return {"n": n, "kind": "blank", "raw": node.raw}
    if isinstance(node, Continuation):
        return {"n": n, "kind": "continuation", "text": node.text}
    values = values_of(node)
    out: dict[str, Any] = {"n": n, "kind": node.kind if not node.oversized else "unknown"}
    for key, value in values.items():
        if key == "kind" or value is None:
            continue
        if key == "fields":
            if value:
                out["fields"] = _pairs(value)
        elif key == "metrics":
            out["metrics"] = _pairs(value)
        elif key == "args":
            if value:
                out["args"] = [list(a) if isinstance(a, tuple) else a for a in value]
        elif key == "result":
            out["result"] = value.text
        elif key == "continuation":
            if value and continuation:
                out["continuation"] = [c.text for c in value]
        else:
            out[key] = value
    return out


def restore(rec: Mapping[str, Any]) -> Any:
    """The body line a :func:`record` stands for (ValueError or KeyError when it is not one)."""
    from bbox_lark.transform import build_values, read_result

    kind = rec["kind"]
    if kind == "blank":
        raw = rec.get("raw", "")
        if not isinstance(raw, str) or raw.strip():
            raise ValueError("a blank line holds only whitespace")
        return BlankLine(0, raw, "\n")
    if kind == "continuation":
        return Continuation(0, "  " + str(rec["text"]), "\n")
    values: dict[str, Any] = {"kind": kind}
    for key, value in rec.items():
        if key in ("n", "kind"):
            continue
        if key in ("fields", "metrics"):
            values[key] = _fields(value)
        elif key == "result":
            values[key] = read_result(value, 1, 0)[0]
        else:
            values[key] = value
    return build_values(kind, values)


# -- reading ----------------------------------------------------------------------------


def sniff(text: str) -> int:
    """3 for a JSON object whose ``schema_version`` starts with ``ATIF``, else 0."""
    return 3 if _SNIFF.match(text[: 1 << 16]) else 0


def _load(source: Input) -> tuple[Any, str]:
    raw = source.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise RefusedInputError(f"not UTF-8 (byte {error.start}): not an ATIF trajectory") from None
    return load_json(text, "an ATIF trajectory"), text


def _step_lines(text: str, steps: list[Any]) -> list[int]:
    """The line of each step's ``step_id`` in the JSON text (0 when not found): the n-th
    ``"step_id"`` key after the previous one's, matched by value."""
    lines: list[int] = []
    pos = text.find('"steps"')
    for step in steps:
        found = 0
        if isinstance(step, dict) and _is_int(step.get("step_id")):
            match = re.compile(rf'"step_id"\s*:\s*{step["step_id"]}\b').search(text, max(pos, 0))
            if match:
                pos = match.end()
                found = text.count("\n", 0, match.start()) + 1
        lines.append(found)
    return lines


def read(source: Input, ctx: ReadContext) -> Iterator[Item]:
    """A trajectory as a bbox document: rebuilt from its ``extra.bbox`` records when it was
    written from bbox, else mapped the natural way (see the module's docstring)."""
    data, text = _load(source)
    problems = trajectory_problems(data)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RefusedInputError(f"not a valid ATIF trajectory: {problems[0]}{more}")
    steps: list[Any] = data["steps"]
    lines = _step_lines(text, steps)
    good: list[tuple[int, dict[str, Any]]] = []
    for index, step in enumerate(steps):
        bad = step_problems(step, index)
        if bad:
            ctx.report.skip(lines[index], "; ".join(bad))
            continue
        if step["step_id"] != index + 1:
            ctx.report.skip(
                lines[index],
                f"steps[{index}] (step_id {step['step_id']}): step_id is not sequential"
                f" (expected {index + 1}); converted, numbered {index + 1}",
            )
        good.append((lines[index], step))
    root_extra = data.get("extra") or {}
    mine = root_extra.get(EXTRA_KEY) if isinstance(root_extra, dict) else None
    if isinstance(mine, dict) and "header" in mine:
        yield from _restore_document(data, mine, good, ctx)
    else:
        yield from _import(data, good, ctx)


def _restore_document(
    data: dict[str, Any], mine: dict[str, Any], steps: list[tuple[int, dict[str, Any]]], ctx: ReadContext
) -> Iterator[Item]:
    """The bbox document a trajectory written from bbox came from."""
    from bbox_lark.convert.base import build_head, importer_header

    header = mine.get("header")
    if isinstance(header, dict) and header:
        nulls = set(mine.get("null") or ())
        yield build_head({k: (None if k in nulls else v) for k, v in header.items()})
    else:
        yield importer_header(ctx, data.get("session_id"))
    records: list[tuple[int, int, dict[str, Any]]] = []
    for line, step in steps:
        extra = step.get("extra") or {}
        held = extra.get(EXTRA_KEY) if isinstance(extra, dict) else None
        for rec in (held or {}).get("lines", ()) if isinstance(held, dict) else ():
            if isinstance(rec, dict) and _is_int(rec.get("n")):
                records.append((rec["n"], line, rec))
            else:
                ctx.report.skip(
                    line, f"step {step['step_id']}: extra.bbox.lines: a record without its number"
                )
    records.sort(key=lambda r: r[0])
    for _, line, rec in records:
        try:
            node = restore(rec)
        except (ValueError, KeyError, TypeError) as error:
            ctx.report.skip(line, f"extra.bbox record {rec.get('n')}: cannot be rebuilt: {error}")
            continue
        ctx.report.kept(f"{rec['kind']} lines (from extra.bbox records)", line)
        yield node


def _field_safe(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= _FIELD_MAX and not _UNSAFE.search(value)


def _import(
    data: dict[str, Any], steps: list[tuple[int, dict[str, Any]]], ctx: ReadContext
) -> Iterator[Item]:
    """A trajectory from another producer, mapped to natural bbox lines."""
    from bbox_lark.ast import Comment
    from bbox_lark.convert.base import importer_header

    report = ctx.report
    agent = data["agent"]
    session = data.get("session_id")
    head_fields: dict[str, Any] = {}
    root: list[str] = []
    for key, value in (
        ("agent", agent["name"]),
        ("version", agent["version"]),
        ("model", agent.get("model_name")),
    ):
        if value is None:
            continue
        if _field_safe(value) and value.strip() == value and value:
            head_fields[key] = value
        else:
            root += attachment(
                {"agent": "agent_name", "version": "agent_version", "model": "model_name"}[key], value
            )
    head_fields[SCHEMA_HEADER] = data["schema_version"]
    trajectory_id = data.get("trajectory_id")
    if (
        trajectory_id is not None
        and _field_safe(trajectory_id)
        and trajectory_id.strip() == trajectory_id
        and trajectory_id
    ):
        head_fields["trajectory_id"] = trajectory_id
    elif trajectory_id is not None:
        root += attachment("trajectory_id", trajectory_id)
    if not (isinstance(session, str) and session and _field_safe(session) and session.strip() == session):
        root += attachment("session_id", session)
        session = None
    yield importer_header(ctx, session, **head_fields)
    for key in ("notes", "continued_trajectory_ref", "final_metrics", "extra", "subagent_trajectories"):
        if data.get(key) is not None:
            root += attachment(key, data[key])
            report.kept(f"trajectory {key} (in # atif root)", 1)
    for key in ("tool_definitions", "extra"):
        if agent.get(key) is not None:
            root += attachment(f"agent_{key}", agent[key])
            report.kept(f"agent {key} (in # atif root)", 1)
    if root:
        yield Comment.build(f"{ATIF_COMMENT} root", continuation=root)
    for line, step in steps:
        try:
            yield from _import_step(step, line, ctx)
        except ValueError as error:
            report.skip(line, f"step {step['step_id']}: cannot be written as bbox: {error}")


def _step_attachments(step: dict[str, Any], skip: Iterable[str]) -> list[str]:
    out: list[str] = []
    for key in ("reasoning_effort", "llm_call_count", "is_copied_context", "extra"):
        if key not in skip and step.get(key) is not None:
            out += attachment(key, step[key])
    return out


def _message_lines(value: Any, key: str) -> list[str]:
    return text_lines(value, key) if isinstance(value, str) else attachment(key, value)


def _import_step(step: dict[str, Any], line: int, ctx: ReadContext) -> Iterator[Event]:
    from bbox_lark.ast import Call, Comment, Message, Observation, Result
    from bbox_lark.values import parse_timestamp

    report = ctx.report
    source = step["source"]
    number = str(step["step_id"])
    fields: list[tuple[str, str]] = [("step", number)]
    extra_lines: list[str] = []
    stamp = step.get("timestamp")
    if stamp is not None:
        if parse_timestamp(stamp) is not None and _field_safe(stamp):
            fields.append(("ts", stamp))
        else:
            extra_lines += attachment("timestamp", stamp)
    model = step.get("model_name")
    if model is not None:
        if _field_safe(model) and model:
            fields.append(("model", model))
        else:
            extra_lines += attachment("model_name", model)
    body = _message_lines(step["message"], "message")
    rest = extra_lines + _step_attachments(step, ())
    if step.get("tool_calls") == []:
        rest += attachment("tool_calls", [])
    observation = step.get("observation")
    if observation is not None and not observation["results"]:
        rest += attachment("observation", observation)
    if source == "system":
        # A comment's fields are its text: a system step's values all travel as attachments.
        stamped = attachment("timestamp", stamp) if stamp is not None and "ts" in dict(fields) else []
        yield Comment.build(f"{ATIF_COMMENT} system", continuation=[*body, *stamped, *rest])
        report.kept("system steps (as # atif system)", line)
    elif source == "user":
        yield Message.build("user", "", fields=fields, continuation=[*body, *rest])
        report.kept("user steps (as u:)", line)
    else:
        reasoning = step.get("reasoning_content")
        if reasoning is not None:
            yield Message.build("thinking", "", fields=[("step", number)], continuation=text_lines(reasoning))
            report.kept("reasoning_content (as th:)", line)
        yield Message.build("agent", "", fields=fields, continuation=[*body, *rest])
        report.kept("agent steps (as a:)", line)
    typed = vocabulary_typed()
    for call in step.get("tool_calls") or ():
        arguments = call["arguments"]
        more: list[str] = []
        call_fields: list[tuple[str, str]] = (
            [("id", call["tool_call_id"])] if _field_safe(call["tool_call_id"]) else []
        )
        if not call_fields:
            more += attachment("tool_call_id", call["tool_call_id"])
        if all(
            _FIELD_KEY.match(k) and k not in typed and k != "args" and _field_safe(v)
            for k, v in arguments.items()
        ):
            call_fields += list(arguments.items())
        else:
            more += attachment("arguments", arguments)
        if call.get("extra") is not None:
            more += attachment("extra", call["extra"])
        try:
            node = Call.build("tool", call["function_name"], fields=call_fields, continuation=more)
        except ValueError:
            node = Call.build(
                "tool",
                "tool",
                fields=call_fields,
                continuation=[*attachment("function_name", call["function_name"]), *more],
            )
            report.extra("tool names that are no bbox name (in +function_name)", line)
        report.kept("tool calls (as t:)", line)
        yield node
    for result in (observation or {}).get("results", ()):
        more = []
        content = result.get("content")
        if content is None:
            more += attachment("content", None)
        else:
            more += _message_lines(content, "content")
        for key in ("subagent_trajectory_ref", "extra"):
            if result.get(key) is not None:
                more += attachment(key, result[key])
        source_id = result.get("source_call_id")
        obs_fields: list[tuple[str, str]] = []
        if source_id is not None:
            if _field_safe(source_id) and source_id:
                obs_fields.append(("id", source_id))
            else:
                more = [*attachment("source_call_id", source_id), *more]
        report.kept("observation results (as o:)", line)
        yield Observation.build(fields=obs_fields, result=Result.build("empty"), continuation=more)
    metrics = step.get("metrics")
    if metrics is not None:
        pairs: list[tuple[str, str]] = [("step", number)]
        more = []
        for key, value in metrics.items():
            if value is None:
                continue
            if key in ("prompt_tokens", "completion_tokens", "cached_tokens") or key == "cost_usd":
                pairs.append((key, repr(value) if isinstance(value, float) else str(value)))
            else:
                more += attachment(key, value)
        report.kept("step metrics (as # metrics)", line)
        yield Comment.build("metrics", fields=pairs, continuation=more)


def vocabulary_typed() -> frozenset[str]:
    from bbox_lark.grammar import vocabulary

    return frozenset(vocabulary().typed_fields) | {"id"}


# -- writing ----------------------------------------------------------------------------


class _Writer:
    """Builds a trajectory from a bbox document stream."""

    def __init__(self, head: Head, ctx: WriteContext) -> None:
        from bbox_lark.correlate import Pairer

        self.ctx = ctx
        self.report = ctx.report
        self.header: dict[str, Any] = head.header_info.fields if head.header_info is not None else {}
        self.nulls = head.header_info.null_keys if head.header_info is not None else frozenset()
        #: True for a document that did not come from ATIF: every line is recorded.
        self.native = SCHEMA_HEADER not in self.header
        self.steps: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None
        self.reasoning: list[str] = []
        self.reasoning_extra: dict[str, Any] = {}
        self.pending: list[dict[str, Any]] = []
        self.pairer = Pairer()
        #: start line (sequence number) -> (step, tool call); key -> the latest call.
        self.starts: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
        self.by_key: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
        self.used_ids: set[str] = set()
        self.by_step: dict[int, dict[str, Any]] = {}
        self.root: dict[str, Any] = {}
        self.sequence = 0
        self.seen_event = False
        #: Model usage stated on event lines (DECISIONS §12, :mod:`bbox_lark.numbers`): each
        #: response's agent step (the first its lines went to) and its final usage.
        self.responses = Responses()
        self.response_step: dict[int, dict[str, Any]] = {}
        self.response_usage: dict[int, Usage] = {}
        #: True once a ``# metrics`` gave a step its metrics: then they are the numbers.
        self.stated_metrics = False
        #: The session's numbers (``final_metrics``).
        self.counter = SessionCounter(self.header, estimate=False)
        #: Each step's threads (``tid=`` values, None for the main one), by ``id(step)``.
        self.step_threads: dict[int, set[str | None]] = {}
        #: Subagent references whose ``session_id`` may name a thread of this document.
        self.subagent_refs: list[tuple[dict[str, Any], str]] = []

    # -- steps ---------------------------------------------------------------------------

    def new_step(self, source: str, line: int) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": len(self.steps) + 1, "source": source, "message": ""}
        self.steps.append(step)
        self.current = step
        self.report.synthesized("step_ids", line)
        if self.pending:
            self._lines(step).extend(self.pending)
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
        pending: always a new one, which takes them)."""
        if self.current is not None and self.current["source"] == "agent" and not self.reasoning:
            return self.current
        return self.new_step("agent", line)

    def any_step(self, line: int) -> dict[str, Any]:
        if self.current is not None:
            return self.current
        self.report.synthesized("system steps (for lines before any step)", line)
        return self.new_step("system", line)

    def _lines(self, step: dict[str, Any]) -> list[dict[str, Any]]:
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
            self._lines(step).append(rec)

    # -- lines ---------------------------------------------------------------------------

    def feed(self, node: Any) -> None:
        if isinstance(node, Continuation) and self.seen_event and not self.native:
            return  # its event carries it
        self.sequence += 1
        if isinstance(node, BlankLine | Continuation):
            if self.native:
                self.keep(node, None)
                self.report.extra(f"{node.kind} lines", node.line)
            else:
                self.report.dropped(f"{node.kind} lines", node.line)
            return
        self.seen_event = True
        placed, step = self.event(node)
        self.count_response(node, step)
        if step is not None and node.kind != "comment":
            self.step_threads.setdefault(id(step), set()).add(node.tid)
        if self.native or not placed:
            self.keep(node, step)

    def count_response(self, event: Event, step: dict[str, Any] | None) -> None:
        """Note which agent step a response's usage goes to (its first line's that has one)."""
        self.counter.feed(event)
        for ended in self.responses.feed(event):
            self.response_usage[ended.ordinal] = ended.usage
        current = self.responses.current
        if current is None or line_usage(event) is None:
            return
        if step is None or step.get("source") != "agent" or current.ordinal in self.response_step:
            return
        self.response_step[current.ordinal] = step

    def event(self, event: Event) -> tuple[bool, dict[str, Any] | None]:
        """Map one event: whether it has a natural place, and the step it went to."""
        step = self.place(event)
        return step is not _UNPLACED, (None if step is _UNPLACED else step)

    def place(self, event: Event) -> Any:
        from bbox_lark.correlate import FAMILIES

        kind = event.kind
        line = event.line
        if kind == "user":
            step = self.new_step("user", line)
            self.message(step, event)
            self.report.kept("user messages (u:)", line)
            return step
        if kind == "agent":
            step = self.new_step("agent", line)
            self.message(step, event)
            self.report.kept("agent messages (a:)", line)
            self.trailing_metrics(step, event)
            return step
        if kind == "thinking":
            text, found = self.text_of(event)
            self.reasoning.append(found.get("text", text))
            self.report.kept("thinking lines (th: → reasoning_content)", line)
            return None
        if kind == "observation":
            return self.observation(event)
        if kind in FAMILIES and kind != _PLAN:
            return self.call(event)
        if kind == "comment" and event.name == "metrics":
            return self.metrics_comment(event)
        if kind == "comment" and event.text.split()[:1] == [ATIF_COMMENT]:
            return self.atif_comment(event)
        self.report.extra(f"{kind} lines", line)
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
            if event.ts is not None and _iso(ts):
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
            self.by_step[event.step] = step
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
        candidate, n = base, 1
        while candidate in self.used_ids or (wanted and candidate == wanted):
            n += 1
            candidate = f"{base}~{n}"
        self.used_ids.add(candidate)
        what = "unique tool_call_ids (an id reused while a call was open)" if wanted else "tool_call_ids"
        self.report.synthesized(what, event.line)
        return candidate

    def _step_ids(self) -> set[str]:
        if self.current is None:
            return set()
        return {tc["tool_call_id"] for tc in self.current.get("tool_calls") or ()}

    def call(self, event: Event) -> dict[str, Any]:
        from bbox_lark.correlate import AMBIGUOUS, COMPLETION, call_key, is_start

        seq_event = replace(event, line=self.sequence)
        outcome = self.pairer.feed(seq_event)
        if outcome == COMPLETION and self.pairer.completed in self.starts:
            started_step, started = self.starts[self.pairer.completed]
            self.result(started_step, started, event)
            self.report.kept(f"{event.kind} completions (→ the start's observation result)", event.line)
            return started_step
        _, found = self.text_of(event)
        step = self.agent_step(event.line)
        if event.step is not None:
            self.by_step.setdefault(event.step, step)
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
        if key is not None:
            self.by_key[key] = (step, tc)
        if is_start(event):
            self.starts[self.sequence] = (step, tc)
            if event.result is not None:
                tc.setdefault("extra", {})["status"] = event.result.text
        elif event.result is not None:
            self.result(step, tc, event)
        self.trailing_metrics(step, event) if step["source"] == "agent" else None
        return step

    def result(self, step: dict[str, Any], tc: dict[str, Any] | None, event: Event) -> None:
        """An observation result for ``tc`` (or for no call) from a result or ``o:``."""
        own = event.result.text if event.result is not None else ""
        more, found = read_attachments(event.continuation)
        content: Any = own if more is None else (own + "\n" + more if own else more)
        result: dict[str, Any] = {}
        if tc is not None:
            result["source_call_id"] = tc["tool_call_id"]
        if "content" in found:
            content = found.pop("content")
        if content is not None:
            result["content"] = content
        extra: dict[str, Any] = dict(found.pop("extra", None) or {})
        if "subagent_trajectory_ref" in found:
            result["subagent_trajectory_ref"] = found.pop("subagent_trajectory_ref")
        elif event.kind == "subagent" or (
            event.kind == "observation"
            and tc is not None
            and (tc.get("extra") or {}).get("kind") == "subagent"
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
                    self.subagent_refs.append((ref, session))
            elif isinstance(session, str) and session:
                extra["session_id"] = session
                self.report.extra("x: session_id= without path= (no valid reference since v1.7)", event.line)
        blob = event.result.blob if event.result is not None else None
        if blob is not None:
            extra["blob"] = {"sha256": blob.sha256, "bytes": blob.size, "mime": blob.mime}
            self.report.extra("blob pointers (with their hash)", event.line)
        if extra:
            result["extra"] = extra
        step.setdefault("observation", {"results": []})["results"].append(result)

    def observation(self, event: Event) -> dict[str, Any]:
        from bbox_lark.correlate import COMPLETION, call_key

        outcome = self.pairer.feed(replace(event, line=self.sequence))
        found_call = None
        if outcome == COMPLETION and self.pairer.completed in self.starts:
            found_call = self.starts[self.pairer.completed]
        else:
            key = call_key(event)
            if key is not None:
                found_call = self.by_key.get(key)
        if found_call is not None:
            step, tc = found_call
            self.result(step, tc, event)
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
        values = event.metrics or {}
        step_value = values.get("step")
        target = None
        if isinstance(step_value, str) and step_value.isdigit():
            target = self.by_step.get(int(step_value))
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
        from bbox_lark.numbers import METRIC_ALIASES

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
                parsed = _number(value.removeprefix("$"), target == "cost_usd")
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

    # -- the document --------------------------------------------------------------------

    def response_metrics(self) -> None:
        """Steps' metrics from the usage stated on event lines, each response once (DECISIONS
        §12), when no ``# metrics`` gave any: ATIF's ``prompt_tokens`` include the cached
        tokens, the writers' ``tokens_in`` does not."""
        for ended in self.responses.finish():
            self.response_usage[ended.ordinal] = ended.usage
        if self.stated_metrics or not self.response_step:
            return
        per_step: dict[int, tuple[dict[str, Any], Usage]] = {}
        for ordinal, step in self.response_step.items():
            usage = self.response_usage.get(ordinal)
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
        self.report.kept("usage on event lines (→ step metrics, each model response once)", 0)

    def final_metrics(self) -> dict[str, Any] | None:
        """The session's totals (:mod:`bbox_lark.numbers`, the numbers ``stats`` reports) for
        a document that did not come from ATIF: usage from ``# metrics`` (their prompt
        tokens as written) or else from event lines (``tokens_in + tokens_cached``, since
        ATIF's prompt tokens include the cached ones), and the cost the document states
        (never an estimate)."""
        totals = self.counter.finish()[2]
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
        if totals.stated_cost_usd is not None:
            final["total_cost_usd"] = float(totals.stated_cost_usd)
        if not final:
            return None
        final["total_steps"] = len(self.steps)
        self.report.synthesized(
            "final_metrics (the session's usage and stated cost, as stats counts them)", 0
        )
        return final

    def finish(self) -> dict[str, Any]:
        self.response_metrics()
        if self.reasoning:
            self.new_step("agent", 0)
            self.report.synthesized("agent steps (for th: lines no step followed)", 0)
        if self.pending or not self.steps:
            self.new_step("system", 0)
            self.report.synthesized("system steps (the document has no step)", 0)
        version = self.version()
        header = self.header
        root = self.root
        out: dict[str, Any] = {"schema_version": version}
        if "session_id" in root:
            session = root.pop("session_id")
            if session is not None:
                out["session_id"] = session
        elif isinstance(header.get("id"), str) and header["id"] and "id" not in self.nulls:
            out["session_id"] = header["id"]
        else:
            self.report.dropped("an empty or missing id: (session_id left out; optional since v1.7)", 1)
        trajectory_id = root.pop("trajectory_id", None)
        if trajectory_id is None and not self.native and isinstance(header.get("trajectory_id"), str):
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
                self.report.synthesized(f"agent {name} (the header has no {key}:)", 1)
        for key in ("tool_definitions", "extra"):
            if f"agent_{key}" in root:
                agent[key] = root.pop(f"agent_{key}")
        out["agent"] = agent
        embedded = self.embed_subagents(out, version)
        out["steps"] = [self.audio(step, version) for step in self.steps]
        if embedded:
            out["subagent_trajectories"] = embedded
        for key in ("notes", "final_metrics", "continued_trajectory_ref", "extra", "subagent_trajectories"):
            if key in root:
                out[key] = root.pop(key)
        if self.native and "final_metrics" not in out:  # (the session's, subagents included)
            final = self.final_metrics()
            if final is not None:
                out["final_metrics"] = final
        if self.native:
            extra: dict[str, Any] = out.setdefault("extra", {})
            held: dict[str, Any] = {"header": dict(header)}
            if self.nulls:
                held["null"] = sorted(self.nulls)
            extra[EXTRA_KEY] = held
            self.report.extra("header keys (in extra.bbox.header)", 1, count=max(len(header), 1))
        else:
            for key in header:
                if key not in ("format", "id", "repo_sha", SCHEMA_HEADER, "trajectory_id", *_HEADER_KEYS):
                    self.report.dropped(f"header key {key}: (no place in ATIF)", 1)
        return out

    def embed_subagents(self, out: dict[str, Any], version: str) -> list[dict[str, Any]]:
        """Subagents as embedded trajectories (ATIF ``subagent_trajectories``): the steps
        whose lines are all of a thread ``tid=T`` that a subagent call's result names
        (``session_id=T``, as the Claude Code importer writes it) leave the parent for a
        trajectory ``T`` of their own, and the result's reference gets ``trajectory_id: T``.
        Their ``extra.bbox`` line records stay in the parent (in the step before), so the
        document still comes back whole."""
        if not self.native or "subagent_trajectories" in self.root:
            return []
        named = {session for _, session in self.subagent_refs}

        def thread_of(step: dict[str, Any]) -> str | None:
            tids = self.step_threads.get(id(step), set())
            only = next(iter(tids)) if len(tids) == 1 else None
            return only if only in named else None

        if not any(thread_of(step) for step in self.steps) or all(thread_of(step) for step in self.steps):
            return []  # no subagent thread; or subagent lines alone, which stay the steps
        threads: dict[str, list[dict[str, Any]]] = {}
        parent: list[dict[str, Any]] = []
        waiting: list[dict[str, Any]] = []  # records of moved steps before any parent step
        for step in self.steps:
            thread = thread_of(step)
            if thread is None:
                if waiting:
                    self._lines(step)[:0] = waiting
                    waiting = []
                parent.append(step)
                continue
            threads.setdefault(thread, []).append(step)
            extra = step.get("extra") or {}
            held = extra.get(EXTRA_KEY) or {}
            records = held.pop("lines", [])
            if parent:
                self._lines(parent[-1]).extend(records)
            else:
                waiting.extend(records)
            if not held:
                extra.pop(EXTRA_KEY, None)
            if not extra:
                step.pop("extra", None)
        for number, step in enumerate(parent, 1):
            step["step_id"] = number
        self.steps = parent
        embedded = []
        for thread, steps in threads.items():
            for number, step in enumerate(steps, 1):
                step["step_id"] = number
            trajectory: dict[str, Any] = {"schema_version": version, "trajectory_id": thread}
            if "session_id" in out:
                trajectory["session_id"] = out["session_id"]
            trajectory["agent"] = dict(out["agent"])
            trajectory["steps"] = [self.audio(step, version) for step in steps]
            embedded.append(trajectory)
        for ref, session in self.subagent_refs:
            if session in threads:
                ref["trajectory_id"] = session
        self.report.kept("subagent threads (tid= lines a subagent result names → subagent_trajectories)", 0)
        return embedded

    def version(self) -> str:
        asked = self.ctx.options.get("atif_version")
        if asked:
            return asked if asked.startswith("ATIF-") else f"ATIF-v{asked}"
        source = self.header.get(SCHEMA_HEADER)
        if isinstance(source, str) and source in VERSIONS:
            return source
        if isinstance(source, str):
            self.report.synthesized(f"schema_version {DEFAULT_VERSION} (the source was {source})", 1)
        return DEFAULT_VERSION

    def audio(self, step: dict[str, Any], version: str) -> dict[str, Any]:
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
                    self.report.dropped("audio content parts (ATIF-v1.7 has none; a text part names each)", 0)
                else:
                    new.append(part)
            holder[key] = new
        return step


_SUBAGENT = "subagent"

#: What :meth:`_Writer.place` returns for a line that has no natural place in ATIF.
_UNPLACED: Any = object()


def _number(text: str, real: bool) -> int | float | None:
    try:
        return float(text) if real else int(text)
    except ValueError:
        return None


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


def write(items: Iterable[Item], out: TextIO, ctx: WriteContext) -> None:
    """The stream as one ATIF trajectory (the whole document is collected first)."""
    head, body = collect(flatten(items))
    writer = _Writer(head, ctx)
    for node in body:
        writer.feed(node)
    trajectory = writer.finish()
    text = json.dumps(trajectory, indent=2, ensure_ascii=False)
    if _SURROGATE.search(text):
        # Bytes that were not UTF-8 in the bbox file (kept as lone surrogates): JSON escapes.
        text = json.dumps(trajectory, indent=2, ensure_ascii=True)
        ctx.report.extra("undecodable bytes (as \\udcXX escapes)", 0)
    out.write(text + "\n")


# -- the format -------------------------------------------------------------------------

EXPORT_MAPPING = (
    MappingRow(
        "header `id:`", "`session_id`", note="an empty id: session_id is left out (optional since v1.7)"
    ),
    MappingRow(
        "header `agent:`, `version:` (else `client_version:`), `model:`",
        "`agent.name`, `.version`, `.model_name`",
        note="no agent/version: `unknown` (synthesized)",
    ),
    MappingRow("every header key", "`extra.bbox.header`", "extra"),
    MappingRow("`u:`", "a user step; its text (fields cut out) and continuation lines are the message"),
    MappingRow("`a:`", "an agent step"),
    MappingRow("`th:`", "`reasoning_content` of the agent step it precedes"),
    MappingRow(
        "`t:` `t!:` `c:` `x:` `s:` `q:`",
        "`tool_calls` of the current agent step; fields and arguments as `arguments`",
    ),
    MappingRow(
        "an id reused while its call is open",
        "a unique `tool_call_id` (`id~2`), the id in the call's `extra.id`",
        "synthesized",
    ),
    MappingRow(
        "inline result, `o:` line, completion",
        "`observation.results` of the call's step, with `source_call_id`",
    ),
    MappingRow(
        "`x:` … `path=` (on the `x:` line or the `o:` that completes it)",
        "`subagent_trajectory_ref[].trajectory_path`; a session id alone: `extra.session_id`",
    ),
    MappingRow(
        "`tid=T` lines of a subagent whose result names `session_id=T` (the Claude Code importer's"
        " subagent logs)",
        "an embedded trajectory `T` in `subagent_trajectories`, referenced by `trajectory_id`; the"
        " lines' records stay in the parent's `extra.bbox`",
    ),
    MappingRow("blob pointer result", "the result's `extra.blob` (sha256, bytes, mime)", "extra"),
    MappingRow(
        "`# metrics step=N`, trailing `# metrics`",
        "that agent step's `metrics` (tokens, cost; the rest in `metrics.extra`)",
    ),
    MappingRow(
        "`tokens_in=` `tokens_out=` `tokens_cached=` on event lines (no `# metrics` in the file)",
        "the agent step's `metrics`, each model response once (DECISIONS §12; `prompt_tokens` ="
        " `tokens_in + tokens_cached`)",
    ),
    MappingRow(
        "the session's usage and stated cost (`bbox_lark.numbers`, as `stats` counts them)",
        "`final_metrics` (`total_*_tokens`, `total_cost_usd`, `total_steps`)",
    ),
    MappingRow("`ts=`", "`timestamp`; a malformed one: `extra.bbox.ts`"),
    MappingRow(
        "comments, lifecycle, `m:` `p:` `r:` `t~:` `td:`, unknown and blank lines",
        "the step's `extra.bbox.lines` records",
        "extra",
    ),
    MappingRow("every body line", "a record in its step's `extra.bbox.lines` (what brings it back)", "extra"),
)

IMPORT_MAPPING = (
    MappingRow(
        "`session_id`", "header `id:`", note="none: `imported-<uuid>` (synthesized) and `+session_id null`"
    ),
    MappingRow("`agent.name`, `.version`, `.model_name`", "header `agent:`, `version:`, `model:`"),
    MappingRow("`schema_version`, `trajectory_id`", "header `atif:`, `trajectory_id:`"),
    MappingRow(
        "`notes`, `final_metrics`, `extra`, `continued_trajectory_ref`, `subagent_trajectories`,"
        " `agent.tool_definitions`, `agent.extra`",
        "`# atif root` with `+key JSON` attachments",
    ),
    MappingRow("a system step", "`# atif system` with the message as `| …` lines"),
    MappingRow("a user step", "`u: step=N ts=…` with the message as `| …` lines"),
    MappingRow("an agent step", "`th:` (reasoning), then `a: step=N ts=… model=…`"),
    MappingRow("a multimodal message or content", "`+message [...]` / `+content [...]` (the parts as JSON)"),
    MappingRow("a tool call", "`t:NAME id=… key=value…`; other than plain strings: `+arguments {...}`"),
    MappingRow("an observation result", "`o: id=… →` with the content as `| …` lines"),
    MappingRow(
        "`metrics`", "`# metrics step=N prompt_tokens=… completion_tokens=… cached_tokens=… cost_usd=…`"
    ),
    MappingRow("other step, call and result values", "`+key JSON` attachments of their line", "extra"),
    MappingRow("`extra.bbox` (written from bbox)", "the recorded lines and header, rebuilt"),
)

FORMAT = Format(
    name="atif",
    description="ATIF trajectory JSON (harbor RFC 0001, v1.7/v1.8); docs/formats/atif.md",
    extensions=(".json",),
    sniff=sniff,
    read=read,
    write=write,
    fidelity=(
        "bbox → ATIF → bbox keeps every line's kind, name, arguments, fields, result and"
        " metrics (records in extra.bbox); ATIF → bbox → ATIF gives an equal trajectory"
    ),
    lossless=False,
    options=(
        Option(
            "atif_version",
            "atif output: the schema_version to write (default: the source's v1.7/v1.8, else 1.8).",
            default=None,
            choices=("1.7", "1.8", *VERSIONS),
        ),
        REPO_SHA,
    ),
    export_mapping=EXPORT_MAPPING,
    import_mapping=IMPORT_MAPPING,
)
