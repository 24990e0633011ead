"""Sessions as Dask DataFrames, past one machine: :func:`read_bbox` (``docs/analytics.md``).

Each session file is one partition, read where the task runs (through fsspec, so a path may
be local, ``s3://``, ``gs://``, ...) and turned into rows by the same function as
``bbox-lark export`` (:func:`bbox_lark.numbers.tables.session_rows`); the columns and dtypes are
those of the exported Parquet tables read with pyarrow dtypes
(``dd.read_parquet(..., dtype_backend="pyarrow")``), so a Dask job and a DuckDB query over
an export see the same data.

Needs the ``scale`` extra (``pip install 'bbox-lark[scale]'``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bbox_lark.numbers.tables import TABLES, arrow_schema, arrow_table, need, session_rows

__all__ = ["meta", "read_bbox"]

#: The suffixes of session files, when a folder is given (``check``'s).
_SUFFIXES = (".bbox", ".blackbox", ".rlog")


def _pandas(arrow: Any) -> Any:
    """An Arrow table as pandas with the dtypes ``dd.read_parquet(..., dtype_backend="pyarrow")``
    gives: pandas' pyarrow-backed ``string`` for text, ``ArrowDtype`` for the rest."""
    pd = need("pandas", "read_bbox")
    pa = need("pyarrow", "read_bbox")

    def dtype(kind: Any) -> Any:
        return pd.StringDtype("pyarrow") if kind == pa.string() else pd.ArrowDtype(kind)

    return arrow.to_pandas(types_mapper=dtype)


def meta(table: str = "calls") -> Any:
    """The empty ``pandas.DataFrame`` with ``table``'s columns and dtypes."""
    return _pandas(arrow_schema(table).empty_table())


def _partition(url: str, table: str, storage_options: dict[str, Any] | None) -> Any:
    """One file's rows of ``table``, as a pandas DataFrame (in a Dask task)."""
    fsspec = need("fsspec", "read_bbox")
    with fsspec.open(url, "rb", **(storage_options or {})) as file:
        data = file.read()
    rows = session_rows(url, data)
    return _pandas(arrow_table(table, rows.tables[table]))


def _expand(urlpath: str | Sequence[str], storage_options: dict[str, Any] | None) -> list[str]:
    """Every file ``urlpath`` names, as full URLs: globs expanded, folders searched for
    session files (sorted), in the order given."""
    fsspec = need("fsspec", "read_bbox")
    urls = [urlpath] if isinstance(urlpath, str) else list(urlpath)
    found: list[str] = []
    for url in urls:
        fs, _, paths = fsspec.core.get_fs_token_paths(url, storage_options=storage_options)
        if not paths and not fs.isdir(fs._strip_protocol(url)):
            raise FileNotFoundError(f"{url}: no such file, and no file matches it as a pattern")
        if not paths:
            paths = [fs._strip_protocol(url)]
        for path in paths:
            if fs.isdir(path):
                below = sorted(p for p in fs.find(path) if p.endswith(_SUFFIXES))
                found += [fs.unstrip_protocol(p) if _remote(url) else p for p in below]
            else:
                found.append(fs.unstrip_protocol(path) if _remote(url) else path)
    return found


def _remote(url: str) -> bool:
    return "://" in url and not url.startswith("file://")


def read_bbox(
    urlpath: str | Sequence[str],
    table: str = "calls",
    storage_options: dict[str, Any] | None = None,
    *,
    skip_empty: bool = True,
) -> Any:
    """The ``table`` (``sessions``, ``events``, ``calls`` or ``diagnostics``) of every session
    file ``urlpath`` names, as a ``dask.dataframe.DataFrame`` with one partition per file
    that has rows in it.

    **Empty partitions.** A session without calls has an empty ``calls`` partition, and Dask
    fails on empty partitions in a shuffle (its groupby ``value_counts`` makes an empty
    partition's chunk an unindexed ``Series``, which the P2P shuffle refuses:
    ``calls.groupby("tool").outcome.value_counts()`` on a cluster). So with ``skip_empty``
    (the default) the files are read once, in the cluster (``dask.persist``: on the workers
    with a ``distributed`` client), and only the partitions with rows are kept (one empty
    partition when none has any). ``skip_empty=False`` gives the lazy frame with one
    partition per file, empty ones included, for a pipeline that never shuffles.

    ``urlpath``: a path or URL (``s3://bucket/logs/*.rlog``), a glob, a folder (every
    ``*.bbox``, ``*.blackbox``, ``*.rlog`` below it) or a list of them; ``storage_options``
    go to fsspec (credentials, ``endpoint_url``, ...). A file that cannot be read faithfully
    is read as ``export`` reads it (its ``sessions`` row says so). Raises
    :class:`~bbox_lark.numbers.tables.MissingExtra` without the ``scale`` extra, ``ValueError`` for
    an unknown table and ``FileNotFoundError`` when nothing matches."""
    if table not in TABLES:
        raise ValueError(f"table must be one of {', '.join(TABLES)}, not {table!r}")
    dd = need("dask.dataframe", "read_bbox")
    urls = _expand(urlpath, storage_options)
    if not urls:
        raise FileNotFoundError(f"{urlpath}: no session files")
    frame = dd.from_map(
        _partition,
        urls,
        table=table,
        storage_options=storage_options,
        meta=meta(table),
        divisions=[None] * (len(urls) + 1),
        label=f"read-bbox-{table}",
        enforce_metadata=False,
    )
    return _without_empty_partitions(frame, table) if skip_empty else frame


def _without_empty_partitions(frame: Any, table: str) -> Any:
    """``frame`` read once (persisted where the tasks run) without its empty partitions."""
    dask = need("dask", "read_bbox")
    dd = need("dask.dataframe", "read_bbox")
    (held,) = dask.persist(frame)
    parts = held.to_delayed()
    lengths = dask.compute(*(dask.delayed(len)(part) for part in parts))
    kept = [part for part, rows in zip(parts, lengths, strict=True) if rows] or parts[:1]
    return dd.from_delayed(kept, meta=meta(table), verify_meta=False)
