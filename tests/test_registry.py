"""The diagnostics registry: every code's examples run, the scheme holds, the corpus covers it."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from conftest import CORPUS, corpus_files

import bbox_lark
from bbox_lark import CheckInfo

REGISTRY = bbox_lark.registry()
ACTIVE = [info for info in REGISTRY.values() if not info.retired and not info.internal]
#: Codes the runner reports (an internal error): no document triggers them; tests/test_hostile.py
#: forces them.
INTERNAL = sorted(code for code, info in REGISTRY.items() if info.internal)
#: Codes whose examples need blob checking on (DECISIONS §9: a blob folder).
BLOB_CODES = frozenset({"E013", "E014"})
SEVERITY_LETTERS = {"E": "error", "W": "warning", "I": "info"}
#: The secrets family has its own letter (``--select S``); its severities are fixed per code.
SECRET_SEVERITIES = {"S001": "error", "S002": "warning"}
#: The reference Rust `blackbox validate` codes keep their meaning (DECISIONS §6).
REFERENCE_CODES = {
    "W001": "progress-without-start",
    "W002": "unknown-call-id",
    "W003": "unknown-line",
    "W004": "step-decreasing",
    "W005": "invalid-timestamp",
    "W006": "blob-hash-too-short",
    "W007": "tool-start-never-completed",
    "W008": "unexpected-format-version",
    "W009": "repo-sha-shape",
    "I001": "long-session-without-start",
    "I002": "start-without-end",
    "I003": "auto-mode-without-sandbox",
    "I004": "no-runner",
}


@pytest.fixture(scope="module")
def blob_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A blob folder holding one blob, ``test`` (4 bytes), named by its sha256."""
    folder = tmp_path_factory.mktemp("blobs")
    (folder / hashlib.sha256(b"test").hexdigest()).write_bytes(b"test")
    return folder


def run(info: CheckInfo, text: str, blobs: Path) -> list[str]:
    found = bbox_lark.check(text, blobs=blobs if info.code in BLOB_CODES else None)
    return [d.code for d in found]


@pytest.mark.parametrize("info", ACTIVE, ids=[info.code for info in ACTIVE])
def test_bad_example_reports_its_own_code_and_nothing_else(info: CheckInfo, blob_folder: Path) -> None:
    codes = run(info, info.bad, blob_folder)
    assert codes, f"{info.code}'s bad example reports nothing"
    assert set(codes) == {info.code}


@pytest.mark.parametrize("info", ACTIVE, ids=[info.code for info in ACTIVE])
def test_good_example_reports_nothing(info: CheckInfo, blob_folder: Path) -> None:
    assert run(info, info.good, blob_folder) == []


def test_blob_examples_need_the_blob_folder() -> None:
    # Without a blob folder E013/E014 cannot fire: the temporary folder above is what makes
    # their bad examples fail, not something else in the text.
    for code in sorted(BLOB_CODES):
        assert bbox_lark.check(REGISTRY[code].bad) == []


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_code_follows_the_scheme(code: str) -> None:
    info = REGISTRY[code]
    assert info.code == code
    assert re.fullmatch(r"[EWIS]\d{3}", code)
    if code[0] == "S":
        assert info.family == "secrets"
        assert info.severity == SECRET_SEVERITIES[code]
    else:
        assert info.severity == SEVERITY_LETTERS[code[0]]
    assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", info.name), info.name
    assert info.summary.strip()
    assert info.rationale.strip()
    assert info.family.strip()


def test_codes_and_names_are_unique() -> None:
    codes = [info.code for info in REGISTRY.values()]
    names = [info.name for info in REGISTRY.values()]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)


def test_codes_are_numbered_without_holes() -> None:
    # New codes continue each series (the scheme in bbox_lark/checks/__init__.py); retired
    # codes stay registered as tombstones, so a series never has a hole.
    for letter in SEVERITY_LETTERS:
        numbers = sorted(int(code[1:]) for code in REGISTRY if code[0] == letter)
        assert numbers == list(range(1, len(numbers) + 1)), letter


def test_reference_codes_keep_their_meaning() -> None:
    assert {code: REGISTRY[code].name for code in REFERENCE_CODES} == REFERENCE_CODES


@pytest.mark.parametrize("code", sorted(set(REGISTRY) - set(INTERNAL)))
def test_every_code_has_an_invalid_corpus_file(code: str) -> None:
    named = sorted(f.path.name for f in corpus_files("invalid") if f.code == code)
    assert named, f"no corpus/invalid/{code}-*.bbox file"


def test_every_invalid_corpus_file_names_a_registered_code() -> None:
    names = sorted(p.name for p in (CORPUS / "invalid").glob("*.bbox"))
    assert names
    assert [name for name in names if name[:4] not in REGISTRY or name[4] != "-"] == []


def test_internal_codes_are_only_the_runners() -> None:
    assert INTERNAL == ["E016"]
    assert REGISTRY["E016"].family == "runner"
