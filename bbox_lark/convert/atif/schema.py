"""The structure of an ATIF trajectory (what the ``atif`` package's Pydantic models check),
as tables of keys and their types, and the checks that read them.

This stays a small validator of its own rather than a JSON Schema checked by ``jsonschema``
or the ``atif`` models (issue 16 allows that when the reason is written down; here it is):

- Its messages are part of the behaviour: a refusal reads ``not a valid ATIF trajectory:
  agent: required (and 2 more)`` and a skipped step ``steps[3].tool_calls[0].arguments: must
  be an object``, in the order of the key tables, and the tests and snapshots assert them.
  ``jsonschema`` words its errors its own way (``'agent' is a required property``), reports
  them in the order its validators run, and has no message for the rules listed next that a schema
  cannot state the same way; the ``atif`` models raise Pydantic's messages.
- It checks what the converter relies on beyond types: a step's ``step_id`` sequence in
  embedded trajectories, unique ``trajectory_id`` values, agent-only keys on other sources,
  media types with their aliases, a ``schema_version`` that starts with ``ATIF-v``.
- The ``atif`` package is optional (and heavy); the reader must work without it. The tests
  still use its models as the judge of what the writer writes (``tests/test_atif.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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


def is_int(value: Any) -> bool:
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
        test = is_int if kind == "ints" else _is_num
        return isinstance(value, list) and all(test(x) for x in value)
    if kind == "effort":
        return isinstance(value, str) or _is_num(value)
    if kind == "int":
        return is_int(value)
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
    if isinstance(step, dict) and is_int(step.get("step_id")):
        label += f" (step_id {step['step_id']})"
    problems = _shape(step, _STEP_KEYS, label)
    if not isinstance(step, dict):
        return problems
    if is_int(step.get("step_id")) and step["step_id"] < 1:
        problems.append(f"{label}.step_id: must be >= 1")
    source = step.get("source")
    if isinstance(source, str) and source not in _SOURCES:
        problems.append(f"{label}.source: {source!r} is not one of system, user, agent")
    stamp = step.get("timestamp")
    if isinstance(stamp, str) and not is_iso(stamp):
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


def is_iso(text: str) -> bool:
    from datetime import datetime

    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True
