"""ATIF → bbox: a trajectory read as a bbox document (see the package's docstring)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from bbox_lark.convert.atif.records import (
    UNSAFE,
    attachment,
    first_problem,
    record_problem,
    restore,
    text_lines,
)
from bbox_lark.convert.atif.schema import is_int, step_problems, trajectory_problems
from bbox_lark.convert.atif.tables import ATIF_COMMENT, EXTRA_KEY, SCHEMA_HEADER
from bbox_lark.convert.base import (
    Input,
    ReadContext,
    RefusedInputError,
    load_json,
    type_problem,
)
from bbox_lark.syntax import build
from bbox_lark.syntax.nodes import Event

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item


_SNIFF = re.compile(r'\A\s*\{.*?"schema_version"\s*:\s*"ATIF', re.S)
_FIELD_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")


_FIELD_MAX = 200


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


_STEP_ID = re.compile(r'"step_id"\s*:\s*(-?[0-9]+)\b')


def _step_lines(text: str, steps: list[Any]) -> list[int]:
    """The line of each step's ``step_id`` in the JSON text (0 when not found): the first
    ``"step_id"`` key with the step's value after the previous step's.

    Linear in the text and the steps: one pass finds every ``"step_id"`` key and indexes its
    offsets by value; each step takes the first offset of its value past the previous step's
    (a bisection), and lines are counted from the previous step's offset, never from the
    start (a trajectory of 100,000 steps reads in linear time)."""
    from bisect import bisect_right

    start = max(text.find('"steps"'), 0)
    offsets: dict[int, list[int]] = {}
    for match in _STEP_ID.finditer(text, start):
        offsets.setdefault(int(match.group(1)), []).append(match.start())
    lines: list[int] = []
    pos = start
    counted_to, line = 0, 1
    for step in steps:
        found = 0
        if isinstance(step, dict) and is_int(step.get("step_id")):
            candidates = offsets.get(step["step_id"], ())
            index = bisect_right(candidates, pos - 1) if candidates else 0
            if index < len(candidates):
                at = candidates[index]
                pos = at + 1
                line += text.count("\n", counted_to, at)
                counted_to = at
                found = line
        lines.append(found)
    return lines


def read(source: Input, ctx: ReadContext) -> Iterator[Item]:
    """A trajectory as a bbox document: rebuilt from its ``extra.bbox`` records when it was
    written from bbox, else mapped the natural way (see the package's docstring)."""
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
            # Renumbered as the message says: a repeated step_id kept as it is would give
            # two steps one number, and the numbers count one metrics comment per step.
            step = {**step, "step_id": index + 1}
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
    from bbox_lark.convert.base import importer_header

    header = mine.get("header")
    problem = _header_problem(header, mine.get("null"))
    if problem is None and header:
        nulls = set(mine.get("null") or ())
        yield build.head({k: (None if k in nulls else v) for k, v in header.items()})
    else:
        # An empty header: the bbox file's could not be read (E006, E017 …); written anew.
        if problem is not None:
            ctx.report.skip(1, f"extra.bbox.header: {problem}; a header was written for it")
        session = data.get("session_id")
        yield importer_header(ctx, session if _header_safe(session) else None)
    records: list[tuple[int, int, dict[str, Any]]] = []
    for line, step in steps:
        extra = step.get("extra") or {}
        held = extra.get(EXTRA_KEY) if isinstance(extra, dict) else None
        found = held.get("lines", []) if isinstance(held, dict) else []
        if not isinstance(found, list):
            why = type_problem("extra.bbox.lines", found, "array")
            ctx.report.skip(line, f"step {step['step_id']}: {why}")
            continue
        for rec in found:
            if isinstance(rec, dict) and is_int(rec.get("n")):
                records.append((rec["n"], line, rec))
            else:
                ctx.report.skip(
                    line, f"step {step['step_id']}: extra.bbox.lines: a record without its number"
                )
    records.sort(key=lambda r: r[0])
    for _, line, rec in records:
        problem = record_problem(rec)
        if problem is not None:
            ctx.report.skip(line, f"extra.bbox record {rec['n']}: {problem}")
            continue
        try:
            node = restore(rec)
        except (ValueError, KeyError, TypeError) as error:
            ctx.report.skip(line, f"extra.bbox record {rec['n']}: cannot be rebuilt: {error}")
            continue
        ctx.report.kept(f"{rec['kind']} lines (from extra.bbox records)", line)
        yield node


def _header_problem(header: Any, nulls: Any) -> str | None:
    """What makes ``extra.bbox.header`` (and its ``null`` list) no header a bbox file can
    have, else None: it must be an object whose values nest less deeply than a
    header may (E017), and ``null`` an array of strings."""
    from bbox_lark.convert.base import nesting_depth, type_problem
    from bbox_lark.syntax.header import MAX_HEADER_DEPTH

    problem = type_problem("header", header, "object")
    if problem:
        return problem
    if nesting_depth(header, MAX_HEADER_DEPTH) >= MAX_HEADER_DEPTH:
        return f"the header nests more than {MAX_HEADER_DEPTH - 1} levels deep"
    if nulls is not None:
        problem = type_problem("null", nulls, "array")
        problem = problem or first_problem(
            type_problem(f"null[{i}]", k, "string") for i, k in enumerate(nulls)
        )
    return problem


def _field_safe(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= _FIELD_MAX and not UNSAFE.search(value)


def _header_safe(value: Any) -> bool:
    """A value the header may hold (else it travels as an attachment of ``# atif root``)."""
    from bbox_lark.convert.base import header_safe

    return _field_safe(value) and bool(value) and header_safe(value)


def _import(
    data: dict[str, Any], steps: list[tuple[int, dict[str, Any]]], ctx: ReadContext
) -> Iterator[Item]:
    """A trajectory from another producer, mapped to natural bbox lines."""
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
        if _header_safe(value):
            head_fields[key] = value
        else:
            root += attachment(
                {"agent": "agent_name", "version": "agent_version", "model": "model_name"}[key], value
            )
    head_fields[SCHEMA_HEADER] = data["schema_version"]
    trajectory_id = data.get("trajectory_id")
    if trajectory_id is not None and _header_safe(trajectory_id):
        head_fields["trajectory_id"] = trajectory_id
    elif trajectory_id is not None:
        root += attachment("trajectory_id", trajectory_id)
    if not _header_safe(session):
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
        yield build.comment(f"{ATIF_COMMENT} root", continuation=root)
    for line, step in steps:
        try:
            yield from _import_step(step, line, ctx)
        except ValueError as error:
            report.skip(line, f"step {step['step_id']}: cannot be written as bbox: {error}")
    summary = _final_summary(data.get("final_metrics"))
    if summary:
        # The stated totals where the numbers read them (§13: a closing summary comment,
        # ``cost=`` first), beside the exact object in ``# atif root``.
        yield build.comment(" ".join(f"{key}={value}" for key, value in summary))
        report.kept("final_metrics totals (also as the closing # cost=… summary)", 1)


#: ``final_metrics`` key -> the closing summary's key (numbers' aliases, ATIF's convention:
#: ``prompt_tokens`` include ``cached_tokens``).
_SUMMARY_KEYS = (
    ("total_cost_usd", "cost"),
    ("total_prompt_tokens", "prompt_tokens"),
    ("total_completion_tokens", "completion_tokens"),
    ("total_cached_tokens", "cached_tokens"),
)


def _final_summary(final: Any) -> list[tuple[str, str]]:
    """The closing summary's fields for a trajectory's ``final_metrics`` (its cost first, so
    the comment is a summary), or none when it states no cost."""
    if not isinstance(final, dict) or not isinstance(final.get("total_cost_usd"), int | float):
        return []
    pairs: list[tuple[str, str]] = []
    for key, name in _SUMMARY_KEYS:
        value = final.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        pairs.append((name, repr(value) if isinstance(value, float) else str(value)))
    return pairs if pairs and pairs[0][0] == "cost" else []


def _step_attachments(step: dict[str, Any], skip: Iterable[str]) -> list[str]:
    out: list[str] = []
    for key in ("reasoning_effort", "llm_call_count", "is_copied_context", "extra"):
        if key not in skip and step.get(key) is not None:
            out += attachment(key, step[key])
    return out


def _message_lines(value: Any, key: str) -> list[str]:
    return text_lines(value, key) if isinstance(value, str) else attachment(key, value)


def _import_step(step: dict[str, Any], line: int, ctx: ReadContext) -> Iterator[Event]:
    from bbox_lark.syntax.values import parse_timestamp

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
        yield build.comment(f"{ATIF_COMMENT} system", continuation=[*body, *stamped, *rest])
        report.kept("system steps (as # atif system)", line)
    elif source == "user":
        yield build.message("user", "", fields=fields, continuation=[*body, *rest])
        report.kept("user steps (as u:)", line)
    else:
        reasoning = step.get("reasoning_content")
        if reasoning is not None:
            yield build.message("thinking", "", fields=[("step", number)], continuation=text_lines(reasoning))
            report.kept("reasoning_content (as th:)", line)
        yield build.message("agent", "", fields=fields, continuation=[*body, *rest])
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
            node = build.call("tool", call["function_name"], fields=call_fields, continuation=more)
        except ValueError:
            node = build.call(
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
        yield build.observation(fields=obs_fields, result=build.result("empty"), continuation=more)
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
        yield build.comment("metrics", fields=pairs, continuation=more)


def vocabulary_typed() -> frozenset[str]:
    from bbox_lark.syntax.grammar import vocabulary

    return frozenset(vocabulary().typed_fields) | {"id"}


# -- writing ----------------------------------------------------------------------------
