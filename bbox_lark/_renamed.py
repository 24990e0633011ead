"""Keyword arguments renamed for one name per idea (issue 27: ``source`` for a document given
to a function, ``allowed_secrets`` for the values the secret checks keep quiet on): the old
keyword still works for one release, with a :class:`DeprecationWarning`; it goes in 0.3.0."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])


def renamed(**old_to_new: str) -> Callable[[F], F]:
    """A decorator: each ``old=`` keyword given to the function is passed as ``new=``."""

    def wrap(function: F) -> F:
        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            for old, new in old_to_new.items():
                if old in kwargs:
                    warnings.warn(
                        f"{function.__name__}({old}=…) is {function.__name__}({new}=…) now;"
                        " the old name goes in 0.3.0",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                    if new in kwargs:
                        raise TypeError(f"{function.__name__}() got both {old}= and {new}=")
                    kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return cast(F, call)

    return wrap
