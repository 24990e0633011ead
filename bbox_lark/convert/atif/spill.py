"""Maps that would grow with the file, kept small: the ATIF writer's indices of every call
(docs/design.md, "Memory per command").

A trajectory's calls must stay reachable to the end (a later ``o:`` may reach any call by its
key, every ``tool_call_id`` written must stay unique), so the writer's indices have an entry
per call. A :class:`SpillMap` holds the entries set last as a dict; when there are
:attr:`SpillMap.RECENT` of them, they move to an SQLite table in a private temporary file
(``sqlite3.connect("")``), and what stays in memory is a Bloom filter of a fixed size
(:class:`MaybeKeys`) that says which keys may have moved. A key it has never seen is answered
from memory; a "maybe" sends the question to the table, which answers exactly (a wrong "maybe"
costs a look-up, never a wrong answer). So the memory of a map does not grow with the file.

Without the ``sqlite3`` module (a Python built without it) the entries stay in memory.
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from collections.abc import Callable, Hashable
from typing import Any, ClassVar

from bbox_lark.syntax.correlate import Key

__all__ = ["MaybeKeys", "SpillMap", "id_code", "int_code", "key_code"]

#: True where ``hash`` has 64 bits (as in :mod:`bbox_lark.syntax.correlate`).
_WIDE_HASH = sys.hash_info.width >= 64

#: What a map's ``code`` makes of a key it can move to the table: two strings (the table's
#: key is them joined, encoded), or None for a key held in memory for good.
Code = Callable[[Any], Key | None]

_MISSING: Any = object()


def key_code(key: Key) -> Key | None:
    """A call key (``("id", value)``, ``("span", value)``) as itself."""
    return key


def id_code(value: Any) -> Key | None:
    """A ``tool_call_id``: a string (another JSON value stays in memory)."""
    return ("", value) if type(value) is str else None


def int_code(value: Any) -> Key | None:
    """A ``step=`` value: a signed 64-bit integer."""
    return ("", str(value)) if type(value) is int else None


def _blob(code: Key) -> bytes:
    # A key's first part is a field name or empty: never holds NUL. Values may hold lone
    # surrogates (undecodable bytes), which only surrogatepass encodes.
    return f"{code[0]}\x00{code[1]}".encode("utf-8", "surrogatepass")


class MaybeKeys:
    """Which keys may have been added: a Bloom filter of 2**21 bits (256 KiB), three bits a key.

    "No" is exact. "Maybe" is wrong for a share of the keys never added that grows with the
    keys added: about 0.3% at 100,000, 8% at 400,000, most of them past 2,000,000; each wrong
    "maybe" costs :class:`SpillMap` a look-up in its table. The digest is Python's own
    ``hash`` where it has 64 bits (keys never leave the process, and string hashes are salted
    per process), else a BLAKE2b digest."""

    __slots__ = ("_bits",)

    #: log2 of the filter's size in bits; three positions of this width fit in 64 bits.
    WIDTH: ClassVar[int] = 21

    def __init__(self) -> None:
        self._bits = bytearray(1 << (self.WIDTH - 3))

    @classmethod
    def _positions(cls, code: Key) -> tuple[int, int, int]:
        if _WIDE_HASH:
            value = hash(code)
        else:
            value = int.from_bytes(hashlib.blake2b(_blob(code), digest_size=8).digest(), "little")
        width = cls.WIDTH
        mask = (1 << width) - 1
        return value & mask, (value >> width) & mask, (value >> (2 * width)) & mask

    def add(self, code: Key) -> None:
        bits = self._bits
        for position in self._positions(code):
            bits[position >> 3] |= 1 << (position & 7)

    def __contains__(self, code: Key) -> bool:
        bits = self._bits
        return all(bits[position >> 3] >> (position & 7) & 1 for position in self._positions(code))


class SpillMap:
    """A map (``get``, ``[key] = value``, ``setdefault``, ``in``) whose older entries are in
    a temporary SQLite table (see the module's docstring). Values are pickled there."""

    #: Entries held as a dict before they move to the table.
    RECENT: ClassVar[int] = 4096

    def __init__(self, code: Code) -> None:
        self._code = code
        self._recent: dict[Any, Any] = {}
        self._kept: dict[Any, Any] = {}  # keys the table cannot hold (``code`` gave None)
        self._digests: MaybeKeys | None = None  # made at the first move (256 KiB)
        self._db: Any = None  # a sqlite3.Connection once entries moved
        self._moved = 0
        self._limit = self.RECENT

    def __len__(self) -> int:
        """Entries set (a key set twice may count twice once it moved: a size, not a count)."""
        return len(self._recent) + len(self._kept) + self._moved

    def get(self, key: Any, default: Any = None) -> Any:
        value = self._recent.get(key, _MISSING)
        if value is not _MISSING:
            return value
        if self._kept:
            value = self._kept.get(key, _MISSING)
            if value is not _MISSING:
                return value
        if self._moved:
            code = self._code(key)
            if code is not None and self._digests is not None and code in self._digests:
                row = self._db.execute("SELECT v FROM m WHERE k = ?", (_blob(code),)).fetchone()
                if row is not None:
                    return None if row[0] is None else pickle.loads(row[0])  # (our own table)
        return default

    def __contains__(self, key: Hashable) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def __setitem__(self, key: Any, value: Any) -> None:
        recent = self._recent
        recent[key] = value
        if len(recent) >= self._limit:
            self._move()

    def add(self, key: Any) -> None:
        """Set ``key`` (a set's member: its value None)."""
        self[key] = None

    def setdefault(self, key: Any, value: Any) -> Any:
        held = self.get(key, _MISSING)
        if held is not _MISSING:
            return held
        self[key] = value
        return value

    def _connect(self) -> Any:
        try:
            import sqlite3
        except ImportError:  # a Python without sqlite3: everything stays in memory
            return None
        db = sqlite3.connect("")  # a private temporary file, deleted when it is closed
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.execute("PRAGMA cache_size = -1024")  # KiB
        db.execute("CREATE TABLE m (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
        return db

    def _move(self) -> None:
        """Move the recent entries to the table (those it cannot hold to :attr:`_kept`)."""
        if self._db is None:
            self._db = self._connect()
            if self._db is None:
                self._limit = 1 << 62  # this map never moves again
                return
            self._digests = MaybeKeys()
        rows = []
        code_of, digests, kept = self._code, self._digests, self._kept
        assert digests is not None
        for key, value in self._recent.items():
            code = code_of(key)
            if code is None:
                kept[key] = value
                continue
            try:
                data = None if value is None else pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
            except Exception:  # a value pickle cannot write stays in memory
                kept[key] = value
                continue
            digests.add(code)
            rows.append((_blob(code), data))
        self._db.executemany("INSERT OR REPLACE INTO m VALUES (?, ?)", rows)
        self._db.commit()
        self._moved += len(rows)
        self._recent = {}

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
