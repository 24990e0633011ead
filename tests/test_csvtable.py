"""``export --format csv`` writes CSV with the standard library (``numbers/csvtable.py``) in
the bytes pyarrow's ``CSVWriter`` writes: compared here with pyarrow itself, value by value
(every column type, generated and edge values), table by table (generated rows of every
table's schema), and over whole exports (the corpus and, where present, the external files:
the CSV export against the Parquet export of the same files written out by pyarrow)."""

from __future__ import annotations

import io
import math
import random
import struct
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from printer_support import fuzz_settings

from bbox_lark.numbers.csvtable import CsvTable, csv_float, csv_int, csv_string, csv_timestamp
from bbox_lark.numbers.export import export_tables
from bbox_lark.numbers.tables import TABLE_NAMES, TABLES, arrow_schema, arrow_table

pa = pytest.importorskip("pyarrow")
pcsv = pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")

REPO = Path(__file__).resolve().parent.parent
EXTERNAL = REPO.parent / "shared" / "corpus-external"


def arrow_csv(table: Any) -> bytes:
    """``table`` as pyarrow's CSV writer writes it, with its defaults (what export used)."""
    sink = io.BytesIO()
    writer = pcsv.CSVWriter(sink, table.schema)
    writer.write_table(table)
    writer.close()
    return sink.getvalue()


def arrow_floats(values: list[float]) -> list[str]:
    written = arrow_csv(pa.table({"f": pa.array(values, pa.float64())})).decode()
    return written.split("\n")[1:-1]


EDGE_FLOATS = [
    *(10.0**k for k in range(-12, 25)),
    *(1.5 * 10.0**k for k in range(-12, 25)),
    *(-(10.0**k) for k in range(-8, 12)),
    0.0,
    -0.0,
    math.nan,
    math.inf,
    -math.inf,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    0.1,
    0.00012,
    999999999.9999999,
    9999999999.0,
    1234567890123.0,
    0.0000032999999999999997,
]


def test_floats_are_written_as_arrow_writes_them_at_every_edge() -> None:
    assert [csv_float(v) for v in EDGE_FLOATS] == arrow_floats(EDGE_FLOATS)


def test_floats_are_written_as_arrow_writes_them_over_random_bit_patterns() -> None:
    # Any 64 bits: subnormals, huge and tiny exponents, NaN payloads; and prices-like values.
    rng = random.Random(20261128)
    values = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(20_000)]
    values += [round(rng.uniform(0, 50), rng.randint(0, 9)) for _ in range(20_000)]
    values += [rng.uniform(-1e12, 1e12) for _ in range(5_000)]
    assert [csv_float(v) for v in values] == arrow_floats(values)


@fuzz_settings(300)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=50))
def test_generated_floats_are_written_as_arrow_writes_them(values: list[float]) -> None:
    assert [csv_float(v) for v in values] == arrow_floats(values)


def test_the_other_types_are_written_as_arrow_writes_them() -> None:
    ints = [0, -1, 7, (1 << 63) - 1, -(1 << 63)]
    bools = [True, False]
    moments = [
        datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 6, 1, 12, 0, tzinfo=UTC) + timedelta(microseconds=500),
    ]
    strings = ["", "a", 'say "hi"', "a,b", "two\nlines", "cr\r", "é ∑ 🙂", "\u2028\x00\x1f", '""']
    columns = {
        "i": pa.array(ints, pa.int64()),
        "b": pa.array(bools + [True] * 3, pa.bool_()),
        "t": pa.array([*moments, moments[0]], pa.timestamp("us", tz="UTC")),
    }
    lines = arrow_csv(pa.table(columns)).decode().split("\n")[1:-1]
    assert [line.split(",")[0] for line in lines] == [csv_int(v) for v in ints]
    assert [line.split(",")[1] for line in lines][:2] == [("true" if v else "false") for v in bools]
    assert [line.split(",")[2] for line in lines][:4] == [csv_timestamp(v) for v in moments]
    written = arrow_csv(pa.table({"s": pa.array(strings, pa.string())})).decode()
    assert written == '"s"\n' + "".join(csv_string(s) + "\n" for s in strings)


def test_an_int_that_an_int64_column_cannot_hold_is_refused_as_arrow_refuses_it() -> None:
    for value in (1 << 63, -(1 << 63) - 1):
        with pytest.raises(OverflowError, match=rf"^{value} does not fit an int64 column$"):
            csv_int(value)
        with pytest.raises(OverflowError):
            pa.array([value], pa.int64())
    with pytest.raises(TypeError, match=r"^an int64 column holds an int, not bool$"):
        csv_int(True)
    with pytest.raises(TypeError, match=r"^an int64 column holds an int, not float$"):
        csv_int(1.0)  # type: ignore[arg-type]


def test_a_time_in_another_zone_or_without_one_is_written_as_arrow_writes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Arrow stores an aware time in UTC and takes a naive one as UTC already, whatever the
    # machine's zone: so must the CSV (the machine's zone is set far from UTC here).
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        moments = [
            datetime(2026, 3, 4, 23, 30, 0, 7, tzinfo=timezone(timedelta(hours=2))),
            datetime(2026, 3, 4, 23, 30, 0, 7, tzinfo=timezone(timedelta(hours=-9, minutes=-30))),
            datetime(2026, 3, 4, 23, 30, 0, 7),
        ]
        written = arrow_csv(pa.table({"t": pa.array(moments, pa.timestamp("us", tz="UTC"))}))
        assert written.decode().split("\n")[1:-1] == [csv_timestamp(moment) for moment in moments]
    finally:
        monkeypatch.undo()
        time.tzset()


# -- whole tables ------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12) | st.sampled_from(
    ['"', '""', ",", "\n", "\r\n", 'a,"b"\nc', " "]
)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": TEXT,
    "int64": st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1),
    "float64": st.floats(allow_nan=True, allow_infinity=True),
    "bool": st.booleans(),
    "timestamp": st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
}


@st.composite
def table_rows(draw: st.DrawFn) -> tuple[str, dict[str, list[Any]]]:
    table = draw(st.sampled_from(TABLE_NAMES))
    rows = draw(st.integers(min_value=0, max_value=6))
    columns = {
        column.name: [draw(st.none() | VALUES[column.type]) for _ in range(rows)] for column in TABLES[table]
    }
    return table, columns


@fuzz_settings(200)
@given(table_rows())
@example(("sessions", {column.name: [] for column in TABLES["sessions"]}))
def test_a_table_is_written_as_arrow_writes_it(tmp_path_factory: Any, table_and_columns: Any) -> None:
    table, columns = table_and_columns
    path = tmp_path_factory.mktemp("csv") / f"{table}.csv"
    written = CsvTable(table, path)
    half = len(columns["session_id"]) // 2
    written.write({name: values[:half] for name, values in columns.items()})
    written.write({name: values[half:] for name, values in columns.items()})
    written.close()
    assert path.read_bytes() == arrow_csv(arrow_table(table, columns))


def test_a_table_of_every_type_over_several_slices_is_written_as_arrow_writes_it(tmp_path: Path) -> None:
    # More rows than one slice of the writer (SLICE_ROWS), every column type, nulls.
    from bbox_lark.numbers.csvtable import SLICE_ROWS

    rows = SLICE_ROWS + 7
    moment = datetime(2026, 11, 28, 17, 0, 1, 250, tzinfo=UTC)
    samples: dict[str, list[Any]] = {
        "string": ['a "b"', "c,d", "", "e\nf", None],
        "int64": [0, -3, (1 << 63) - 1, None, 42],
        "float64": [0.5, None, 1e-7, 3.0, math.nan],
        "bool": [True, False, None, True, False],
        "timestamp": [moment, None, moment + timedelta(days=400), moment, None],
    }
    columns = {
        column.name: [samples[column.type][(row + at) % 5] for row in range(rows)]
        for at, column in enumerate(TABLES["sessions"])
    }
    path = tmp_path / "sessions.csv"
    written = CsvTable("sessions", path)
    written.write(columns)
    written.write({name: values[:3] for name, values in columns.items()})
    written.close()
    both = {name: values + values[:3] for name, values in columns.items()}
    assert path.read_bytes() == arrow_csv(arrow_table("sessions", both))


def test_columns_of_different_lengths_are_refused(tmp_path: Path) -> None:
    columns: dict[str, list[Any]] = {column.name: [None] for column in TABLES["diagnostics"]}
    columns["line"] = []
    written = CsvTable("diagnostics", tmp_path / "d.csv")
    with pytest.raises(ValueError, match=r"^the columns of a table's rows have different lengths$"):
        written.write(columns)
    written.close()


# -- whole exports: the CSV export is the Parquet export, as pyarrow writes it as CSV ----------


def _exports_agree(inputs: list[str], tmp_path: Path) -> int:
    parquet = export_tables(inputs, tmp_path / "parquet", jobs=1, secrets="keep")
    csv = export_tables(inputs, tmp_path / "csv", format="csv", jobs=1, secrets="keep")
    assert csv.rows == parquet.rows and csv.exit_code == parquet.exit_code
    for name in TABLE_NAMES:
        from_parquet = pq.read_table(tmp_path / "parquet" / f"{name}.parquet", schema=arrow_schema(name))
        assert (tmp_path / "csv" / f"{name}.csv").read_bytes() == arrow_csv(from_parquet), name
    return sum(csv.rows.values())


def test_the_csv_export_of_the_corpus_is_its_parquet_export_as_arrow_writes_csv(tmp_path: Path) -> None:
    assert _exports_agree([str(REPO / "corpus")], tmp_path) > 1_000


@pytest.mark.skipif(not EXTERNAL.is_dir(), reason="../shared/corpus-external is absent")
def test_the_csv_export_of_the_external_files_is_their_parquet_export_as_arrow_writes_csv(
    tmp_path: Path,
) -> None:
    assert _exports_agree([str(EXTERNAL)], tmp_path) > 10_000
