"""Shared test helpers: the golden corpus, how it is parsed, and the snapshot formats.

The corpus conventions (blob folders, the line limit) are documented in ``corpus/README.md``;
this module is where they are implemented, once.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

import bbox_lark
from bbox_lark import Diagnostic, Document
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

# Property tests are deterministic (a fixed seed, no example database), so CI and every local
# run see the same examples; `BBOX_LARK_FUZZ=N` asks for a long randomized run instead. A
# failure either kind finds is kept as an `@example` or a corpus case.
settings.register_profile("deterministic", derandomize=True, database=None, deadline=None)
settings.register_profile("random", deadline=None)
settings.load_profile("random" if os.environ.get("BBOX_LARK_FUZZ") else "deterministic")

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT / "corpus"
#: The corpus is parsed with this line limit (corpus/README.md, "Line limit").
CORPUS_MAX_LINE = 1024


@dataclass(frozen=True)
class CorpusFile:
    """One ``corpus/<folder>/<name>.bbox`` file."""

    path: Path

    @property
    def folder(self) -> str:
        return self.path.parent.name

    @property
    def id(self) -> str:
        """The test id, also the snapshot name: ``valid-arrows``, ``invalid-E012-...``."""
        return f"{self.folder}-{self.path.stem}"

    @property
    def relative(self) -> str:
        """The path shown in rendered diagnostics: relative to the repository, with ``/``."""
        return self.path.relative_to(REPO_ROOT).as_posix()

    @property
    def code(self) -> str:
        """For ``invalid/`` and ``hostile/`` files: the code the file is named after
        (``clean`` for a hostile file that must give no error or warning)."""
        return "clean" if self.path.name.startswith("clean-") else self.path.name[:4]

    @property
    def max_line(self) -> int:
        """The line limit (corpus/README.md, "Line limit"): the default for ``hostile/``."""
        return DEFAULT_MAX_LINE if self.folder == "hostile" else CORPUS_MAX_LINE

    @property
    def blobs(self) -> Path:
        """The blob folder beside the file (corpus/README.md, "Blob folders")."""
        return self.path.parent / "blobs"

    def data(self) -> bytes:
        return self.path.read_bytes()

    def parse(self) -> Document:
        """The parsed file (parsed once per session: documents are immutable). Not cached under
        mutmut (docs/testing.md): every test must run the mutated code, not read a document an
        earlier test parsed, or mutmut maps the test to no function and the test kills nothing."""
        if "MUTANT_UNDER_TEST" in os.environ:
            return _parse.__wrapped__(self)
        return _parse(self)


@cache
def _parse(file: CorpusFile) -> Document:
    doc = bbox_lark.parse(file.data(), blobs=file.blobs, max_line=file.max_line)
    return portable(doc)


def portable(doc: Document) -> Document:
    """The document with the repository's absolute path cut out of diagnostic messages (E013
    names the blob folder), so that snapshots do not depend on where the clone lives."""
    prefix = str(REPO_ROOT) + os.sep
    if not any(prefix in d.message for d in doc.diagnostics):
        return doc
    found = tuple(replace(d, message=d.message.replace(prefix, "")) for d in doc.diagnostics)
    return replace(doc, diagnostics=found)


def corpus_files(folder: str) -> list[CorpusFile]:
    """Every ``*.bbox`` file of ``corpus/<folder>/``, found by glob, sorted."""
    return [CorpusFile(path) for path in sorted((CORPUS / folder).glob("*.bbox"))]


def render_diagnostics(diagnostics: tuple[Diagnostic, ...] | list[Diagnostic], path: str) -> str:
    """``path:line:col: CODE message``, one line each (DECISIONS §8's text format)."""
    return "".join(d.format(path) + "\n" for d in diagnostics)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogates(text: str) -> str:
    # Invalid UTF-8 is decoded with surrogateescape (DECISIONS §10); a lone surrogate cannot be
    # written as UTF-8, so it is written as the JSON escape that reads back to the same string.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def dumps_document(value: dict[str, Any]) -> str:
    """JSON text for ``document_to_json`` output, laid out for review: the top-level keys in
    their order, and one line per body line and per diagnostic, so that a change to one
    source line is a one-line diff. Still plain JSON (``json.loads`` reads it back)."""
    parts = []
    for key, item in value.items():
        name = json.dumps(key)
        if isinstance(item, list) and item:
            rows = ",\n".join("    " + json.dumps(row, ensure_ascii=False) for row in item)
            parts.append(f"  {name}: [\n{rows}\n  ]")
        else:
            nested = json.dumps(item, ensure_ascii=False, indent=2).replace("\n", "\n  ")
            parts.append(f"  {name}: {nested}")
    return _escape_surrogates("{\n" + ",\n".join(parts) + "\n}\n")


class DocumentJSONExtension(JSONSnapshotExtension):
    """Snapshots of ``document_to_json`` as ``.json`` files in :func:`dumps_document`'s
    layout (key order kept, not sorted)."""

    def serialize(self, data: Any, **_: Any) -> str:
        return dumps_document(data)


class TextSnapshotExtension(SingleFileSnapshotExtension):
    """Snapshots of plain text as ``.txt`` files."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(DocumentJSONExtension)


@pytest.fixture
def snapshot_text(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TextSnapshotExtension)
