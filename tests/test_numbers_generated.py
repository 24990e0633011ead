"""Numbers on generated sessions (DECISIONS §13; the corpus version is test_numbers_agree.py).

A seeded generator writes sessions that mix every way a bbox log states a number: usage,
model and cost fields in a free-text line's trailing run, the same keys inside its prose,
``# metrics`` lines and trailing ``# metrics`` comments (ATIF's convention: prompt includes
cached, sometimes a cached count over the prompt), cache writes, ``@checkpoint`` and ``@end``
costs, a closing summary, and calls by id, reused id and no id, completed later or never.

* Every path agrees: ``stats``, the tables (``export``, ``query``), the report's survey, ATIF's
  ``final_metrics``, and the round trips through ATIF, JSON Lines and compact.
* Fields inside prose change no number: each session is written twice, once with the usage,
  model or cost fields its prose holds and once with a plain word in their place; the two
  must give the same numbers (the second copy's W027 warnings aside). This found a key
  written in the prose and again in the trailing run read from the prose
  (``numbers.usage.number_fields``).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from test_numbers_agree import assert_every_path_agrees, assert_numbers_survive_every_format

import bbox_lark
from bbox_lark.convert import convert
from bbox_lark.numbers.session import SessionTotals, document_numbers

WORDS = [
    "fix",
    "the",
    "tests",
    "read",
    "auth",
    "cache",
    "done",
    "now",
    "ok",
    "why",
    "tokens",
    "cost",
    "model",
]
MODELS = ["claude-sonnet-4-5", "gpt-4o", "claude-opus-4-1", "sonnet-4", "unknown-model-x"]
TOOLS = ["read", "bash", "grep", "test", "edit", "write"]
#: Marks a field written inside prose (always followed by a word), so that a second copy of
#: the session can put a plain word in its place.
INSIDE = re.compile("\x01([^\x02]*)\x02")


def _prose(r: random.Random) -> str:
    words = [r.choice(WORDS) for _ in range(r.randint(1, 6))]
    if r.random() < 0.15:
        field = r.choice(
            [
                f"tokens_in={r.randint(1, 999)}",
                f"cost_usd=0.{r.randint(1, 99)}",
                f"model={r.choice(MODELS)}",
                f"tokens_out={r.randint(1, 99)}",
                "tokens=5",
                "cost=$3",
            ]
        )
        words.insert(r.randint(0, len(words) - 1), f"\x01{field}\x02")
    return " ".join(words)


def _usage_fields(r: random.Random) -> str:
    parts = []
    if r.random() < 0.7:
        parts.append(f"tokens_in={r.randint(0, 5000)}")
    if r.random() < 0.7:
        parts.append(f"tokens_out={r.randint(0, 2000)}")
    if r.random() < 0.4:
        parts.append(f"tokens_cached={r.randint(0, 9000)}")
    if r.random() < 0.2:
        parts.append(f"cache_creation_input_tokens={r.randint(0, 900)}")
    if r.random() < 0.5:
        parts.append(f"model={r.choice(MODELS)}")
    if r.random() < 0.3:
        parts.append(f"cost_usd={r.randint(0, 500) / 1000}")
    r.shuffle(parts)
    return " ".join(parts)


def _metrics(r: random.Random, step: int) -> str:
    parts = [f"step={step}"] if r.random() < 0.8 else []
    prompt = r.randint(0, 5000)
    if r.random() < 0.8:
        parts.append(f"prompt_tokens={prompt}")
    if r.random() < 0.8:
        parts.append(f"completion_tokens={r.randint(0, 900)}")
    if r.random() < 0.5:  # now and then more cached than prompt (W028)
        parts.append(f"cached_tokens={r.randint(0, prompt + (50 if r.random() < 0.1 else 0))}")
    if r.random() < 0.4:
        parts.append(f"cost_usd={r.randint(0, 900) / 10000}")
    if r.random() < 0.15:
        parts.append(f"extra.cache_creation_input_tokens={r.randint(0, 900)}")
    if r.random() < 0.1:
        parts.append(f"extra.reasoning_tokens={r.randint(0, 90)}")
    if r.random() < 0.1:
        parts.append(f"model={r.choice(MODELS)}")
    return " ".join(parts)


def _inline_metrics(r: random.Random) -> str:
    return r.choice(
        [
            f"prompt={r.randint(0, 900)} completion={r.randint(0, 90)} cached={r.randint(0, 90)}"
            f" cost={r.randint(0, 99) / 10000}",
            f"prompt_tokens={r.randint(0, 900)} completion_tokens={r.randint(0, 90)}",
            f"tokens_in={r.randint(0, 900)} tokens_out={r.randint(0, 90)}",
            f"cost=${r.randint(0, 99) / 100}",
            f"latency_ms={r.randint(1, 99)}",
        ]
    )


def _call(r: random.Random, step: str, used: list[str], open_ids: list[str], no_id: list[int]) -> str:
    family = r.choice(["t", "t", "t", "c", "x"])
    name = {"t": r.choice(TOOLS), "c": "github.issues", "x": "explore"}[family]
    call_id = None
    if r.random() < 0.6:
        call_id = r.choice(used) if used and r.random() < 0.15 else f"call_{len(used) + 1}"
        used.append(call_id)
    head = f"{family}:{name}{f' id={call_id}' if call_id else ''} arg{step}"
    result = r.choice(
        ["[ok]", "[error] boom", "[186 lines]", "[running]", "[running]", "[3 matches]", "", "[timeout]"]
    )
    if result in ("[running]", ""):
        if call_id:
            open_ids.append(call_id)
        else:
            no_id[0] += 1
    if not result:
        return head
    return f"{head} \u2192 {result}" + (f" {_usage_fields(r)}" if r.random() < 0.1 else "")


def _observation(r: random.Random, open_ids: list[str], no_id: list[int]) -> str:
    if open_ids and r.random() < 0.7:
        call_id = r.choice(open_ids)
        if r.random() < 0.7:
            open_ids.remove(call_id)
        return f"o: id={call_id} \u2192 {r.choice(['[ok] passed', '[error] failed', '[ok]'])}"
    if no_id[0]:
        no_id[0] -= 1
        return f"o: \u2192 {r.choice(['[ok]', '[error] x'])}"
    return f"u: {_prose(r)}"


def _marked_session(seed: int) -> str:
    r = random.Random(seed)
    head = ["---", "format: bbox/1", f"id: gen_{seed}", "repo_sha: 215db51", "runner: local"]
    if r.random() < 0.5:
        head.append(f"model: {r.choice(MODELS)}")
    lines = [*head, "---", ""]
    used: list[str] = []
    open_ids: list[str] = []
    no_id = [0]
    if r.random() < 0.5:
        lines.append(f"@start id=gen_{seed}" + (f" budget=${r.randint(1, 50)}" if r.random() < 0.3 else ""))
    for step in range(1, r.randint(2, 26)):
        kind = r.random()
        at = f" step={step}" if r.random() < 0.5 else ""
        if kind < 0.12:
            lines.append(f"u: {_prose(r)}{at}")
        elif kind < 0.30:
            tail = f" {_usage_fields(r)}" if r.random() < 0.6 else ""
            inline = f" # metrics {_inline_metrics(r)}" if r.random() < 0.2 else ""
            lines.append(f"a: {_prose(r)}{at}{tail.rstrip()}{inline}")
        elif kind < 0.35:
            lines.append(
                f"th: {_prose(r)}{at}" + (f" {_usage_fields(r)}".rstrip() if r.random() < 0.3 else "")
            )
        elif kind < 0.48:
            lines.append(f"# metrics {_metrics(r, step)}")
        elif kind < 0.70:
            lines.append(_call(r, at, used, open_ids, no_id))
        elif kind < 0.80:
            lines.append(_observation(r, open_ids, no_id))
        elif kind < 0.85:
            tokens = f" tokens={r.randint(1, 99999)}" if r.random() < 0.5 else ""
            cost = f" cost=${r.randint(1, 999) / 100}" if r.random() < 0.5 else ""
            lines.append(f"@checkpoint hour={r.randint(1, 9)}{tokens}{cost}")
        elif kind < 0.90:
            # A plain comment (a field at its start would make it the closing summary).
            lines.append(f"# {r.choice(WORDS)} {_prose(r)}")
        else:
            lines.append(f"a: {_prose(r)}{at}")
    if r.random() < 0.4:
        cost = f" cost=${r.randint(1, 999) / 100}" if r.random() < 0.5 else ""
        lines.append(f"@end{cost}" + (f" tokens={r.randint(1, 99999)}" if r.random() < 0.3 else ""))
    if r.random() < 0.35:
        lines.append(
            r.choice(
                [
                    f"# tokens_in={r.randint(1, 9999)} tokens_out={r.randint(1, 999)} tools=3"
                    f" cost=${r.randint(1, 99) / 100}",
                    f"# tokens={r.randint(1, 9999)} cost=${r.randint(1, 99) / 100}",
                    f"# tokens_in={r.randint(1, 9999)} tokens_out={r.randint(1, 999)}",
                ]
            )
        )
    return "\n".join(lines) + "\n"


def session(seed: int, *, prose_fields: bool = True) -> str:
    """The generated session of ``seed``; without ``prose_fields``, a plain word stands where
    its prose held a usage, model or cost field."""
    return INSIDE.sub(lambda m: m.group(1) if prose_fields else "zz", _marked_session(seed))


def _numbers(text: str) -> tuple[object, ...]:
    totals: SessionTotals = document_numbers(bbox_lark.parse(text)).totals
    return (
        totals.usage,
        totals.usage_source,
        totals.stated_cost_usd,
        totals.estimated_cost_usd,
        totals.models,
        totals.calls,
        totals.outcomes,
        totals.pairing,
    )


@pytest.mark.parametrize("block", range(4))
def test_every_path_agrees_on_generated_sessions(block: int, tmp_path: Path) -> None:
    for seed in range(block * 60, (block + 1) * 60):
        text = session(seed)
        assert not [d for d in bbox_lark.parse(text).diagnostics if d.severity == "error"], seed
        path = tmp_path / f"gen_{seed}.bbox"
        path.write_text(text, encoding="utf-8")
        assert_every_path_agrees(path, text)
        assert_numbers_survive_every_format(text)
        compact = convert(convert(text, "bbox", to="compact").text, "compact", to="bbox").text
        assert _numbers(compact) == _numbers(text), seed


def test_fields_inside_prose_change_no_number() -> None:
    compared = 0
    for seed in range(600):
        with_fields, without = session(seed), session(seed, prose_fields=False)
        if with_fields == without:
            continue
        compared += 1
        assert _numbers(with_fields) == _numbers(without), seed
    assert compared > 300  # the test reads what it claims to
