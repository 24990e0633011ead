"""A table's rows written as CSV with the standard library, the same bytes as ``pyarrow``'s
``CSVWriter`` with its defaults (``bbox-lark export --format csv``; docs/analytics.md).

``export`` wrote CSV through pyarrow, whose import alone is about 41 MiB of resident memory
over the CLI's 28, more than ``check``'s whole peak (docs/design.md, "Memory per command").
Writing the rows here instead keeps the export of CSV within twice ``check``'s memory at
any size, needs no extra, and writes each row as it comes (no batch is held). The format is
pyarrow's, unchanged for the files' readers (``tests/test_csvtable.py`` compares the bytes
with pyarrow's over generated values of every column type):

- the header and every string value in double quotes, a quote inside doubled; a null is an
  empty field, unquoted; rows end with ``\\n``;
- integers in decimal; booleans ``true``/``false``;
- floats as their shortest round-trip digits (Python's ``repr`` and Arrow's double-conversion
  agree on them), in positional notation for decimal exponents -6 to 9 and in exponent
  notation otherwise (``1e-7``, ``1e+10``), no trailing ``.0``; ``nan``, ``inf``, ``-inf``, ``-0``;
- timestamps (microseconds, UTC) as ``YYYY-MM-DD HH:MM:SS.ffffffZ``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from bbox_lark.numbers.tables import TABLES, Columns


def csv_string(value: str) -> str:
    """A string field: always quoted, as Arrow quotes every string value."""
    return '"' + value.replace('"', '""') + '"'


def csv_int(value: int) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"an int64 column holds an int, not {type(value).__name__}")
    if not -(1 << 63) <= value < 1 << 63:
        # pyarrow refuses it too (OverflowError): a column cannot hold it.
        raise OverflowError(f"{value} does not fit an int64 column")
    return str(value)


def csv_bool(value: bool) -> str:
    return "true" if value else "false"


#: The decimal exponents written positionally (Arrow's double-conversion settings:
#: ``decimal_in_shortest_low = -6``, ``decimal_in_shortest_high = 10``).
_POSITIONAL = range(-6, 10)


def csv_float(value: float) -> str:
    """A float field as Arrow writes it (see the module's docstring)."""
    number = float(value)
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    if number == 0:
        return "-0" if math.copysign(1.0, number) < 0 else "0"
    sign = "-" if number < 0 else ""
    digits, exponent = _shortest(abs(number))
    if exponent in _POSITIONAL:
        point = exponent + 1  # digits before the decimal point
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits))
        return f"{sign}{digits[:point]}.{digits[point:]}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


def _shortest(number: float) -> tuple[str, int]:
    """The shortest digits that read back as ``number`` (> 0), without trailing zeros, and
    the decimal exponent of the first: ``1234.5`` is ``("12345", 3)``."""
    written = repr(number)
    mantissa, _, power = written.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # The first significant digit's exponent: from the whole part's length, less the
    # leading zeros skipped in a fraction such as 0.00012.
    skipped = len(whole + fraction) - len(digits)
    exponent = len(whole) - 1 - skipped + (int(power) if power else 0)
    return digits.rstrip("0") or "0", exponent


def csv_timestamp(value: datetime) -> str:
    moment = value.astimezone(UTC) if value.tzinfo is not None else value
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d} "
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}.{moment.microsecond:06d}Z"
    )


#: How a value of each column type is written (``None`` is an empty field in every type).
FORMATTERS: dict[str, Callable[[Any], str]] = {
    "string": csv_string,
    "int64": csv_int,
    "float64": csv_float,
    "bool": csv_bool,
    "timestamp": csv_timestamp,
}


#: Rows formatted at a time: a slice's fields are made a column at a time (one loop per
#: column, fewer calls than a row at a time) and written as one string.
SLICE_ROWS = 4096


def _strings(values: list[Any]) -> list[str]:
    # csv_string inline: the most common column type, most of the fields.
    return ["" if value is None else '"' + value.replace('"', '""') + '"' for value in values]


def _fields(format: Callable[[Any], str], values: list[Any]) -> list[str]:
    if format is csv_string:
        return _strings(values)
    return ["" if value is None else format(value) for value in values]


class CsvTable:
    """One table's CSV file: the header at once, then the rows as they are added."""

    def __init__(self, table: str, path: str | Path) -> None:
        self.names = [column.name for column in TABLES[table]]
        self._formats = [FORMATTERS[column.type] for column in TABLES[table]]
        self._file: TextIO = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 (closed by close())
        self._file.write(",".join(csv_string(name) for name in self.names) + "\n")

    def write(self, columns: Columns) -> None:
        """Append the rows of ``columns`` (lists of equal length, the table's columns)."""
        lists = [columns[name] for name in self.names]
        rows = len(lists[0])
        if any(len(values) != rows for values in lists):
            raise ValueError("the columns of a table's rows have different lengths")
        for start in range(0, rows, SLICE_ROWS):
            fields = [
                _fields(format, values[start : start + SLICE_ROWS])
                for format, values in zip(self._formats, lists, strict=True)
            ]
            self._file.write("".join([",".join(row) + "\n" for row in zip(*fields, strict=True)]))

    def close(self) -> None:
        self._file.close()
