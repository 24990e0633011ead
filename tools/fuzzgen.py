"""Hostile inputs for bbox-lark: the generators behind ``tools/fuzz.py``.

Every generator is a function ``(rng, pool, max_size) -> bytes`` driven only by the
``random.Random`` it is given, so a seed fixes the input. No Hypothesis here: its
``example()`` is not reproducible, and the fuzzer must replay a run from ``--seed``.

* :func:`mutate` – real lines (the corpus pool) with bytes flipped, grammar-significant pieces
  inserted, ranges deleted, pieces of other lines spliced in and one piece repeated many times;
* :func:`grammar_document` – lines drawn from ``grammar/bbox.lark`` itself by
  :class:`GrammarWalker`, assembled into files with random endings, BOMs and headers;
* :func:`random_input` – random bytes, random Unicode text, and a soup of grammar pieces;
* :func:`shuffled` – the lines of real files shuffled, reversed, interleaved, duplicated;
* :func:`header_attack` – YAML headers built to hurt: deep nesting of every kind, long flow
  sequences, anchors, tags, huge scalars, YAML-only line breaks, broken fences;
* :data:`SHAPES` – pathological sizes: each shape is ``shape(n) -> bytes``, an input that
  grows with ``n`` (:func:`sized` draws one at a random size; ``tools/fuzz.py`` also times
  each shape at ``n`` and ``4n`` to catch super-linear time).

``ALPHABET`` and ``SEED_LINES`` are shared with the Hypothesis strategies of
``tests/printer_support.py`` (one copy, here).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

try:  # the regular-expression parser behind `re` (Python 3.11+)
    from re import _constants as sre_c  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older layouts
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
#: Real files nobody on the project wrote (absent in a fresh clone: then unused).
EXTERNAL = ROOT.parent / "shared" / "corpus-external"
DEFAULT_EXTERNAL = (EXTERNAL / "rlog-real", EXTERNAL / "bbox-docs")
#: The project's own valid corpus, always in the pool.
REPO_CORPUS = ROOT / "corpus" / "valid"
SUFFIXES = (".bbox", ".blackbox", ".rlog")

#: Characters lines are built from: enough to reach every line kind, quote, arrow, field,
#: list, comment keyword and result form, without drowning them in random Unicode.
ALPHABET = 'abcdefghijklmnopqrstuvwxyzABKZ0123456789 \t"\\#@[]=,:->→!~_./$%*+?()é✓\u00a0\u200b'

#: Lines written by hand that reach the corners: arrows without spaces, ASCII arrows,
#: unterminated quotes, metrics comments, spaced names, lists, continuations.
SEED_LINES = (
    "t:read id=call_2 src/billing/mod.rs step=5 latency_ms=12 → [186 lines]",
    "t:test→[ok]",
    't:git  commit  -m  "fix  it"   ->   [ok]  # metrics  prompt=1',
    "u:hello  world   ",
    'a: I said "step=3" and step=4 -> still text',
    "m:  auto  afk=true",
    "t: read src/a.rs",
    'o: id=sub_1 → session_id=s path=p summary="a  b"',
    "@start  id=s  step=1",
    "#   metrics  step=3  prompt=5",
    "# plain   comment   ",
    "  continuation   text  ",
    '\t"quoted" continuation',
    't:x "unterminated call → [ok]',
    'u: k="open value',
    "q: id=q_1 → [selected:  yes,  no]",
    'c:github.issues q="a → b" → [2 issues]',
    't:x → "a # metrics b"',
    'x:explore [a,  "b  c"] → [launched]',
    'r: "ads"  step=6 → [1 match]',
    "---",
    "random unknown   line  ",
    "@",
    "",
    "   ",
)

#: A header every generator may put in front of a body.
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\n"

#: Pieces the grammar gives a meaning to, and characters that are hostile to a reader:
#: arrows, quotes, brackets, the metrics comment, markers, line-ending look-alikes, NUL,
#: a BOM, invalid UTF-8 (bytes, inserted as they are).
PIECES: tuple[bytes, ...] = tuple(
    p if isinstance(p, bytes) else p.encode()
    for p in (
        "→",
        " → ",
        " -> ",
        "->",
        '"',
        '\\"',
        "[",
        "]",
        "=",
        ",",
        ":",
        " # metrics ",
        "# metrics",
        "[redacted:",
        "[redacted:env]",
        "@blob sha256=",
        " bytes=",
        "@start",
        "@end",
        "[running]",
        "[ok]",
        "[err: x]",
        "[retry 1/3]",
        "id=",
        "step=",
        "span=",
        "\r",
        "\r\n",
        "\n",
        "\t",
        "  ",
        "\u00a0",
        "\u2028",
        "\u2029",
        "\u0085",
        "\x0b",
        "\x0c",
        "\ufeff",
        "\x00",
        b"\xff",
        b"\xc3",
        b"\xe2\x86",
        b"\xed\xa0\x80",
        b"\xf4\x90\x80\x80",
        "---",
        "#",
        "\\",
        "{",
        "}",
        "&a ",
        "*a",
        "!!python/object ",
        "999999999999",
    )
)

KEYS = (
    "id",
    "span",
    "step",
    "latency_ms",
    "attempt",
    "ts",
    "tokens_in",
    "tokens_out",
    "cost",
    "bytes",
    "sha256",
    "mime",
    "session_id",
    "k",
    "q",
)


# -- the corpus pool -------------------------------------------------------------------


@dataclass
class Pool:
    """Real text to mutate: whole files (bytes) and their lines (bytes, without endings)."""

    files: list[bytes] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)

    @classmethod
    def load(cls, folders: Iterable[Path]) -> Pool:
        pool = cls()
        for folder in folders:
            if not folder.is_dir():
                continue
            for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES):
                data = path.read_bytes()
                pool.files.append(data)
                pool.lines.extend(line.rstrip(b"\r") for line in data.split(b"\n"))
        pool.lines.extend(line.encode() for line in SEED_LINES)
        if not pool.files:
            pool.files.append((HEADER + "\n".join(SEED_LINES) + "\n").encode())
        return pool


def default_folders(corpus: Iterable[Path] | None = None) -> list[Path]:
    """``corpus/valid`` always, then ``corpus`` or the external real logs when present."""
    extra = list(corpus) if corpus else [p for p in DEFAULT_EXTERNAL if p.is_dir()]
    return [REPO_CORPUS, *extra]


# -- small helpers ------------------------------------------------------------------------


def log_int(rng: random.Random, low: int, high: int) -> int:
    """An integer in ``[low, high]``, log-uniformly: small ones often, huge ones sometimes."""
    if high <= low:
        return low
    value = int(math.exp(rng.uniform(math.log(low + 1), math.log(high + 1)))) - 1
    return max(low, min(high, value))


def _ending(rng: random.Random) -> bytes:
    return rng.choice([b"\n", b"\n", b"\n", b"\r\n", b"\r"])


def _clip(data: bytes, max_size: int) -> bytes:
    return data[:max_size]


# -- (1) mutations of real lines --------------------------------------------------------


def _flip(rng: random.Random, data: bytearray, pool: Pool, room: int) -> None:
    if data:
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)


def _insert(rng: random.Random, data: bytearray, pool: Pool, room: int) -> None:
    piece = rng.choice(PIECES)
    at = rng.randint(0, len(data))
    data[at:at] = piece[:room]


def _delete(rng: random.Random, data: bytearray, pool: Pool, room: int) -> None:
    if data:
        at = rng.randrange(len(data))
        del data[at : at + log_int(rng, 1, 16)]


def _splice(rng: random.Random, data: bytearray, pool: Pool, room: int) -> None:
    other = rng.choice(pool.lines)
    if other:
        start = rng.randrange(len(other))
        piece = other[start : start + log_int(rng, 1, 80)]
        at = rng.randint(0, len(data))
        data[at:at] = piece[:room]


def _repeat(rng: random.Random, data: bytearray, pool: Pool, room: int) -> None:
    """One piece (of the line, or a grammar piece) repeated up to thousands of times."""
    if data and rng.random() < 0.6:
        start = rng.randrange(len(data))
        piece = bytes(data[start : start + log_int(rng, 1, 12)])
    else:
        piece, start = rng.choice(PIECES), rng.randint(0, len(data))
    if not piece:
        return
    count = min(log_int(rng, 2, 6000), room // len(piece))
    data[start:start] = piece * count


def _grow_number(rng: random.Random, data: bytearray, pool: Pool, room: int) -> None:
    """A digit run made very long (integers past Python's 4,300-digit conversion limit)."""
    runs = list(re.finditer(rb"\d+", bytes(data)))
    if not runs:
        return
    run = rng.choice(runs)
    digits = b"9" * min(log_int(rng, 2, 9000), room)
    data[run.start() : run.end()] = digits


_MUTATIONS: tuple[Callable[[random.Random, bytearray, Pool, int], None], ...] = (
    _flip,
    _insert,
    _insert,
    _insert,
    _delete,
    _splice,
    _repeat,
    _grow_number,
)


def mutate(rng: random.Random, pool: Pool, max_size: int) -> bytes:
    """A real line, a window of real lines or a whole small file, mutated one to six times."""
    choice = rng.random()
    if choice < 0.6:
        base = rng.choice(pool.lines) + _ending(rng)
    elif choice < 0.9:
        file = rng.choice(pool.files).split(b"\n")
        start = rng.randrange(len(file))
        base = b"\n".join(file[start : start + log_int(rng, 2, 12)]) + b"\n"
    else:
        base = rng.choice(pool.files)
    data = bytearray(base[:max_size])
    for _ in range(rng.randint(1, 6)):
        rng.choice(_MUTATIONS)(rng, data, pool, max(0, max_size - len(data)))
    if not data.startswith(b"---") and rng.random() < 0.5:
        data[0:0] = HEADER.encode()
    return _clip(bytes(data), max_size)


# -- (2) grammar-generated text ------------------------------------------------------------


def _whole(pattern: re.Pattern[str], text: str, pos: int) -> bool:
    """``pattern`` takes ``text[pos:]`` in full, as the lexer would (greedy match)."""
    match = pattern.match(text, pos)
    return match is not None and match.end() == len(text)


def _any_char(rng: random.Random) -> str:
    """Mostly the alphabet; sometimes any code point but a surrogate or a newline."""
    if rng.random() < 0.9:
        return rng.choice(ALPHABET)
    while True:
        char = chr(
            rng.choice([rng.randrange(0x80, 0x800), rng.randrange(0x800, 0x10000), rng.randrange(0x110000)])
        )
        if not 0xD800 <= ord(char) <= 0xDFFF and char != "\n":
            return char


class RegexSampler:
    """Random strings for a regular expression, read from its ``re`` parse tree: literals,
    classes, repeats and alternatives are drawn; anchors and lookarounds produce nothing
    (the caller checks the result against the compiled pattern and draws again)."""

    def __init__(self, pattern: str) -> None:
        self.tree = sre_parse.parse(pattern)
        self.classes: dict[int, re.Pattern[str]] = {}

    def sample(self, rng: random.Random) -> str:
        out: list[str] = []
        self._emit(self.tree, rng, out)
        return "".join(out)

    def _class(self, items: list[tuple[object, object]]) -> re.Pattern[str]:
        key = id(items)
        if key not in self.classes:
            parts = []
            for op, arg in items:
                if op is sre_c.NEGATE:
                    parts.insert(0, "^")
                elif op is sre_c.LITERAL:
                    parts.append(re.escape(chr(arg)))  # type: ignore[arg-type]
                elif op is sre_c.RANGE:
                    low, high = arg  # type: ignore[misc]
                    parts.append(f"{re.escape(chr(low))}-{re.escape(chr(high))}")
                elif op is sre_c.CATEGORY:
                    parts.append(_CATEGORIES[arg])
            self.classes[key] = re.compile("[" + "".join(parts) + "]")
        return self.classes[key]

    def _char_in(self, items: list[tuple[object, object]], rng: random.Random) -> str:
        pattern = self._class(items)
        for _ in range(40):
            char = _any_char(rng)
            if pattern.fullmatch(char):
                return char
        for op, arg in items:  # a positive member, when random draws keep missing
            if op is sre_c.LITERAL:
                return chr(arg)  # type: ignore[arg-type]
            if op is sre_c.RANGE:
                return chr(rng.randint(*arg))  # type: ignore[misc]
        return "x"

    def _emit(self, tree: Iterable[tuple[object, object]], rng: random.Random, out: list[str]) -> None:
        for op, arg in tree:
            if op is sre_c.LITERAL:
                out.append(chr(arg))  # type: ignore[arg-type]
            elif op is sre_c.NOT_LITERAL:
                char = _any_char(rng)
                out.append(char if ord(char) != arg else "x")
            elif op is sre_c.ANY:
                out.append(_any_char(rng))
            elif op is sre_c.IN:
                out.append(self._char_in(arg, rng))  # type: ignore[arg-type]
            elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
                low, high, sub = arg  # type: ignore[misc]
                count = low
                while count < high and rng.random() < 0.55:
                    count += 1
                if rng.random() < 0.02:
                    count = min(high, low + rng.randint(20, 200))
                for _ in range(count):
                    self._emit(sub, rng, out)
            elif op is sre_c.SUBPATTERN:
                self._emit(arg[-1], rng, out)  # type: ignore[index]
            elif op is sre_c.BRANCH:
                self._emit(rng.choice(arg[1]), rng, out)  # type: ignore[index]
            # AT (anchors), ASSERT, ASSERT_NOT (lookarounds): nothing to emit


_CATEGORIES = {
    sre_c.CATEGORY_SPACE: r"\s",
    sre_c.CATEGORY_NOT_SPACE: r"\S",
    sre_c.CATEGORY_DIGIT: r"\d",
    sre_c.CATEGORY_NOT_DIGIT: r"\D",
    sre_c.CATEGORY_WORD: r"\w",
    sre_c.CATEGORY_NOT_WORD: r"\W",
}

#: Terminals whose inside the grammar describes with its second-level rules: they are
#: filled by walking ``items`` / ``result`` rather than from their (coarse) regex.
_ITEMS_TERMINALS = ("CALL_TEXT", "FREE_TEXT", "COMMENT_TEXT", "RESULT_REST")


#: How often the walk picks each alternative (alias) of the ``line`` rule.
#: Weights of the `line` rule's alternatives that are not prefixed events; every prefixed
#: event kind (from the grammar's vocabulary) gets EVENT_WEIGHT.
OTHER_WEIGHTS = {"lifecycle": 1.5, "comment": 2, "continuation": 1, "blank": 0.5, "unknown": 0.5}
EVENT_WEIGHT = 0.8


def line_weights() -> dict[str, float]:
    """Line kind -> how often the walker draws it."""
    from bbox_lark.syntax.grammar import vocabulary

    return {**dict.fromkeys(vocabulary().prefix_kinds.values(), EVENT_WEIGHT), **OTHER_WEIGHTS}


class GrammarWalker:
    """Lines of ``grammar/bbox.lark``, drawn by walking its rules with a ``random.Random``.

    From the ``line`` rule an alternative is chosen at random and each symbol expanded: a
    rule by the same walk, a terminal by drawing a string from the terminal's own regular
    expression (:class:`RegexSampler`, biased to :data:`ALPHABET`). The coarse terminals are
    filled from the second-level rules that describe their inside: the call part and free
    text from ``items`` (fields, quoted strings, lists, words), the result from an arrow and
    ``result`` (status, count, error, retry, selected, blob, redaction, rest), the metrics
    comment from ``# metrics`` and ``items``. Every drawn terminal is checked against its
    compiled pattern *in context* (the text before it, for lookbehinds) and drawn again
    when it does not match; after a few misses the last draw is kept. The grammar is total
    (``UNKNOWN`` takes anything), so every string is a line; the walk decides which
    alternative and which terminals it exercises.
    """

    def __init__(self) -> None:
        from bbox_lark.syntax.grammar import plain_parser

        lark = plain_parser()
        self.weights = line_weights()
        self.rules: dict[str, list[list[tuple[str, bool]]]] = {}
        self.aliases: dict[str, list[str | None]] = {}
        for rule in lark.rules:
            expansion = [(symbol.name, symbol.is_term) for symbol in rule.expansion]
            self.rules.setdefault(rule.origin.name, []).append(expansion)
            self.aliases.setdefault(rule.origin.name, []).append(rule.alias)
        self.patterns = {t.name: re.compile(t.pattern.to_regexp()) for t in lark.terminals}
        self.samplers = {t.name: RegexSampler(t.pattern.to_regexp()) for t in lark.terminals}
        self.samplers["KEY"] = RegexSampler(r"[A-Za-z_][A-Za-z0-9_.-]*")  # inlined into FIELD
        missing = set(self.weights) ^ {a for a in self.aliases["line"] if a}
        assert not missing, f"the line rule's alternatives changed: {sorted(missing)}"

    def line(self, rng: random.Random) -> str:
        return self.expand("line", rng, "", 0)

    def expand(self, rule: str, rng: random.Random, before: str, depth: int) -> str:
        alternatives = self.rules[rule]
        if rule == "line":  # first the line kind (weighted towards events), then its form
            kind = rng.choices(list(self.weights), weights=list(self.weights.values()))[0]
            alternatives = [
                a for a, alias in zip(alternatives, self.aliases[rule], strict=True) if alias == kind
            ]
        if depth > 4:  # stop recursing (the list rule `__items_star_0`)
            alternatives = [a for a in alternatives if all(name != rule for name, _ in a)] or alternatives
        text = before
        for name, is_term in rng.choice(alternatives):
            if is_term:
                text += self.terminal(name, rng, text)
            else:
                text = self.expand(name, rng, text, depth + 1)
        return text

    def terminal(self, name: str, rng: random.Random, before: str) -> str:
        pattern = self.patterns[name]
        value = ""
        for _ in range(6):
            value = self._draw(name, rng, before)
            if value and _whole(pattern, before + value, len(before)):
                return value
        return value

    def _items(self, rng: random.Random, lead: str) -> str:
        return self.expand("items", rng, lead, 1)

    def _draw(self, name: str, rng: random.Random, before: str) -> str:
        if name in _ITEMS_TERMINALS:
            return self._items(rng, rng.choice([" ", " ", "", "  ", "\t"]))
        if name in ("RESULT", "FREE_RESULT"):
            arrows = ["→", "→ "] if name == "FREE_RESULT" or not before[-1:].isspace() else ["->", "-> "]
            return self.expand("result", rng, rng.choice(arrows), 1)
        if name == "METRICS":
            body = self._items(rng, " ") if rng.random() < 0.8 else ""
            return rng.choice([" ", "\t"]) + "# metrics" + body
        if name in ("ITEM_WS", "RESULT_WS", "WS") and rng.random() < 0.7:
            return " "
        if name == "FIELD":
            key = rng.choice(KEYS) if rng.random() < 0.7 else self.samplers["KEY"].sample(rng)
            return f"{key}={self._value(rng)}"
        return self.samplers[name].sample(rng)

    def _value(self, rng: random.Random) -> str:
        kind = rng.randrange(6)
        if kind == 0:
            return str(rng.choice([0, 1, 3, 12, 186, 10 ** rng.randint(1, 30)]))
        if kind == 1:
            return self.samplers["QUOTED"].sample(rng)
        if kind == 2:
            return self.samplers["LIST"].sample(rng)
        if kind == 3:
            return rng.choice(["2025-06-18T09:00:00Z", "1/3", "toolu_01", "[redacted:env]", "x", ""])
        return self.samplers["WORD"].sample(rng)  # BARE is inlined into FIELD; same pattern


@cache
def walker() -> GrammarWalker:
    return GrammarWalker()


def grammar_document(rng: random.Random, pool: Pool, max_size: int) -> bytes:
    """1 to 30 walked lines, each with a random ending, maybe a header, a BOM, no final
    newline."""
    lines = [walker().line(rng) for _ in range(log_int(rng, 1, 30))]
    header = rng.choice(["", HEADER, HEADER, HEADER.replace("\n", "\r\n"), "\n" + HEADER])
    text = header + "".join(line + rng.choice(["\n", "\n", "\r\n"]) for line in lines)
    if rng.random() < 0.2:
        text = text.rstrip("\r\n")
    if rng.random() < 0.1:
        text = "\ufeff" + text
    return _clip(text.encode("utf-8", "surrogateescape"), max_size)


# -- (3) random bytes and text ---------------------------------------------------------------


def random_input(rng: random.Random, pool: Pool, max_size: int) -> bytes:
    """Random bytes, random Unicode text, or a soup of grammar pieces and alphabet."""
    size = log_int(rng, 0, max_size)
    kind = rng.randrange(3)
    if kind == 0:
        return rng.randbytes(size)
    if kind == 1:
        chars = [_any_char(rng) if rng.random() < 0.97 else "\n" for _ in range(size // 2)]
        return "".join(chars).encode()[:max_size]
    parts: list[bytes] = []
    total = 0
    while total < size:
        piece = rng.choice(PIECES) if rng.random() < 0.5 else rng.choice(ALPHABET).encode()
        if rng.random() < 0.05:
            piece = rng.choice([b"t:", b"t!:", b"u: ", b"o: ", b"# ", b"@start ", b"\n  "]) + piece
        parts.append(piece)
        total += len(piece)
    return b"".join(parts)[:max_size]


# -- (4) shuffled real files ---------------------------------------------------------------------


def shuffled(rng: random.Random, pool: Pool, max_size: int) -> bytes:
    """The lines of a real file (two, interleaved, sometimes) in another order."""
    lines = rng.choice(pool.files).split(b"\n")
    how = rng.randrange(5)
    if how == 0:
        rng.shuffle(lines)
    elif how == 1:
        lines.reverse()
    elif how == 2:
        for _ in range(log_int(rng, 1, 20)):
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
    elif how == 3:
        other = rng.choice(pool.files).split(b"\n")
        merged = [*lines, *other]
        rng.shuffle(merged)
        lines = merged
    else:
        lines = [line for line in lines for _ in range(rng.choice([1, 1, 2, 3]))]
    if len(lines) > 2 and rng.random() < 0.3:  # drop some
        for _ in range(rng.randint(1, max(1, len(lines) // 4))):
            lines.pop(rng.randrange(len(lines)))
    data = b"\n".join(lines)
    if len(data) > max_size:  # a window of the shuffled file
        start = rng.randrange(len(data) - max_size + 1)
        data = data[start : start + max_size]
    return data


# -- (5) header attacks ------------------------------------------------------------------------


def _nest(rng: random.Random, depth: int) -> str:
    """A value nested ``depth`` levels deep, of one kind or a mix."""
    kind = rng.choice(["seq", "map", "mixed", "block-seq", "block-map", "unclosed-seq", "unclosed-map"])
    if kind == "seq":
        return "k: " + "[" * depth + "x" + "]" * depth
    if kind == "map":
        return "k: " + "{a: " * depth + "x" + "}" * depth
    if kind == "unclosed-seq":
        return "k: " + "[" * depth
    if kind == "unclosed-map":
        return "k: " + "{a: " * depth
    if kind == "block-seq":
        return "k:\n  " + "- " * depth + "x"
    if kind == "block-map":
        return "k:\n" + "".join(" " * (i + 1) + "a:\n" for i in range(depth)) + " " * (depth + 1) + "x"
    opens = [rng.choice(["[", "{a: "]) for _ in range(depth)]
    closes = ["]" if o == "[" else "}" for o in reversed(opens)]
    return "k: " + "".join(opens) + "x" + "".join(closes)


_BREAKS = ("\r", "\x85", "\u2028", "\u2029", "\r\r", "\x0c")


def _header_piece(rng: random.Random, budget: int) -> str:
    depth = log_int(rng, 1, max(1, min(3000, budget // 4)))
    big = log_int(rng, 1, max(1, budget))
    attacks: list[Callable[[], str]] = [
        lambda: _nest(rng, depth),
        lambda: "k: [" + ", ".join(["1"] * big) + "]",
        lambda: "k: {" + ", ".join(f"a{i}: {i}" for i in range(min(big, budget // 8 + 1))) + "}",
        lambda: "a: &x 1\nb: *x",
        lambda: "a: &a [*a]",
        lambda: "&a k: v",
        lambda: "k: " + ", ".join(f"*a{i}" for i in range(min(big, 500))),
        lambda: (
            "k: " + rng.choice(["!!python/object:os.system x", "!custom x", "!<tag:yaml.org,2002:str> y"])
        ),
        lambda: "%TAG ! tag:evil,2000:\n---",
        lambda: "%YAML 1.1",
        lambda: "k: " + "x" * big,
        lambda: 'k: "' + "x" * big + '"',
        lambda: "k: " + "9" * big,
        lambda: "k: 1e" + "9" * min(big, 5000),
        lambda: "x" * big + ": v",
        lambda: "k: a" + rng.choice(_BREAKS) + "b",
        lambda: 'k: "a' + rng.choice(_BREAKS) + 'b"',
        lambda: "# c" + rng.choice(_BREAKS) + ":",
        lambda: "k: v" + rng.choice(_BREAKS) * log_int(rng, 1, 50) + "{[",
        lambda: rng.choice(_BREAKS).join(["k: a", "j: [", "b"]),
        lambda: "k: v\n" * log_int(rng, 2, 200),
        lambda: "".join(f"k{i}: v\n" for i in range(min(big, budget // 8 + 1))),
        lambda: "? [a, b]\n: c",
        lambda: "{[a]: b}",
        lambda: "? " + "[" * depth + "]" * depth + "\n: v",
        lambda: "- a\n- b",
        lambda: "k:\n\t- tab",
        lambda: "k: |\n  literal\n  block",
        lambda: "k: >-\n folded",
        lambda: "...",
        lambda: "--- x",
        lambda: "k: \x00",
        lambda: "k: \x07",
        lambda: "k: \ufeff",
        lambda: "k: ~",
        lambda: "format: ",
        lambda: "id:",
        lambda: "repo_sha: 0123456",
    ]
    return rng.choice(attacks)()


def header_attack(rng: random.Random, pool: Pool, max_size: int) -> bytes:
    """A header built to hurt a YAML reader, then a small body."""
    budget = max(16, max_size - 200)
    pieces = ["format: bbox/1", "id: s", "repo_sha: 215db51"]
    rng.shuffle(pieces)
    for _ in range(rng.randint(1, 3)):
        pieces.insert(rng.randint(0, len(pieces)), _header_piece(rng, budget))
    yaml_text = "\n".join(pieces)
    opening = rng.choice(["---\n", "---\n", "---\t\n", "\n---\n", "---\r\n", "\ufeff---\n", "-- \n", ""])
    closing = rng.choice(["\n---\n", "\n---\n", "\n---  \n", "\n--- x\n", "\n...\n", "\n", "\n----\n"])
    body = b"\n".join(rng.choice(pool.lines) for _ in range(rng.randint(0, 5)))
    data = (opening + yaml_text + closing).encode("utf-8", "surrogateescape") + body
    if rng.random() < 0.05:
        data = data.replace(b"\n", b"\r\n")
    return _clip(data, max_size)


# -- (6) pathological sizes -----------------------------------------------------------------------


def _body(text: str) -> bytes:
    return (HEADER + text).encode()


def _header_yaml(text: str) -> bytes:
    return f"---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n{text}\n---\nu: x\n".encode()


@dataclass(frozen=True)
class Shape:
    """An input that grows with ``n``; ``start`` is the first ``n`` the timer tries."""

    name: str
    make: Callable[[int], bytes]
    start: int = 64
    note: str = ""

    def __call__(self, n: int) -> bytes:
        return self.make(n)

    def n_for(self, size: int) -> int:
        """The largest ``n`` (at least 1) whose input is about ``size`` bytes."""
        one, two = len(self.make(1)), len(self.make(2))
        step = max(1, two - one)
        return max(1, (size - one) // step + 1)


_DIGITS_SHAPES = {
    "int-latency": "t:x latency_ms={d}",
    "int-attempt": "t:x attempt={d}/3",
    "int-attempt-of": "t:x attempt=1/{d}",
    "int-step": "t:x step={d}",
    "int-blob-bytes": "t:x → @blob sha256=" + "ab" * 32 + " bytes={d}",
    "int-count": "t:x → [{d} lines]",
    "int-retry": "t:x → [retry {d}/1]",
    "int-retry-of": "t:x → [retry 1/{d}]",
    "int-metrics-step": "# metrics step={d}",
    "int-anchor-step": "# anchor step={d}",
    "int-elapsed": "# t={d}:00:00",
    "int-tokens": "t:x tokens_in={d}",
    "int-summary": "# tokens={d} cost=0.1",
    "int-lifecycle-step": "@start id=s step={d}",
}


def _digits(template: str) -> Callable[[int], bytes]:
    return lambda n: _body(template.format(d="9" * n) + "\n")


SHAPES: dict[str, Shape] = {
    shape.name: shape
    for shape in [
        # one long line
        Shape("list-spaces", lambda n: _body("t:read x=[a" + " " * n + "b]\n")),
        Shape("redacted-open", lambda n: _body("u: " + "[redacted:" * n + "\n")),
        Shape("result-ok-open", lambda n: _body("o: → " + "[ok " * n + "\n")),
        Shape("quotes", lambda n: _body("t:x " + '"' * n + "\n")),
        Shape("open-values", lambda n: _body("t:x " + 'k="' * n + "\n")),
        Shape("ascii-arrows", lambda n: _body("t:x" + " ->" * n + "\n")),
        Shape("arrows", lambda n: _body("u: x" + "→" * n + "\n")),
        Shape("metrics-words", lambda n: _body("t:x" + " # metrics" * n + "\n")),
        Shape("fields", lambda n: _body("t:x" + " k=v" * n + "\n")),
        Shape("blob-open", lambda n: _body("t:x → " + "@blob sha256=" * n + "\n")),
        Shape("list-nested", lambda n: _body("t:x k=" + "[" * n + "]" * n + "\n")),
        Shape("spaces", lambda n: _body("t:x" + " " * n + "y\n")),
        Shape("lone-cr", lambda n: _body("u: " + "a\r" * n + "\n")),
        Shape("escapes", lambda n: _body('t:x k="' + "\\" * n + '"\n')),
        # many lines
        Shape("lines", lambda n: _body("t:read a.rs → [1 lines]\n" * n)),
        Shape(
            "running-then-progress",
            lambda n: _body("".join(f"t!:read id=x{i} → [running]\n" for i in range(n)) + "t~:bash\n" * n),
            start=32,
        ),
        Shape("same-id-open", lambda n: _body("t!:x id=a → [running]\n" * n + "t:x id=a → [ok]\n" * n)),
        Shape("keyless-starts", lambda n: _body("t!:read → [running]\n" * n + "t:read → [ok]\n" * n)),
        Shape("observations", lambda n: _body("x:explore id=e → [launched]\n" * n + "o: → [ok]\n" * n)),
        Shape("steps-down", lambda n: _body("".join(f"t:x step={n - i}\n" for i in range(n)))),
        Shape("steps-gaps", lambda n: _body("".join(f"t:x step={3 * i}\n" for i in range(n)))),
        Shape("metrics-dangling", lambda n: _body("".join(f"# metrics step={i}\n" for i in range(n)))),
        Shape("continuations", lambda n: _body("u: x\n" + "  more\n" * n)),
        Shape("orphan-continuations", lambda n: ("  orphan\n" * n).encode()),
        Shape("blank-and-continuation", lambda n: _body("u: x\n" + "\n  c\n" * n)),
        Shape("no-header-lines", lambda n: ("u: x\n" * n).encode()),
        Shape("unclosed-header", lambda n: ("---\n" + "k: v\n" * n).encode()),
        Shape("blank-lines-first", lambda n: ("\n" * n + HEADER + "u: x\n").encode()),
        # the header
        Shape("header-brackets", lambda n: ("---\n" + "[" * n + "\n---\n").encode()),
        Shape("header-flow-seq", lambda n: _header_yaml("k: " + "[" * n + "]" * n), start=16),
        Shape("header-flow-map", lambda n: _header_yaml("k: " + "{a: " * n + "}" * n), start=16),
        Shape("header-block-seq", lambda n: _header_yaml("k:\n  " + "- " * n + "x"), start=16),
        Shape("header-items", lambda n: _header_yaml("k: [" + "1, " * n + "]")),
        Shape("header-keys", lambda n: _header_yaml("".join(f"k{i}: v\n" for i in range(n)))),
        Shape("header-duplicate-keys", lambda n: _header_yaml("k: v\n" * n)),
        Shape("header-cr", lambda n: _header_yaml("k: a" + "\r" * n + "b: [")),
        # integers past Python's int() digit limit (4,300): constant work, but must not raise
        *[Shape(name, _digits(template), start=256) for name, template in _DIGITS_SHAPES.items()],
    ]
}


def sized(rng: random.Random, pool: Pool, max_size: int) -> bytes:
    """A scaling shape at a random size up to ``max_size``."""
    shape = SHAPES[rng.choice(sorted(SHAPES))]
    return shape(log_int(rng, 1, shape.n_for(max_size)))


# -- (7) converter inputs: mutated JSON of each format's samples -----------------------------

#: The first line of a converter input: ``FUZZ_TAG + b"atif\n"`` and the input after it
#: (``export``: bbox text to write in every format). A NUL keeps it from being a bbox line.
FUZZ_TAG = b"\x00fuzz-convert:"
FIXTURES = ROOT / "tests" / "fixtures"
#: The importers fed mutated samples (``jsonl`` and ``compact`` samples are written from the
#: corpus by the converters themselves).
IMPORTERS = ("claude-code", "atif", "bb7", "lightbox", "jsonl", "compact")
#: Values a mutation puts where a JSON value was (text of JSON, some of it not strict JSON).
HOSTILE_JSON = (
    "[]",
    "{}",
    "0",
    "-1",
    "1.5",
    "true",
    "null",
    '""',
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "9" * 4400,
    '"\\ud800"',
    '"\\udfff"',
    '"\\udc80x"',
    '"\\u0000"',
    '"\\u0085"',
    '"a\\r\\nb\\rc"',
    '"  "',
    '"---"',
    '"\\u2028"',
    '"' + "m" * 70_000 + '"',
    '{"type": []}',
    '{"kind": [], "text": {}}',
)


def _samples(name: str) -> list[bytes]:
    """Sample inputs of a format, small enough to mutate."""
    if name == "claude-code":
        return [p.read_bytes() for p in sorted((FIXTURES / "claude-code").glob("*.jsonl"))]
    if name == "bb7":
        return [p.read_bytes() for p in sorted((FIXTURES / "bb7").glob("*.json"))]
    if name == "lightbox":
        return [(FIXTURES / "lightbox" / "session" / "events.jsonl").read_bytes()]
    from bbox_lark.convert import convert

    target = {"atif": "atif", "jsonl": "jsonl", "compact": "compact"}[name]
    files = [p for p in sorted(REPO_CORPUS.glob("*.bbox")) if p.stat().st_size < 8192][:12]
    return [convert(p.read_bytes(), "bbox", to=target).text.encode("utf-8", "surrogateescape") for p in files]


_SAMPLES: dict[str, list[bytes]] = {}


def samples(name: str) -> list[bytes]:
    if name not in _SAMPLES:
        _SAMPLES[name] = _samples(name)
    return _SAMPLES[name]


def _json_values(text: str) -> list[tuple[int, int]]:
    """(start, end) of every JSON string, number and literal, and of some arrays and objects
    (found by a light scan: the text is JSON, or was before an earlier mutation)."""
    spans = [m.span() for m in re.finditer(r'"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null', text)]
    for opener, closer in (("[", "]"), ("{", "}")):
        for start in [m.start() for m in re.finditer(re.escape(opener), text)][:50]:
            depth = 0
            for index in range(start, min(len(text), start + 4000)):
                depth += {opener: 1, closer: -1}.get(text[index], 0)
                if depth == 0:
                    spans.append((start, index + 1))
                    break
    return spans


def mutate_json(rng: random.Random, data: bytes) -> bytes:
    """JSON (or JSON Lines) with one to four hostile changes: a value replaced by another
    type, NaN, 1e400, a long number, a lone surrogate escape, a deep nest; a key removed or
    duplicated; invalid UTF-8 bytes; a line cut."""
    text = data.decode("utf-8", "surrogateescape")
    for _ in range(rng.randint(1, 4)):
        spans = _json_values(text)
        choice = rng.random()
        if spans and choice < 0.55:
            start, end = rng.choice(spans)
            text = text[:start] + rng.choice(HOSTILE_JSON) + text[end:]
        elif spans and choice < 0.65:
            start, end = rng.choice(spans)
            depth = log_int(rng, 10, 3000)
            text = text[:start] + "[" * depth + text[start:end] + "]" * depth + text[end:]
        elif choice < 0.75:  # a key removed (with its value), or duplicated
            keys = list(re.finditer(r'"[A-Za-z_]+"\s*:\s*("(?:[^"\\]|\\.)*"|[^,{}\[\]]+)\s*,?', text))
            if keys:
                found = rng.choice(keys)
                piece = found[0] if found[0].rstrip().endswith(",") else found[0] + ","
                text = text[: found.start()] + (piece * 2 if rng.random() < 0.5 else "") + text[found.end() :]
        elif choice < 0.85:
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(("\udcff", "\udcc3", "\r", "\n", "\x00", "\ufeff")) + text[at:]
        else:
            lines = text.split("\n")
            at = rng.randrange(len(lines))
            lines[at] = lines[at][: rng.randrange(len(lines[at]) + 1)]
            text = "\n".join(lines)
    return text.encode("utf-8", "surrogateescape")


def convert_input(rng: random.Random, pool: Pool, max_size: int) -> bytes:
    """A mutated sample of one importer's format, tagged with the format's name."""
    name = rng.choice(IMPORTERS)
    data = mutate_json(rng, rng.choice(samples(name))) if name not in ("compact",) else None
    if data is None:  # compact is text: the bbox mutations apply
        data = bytearray(rng.choice(samples(name)))
        for _ in range(rng.randint(1, 4)):
            rng.choice(_MUTATIONS)(rng, data, pool, max(0, max_size - len(data)))
        data = bytes(data)
    return FUZZ_TAG + name.encode() + b"\n" + data


def export_input(rng: random.Random, pool: Pool, max_size: int) -> bytes:
    """A mutated bbox input, tagged to be written in every format."""
    return FUZZ_TAG + b"export\n" + mutate(rng, pool, max_size)


def _tagged(source: str, body: Callable[[int], str]) -> Callable[[int], bytes]:
    return lambda n: FUZZ_TAG + source.encode() + b"\n" + body(n).encode("utf-8", "surrogateescape")


def _records(name: str, n: int) -> str:
    """The first record of a format's first sample, ``n`` times (one per line)."""
    first = samples(name)[0].decode("utf-8").split("\n", 1)[0]
    return (first + "\n") * n


def _trajectory(n: int) -> str:
    import json

    steps = [
        {
            "step_id": i + 1,
            "source": "agent",
            "message": "m",
            "tool_calls": [{"tool_call_id": "call_1", "function_name": "Bash", "arguments": {"cmd": "ls"}}],
            "observation": {"results": [{"source_call_id": "call_1", "content": "ok"}]},
        }
        for i in range(n)
    ]
    return json.dumps({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": steps})


def _chat(n: int) -> str:
    import json

    messages = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}] * n
    return json.dumps({"version": 2, "messages": messages})


def _jsonl(n: int) -> str:
    from bbox_lark.convert import convert

    return convert(HEADER + "t:x id=a → [ok]\n" * n, "bbox", to="jsonl").text


_OPEN = "t!:Bash id=toolu_{} → [running]\n"
_IGNORE_FILE = "# bbox-lark: ignore-file[W003]\nstatus: ok\n"

#: The converters' scaling shapes (issue 15): timed through ``convert`` (an ``export`` input
#: is written in every text format; an import is read to bbox).
SHAPES.update(
    (shape.name, shape)
    for shape in [
        Shape(
            "export-open-calls-one-id",
            _tagged("export", lambda n: HEADER + "t!:Bash id=toolu_01 → [running]\n" * n),
        ),
        Shape(
            "export-open-calls-distinct-ids",
            _tagged(
                "export", lambda n: HEADER + "".join(f"t!:Bash id=toolu_{i} → [running]\n" for i in range(n))
            ),
        ),
        Shape(
            "export-start-complete-one-id",
            _tagged("export", lambda n: HEADER + "t!:Bash id=t1 → [running]\nt:Bash id=t1 → [ok]\n" * n),
        ),
        Shape("import-bb7-messages", _tagged("bb7", _chat)),
        Shape("import-atif-steps", _tagged("atif", _trajectory)),
        Shape("import-claude-code-records", _tagged("claude-code", lambda n: _records("claude-code", n))),
        Shape("import-lightbox-events", _tagged("lightbox", lambda n: _records("lightbox", n))),
        Shape("import-jsonl-records", _tagged("jsonl", _jsonl)),
        Shape(
            "ignore-file-comments",
            lambda n: (HEADER + "# bbox-lark: ignore-file[W003]\nstatus: ok\n" * n).encode(),
        ),
    ]
)


#: The generators in rotation order (``tools/fuzz.py`` adds the timing of the shapes).
GENERATORS: dict[str, Callable[[random.Random, Pool, int], bytes]] = {
    "mutate": mutate,
    "grammar": grammar_document,
    "random": random_input,
    "shuffle": shuffled,
    "header": header_attack,
    "sizes": sized,
    "convert": convert_input,
    "export": export_input,
}
