"""bbox → ATIF with its steps put away (:mod:`bbox_lark.convert.atif.steps`): the writer holds
only the recent steps and pickles the others to a file, bringing one back when a later line
reaches it (a completion, an ``o:`` by id, ``# metrics step=N``); its indices of every call
(the latest call of a key, the tool_call_ids written, the steps by ``step=``) move to a
temporary SQLite table (:mod:`bbox_lark.convert.atif.spill`). A differential test: with every
step put away as soon as it is left and every index entry moved as soon as it is set, each
document gives the same bytes and the same fidelity report as with all of them held."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from test_atif import BIG, atif_paths, bbox_paths, path_id
from test_bench_tool import load_bench

from bbox_lark.convert import convert
from bbox_lark.convert.atif import spill
from bbox_lark.convert.atif.spill import MaybeKeys, SpillMap, id_code, int_code, key_code
from bbox_lark.convert.atif.steps import StepStore

FIXTURES = Path(__file__).parent / "fixtures"


def _both(monkeypatch: pytest.MonkeyPatch, text: str | bytes, **options: Any) -> None:
    held = convert(text, "bbox", to="atif", max_line=BIG, **options)
    # The filter as it is, and one of a single byte that soon answers "maybe" to every key
    # (each question then goes to the table).
    for width in (MaybeKeys.WIDTH, 3):
        with monkeypatch.context() as patch:
            patch.setattr(StepStore, "HELD", 0)
            patch.setattr(SpillMap, "RECENT", 1)
            patch.setattr(MaybeKeys, "WIDTH", width)
            put_away = convert(text, "bbox", to="atif", max_line=BIG, **options)
        assert put_away.text == held.text
        assert put_away.fidelity.entries == held.fidelity.entries


@pytest.mark.parametrize("path", bbox_paths(), ids=path_id)
def test_steps_put_away_write_the_same_bytes(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _both(monkeypatch, path.read_bytes())


@pytest.mark.parametrize("path", atif_paths(valid=True), ids=path_id)
def test_imported_trajectories_put_away_write_the_same_bytes(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bbox = convert(path.read_bytes(), "atif", to="bbox", max_line=BIG).text
    _both(monkeypatch, bbox)
    _both(monkeypatch, bbox, atif_version="1.7")


def test_subagents_metrics_and_audio_put_away(monkeypatch: pytest.MonkeyPatch) -> None:
    # Embedded subagent threads (their records moved to the parent step before them, the
    # references' trajectory_id), responses' metrics, late results and audio under v1.7.
    path = FIXTURES / "claude-code-subagents" / "sess-sub.jsonl"
    text = convert(path.read_bytes(), "claude-code", to="bbox", path=path).text
    _both(monkeypatch, text)
    _both(monkeypatch, text, atif_version="1.7")
    source = {
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "go"},
            {
                "step_id": 2,
                "source": "user",
                "message": [{"type": "audio", "source": {"media_type": "audio/wav", "path": "a.wav"}}],
            },
            {"step_id": 3, "source": "agent", "message": "ok", "metrics": {"prompt_tokens": 3}},
        ],
    }
    bbox = convert(json.dumps(source), "atif", to="bbox").text
    _both(monkeypatch, bbox, atif_version="1.7")


def test_a_long_session_put_away(monkeypatch: pytest.MonkeyPatch) -> None:
    # Calls completed steps later, o: lines by id, # metrics step=N for old steps, a call
    # never completed, and a step= metrics line for the first step at the end.
    bench = sys.modules.get("bbox_bench") or load_bench()  # (one module: test_bench_tool pickles by name)
    text = bench.generate_session(3000)
    text += "t!:Read id=never a.rs → [running]\n# metrics step=1 prompt=5\no: id=call_1 → [ok] late\n"
    _both(monkeypatch, text)


def test_a_session_whose_ids_repeat_put_away(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ids reused after their call completed (made unique with ~N), calls without an id, an
    # o: reaching an old call by id and by span, a step= given twice, undecodable bytes in ids.
    lines = ["@start id=s"]
    for n in range(40):
        lines.append(f"a: step {n} step={n % 7}")
        lines.append(f"t:Read id=r{n % 5} → [ok]")
        lines.append(f"t:Grep span=g{n % 3} → [ok]")
        lines.append("t:Bash → [ok]")
        lines.append(f"o: id=r{(n * 3) % 5} → [ok] late")
        lines.append(f"o: span=g{n % 3} → more")
        lines.append(f"# metrics step={n % 9} prompt=3")
    lines += ["t:Read id=\udcff\udcfe → [ok]", "o: id=\udcff\udcfe → [ok] again", "@end", ""]
    text = "\n".join(lines).encode("utf-8", "surrogateescape")
    _both(monkeypatch, text)


def test_a_spill_map_answers_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SpillMap, "RECENT", 2)
    ids = SpillMap(id_code)
    for value in ("a", "\udcff", 7, ("t",), "b", "c"):
        ids.add(value)
    assert all(value in ids for value in ("a", "\udcff", 7, ("t",), "b", "c"))
    assert "7" not in ids and "d" not in ids and 8 not in ids
    ids._digests.add(("", "d"))  # a digest held for a key never set: the table says no
    assert "d" not in ids
    assert ids._digests is not None and ("", "e") not in ids._digests  # "no" without the table
    keys = SpillMap(key_code)
    for n in range(5):
        keys[("id", "x")] = n
        keys[("span", f"s{n}")] = {"n": n}
    assert keys.get(("id", "x")) == 4 and keys.get(("span", "s0")) == {"n": 0}
    assert keys.get(("span", "x")) is None
    steps = SpillMap(int_code)
    for n in (1, 2**63 - 1, 3):
        assert steps.setdefault(n, n * 2) == n * 2
    assert steps.setdefault(2**63 - 1, 0) == 2**64 - 2 and steps.get(4, "no") == "no"
    for held in (ids, keys, steps):
        held.close()


@pytest.mark.parametrize("wide", [True, False], ids=["hash", "blake2b"])
def test_a_bloom_filter_never_forgets_a_key(wide: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill, "_WIDE_HASH", wide)  # False: a Python whose hash has 32 bits
    added = MaybeKeys()
    codes = [("id", f"call_{n}") for n in range(20_000)] + [("", "\udcff"), ("span", "")]
    assert not any(code in added for code in codes)  # empty: "no" to every key
    for code in codes:
        added.add(code)
    assert all(code in added for code in codes)
    assert len(added._bits) == 1 << (MaybeKeys.WIDTH - 3)  # a fixed size, whatever was added


@pytest.mark.parametrize("wide", [True, False], ids=["hash", "blake2b"])
def test_a_bloom_filter_says_maybe_to_few_keys_never_added(
    wide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A wrong "maybe" costs the spill map a look-up in its table: at 100,000 keys three well
    # spread bits a key say it to about 0.24% of the others (235 of 100,000 expected); a
    # filter whose bits bunch up (a position that is always the same, half the bits never
    # used) says it to four times as many or more.
    monkeypatch.setattr(spill, "_WIDE_HASH", wide)
    added = MaybeKeys()
    for n in range(100_000):
        added.add(("id", f"call_{n}"))
    wrong = sum(("id", f"other_{n}") in added for n in range(100_000))
    assert wrong < 500, wrong
