"""Secrets in text: a scanner and a redactor over one table of credential shapes
(:mod:`bbox_lark.secrets.patterns`; docs/reference.md#secrets).

Pure functions over ``str``: no parser, no nodes. The checks (``checks/secrets.py``), the
``redact`` fixer and the conversions all call :func:`find_secrets` or
:func:`redact_secrets`, and ``docs/checks.md`` shows :data:`PATTERNS`.

Offsets are 0-based and half-open (``text[start:end]`` is the secret). Only the secret is
ever replaced: a URL keeps its user and host, ``password=`` keeps its name.

Speed: each pattern names literal *hints* (``sk-ant-``, ``AKIA``, ...) that any match must
contain; a pattern runs only over text that holds one of them (``str.__contains__``, a
memchr-speed search), so an ordinary log line costs a few substring tests. The names of
the generic rule are tested case-insensitively on the lower-cased text. Every pattern is
bounded (no unbounded repetition that can backtrack across a line), so scanning is linear.

Not secrets (never reported): hex strings of any length (hashes, git SHAs, blob
pointers), UUIDs, ``[redacted:kind]`` markers, truncated values (``sig=Es…...``,
``sk-ant-...``), placeholders (``xxxx``, ``<token>``, ``${TOKEN}``, ``$TOKEN``,
``password``) and values a config lists as allowed.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Collection, Iterable
from functools import cache

from bbox_lark._classes import dataclass
from bbox_lark._renamed import renamed
from bbox_lark.secrets.decoded import HIDING as _HIDING
from bbox_lark.secrets.decoded import JOIN as _JOIN
from bbox_lark.secrets.decoded import joined as _joined
from bbox_lark.secrets.decoded import same as _same
from bbox_lark.secrets.decoded import views as _views
from bbox_lark.secrets.patterns import ERROR as ERROR
from bbox_lark.secrets.patterns import PATTERNS as PATTERNS
from bbox_lark.secrets.patterns import WARNING as WARNING
from bbox_lark.secrets.patterns import SecretPattern as SecretPattern

#: How a redacted secret reads: ``[redacted:anthropic_key]`` (docs/reference.md#secrets).
MARKER = "[redacted:{kind}]"


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """A secret found in a text: ``text[start:end]`` is the secret itself."""

    #: The pattern's kind (``anthropic_key``, ``generic_secret``, …).
    kind: str
    #: ``error`` or ``warning``, from the pattern.
    severity: str
    start: int
    end: int
    #: The secret as it may be shown: the provider's prefix, ``…`` and the last two
    #: characters (``sk-ant-…AA``); never the whole secret.
    masked: str


def mask(secret: str, shown: str = "", tail: int = 2) -> str:
    """``secret`` as it may be printed: its non-secret ``shown`` prefix, ``…``, and its last
    ``tail`` characters when the secret is long enough that they give nothing away."""
    rest = len(secret) - len(shown)
    tail = tail if rest >= 12 else 0
    return f"{shown}…{secret[len(secret) - tail :] if tail else ''}"


def marker(kind: str) -> str:
    """The text that replaces a secret of ``kind``."""
    return MARKER.format(kind=kind)


_PLACEHOLDER_WORDS = frozenset(
    {"password", "passwd", "pass", "secret", "token", "changeme", "example", "redacted", "none", "null"}
)
_HEX = re.compile(r"(?:0x)?[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


def is_placeholder(value: str) -> bool:
    """Whether ``value`` stands for a secret rather than being one: a marker, a truncated or
    elided value, a variable reference, a template, a word like ``password``, or a run of
    one repeated character (``xxxx``, ``****``)."""
    if not value:
        return True
    if "[redacted:" in value or "..." in value or "…" in value:
        return True
    if value[0] in "$<{%*" or value.endswith(("}", ">")):
        return True
    if value.lower() in _PLACEHOLDER_WORDS:
        return True
    body = max(re.split(r"[-_]", value), key=len)
    return len(set(body.lower())) < 4


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    size = len(value)
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def looks_random(value: str) -> bool:
    """Whether a value named like a secret is one: 16 characters or more with letters and
    digits, high entropy, and not a hash, UUID, path, version or placeholder."""
    if len(value) < 16 or is_placeholder(value):
        return False
    if _HEX.fullmatch(value) or _UUID.fullmatch(value):
        return False
    if value.startswith(("/", "./", "~", "http", "sha256", "sha1")) or value.count("/") > 2:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if not (has_digit and has_alpha):
        return False
    # Identifiers and file names (``max_token_count_v2``, ``secret_store.py``) are words.
    if (
        re.fullmatch(r"[a-z0-9]+(?:[_.\-][a-z0-9]+)*", value)
        and max(map(len, re.split(r"[_.\-]", value))) < 12
    ):
        return False
    if is_identifier(value):
        return False
    return entropy(value) >= 3.5


_HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_SEPARATORS = re.compile(r"[-_./:=]+")


def _wordlike(part: str) -> bool:
    """A word of an identifier: lower-case (``credentials``), capitalised or CamelCase
    (``SecretKeyRef``, ``HTTPServer``), upper-case (``DB``), with up to three digits after
    it (``v2``): humps of two letters or more, four on average when there are several. A
    random value's letters rarely read as such humps (``FkqLmZvXw``)."""
    letters = part.rstrip("0123456789")
    if not letters.isalpha() or not letters.isascii() or len(part) - len(letters) > 3:
        return False
    humps = _HUMPS.findall(letters)
    if len(humps) == 1:
        return len(letters) >= 2
    return min(map(len, humps)) >= 2 and len(letters) >= 4 * len(humps) - 1


def is_identifier(value: str) -> bool:
    """Whether ``value`` reads as a name rather than a secret (docs/reference.md#secrets): words joined
    by ``-``, ``_``, ``.``, ``/`` (``db-credentials-5f7d9c8b6-x2x9z``,
    ``secret_store.backup``), or one CamelCase name of two words or more
    (``MyDatabasePassword``). A short generated suffix (a hash of 10 characters or fewer)
    may follow the words; a long random part may not."""
    parts = [part for part in _SEPARATORS.split(value) if part]
    if not parts:
        return False
    if len(parts) == 1:
        return _wordlike(parts[0]) and len(_HUMPS.findall(parts[0])) >= 2
    words = [part for part in parts if _wordlike(part)]
    if not any(len(word) >= 3 for word in words):
        return False
    others = [part for part in parts if not _wordlike(part)]
    if any(len(part) > 10 for part in others):
        return False
    return sum(map(len, words)) * 2 >= sum(map(len, parts))


@cache
def _compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


@dataclass(frozen=True, slots=True)
class _Candidate:
    rank: int
    start: int
    end: int
    kind: str
    severity: str
    masked: str


def _candidates(
    text: str, lowered: str, rank: int, allowed: Collection[str], starts: Collection[int] = ()
) -> list[_Candidate]:
    """Every match of the pattern ``PATTERNS[rank]`` in ``text`` (``lowered``: the
    lower-cased text), with offsets into ``text``; a match may start at ``starts`` whatever
    comes before it (a line joined to the one before)."""
    row = PATTERNS[rank]
    haystack = lowered if row.fold else text
    flags = re.IGNORECASE if row.fold and len(haystack) != len(text) else 0
    if flags:  # lower-casing changed the length (a rare character): search the text itself
        haystack = text
    after = _boundary(row.after) if row.after else None
    pattern = _compiled(row.pattern, flags)
    out = []
    pos = ended = 0
    while (match := pattern.search(haystack, pos)) is not None:
        at = match.start()
        pos = match.end()
        if after is not None and at and after.match(text, at - 1) and at not in starts and at != ended:
            # Not a key start (unless a key of this shape ends there: run together). Looked
            # past from its next character, not from its end: its greedy run may hide a key
            # that starts inside it (``…12sk-ant-…`` run on over a joined line into a key at
            # the continuation line's start).
            pos = at + 1
            continue
        start, end = match.span("secret")
        secret = text[start:end]
        if row.test == "random":
            stripped = secret.rstrip(".,;:!")
            end -= len(secret) - len(stripped)
            secret = stripped
            if not looks_random(secret):
                continue
        elif row.kind != "private_key" and is_placeholder(secret[len(_shown(match)) :]):
            continue
        if allowed and (secret in allowed or any(value in secret for value in allowed)):
            continue  # an allowed value, or a longer match around one (``token: ALLOWED@host``)
        out.append(
            _Candidate(rank, start, end, row.kind, row.severity, mask(secret, _shown(match), row.tail))
        )
        ended = pos
    return out


def _shown(match: re.Match[str]) -> str:
    """The secret's shown prefix (as the original text has it)."""
    groups = match.re.groupindex
    for name in ("shown", "shown2"):
        if name in groups and match[name] is not None:
            return match.string[match.start(name) : match.end(name)]
    return ""


@cache
def _boundary(chars: str) -> re.Pattern[str]:
    return re.compile(f"[{chars}]")


@renamed(allowed="allowed_secrets")
def find_secrets(text: str, *, allowed_secrets: Collection[str] = ()) -> list[SecretMatch]:
    """Every secret in ``text``, in order of position, judged on what a reader gets back
    (docs/reference.md#secrets): the text as written, the text with its escapes resolved (written text,
    JSON, YAML, URL percent-encoding) and the text with a key wrapped over continuation lines
    joined. Offsets are into ``text``: a secret written with escapes spans them (it is
    replaced whole). Where two shapes overlap, the provider-specific one (earlier in
    :data:`PATTERNS`) wins, then the longer; keys written with nothing between them are each
    found (:func:`_hidden`). Values in ``allowed_secrets`` (a config's ``allowed-secrets``)
    are not reported."""
    found = _found(text, allowed_secrets)
    if not found:
        return []
    kept = _kept(list(found))
    overlapped = len(found) > len(kept)
    if overlapped:
        kept = _stretched(kept, found)
    for _ in range(_ROUNDS):
        if not overlapped and not any(_glued(text, cand) for cand in kept):
            break  # no match lost an overlap, and each stands between spaces, quotes, line ends…
        more = _hidden(text, kept, allowed_secrets)
        if not more:
            break
        kept = sorted([*kept, *more], key=lambda c: c.start)
    return [SecretMatch(c.kind, c.severity, c.start, c.end, c.masked) for c in kept]


def _stretched(kept: list[_Candidate], found: list[_Candidate]) -> list[_Candidate]:
    """``kept``, each match stretched over the end of a provider key that starts inside it
    and goes on past it: the overlap kept the other match (``-----BEGIN … PRIVATE
    KEY-----eyJ…``: the block's base64 run takes a JWT's first part), and what the key has
    past it is no key on its own (``.eyJ…``), so it would be left in the text. Stretched up
    to the next kept match at most; the masked form keeps its prefix only."""
    starts = [cand.start for cand in kept]
    ends = [cand.end for cand in kept]
    for cand in found:
        if cand.severity != ERROR:
            continue
        at = bisect.bisect_right(starts, cand.start) - 1
        if at < 0 or not (cand.start < ends[at] < cand.end):
            continue
        limit = starts[at + 1] if at + 1 < len(starts) else cand.end
        ends[at] = max(ends[at], min(cand.end, limit))
    out = []
    for cand, end in zip(kept, ends, strict=True):
        if cand.end != end:
            shown = cand.masked.partition("…")[0] + "…"
            cand = _Candidate(cand.rank, cand.start, end, cand.kind, cand.severity, shown)
        out.append(cand)
    return out


def _found(text: str, allowed: Collection[str]) -> list[_Candidate]:
    """Every candidate match in every view of ``text``, with offsets into ``text``."""
    found: list[_Candidate] = []
    for view, back, joins in _views(text):
        lowered = view.lower()
        rows = _hinted(view, lowered)
        if joins is not None:
            # A generic guess never reaches over a line break. The joined views come last,
            # all breaks joined first: a hint no view of them holds is in none of the views
            # with every other break joined (a hint holds no line break), so they are skipped.
            rows = [rank for rank in rows if PATTERNS[rank].severity == ERROR]
            if not rows:
                break
        for rank in rows:
            for cand in _candidates(view, lowered, rank, allowed, joins or ()):
                if joins is not None:
                    at = bisect.bisect_right(joins, cand.start)
                    if at == len(joins) or joins[at] >= cand.end:
                        continue  # within one line: the text as written has it
                if back is not _same:
                    cand = _Candidate(
                        cand.rank, back(cand.start), back(cand.end), cand.kind, cand.severity, cand.masked
                    )
                found.append(cand)
    return found


def _kept(found: list[_Candidate]) -> list[_Candidate]:
    """The candidates kept where they overlap, in order of position: the earlier row of
    :data:`PATTERNS` first, then the longer match."""
    found.sort(key=lambda c: (c.rank, c.start - c.end, c.start))
    kept: list[_Candidate] = []
    taken: list[tuple[int, int]] = []  # sorted, disjoint spans already kept
    for cand in found:
        at = bisect.bisect_left(taken, (cand.start, cand.start))
        if at > 0 and taken[at - 1][1] > cand.start:
            continue
        if at < len(taken) and taken[at][0] < cand.end:
            continue
        taken.insert(at, (cand.start, cand.end))
        kept.append(cand)
    kept.sort(key=lambda c: c.start)
    return kept


#: How many rounds of keys run together (``AKIA…ABghp_…sk-ant-…``) :func:`find_secrets` reads.
_ROUNDS = 8
#: A character a key may start with right after another key's end.
_KEY_CHAR = re.compile(r"[A-Za-z0-9_-]")


def _glued(text: str, cand: _Candidate) -> bool:
    """Whether a key's character touches ``cand`` on either side: another key may be run into
    it (``AKIA…ABghp_…``; ``-----BEGIN … KEY-----ghp_…``, whose block needs a word's end)."""
    return bool(_KEY_CHAR.match(text, cand.end) or (cand.start and _KEY_CHAR.match(text, cand.start - 1)))


#: A found secret's stand-in when the text is read again: no key holds it; one may follow it.
_BLANK = "\x00"
_NOT_BLANKED = re.compile(r"[^\n]")


def _hidden(text: str, kept: list[_Candidate], allowed: Collection[str]) -> list[_Candidate]:
    """Keys the ``kept`` matches hid, in the text read again with each kept secret blanked
    out (line breaks kept: offsets and continuation lines stay). A match run into a kept one
    after it (``sk-ant-…AA-----BEGIN …``: keys hold ``-``) lost the overlap and was dropped
    whole; a key where a kept one ends (``AKIA…ABghp_…``) had a letter before it. Neither
    was listed nor replaced (``check`` of ``redact``'s output failed)."""
    parts: list[str] = []
    at = 0
    for cand in kept:
        parts.append(text[at : cand.start])
        parts.append(_NOT_BLANKED.sub(_BLANK, text[cand.start : cand.end]))
        at = cand.end
    parts.append(text[at:])
    found = _found("".join(parts), allowed)
    if not found:
        return []
    spans = [(cand.start, cand.end) for cand in kept]
    fresh = []
    for cand in found:
        at = bisect.bisect_left(spans, (cand.start, cand.start))
        if (at > 0 and spans[at - 1][1] > cand.start) or (at < len(spans) and spans[at][0] < cand.end):
            continue  # reaches into a blank (a pattern that takes any character): not new
        fresh.append(cand)
    return _kept(fresh) if fresh else []


def _hint_table(fold: bool) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Each hint of the rows with this ``fold`` and the rows (indexes into :data:`PATTERNS`)
    it lets run."""
    hints = dict.fromkeys(h for row in PATTERNS if row.fold == fold for h in row.hints)
    return tuple(
        (hint, tuple(i for i, row in enumerate(PATTERNS) if row.fold == fold and hint in row.hints))
        for hint in hints
    )


_CASED = _hint_table(False)
_FOLDED = _hint_table(True)
_CASED_HINTS = tuple(hint for hint, _ in _CASED)
_FOLDED_HINTS = tuple(hint for hint, _ in _FOLDED)
#: Names that hold a case-folded hint but never name a secret (:attr:`SecretPattern.unless`).
_UNLESS = tuple(dict.fromkeys(name for row in PATTERNS for name in row.unless))


def _folded_probe(lowered: str) -> str | None:
    """The lower-cased text with the :data:`_UNLESS` names taken out, when it still holds a
    case-folded hint; None when it holds none (most lines: the prefilter's answer)."""
    if not any(map(lowered.__contains__, _FOLDED_HINTS)):
        return None
    probe = lowered
    for name in _UNLESS:
        if name in probe:
            probe = probe.replace(name, " ")
    if probe is not lowered and not any(map(probe.__contains__, _FOLDED_HINTS)):
        return None
    return probe


#: Characters from the most to the least common in log text (English letters by frequency,
#: then punctuation, then capitals): a hint is searched from its rarest character.
_COMMON_FIRST = " etaoinsrhldcumfpgwybvkxjqz-_/.:=ETAOINSRHLDCUMFPGWYBVKXJQZ"


def _probe(hint: str, *, guarded: bool = False) -> str:
    """A pattern that finds ``hint``, written to start at its rarest character (``k`` of
    ``token``: ``k(?<=tok)(?=en)``) so that the search skips most positions on its first
    character. ``guarded``: it does not match where the hint is part of an :data:`_UNLESS`
    name (``token`` in ``tokens_in``, ``max_tokens``), which is what :func:`_folded_probe`
    finds once it has taken those names out."""
    guards = []
    for name in _UNLESS if guarded else ():
        at = name.find(hint)
        while at >= 0:
            before, after = name[:at], re.escape(name[at + len(hint) :])
            guards.append(f"(?!(?<={re.escape(before + hint)}){after})" if before else f"(?!{after})")
            at = name.find(hint, at + 1)
    rarity = [_COMMON_FIRST.find(char) if char in _COMMON_FIRST else len(_COMMON_FIRST) for char in hint]
    at = rarity.index(max(rarity))
    pattern = re.escape(hint[at])
    if at:
        pattern += f"(?<={re.escape(hint[: at + 1])})"
    rest = re.escape(hint[at + 1 :]) + "".join(guards)
    return pattern + f"(?={rest})" if rest else pattern


#: The prefilter (:func:`might_hold_secrets`), compiled from the hints of :data:`PATTERNS`:
#: the case-sensitive hints, searched in the text, and the case-folded ones, in the
#: lower-cased text. One search each is cheaper than a ``str.__contains__`` per hint and
#: the four ``replace`` calls of :func:`_folded_probe` (most real lines hold ``tokens_in``).
_CASED_PROBE = re.compile("|".join(map(_probe, _CASED_HINTS)))
_FOLDED_PROBE = re.compile("|".join(_probe(hint, guarded=True) for hint in _FOLDED_HINTS))


def might_hold_secrets(text: str) -> bool:
    """False when ``text`` holds none of the hints, no escape that could hide one and no
    line break a hint could be wrapped over, so :func:`find_secrets` would find nothing: the
    prefilter alone, for a caller that scans many small texts (the checks).
    True whenever :func:`_hinted` would run a row (``tests/test_secrets.py`` compares them
    on the corpus, the real logs and the table's examples)."""
    if _CASED_PROBE.search(text) is not None or _FOLDED_PROBE.search(text.lower()) is not None:
        return True
    # An escape may hide a hint (``sk\u002dant-``). Every escape starts with ``\`` or ``%``,
    # which most lines lack: ``in`` answers that without the regex's call.
    if ("\\" in text or "%" in text) and _HIDING.search(text) is not None:
        return True
    if "\n" in text:  # a hint wrapped over two continuation lines (``g`` / ``hp_``)
        joined = _joined(text)
        if joined is not None and joined[0] != text:
            return might_hold_secrets(joined[0])
    return False


def _hinted(text: str, lowered: str) -> list[int]:
    """The rows whose hints ``text`` (or ``lowered``) holds, in table order. Most text holds
    none: one pass over each group of hints (``map`` keeps the loop in C) says so."""
    rows: set[int] = set()
    if any(map(text.__contains__, _CASED_HINTS)):
        for hint, indexes in _CASED:
            if hint in text:
                rows.update(indexes)
    probe = _folded_probe(lowered)
    if probe is not None:
        for hint, indexes in _FOLDED:
            if hint in probe:
                rows.update(indexes)
    return sorted(rows)


def redact_secrets(
    text: str, *, allowed: Collection[str] = (), keep: Callable[[SecretMatch], bool] | None = None
) -> tuple[str, list[SecretMatch]]:
    """``text`` with each secret replaced by ``[redacted:KIND]``, and the secrets replaced
    (offsets into the original ``text``). ``keep`` may spare some (a suppressed finding).
    The one call for redacting a plain string (a message, an attribute, a field value)."""
    matches = find_secrets(text, allowed_secrets=allowed)
    if keep is not None:
        matches = [m for m in matches if not keep(m)]
    if not matches:
        return text, []
    return replace_secrets(text, matches), matches


def replace_secrets(
    text: str, matches: Iterable[SecretMatch], replacement: Callable[[SecretMatch], str] = lambda m: ""
) -> str:
    """``text`` with each of ``matches`` (in order, disjoint) replaced by its marker, or by
    ``replacement(match)`` when that gives text. A key wrapped over continuation lines keeps
    its line breaks (the marker on its first line, the rest of it gone from the next), so
    the lines after it keep their numbers; a private key block becomes one marker."""
    parts: list[str] = []
    at = 0
    for found in matches:
        parts.append(text[at : found.start])
        parts.append(replacement(found) or marker(found.kind))
        if found.kind != "private_key":
            parts += _JOIN.findall(text, found.start, found.end)
        at = found.end
    parts.append(text[at:])
    return "".join(parts)


#: A provider's prefix and a dozen key characters or more: a key's start, whole or cut.
_KEY_START = re.compile(
    r"(?<![A-Za-z0-9])(sk-ant-|sk-proj-|sk-svcacct-|sk-|A[KS]IA|gh[pousr]_|github_pat_|xox[abposre]-"
    r"|AIza|[sr]k_live_|hf_|eyJ)[A-Za-z0-9_\-]{12,}"
)


def mask_secrets(text: str, *, fragments: bool = False) -> str:
    """``text`` with each secret replaced by its masked form (``sk-ant-…AA``): for a message
    that quotes a value. Text without a hint comes back as it is, at the prefilter's cost.
    ``fragments``: also a provider prefix followed by a dozen key characters or more, for a
    message that quotes a value cut short (most of a key is still a leak)."""
    if not might_hold_secrets(text):
        return text
    if fragments:
        return _mask_key_starts(mask_secrets(text))
    matches = find_secrets(text)
    if not matches:
        return text
    parts: list[str] = []
    at = 0
    for found in matches:
        if text[found.start : found.end] == found.masked.partition("…")[0]:
            continue  # only the shown part (a key block's BEGIN line alone): nothing to mask
        parts.append(text[at : found.start])
        parts.append(found.masked)
        at = found.end
    parts.append(text[at:])
    return "".join(parts)


def _mask_key_starts(text: str) -> str:
    """``text`` with each :data:`_KEY_START` (in the text as written or decoded) cut to its
    prefix and ``…``."""
    spans: list[tuple[int, int, str]] = []
    for view, back, joins in _views(text):
        if joins is None:
            spans += [(back(m.start()), back(m.end()), m[1]) for m in _KEY_START.finditer(view)]
    if not spans:
        return text
    parts: list[str] = []
    at = 0
    for start, end, prefix in sorted(spans, key=lambda s: (s[0], -s[1])):
        if start < at:
            continue
        parts += [text[at:start], prefix + "…"]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def hide_secrets(text: str) -> str:
    """``text`` with each secret starred out but for its shown prefix and tail
    (``sk-ant-*****…**AA``): the same length and the same line breaks and indents (a key
    block keeps its lines), so columns and lines after it stay where they were. For showing
    text (a source line, a diff); :func:`redact_secrets` is for writing."""
    matches = find_secrets(text)
    if not matches:
        return text
    parts: list[str] = []
    at = 0
    for found in matches:
        secret = text[found.start : found.end]
        shown, _, tail = found.masked.partition("…")
        kept = len(shown) + len(tail)
        parts.append(text[at : found.start])
        middle = secret[len(shown) : len(secret) - len(tail)] if len(secret) >= kept else secret
        hidden = _NOT_SPACE.sub("*", middle)
        parts.append(shown + hidden + tail if len(secret) >= kept else hidden)
        at = found.end
    parts.append(text[at:])
    return "".join(parts)


_NOT_SPACE = re.compile(r"\S")


def count_kinds(matches: Iterable[SecretMatch]) -> dict[str, int]:
    """How many secrets of each kind, kinds sorted."""
    counts: dict[str, int] = {}
    for found in matches:
        counts[found.kind] = counts.get(found.kind, 0) + 1
    return dict(sorted(counts.items()))
