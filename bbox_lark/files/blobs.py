"""The blob store: content too big or too binary for a line, kept beside the log
(docs/reference.md#blobs). A blob is a file named by the sha256 of its content, in one flat folder
(``.bbox-blobs/<sha256>``; the two-level ``<first two hex>/<sha256>`` layout is read too),
written atomically, so a blob that exists is always whole.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from bbox_lark._classes import dataclass

#: The folder beside a log that holds its blobs.
FOLDER_NAME = ".bbox-blobs"


def blob_path(folder: Path, sha: str) -> Path | None:
    """Where a blob lives: ``<folder>/<sha>`` or ``<folder>/<sha[:2]>/<sha>``."""
    for candidate in (folder / sha, folder / sha[:2] / sha):
        if candidate.is_file():
            return candidate
    return None


def read_blob(folder: Path, sha: str) -> bytes | None:
    """A blob's content, or None when the folder does not hold it."""
    path = blob_path(folder, sha.lower())
    return path.read_bytes() if path is not None else None


@dataclass(frozen=True, slots=True)
class StoredBlob:
    """A blob written to a store: what its pointer says."""

    sha256: str
    size: int
    mime: str | None

    @property
    def pointer(self) -> str:
        """``@blob sha256=… bytes=… [mime=…]``."""
        mime = f" mime={self.mime}" if self.mime else ""
        return f"@blob sha256={self.sha256} bytes={self.size}{mime}"


class BlobStore:
    """A blob folder that blobs are written to (created on the first write)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def put(self, data: bytes, mime: str | None = None) -> StoredBlob:
        """Store ``data`` (once: a blob already there is not written again) and return its
        pointer's values. Raises OSError when the folder cannot be written."""
        from bbox_lark.files.atomic import write_atomic

        sha = hashlib.sha256(data).hexdigest()
        if blob_path(self.folder, sha) is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(self.folder / sha, data)
        return StoredBlob(sha, len(data), mime)

    def get(self, sha: str) -> bytes | None:
        return read_blob(self.folder, sha)
