"""The error spine (issue 27, point 2): one base, a small hierarchy, exported.

Every exception class the package defines is a :class:`bbox_lark.BboxLarkError`, except the
few a reader raises and catches itself to report a bad record as a finding (listed below,
each with where it is caught). The old names (``ConvertError``, ``InputError``…) are the
spine's classes or subclasses of them, so ``except`` clauses written against either work.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import bbox_lark
from bbox_lark import errors

#: Raised and caught inside one reader, never out of a public function: the record becomes a
#: finding (a skipped record, a diagnostic) instead.
CAUGHT_INSIDE = {
    "bbox_lark.convert.jsonl.tables.RecordError": "convert/jsonl/reader.py: a skipped record",
    "bbox_lark.convert.claude_code.values.Malformed": "convert/claude_code/reader.py: a skipped record",
    "bbox_lark.convert.lightbox.session.CanonicalizationError": "lightbox.py: a verification finding",
}

#: Modules that need an extra to import; their classes are checked where it is installed.
NEEDS_EXTRA = {"bbox_lark.dask"}


def _package_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(bbox_lark.__path__, "bbox_lark."):
        if info.name in NEEDS_EXTRA or info.name.endswith(".__main__"):  # __main__ runs the command
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and not issubclass(value, Warning)  # a warning is not an error (WriterWarning)
                and value.__module__ == info.name
                and not name.startswith("_")
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_exception_the_package_defines_is_on_the_spine() -> None:
    found = _package_exceptions()
    assert "bbox_lark.errors.BboxLarkError" in found
    off = sorted(
        name
        for name, cls in found.items()
        if not issubclass(cls, errors.BboxLarkError) and name not in CAUGHT_INSIDE
    )
    assert not off, f"exception classes outside bbox_lark.errors' hierarchy: {off}"
    assert set(CAUGHT_INSIDE) <= set(found), "a listed exception is gone: take it off CAUGHT_INSIDE"


@pytest.mark.parametrize(
    ("old", "spine"),
    [
        ("bbox_lark.files.inputs.InputError", errors.InputError),
        ("bbox_lark.files.config.ConfigError", errors.ConfigError),
        ("bbox_lark.numbers.query.QueryError", errors.QueryError),
        ("bbox_lark.convert.base.ConvertError", errors.ConversionError),
        ("bbox_lark.convert.base.RefusedInputError", errors.ConversionError),
        ("bbox_lark.convert.files.ConvertUsageError", errors.ConversionError),
        ("bbox_lark.report.OutputError", errors.WriteError),
        ("bbox_lark.fix.framework.FixError", errors.WriteError),
        ("bbox_lark.numbers.tables.MissingExtra", errors.MissingExtraError),
    ],
)
def test_the_old_names_sit_on_the_spine(old: str, spine: type[Exception]) -> None:
    module, _, name = old.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, spine) and issubclass(cls, errors.BboxLarkError)


def test_the_standard_bases_callers_caught_before_still_hold() -> None:
    assert issubclass(errors.ConfigError, ValueError)
    assert issubclass(errors.ConversionError, ValueError)
    assert issubclass(errors.MissingExtraError, ImportError)


def test_the_spine_is_exported_from_the_package() -> None:
    for name in errors.__all__:
        assert name in bbox_lark.__all__, name
        assert getattr(bbox_lark, name) is getattr(errors, name)


def test_a_public_function_raises_on_the_spine() -> None:
    with pytest.raises(bbox_lark.BboxLarkError, match="unknown format"):
        bbox_lark.convert_text("u: hi\n", to="no-such-format")
