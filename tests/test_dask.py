"""``bbox_lark.dask.read_bbox`` on real engines: a ``distributed.LocalCluster`` with two
worker processes, and a local S3 server (moto's server mode) read through s3fs.

The counts are compared with ``bbox-lark export`` of the same files, and the columns and
dtypes with the exported Parquet files read by Dask: the two ways of reading agree.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bbox_lark.numbers.export import export_tables
from bbox_lark.numbers.tables import TABLE_NAMES, TABLES

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

# One worker starts this module's cluster, S3 server and exported tables once
# (pytest -n auto --dist loadgroup).
pytestmark = pytest.mark.xdist_group("dask")

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "corpus" / "valid"
FILES = ("spec-full-call-ids-steps-metrics.bbox", "correlation-families.bbox", "long-session.bbox")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("logs")
    for name in FILES:
        shutil.copy(VALID / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def exported(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out")
    export_tables([str(logs)], out, jobs=1)
    return out


def test_one_partition_per_file_with_the_parquet_dtypes(logs: Path, exported: Path) -> None:
    from bbox_lark.dask import read_bbox

    for table in TABLE_NAMES:
        lazy = read_bbox(str(logs), table=table, skip_empty=False)
        assert lazy.npartitions == len(FILES)  # one per file, empty ones included
        frame = read_bbox(str(logs), table=table)  # one per file with rows (at least one)
        parquet = dd.read_parquet(str(exported / f"{table}.parquet"), dtype_backend="pyarrow")
        with_rows = sum(1 for n in lazy.map_partitions(len).compute() if n)
        assert frame.npartitions == max(with_rows, 1)
        assert list(lazy.columns) == list(frame.columns)
        assert lazy.dtypes.to_dict() == frame.dtypes.to_dict()
        assert list(frame.columns) == list(parquet.columns) == [c.name for c in TABLES[table]]
        assert frame.dtypes.to_dict() == parquet.dtypes.to_dict()
        computed = frame.compute()
        assert computed.dtypes.to_dict() == parquet.dtypes.to_dict()  # the meta tells the truth
        assert len(computed) == len(parquet)


def test_globs_and_lists(logs: Path) -> None:
    from bbox_lark.dask import read_bbox

    assert read_bbox(str(logs / "*.bbox"), "sessions").npartitions == len(FILES)  # a row each
    listed = [str(logs / FILES[0]), str(logs / FILES[1])]
    assert len(read_bbox(listed, "sessions")) == 2
    with pytest.raises(FileNotFoundError):
        read_bbox(str(logs / "nothing-*.rlog"))
    with pytest.raises(ValueError, match="table must be one of"):
        read_bbox(str(logs), table="steps")


def test_on_a_local_cluster_with_two_worker_processes(logs: Path, exported: Path) -> None:
    from bbox_lark.dask import read_bbox

    expected = {
        table: len(dd.read_parquet(str(exported / f"{table}.parquet")).compute()) for table in TABLE_NAMES
    }
    outcomes = dd.read_parquet(str(exported / "calls.parquet")).compute().groupby("outcome").size().to_dict()
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        counts = {table: int(read_bbox(str(logs), table).shape[0].compute()) for table in TABLE_NAMES}
        per_outcome = read_bbox(str(logs), "calls").groupby("outcome").size().compute().to_dict()
        assert len(client.scheduler_info()["workers"]) == 2
    assert counts == expected
    assert per_outcome == outcomes


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    moto_server = pytest.importorskip("moto.server")
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def test_against_a_local_s3_server(logs: Path, exported: Path, s3_endpoint: str) -> None:
    s3fs = pytest.importorskip("s3fs")
    from bbox_lark.dask import read_bbox

    options = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": s3_endpoint}}
    fs = s3fs.S3FileSystem(**options)
    fs.mkdir("logs")
    for name in FILES:
        fs.put(str(logs / name), f"logs/2025/{name}")
    frame = read_bbox("s3://logs/2025/*.bbox", "sessions", storage_options=options)
    sessions = frame.compute(scheduler="sync")
    assert sorted(sessions["path"]) == sorted(f"s3://logs/2025/{name}" for name in FILES)
    local = dd.read_parquet(str(exported / "sessions.parquet"), dtype_backend="pyarrow").compute()
    assert sorted(sessions["calls"]) == sorted(local["calls"])
    whole = read_bbox("s3://logs", "events", storage_options=options)  # a folder: every file below
    assert whole.npartitions == len(FILES)
    assert len(whole) == len(dd.read_parquet(str(exported / "events.parquet")))


# -- real logs: sessions without calls (empty partitions) ---------------------------------

EXTERNAL = ROOT.parent / "shared" / "corpus-external" / "rlog-real"


def _real_logs() -> Path:
    if not EXTERNAL.is_dir():
        pytest.skip("no external corpus (../shared/corpus-external)")
    return EXTERNAL


def _empty_and_full(logs: Path, count: int = 6) -> list[Path]:
    """Real logs, half of them without a single call (their calls partition is empty)."""
    from bbox_lark.dask import _partition

    empty: list[Path] = []
    full: list[Path] = []
    for path in sorted(logs.iterdir()):
        if len(empty) >= count // 2 and len(full) >= count // 2:
            break
        rows = len(_partition(str(path), "calls", None))
        (full if rows else empty).append(path)
    assert empty, "the real logs have sessions without calls"
    return empty[: count // 2] + full[: count // 2]


def test_an_empty_partition_has_the_meta_and_never_fails() -> None:
    from bbox_lark.dask import _partition, meta, read_bbox

    chosen = _empty_and_full(_real_logs())
    for table in TABLE_NAMES:
        for path in chosen:
            part = _partition(str(path), table, None)
            assert part.dtypes.to_dict() == meta(table).dtypes.to_dict()
            assert list(part.columns) == list(meta(table).columns)
    calls = read_bbox([str(p) for p in chosen], "calls")
    assert calls.dtypes.to_dict() == meta("calls").dtypes.to_dict()
    assert calls.npartitions == 3  # the three sessions with calls
    assert all(calls.map_partitions(len).compute())
    nothing = read_bbox([str(p) for p in chosen[:3]], "calls")  # no call at all: one empty partition
    assert nothing.npartitions == 1 and len(nothing) == 0


def test_the_documented_example_on_a_local_cluster_over_the_real_logs() -> None:
    """docs/analytics.md's example on a LocalCluster with two processes, over real logs, half
    of them without calls (12 of the 115 have none): it failed in the P2P shuffle on the empty
    partitions. (16 logs: enough partitions for the shuffle, small enough for the suite.)"""
    from bbox_lark.dask import read_bbox
    from bbox_lark.numbers.export import export_tables

    chosen = [str(p) for p in _empty_and_full(_real_logs(), 16)]
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        calls = read_bbox(chosen, "calls")
        counts = calls.groupby("tool").outcome.value_counts().compute()
        sessions = read_bbox(chosen, "sessions").compute()
    assert len(sessions) == len(chosen)
    assert int(counts.sum()) == int(sessions["calls"].sum())
    # The same as the numbers of an export (the one function of each number).
    import pandas as pd

    table = pd.read_parquet(export_tables(chosen, Path(tempfile.mkdtemp()), jobs=1).out / "calls.parquet")
    expected = table.groupby("tool").outcome.value_counts()
    assert counts.sort_index().to_dict() == expected.sort_index().to_dict()


def test_the_real_logs_from_the_local_s3_server(s3_endpoint: str) -> None:
    s3fs = pytest.importorskip("s3fs")
    from bbox_lark.dask import read_bbox

    chosen = _empty_and_full(_real_logs())
    options = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": s3_endpoint}}
    fs = s3fs.S3FileSystem(**options)
    fs.mkdir("real")
    for path in chosen:
        fs.put(str(path), f"real/{path.name}")
    calls = read_bbox("s3://real", "calls", storage_options=options)
    counts = calls.groupby("tool").outcome.value_counts().compute(scheduler="sync")
    local = read_bbox([str(p) for p in chosen], "calls").compute()
    assert int(counts.sum()) == len(local)
    sessions = read_bbox("s3://real", "sessions", storage_options=options).compute(scheduler="sync")
    assert len(sessions) == len(chosen)
