"""W027's fast path (numbers._numbers_trail) against the field nodes it saves building.

``fields_inside_text`` answers "no usage field inside the text" from the line's last words
when it can tell; otherwise it reads the field nodes. Both must agree on every line: the
corpus, the external real logs, the generated session and a table of tricky lines.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bbox_lark.numbers import usage as numbers
from bbox_lark.syntax.nodes import Event
from bbox_lark.syntax.parser import iter_nodes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import bench  # noqa: E402

EXTERNAL = ROOT.parent / "shared" / "corpus-external" / "rlog-real"

TRICKY = [
    "a: done tokens_in=5 tokens_out=9",
    "a: Set tokens_out=999999 in the fixture. tokens_in=1",
    "a: tokens_in=5",
    'a: x model="claude opus" tokens_in=3',
    "a: tokens_in=1 tokens_in=2",
    "a: see xtokens_in=1 tokens_in=2",
    "a: list [a, b] tokens_in=4 tags=[x, y]",
    "th: thinking… sig=Ep4E1... tokens_in=99 tokens_out=281 tokens_cached=93337",
    "a: cost=0.5 is what it cost, model=x",
    "u: hello\u0085tokens_in=3",
    "a: done tokens_in=5 # metrics step=1 prompt=3",
    "a: " + " ".join(f"k{i}=v" for i in range(100)) + " tokens_in=1",
    "a: tokens_in=1 " + " ".join(f"k{i}=v" for i in range(100)),
    'a: k="unterminated tokens_in=4',
]


def _slow(event: Event) -> list[tuple[str, int]]:
    if event.prefix not in numbers._free_text() or numbers.NUMBER_KEYS.isdisjoint(event.fields):
        return []
    tail, _ = numbers._trailing_run(event)
    base = event.text_col
    return [(n.key, n.col) for n in event.field_nodes if n.key in numbers.NUMBER_KEYS and n.col - base < tail]


def _events(text: str) -> list[Event]:
    return [node for node in iter_nodes(text, attach=False) if isinstance(node, Event)]


def _agree(text: str) -> int:
    seen = 0
    for event in _events(text):
        fast = [(n.key, n.col) for n in numbers.fields_inside_text(event)]
        assert fast == _slow(event), event.raw
        seen += 1
    return seen


@pytest.mark.parametrize("line", TRICKY)
def test_a_tricky_line(line: str) -> None:
    assert _agree(line + "\n") == 1


def test_the_corpus_and_the_generated_session() -> None:
    texts = [
        p.read_text(encoding="utf-8", errors="surrogateescape")
        for p in sorted((ROOT / "corpus").rglob("*.bbox"))
    ]
    assert sum(_agree(text) for text in [*texts, bench.generate_session(3000)]) > 3000


@pytest.mark.skipif(not EXTERNAL.is_dir(), reason="../shared/corpus-external is absent")
def test_the_real_logs() -> None:
    total = sum(
        _agree(p.read_text(encoding="utf-8", errors="surrogateescape")) for p in sorted(EXTERNAL.iterdir())
    )
    assert total > 10_000
