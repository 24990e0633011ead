"""A large file checked in parts (``bbox_lark/checks/parallel.py``), its parts on threads: in
this process, where mutation testing sees them (the worker processes of ``check --jobs`` are
out of its sight, docs/testing.md, "Mutation testing"). Each part's options (the selection,
the line limit, the blob folder, the allowed secrets), its byte-level faults, the targets of
suppressions across a cut and the second look for far observations give the findings of one
pass; the plan cuts the body where it says it does."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import corpus_files
from test_streaming import _ACROSS, _far_apart

import bbox_lark
from bbox_lark.checks import parallel
from bbox_lark.checks.parallel import Options, Part, check_split, first_seen, plan

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"
CORPUS = [*corpus_files("valid"), *corpus_files("invalid"), *corpus_files("hostile")]


def in_threads(path: Path, part_bytes: int, options: Options) -> list[object]:
    planned = plan(str(path), options.max_line, part_bytes)
    assert planned is not None
    with ThreadPoolExecutor(2) as pool:
        return check_split(str(path), options, pool, 3, planned)  # type: ignore[return-value]


def same_as_one_pass(path: Path, part_bytes: int, **options: object) -> list[object]:
    """The findings of ``path`` in parts, after checking they are those of one pass."""
    max_line = int(options.pop("max_line", 1024))  # type: ignore[call-overload]
    blobs = options.pop("blobs", None)
    allowed = frozenset(options.pop("allowed_secrets", ()))  # type: ignore[arg-type]
    select, ignore = options.pop("select", None), options.pop("ignore", None)
    assert not options
    expected = bbox_lark.check(
        path.read_bytes(),
        path=path,
        blobs=blobs,  # type: ignore[arg-type]
        max_line=max_line,
        select=select,  # type: ignore[arg-type]
        ignore=ignore,  # type: ignore[arg-type]
        allowed_secrets=allowed,
    )
    found = in_threads(path, part_bytes, Options(blobs, select, ignore, max_line, allowed))  # type: ignore[arg-type]
    assert found == expected
    return found


def test_the_corpus_in_parts_on_threads(tmp_path: Path) -> None:
    path = tmp_path / "corpus.bbox"
    path.write_bytes(b"".join(f.data() for f in CORPUS))
    for part_bytes in (1, 3000):
        found = same_as_one_pass(path, part_bytes)
        assert len({d.code for d in found}) > 25  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "options",
    [{"select": ("W0", "E")}, {"ignore": ("I", "W003")}, {"max_line": 60}],
    ids=["select", "ignore", "max-line"],
)
def test_the_corpus_in_parts_with_options(tmp_path: Path, options: dict[str, object]) -> None:
    path = tmp_path / "corpus.bbox"
    path.write_bytes(b"".join(f.data() for f in CORPUS))
    found = same_as_one_pass(path, 3000, **options)
    codes = {d.code for d in found}  # type: ignore[attr-defined]
    if "select" in options:
        assert codes and all(c.startswith(("W0", "E")) for c in codes)
    elif "ignore" in options:
        assert codes and not any(c.startswith("I") or c == "W003" for c in codes)
    else:
        assert "E003" in codes


def test_a_file_across_parts_on_threads(tmp_path: Path) -> None:
    path = tmp_path / "across.bbox"
    path.write_text(_ACROSS, encoding="utf-8")
    for part_bytes in (1, 40, 200):
        found = same_as_one_pass(path, part_bytes)
        assert {"W001", "W002", "W004", "W018", "W020", "W024", "W025"} <= {d.code for d in found}  # type: ignore[attr-defined]


@pytest.mark.parametrize("in_workers", [True, False], ids=["workers", "parent"])
def test_far_observations_settled_on_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_workers: bool
) -> None:
    if not in_workers:
        monkeypatch.setattr(parallel, "FIRST_SEEN_IN_WORKERS", 0)
    path = tmp_path / "far.bbox"
    path.write_text(_far_apart(300), encoding="utf-8")
    found = same_as_one_pass(path, 200)
    assert [d.line for d in found if d.code == "W002"] == [10, 312, 315]  # type: ignore[attr-defined]


def test_a_blank_line_that_ends_a_part_is_a_suppressions_target(tmp_path: Path) -> None:
    # The comment's target is the blank line (it silences nothing), not the next part's line.
    path = tmp_path / "blank.bbox"
    path.write_text(HEAD + "u: a\n# bbox-lark: ignore[W003]\n\nbogus\nu: b\n", encoding="utf-8")
    found = same_as_one_pass(path, 1)
    assert [(d.line, d.code) for d in found] == [(8, "I010"), (10, "W003")]  # type: ignore[attr-defined]


def test_a_suppression_reaches_the_first_line_of_the_next_part(tmp_path: Path) -> None:
    path = tmp_path / "next.bbox"
    path.write_text(HEAD + "u: a\n# bbox-lark: ignore[W003]\nbogus\nbogus again\n", encoding="utf-8")
    found = same_as_one_pass(path, 1)
    assert [(d.line, d.code) for d in found] == [(10, "W003")]  # type: ignore[attr-defined]
    # A continuation first in its part is a target too.
    path.write_text(HEAD + "u: a\n# bbox-lark: ignore[W023]\n  orphan\nbogus\n", encoding="utf-8")
    same_as_one_pass(path, 1)


def test_byte_faults_of_every_part_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "faults.bbox"
    body = b"".join(b"u: line %d\nu: bad \xff byte %d\nu: nul \x00 %d\n" % (n, n, n) for n in range(20))
    path.write_bytes(HEAD.encode() + body)
    found = same_as_one_pass(path, 30)
    assert len([d for d in found if d.line > 6]) >= 40  # type: ignore[attr-defined]


def test_each_part_reads_the_blob_folder_beside_the_file_or_given(tmp_path: Path) -> None:
    blobs = tmp_path / ".bbox-blobs"
    blobs.mkdir()
    sha = hashlib.sha256(b"test").hexdigest()
    (blobs / sha).write_bytes(b"test")
    body = "".join(
        f"t:read a.rs → @blob sha256={sha} bytes=4\nt:read b.rs → @blob sha256={'0' * 64} bytes=4\n"
        for _ in range(10)
    )
    path = tmp_path / "blobs.bbox"
    path.write_text(HEAD + body, encoding="utf-8")
    beside = same_as_one_pass(path, 100)
    assert [d.code for d in beside] == ["E013"] * 10  # type: ignore[attr-defined]
    other = tmp_path / "other"
    other.mkdir()
    given = same_as_one_pass(path, 100, blobs=other)
    assert [d.code for d in given] == ["E013"] * 20  # type: ignore[attr-defined]


def test_each_part_keeps_the_allowed_secrets(tmp_path: Path) -> None:
    key = "AKIAFAKE0123456789AB"
    path = tmp_path / "secrets.bbox"
    path.write_text(HEAD + "".join(f"u: step {n} key={key}\n" for n in range(10)), encoding="utf-8")
    assert len(same_as_one_pass(path, 40)) == 10
    assert "S001" not in [d.code for d in same_as_one_pass(path, 40, allowed_secrets={key})]  # type: ignore[attr-defined]


# -- the plan -------------------------------------------------------------------------------


def test_the_plan_cuts_the_body_before_event_lines_only(tmp_path: Path) -> None:
    path = tmp_path / "plan.bbox"
    body = "u: one\n  continued\n\n# note\nu: two\n@start\nT: x\nu: three\n"
    path.write_text(HEAD + body, encoding="utf-8")
    planned = plan(str(path), 1024, 1)
    assert planned is not None
    head, faults, parts = planned
    assert head.body_start == 7 and faults == []
    start = len(HEAD)
    # `T: x` starts no part (an uppercase first letter is no event start).
    assert [(p.first_line, p.start - start, p.end - start) for p in parts] == [
        (7, 0, 27),
        (11, 27, 34),
        (12, 34, 46),
        (14, 46, 55),
    ]
    assert parts[-1].end == len((HEAD + body).encode())
    data = path.read_bytes()
    for part in parts:
        assert list(parallel._lines(str(path), part)) == data[part.start : part.end].splitlines(keepends=True)


def test_the_plan_gathers_parts_of_about_the_size_asked(tmp_path: Path) -> None:
    path = tmp_path / "plan.bbox"
    path.write_text(HEAD + "".join(f"u: line {n:03}\n" for n in range(100)), encoding="utf-8")  # 12 bytes
    planned = plan(str(path), 1024, 70)
    assert planned is not None
    sizes = [p.end - p.start for p in planned[2]]
    # Cut at the first event line once 70 bytes are reached: after six lines of 12 bytes.
    assert sizes == [72] * 16 + [48]
    assert plan(str(path), 1024, 10_000) is None  # one part: nothing to split
    assert plan(str(path)) is None  # the default part size holds it all


def test_the_plan_keeps_the_headers_byte_faults_only(tmp_path: Path) -> None:
    path = tmp_path / "plan.bbox"
    path.write_bytes(
        b"---\nformat: bbox/1\nid: s\xff\nrepo_sha: abc1234\nrunner: local\n---\nu: a\xff\nu: b\n"
    )
    planned = plan(str(path), 1024, 1)
    assert planned is not None
    assert [f.line for f in planned[1]] == [3]


def test_a_parts_lines_end_where_the_part_does(tmp_path: Path) -> None:
    path = tmp_path / "lines.bbox"
    path.write_bytes(b"ab\n\ncd\nef")
    assert list(parallel._lines(str(path), Part(0, 4, 1))) == [b"ab\n", b"\n"]
    assert list(parallel._lines(str(path), Part(4, 10, 3))) == [b"cd\n", b"ef"]
    assert list(parallel._lines(str(path), Part(7, 20, 4))) == [b"ef"]  # the file ends first


def test_first_seen_finds_the_first_line_of_each_key_in_a_part(tmp_path: Path) -> None:
    path = tmp_path / "seen.bbox"
    text = HEAD + "u: id=a\nt:Read id=a → [ok]\nt:Read id=b → [ok]\nt:Read id=a → [ok]\n"
    path.write_text(text, encoding="utf-8")
    part = Part(len(HEAD), len(text.encode()), 7)
    options = Options(None, None, None, 1024)
    keys = frozenset({("id", "a"), ("id", "b"), ("id", "c")})
    assert first_seen(str(path), part, keys, options) == {("id", "a"): 8, ("id", "b"): 9}
    late = Part(len(HEAD) + len("u: id=a\nt:Read id=a → [ok]\n".encode()), len(text.encode()), 9)
    assert first_seen(str(path), late, keys, options) == {("id", "b"): 9, ("id", "a"): 10}


def test_first_seen_parses_every_line_for_a_key_of_escaped_characters_only(tmp_path: Path) -> None:
    path = tmp_path / "quotes.bbox"
    text = HEAD + 'u: x\nt:Read id="\\"\\"" → [ok]\nt:Read id=b → [ok]\nt:Read id="\\"\\"" → [ok]\n'
    path.write_text(text, encoding="utf-8")
    part = Part(len(HEAD), len(text.encode()), 7)
    keys = frozenset({("id", '""'), ("id", "b")})
    assert parallel._value_finder(keys) is None
    assert first_seen(str(path), part, keys, Options(None, None, None, 1024)) == {
        ("id", '""'): 8,
        ("id", "b"): 9,
    }
    later = Part(len(HEAD) + 5, len(text.encode()), 8)
    assert first_seen(str(path), later, frozenset({("id", '""')}), Options(None, None, None, 20)) == {}


def test_first_seen_reads_each_line_that_holds_a_value_whole(tmp_path: Path) -> None:
    # Values at the very start and end of the part, at the end of a line, twice on a line,
    # on a line that registers nothing before the one that does, and a last line without
    # its line break: the lines found are those of parsing every line.
    path = tmp_path / "edges.bbox"
    body = (
        "t:Read id=first\n"
        "u: mentions id=k2 and id=k3 id=k4\n"
        "t:Read id=k2\n"
        "t:Grep id=k3 → [ok] id=k4\n"
        "x:build id=k4\n"
        "t:Read id=k5 → [ok]\n"
        "t:Read id=last"
    )
    path.write_text(HEAD + body, encoding="utf-8")
    size = len((HEAD + body).encode())
    part = Part(len(HEAD), size, 7)
    keys = frozenset({("id", k) for k in ("first", "k2", "k3", "k4", "k5", "last")})
    expected = {("id", "first"): 7, ("id", "k2"): 9, ("id", "k3"): 10, ("id", "k4"): 11, ("id", "k5"): 12}
    expected[("id", "last")] = 13
    options = Options(None, None, None, 1024)
    assert first_seen(str(path), part, keys, options) == expected
    found: dict[object, int] = {}
    parallel._note_registrations(parallel._body_nodes(parallel._lines(str(path), part), 7, 1024), keys, found)  # type: ignore[arg-type]
    assert found == expected


def test_a_key_of_undecodable_bytes_is_found(tmp_path: Path) -> None:
    # A value read from invalid UTF-8 holds lone surrogates (surrogateescape), which a quoted
    # value escapes: the part is searched for the longest run without one.
    finder = parallel._value_finder(frozenset({("id", "a\udcffb")}))
    assert finder is not None and finder.search(b"t:Read id=a\xffb") is not None
    path = tmp_path / "bytes.bbox"
    data = HEAD.encode() + b"u: x\nt:Read id=a\xffb \xe2\x86\x92 [ok]\n"
    path.write_bytes(data)
    part = Part(len(HEAD), len(data), 7)
    found = first_seen(str(path), part, frozenset({("id", "a\udcffb")}), Options(None, None, None, 1024))
    assert found == {("id", "a\udcffb"): 8}


def test_the_headers_faults_are_reported_once_in_parts(tmp_path: Path) -> None:
    # A byte fault in the header, one on the first body line, a header line over the limit.
    path = tmp_path / "header.bbox"
    head = (
        b"---\nformat: bbox/1\nid: s\xff\nrepo_sha: abc1234\nrunner: local\nnote: " + b"n" * 50 + b"\n---\n"
    )
    body = b"u: first \xfe\n" + b"".join(b"u: line %d\n" % n for n in range(20))
    path.write_bytes(head + body)
    found = same_as_one_pass(path, 30, max_line=40)
    assert [(d.line, d.code) for d in found] == [(3, "E001"), (6, "E003"), (8, "E001")]  # type: ignore[attr-defined]


def test_a_selection_without_the_correlation_rule_in_parts(tmp_path: Path) -> None:
    path = tmp_path / "corpus.bbox"
    path.write_bytes(b"".join(f.data() for f in CORPUS))
    found = same_as_one_pass(path, 3000, select=("E",))
    assert found and all(d.code.startswith("E") for d in found)  # type: ignore[attr-defined]


def test_the_plan_cuts_as_soon_as_a_part_has_its_size(tmp_path: Path) -> None:
    path = tmp_path / "plan.bbox"
    path.write_text(HEAD + "".join(f"u: line {n:03}\n" for n in range(100)), encoding="utf-8")  # 12 bytes
    planned = plan(str(path), 1024, 72)
    assert planned is not None
    assert [p.end - p.start for p in planned[2]] == [72] * 16 + [48]


def test_an_allowed_secret_in_the_header_stays_allowed_in_parts(tmp_path: Path) -> None:
    key = "AKIAFAKE0123456789AB"
    path = tmp_path / "header.bbox"
    head = HEAD.replace("runner: local\n", f"runner: local\nnote: {key}\n")
    path.write_text(head + "".join(f"u: line {n}\n" for n in range(20)), encoding="utf-8")
    assert "S001" in [d.code for d in same_as_one_pass(path, 40)]  # type: ignore[attr-defined]
    assert "S001" not in [d.code for d in same_as_one_pass(path, 40, allowed_secrets={key})]  # type: ignore[attr-defined]
