"""The steps of a trajectory being written, by index (0 for ``step_id`` 1): the ones used last
held as dicts, the others pickled to a temporary file (docs/design.md, "Memory per command").

A step can change long after it was made: a call's completion or an ``o:`` line adds a result
to the step that holds the call, a ``# metrics step=N`` gives step N its metrics. So a step is
not written out when it is left: it goes to the file, and comes back (a fresh dict, changed,
held again) when a line reaches it. What the writer keeps of a step in between is its index.
The file is read once more per pass at the end (:meth:`StepStore.load`), a step at a time.
"""

from __future__ import annotations

import copy
import pickle
import tempfile
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from typing import IO, Any

__all__ = ["CallRef", "FewValues", "StepStore"]


@dataclass(frozen=True, slots=True)
class CallRef:
    """A tool call as a later line reaches it: its step's index and what a result reads of it."""

    step: int
    tool_call_id: str
    kind: Any  # the tool call's extra.kind (None for a plain tool call)

    @classmethod
    def of(cls, step: int, tc: dict[str, Any]) -> CallRef:
        return cls(step, tc["tool_call_id"], (tc.get("extra") or {}).get("kind"))


class StepStore:
    """Steps by index: :meth:`add`, :meth:`get` (for a change), :meth:`load` (a copy, to write)."""

    #: Steps held as dicts (the most recently used; the pinned one besides).
    HELD = 64

    def __init__(self) -> None:
        self._held: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._by_id: dict[int, int] = {}  # id() of a held step -> its index
        self._file: IO[bytes] | None = None
        self._offsets = array("q")  # per index: where its latest pickle starts (-1: none)
        self._unpicklable: set[int] = set()  # held for good (a value pickle cannot write)
        #: The step that is never put away (the writer's current step).
        self.pinned = -1

    def __len__(self) -> int:
        return len(self._offsets)

    def add(self, step: dict[str, Any]) -> int:
        index = len(self._offsets)
        self._offsets.append(-1)
        self._hold(index, step)
        return index

    def get(self, index: int) -> dict[str, Any]:
        """Step ``index`` as the dict to change (held from now on)."""
        step = self._held.get(index)
        if step is not None:
            self._held.move_to_end(index)
            return step
        step = self._read(index)
        self._hold(index, step)
        return step

    def index_of(self, step: dict[str, Any]) -> int:
        """The index of a held step (one :meth:`add` or :meth:`get` gave)."""
        return self._by_id[id(step)]

    def load(self, index: int) -> dict[str, Any]:
        """A copy of step ``index`` as it stands, not held (call :meth:`put_away` first)."""
        step = self._held.get(index)
        if step is not None:  # one pickle cannot write
            return copy.deepcopy(step)
        return self._read(index)

    def put_away(self) -> None:
        """Write every held step to the file (the steps are complete: the passes that write
        the document load fresh copies)."""
        self.pinned = -1
        for index in list(self._held):
            if index not in self._unpicklable:
                self._evict(index)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _hold(self, index: int, step: dict[str, Any]) -> None:
        self._held[index] = step
        self._by_id[id(step)] = index
        if len(self._held) > self.HELD + 1 + len(self._unpicklable):
            for old in list(self._held):
                if old != self.pinned and old != index and old not in self._unpicklable:
                    self._evict(old)
                    break

    def _evict(self, index: int) -> None:
        step = self._held[index]
        try:
            data = pickle.dumps(step, pickle.HIGHEST_PROTOCOL)
        except Exception:  # a value pickle cannot write: the step stays held
            self._unpicklable.add(index)
            return
        del self._held[index]
        del self._by_id[id(step)]
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._file.seek(0, 2)
        self._offsets[index] = self._file.tell()
        self._file.write(data)

    def _read(self, index: int) -> dict[str, Any]:
        assert self._file is not None and self._offsets[index] >= 0
        self._file.seek(self._offsets[index])
        # A pickle says where it ends: no size is kept (8 bytes a step).
        step: dict[str, Any] = pickle.load(self._file)  # (our own file)
        return step


class FewValues:
    """A list of hashable values of which few are distinct (each step's thread): an entry is
    a 4-byte code into the distinct values, not an 8-byte reference (issue 26: a
    trajectory's per-step state is what grows with the file)."""

    __slots__ = ("_code_of", "_codes", "_values")

    def __init__(self) -> None:
        self._codes = array("I")
        self._values: list[Any] = []
        self._code_of: dict[Any, int] = {}

    def _code(self, value: Any) -> int:
        code = self._code_of.get(value)
        if code is None:
            code = self._code_of[value] = len(self._values)
            self._values.append(value)
        return code

    def __len__(self) -> int:
        return len(self._codes)

    def append(self, value: Any) -> None:
        self._codes.append(self._code(value))

    def __getitem__(self, index: int) -> Any:
        return self._values[self._codes[index]]

    def __setitem__(self, index: int, value: Any) -> None:
        self._codes[index] = self._code(value)
