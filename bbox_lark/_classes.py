"""``dataclasses.dataclass`` without compiling the same methods again on every start-up.

``dataclasses`` writes the methods of each class (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, the frozen ``__setattr__``...) as source text and compiles it with ``exec``:
about 1 ms a class, and ``bbox-lark check`` makes some 45 of them before it reads a line
(a third of its start-up above importing Lark and PyYAML). :func:`dataclass` is
``dataclasses.dataclass`` with that ``exec`` given the code compiled from the same text in
an earlier run: the texts and their code objects are kept in a file beside the grammar's
cache (``$BBOX_LARK_CACHE``, else the temporary folder), one per Python version. The
classes are the ones ``dataclasses`` makes (it runs unchanged; only the compiling of a
text it has compiled before is skipped). A missing, unreadable or foreign cache file (not
the user's own, or writable by others) only costs the compiling.

For type checkers this is ``dataclasses.dataclass`` itself.
"""

from __future__ import annotations

import builtins
import dataclasses
import os
import sys
import threading
from types import CodeType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass

#: More texts than this in the file: it is started afresh (old versions' texts pile up).
MAX_ENTRIES = 4000

_codes: dict[str, CodeType] | None = None
_new = False
_lock = threading.Lock()


def _cache_path() -> str:
    import tempfile

    folder = os.environ.get("BBOX_LARK_CACHE") or tempfile.gettempdir()
    return os.path.join(folder, f"bbox-lark-classes-{sys.implementation.cache_tag}.marshal")


def _load() -> dict[str, CodeType]:
    import marshal

    codes: dict[str, CodeType] = {}
    try:
        with open(_cache_path(), "rb") as file:
            info = os.fstat(file.fileno())
            if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022):
                return codes  # another user's file, or one others may write: never run it
            loaded = marshal.loads(file.read())
    except (OSError, EOFError, ValueError, TypeError):
        return codes
    if isinstance(loaded, dict) and len(loaded) <= MAX_ENTRIES:
        codes.update(
            (text, code)
            for text, code in loaded.items()
            if isinstance(text, str) and isinstance(code, CodeType)
        )
    return codes


def _save() -> None:
    import marshal
    import tempfile

    if not _new or _codes is None:
        return
    path = _cache_path()
    try:
        handle, temp = tempfile.mkstemp(prefix=".bbox-lark-classes-", dir=os.path.dirname(path))
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(marshal.dumps(_codes))
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except (OSError, ValueError):
        pass  # an unwritable folder: the next run compiles again


def _exec(source: Any, globals: Any = None, locals: Any = None) -> None:
    """``exec`` for ``dataclasses``: a text compiled before runs its cached code."""
    global _new
    if isinstance(source, str) and _codes is not None:
        code = _codes.get(source)
        if code is None:
            # What exec(text) compiles: the text as "<string>", no inherited future flags
            # (dataclasses has none).
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if not _new:
                import atexit

                atexit.register(_save)
            _new = True
            if len(_codes) >= MAX_ENTRIES:
                _codes.clear()
            _codes[source] = code
        source = code
    builtins.exec(source, globals, locals)


if not TYPE_CHECKING:

    def dataclass(cls: Any = None, /, **options: Any) -> Any:
        """``dataclasses.dataclass(cls, **options)``, compiling only texts not seen before."""

        def wrap(cls: Any) -> Any:
            global _codes
            with _lock:
                if _codes is None:
                    _codes = _load()
                dataclasses.exec = _exec
                try:
                    return dataclasses.dataclass(cls, **options)
                finally:
                    del dataclasses.exec

        return wrap if cls is None else wrap(cls)
