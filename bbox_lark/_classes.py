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

One method is replaced: the ``__init__`` of a frozen class with slots. ``dataclasses``
writes each field of a frozen instance with ``object.__setattr__(self, 'name', value)``
(a global lookup, an attribute lookup and a call with three arguments, per field); the
parser makes several such nodes a line, and those writes were a sixth of ``check``'s time.
:func:`_fast_frozen_init` gives the class an ``__init__`` with the same signature that
writes each field through its slot's own descriptor instead, about twice as fast. The
class stays frozen (its ``__setattr__`` still refuses), and ``tests/test_nodes.py`` checks
that every such class builds the same instances both ways.
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

    from mypy_extensions import mypyc_attr as mypyc_attr

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
                    made = dataclasses.dataclass(cls, **options)
                    if options.get("frozen") and options.get("slots") and options.get("init", True):
                        _fast_frozen_init(made)
                    return made
                finally:
                    del dataclasses.exec

        return wrap if cls is None else wrap(cls)

    def mypyc_attr(*attrs: str, **options: Any) -> Any:
        """``mypy_extensions.mypyc_attr`` for the compiled build (``setup.py``): how mypyc
        compiles a class (``native_class=False``: a plain Python class with compiled methods).
        At run time the class is returned as it is, so the pure-Python install does not need
        ``mypy_extensions``; mypyc reads the decorator from the source."""
        return lambda cls: cls


def _fast_frozen_init(cls: Any) -> None:
    """Give a frozen dataclass with slots an ``__init__`` that writes through the slots'
    descriptors (see the module's notes). Left as ``dataclasses`` made it when the class
    has anything that ``__init__`` would have to handle besides plain fields and their
    defaults (``__post_init__``, ``InitVar``, fields outside ``__init__`` or keyword-only)."""
    if hasattr(cls, "__post_init__") or getattr(cls, "__dataclass_fields__", None) is None:
        return
    fields = list(cls.__dataclass_fields__.values())
    if any(f._field_type is not dataclasses._FIELD or not f.init or f.kw_only for f in fields):  # type: ignore[attr-defined]
        return
    # The marker ``dataclasses`` itself uses for a default factory (shown as ``<factory>``).
    env: dict[str, Any] = {"_MISSING": getattr(dataclasses, "_HAS_DEFAULT_FACTORY", dataclasses.MISSING)}
    params: list[str] = []
    body: list[str] = []
    for number, f in enumerate(fields):
        descriptor = next((k.__dict__[f.name] for k in cls.__mro__ if f.name in k.__dict__), None)
        if descriptor is None or not hasattr(descriptor, "__set__"):
            return
        setter, default = f"_set{number}", f"_default{number}"
        env[setter] = descriptor.__set__
        value = f.name
        if f.default is not dataclasses.MISSING:
            env[default] = f.default
            params.append(f"{f.name}={default}")
        elif f.default_factory is not dataclasses.MISSING:
            env[default] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            value = f"{default}() if {f.name} is _MISSING else {f.name}"
        else:
            params.append(f.name)
        body.append(f"  {setter}(self, {value})")
    text = (
        f"def __create_init__({', '.join(env)}):\n"
        f" def __init__(self, {', '.join(params)}):\n" + "\n".join(f" {line}" for line in body) + "\n"
        " return __init__\n"
    )
    space: dict[str, Any] = {}
    _exec(text, {}, space)
    init = space["__create_init__"](**env)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    init.__doc__ = cls.__init__.__doc__
    init.dataclass_init = cls.__init__  # what dataclasses made: the tests compare the two
    cls.__init__ = init
