"""The compact form (``bbox_lark/convert/compact.py``), pinned down where mutation testing found
nothing holding it: where a line's ``# metrics`` comment starts, the lossy summary of each kind
of event and what its report says, and the mapping table read from the module's docstring
(docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bbox_lark import parse as parse_text
from bbox_lark.convert import Report, compact, convert
from bbox_lark.syntax.nodes import Event
from bbox_lark.syntax.parser import iter_nodes
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"


def slug(value: object) -> str | None:
    """A test id of letters, digits and dashes (mutmut gives pytest the ids back)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", value).strip("-") or "empty" if isinstance(value, str) else None


def compact_body(body: str, **options: object) -> tuple[str, list[tuple[str, str, tuple[int, ...]]]]:
    result = convert(HEADER + body, "bbox", to="compact", **options)
    report = [(e.action, e.what, e.lines) for e in result.report if e.stage == "write"]
    return result.text[len(HEADER) :], report


@pytest.mark.parametrize(
    ("line", "written"),
    [
        ("t:read  # metrics  a=1", "t:read # metrics a=1"),
        ("t: read  # metrics a=1", "t:read # metrics a=1"),
        ("@end  # metrics a=1", "@end # metrics a=1"),
        ("@phase  design  # metrics a=1", "@phase design # metrics a=1"),
        ("m:auto  # metrics a=1", "m:auto # metrics a=1"),
        ("u:  # metrics a=1", "u: # metrics a=1"),
        ("t:read →  # metrics a=1", "t:read→ # metrics a=1"),
        ("t:read x → [ok]  # metrics a=1", "t:read x→[ok] # metrics a=1"),
        ("u: a # metrics b # metrics c", "u:a # metrics b # metrics c"),
        ("t:read x # metrics", "t:read x # metrics"),
        ("u: a #metrics b", "u:a #metrics b"),
        ("t:read x → [ok] # metricsz", "t:read x→[ok] # metricsz"),
        # The comment right after each part of the line (one space, or none), the spacing
        # inside it normalised: cut at the part's end exactly.
        ("u: # metrics  a=1", "u: # metrics a=1"),
        ("u:# metrics  a=1", "u:# metrics a=1"),
        ("@end # metrics  a=1", "@end # metrics a=1"),
        ("@end# metrics  a=1", "@end# metrics  a=1"),
        ("t:read # metrics  a=1", "t:read # metrics a=1"),
        ("t:read# metrics  a=1", "t:read# metrics a=1"),
        ("t: read # metrics  a=1", "t:read # metrics a=1"),
        ("t:read → # metrics  a=1", "t:read→ # metrics a=1"),
        ("t:read →# metrics  a=1", "t:read→# metrics a=1"),
        ("u: hi # metrics  a=1", "u:hi # metrics a=1"),
        ("u: hi# metrics  a=1", "u:hi# metrics a=1"),
        ("t:read → [ok] # metrics  a=1", "t:read→[ok] # metrics a=1"),
        ("t:read → [ok]# metrics  a=1", "t:read→[ok]# metrics a=1"),
        ("u: a # metrics  b # metrics c", "u:a # metrics b # metrics c"),
        ("m:auto # metrics  a=1", "m:auto # metrics a=1"),
    ],
    ids=slug,
)
def test_a_metrics_comment_is_cut_where_it_starts(line: str, written: str) -> None:
    assert compact_body(line + "\n") == (written + "\n", [])


@pytest.mark.parametrize(
    ("body", "written", "report"),
    [
        ("zz: what\n", "zz: what\n", []),
        ("t:read → [3]\n", "t:read→[3]\n", []),
        ("t:read →\n", "t:read→\n", []),
        ("t:read → id=x\n", "t:read→id=x\n", []),  # the summary would lose the result: kept whole
        (
            "t:read a.rs id=c1 step=2 → [186 lines] more # metrics a=1\n",
            "t:read a.rs→[186]\n",
            [
                ("dropped", "id= fields", (7,)),
                ("dropped", "step= fields", (7,)),
                ("dropped", "count units", (7,)),
                ("dropped", "text after a result's bracket form", (7,)),
                ("dropped", "trailing # metrics comments", (7,)),
            ],
        ),
        (
            "t:read → k=v id=x step=1\n",
            "t:read→k=v\n",
            [("dropped", "id= fields", (7,)), ("dropped", "step= fields", (7,))],
        ),
        ("t:read id=x → plain text id=y\n", "t:read→plain text\n", [("dropped", "id= fields", (7, 7))]),
        (
            "t:read a.rs →\n  done here\n",
            "t:read a.rs→done here\n",
            [("synthesized", "results from a single continuation line", (7,))],
        ),
        (
            "t:read a.rs →\n  one\n  two\n",
            "t:read a.rs→[2]\n",
            [
                ("synthesized", "count results (the number of continuation lines)", (7,)),
                ("dropped", "continuation lines", (8, 9)),
            ],
        ),
        ("t:x → [ok] done\n", "t:x→[ok]\n", [("dropped", "text after a result's bracket form", (7,))]),
        ("u: a # metrics b=1 id=2\n", "u:a\n", [("dropped", "trailing # metrics comments", (7,))]),
        ("o: id=x → [ok]\n", "o:→[ok]\n", [("dropped", "id= fields", (7,))]),
        ("@start id=s\n", "@start\n", [("dropped", "id= fields", (7,))]),
        (
            "u: hi id=1\n\n  stray\n# c\nu: bye",
            "u:hi\nu:bye",
            [
                ("dropped", "id= fields", (7,)),
                ("dropped", "blank lines", (8,)),
                ("dropped", "continuation lines", (9,)),
                ("dropped", "comment lines", (10,)),
            ],
        ),
        ("u: a\r\nu: b\r\n", "u:a\r\nu:b\r\n", []),
        ("u: a\nu: b\nu: c", "u:a\nu:b\nu:c", []),
        ("u: a\n# c", "u:a", [("dropped", "comment lines", (8,))]),
        ("t:x → [ok] k=v\n", "t:x→[ok]\n", [("dropped", "text after a result's bracket form", (7,))]),
    ],
    ids=slug,
)
def test_the_lossy_summary_and_its_report(body: str, written: str, report: list[object]) -> None:
    assert compact_body(body, lossy=True) == (written, report)


def test_lossy_line_is_one_event_summarised() -> None:
    (event,) = [
        n for n in iter_nodes(HEADER + "t:read a.rs id=c1 → [3 lines]\n  out\n") if isinstance(n, Event)
    ]
    report = Report()
    assert compact.lossy_line(event, report) == "t:read a.rs→[3]"
    assert [(e.action, e.what, e.lines) for e in report.entries] == [
        ("dropped", "id= fields", (7,)),
        ("dropped", "count units", (7,)),
    ]


def test_the_mapping_table_is_the_docstring_s() -> None:
    # FORMAT's table is read from the docstring while the module is imported; read again.
    rows = compact._docstring_rows()
    assert rows == compact.FORMAT.export_mapping and len(rows) == 18
    assert rows[0].source == "byte order mark" and rows[0].target == "kept" and rows[0].fate == "kept"
    assert [(r.source, r.fate) for r in rows if r.fate != "kept"] == [
        ("whitespace-only last line without a line ending", "dropped")
    ]
    assert rows[-1].source == "a line whose rewrite would read differently"


def test_read_compact_maps_each_bbox_line_to_its_compact_line() -> None:
    report = Report()
    document = compact.read_compact("u:a ⏎ more ⏎\nzz: x\n", report=report)
    assert [(d.code, d.line, d.col) for d in document.diagnostics] == [("E004", 1, 1), ("W003", 4, 1)]
    assert report.origin is not None
    assert [report.origin(line) for line in (1, 2, 3, 4, 99)] == [(1, 0), (1, 4), (1, 12), (2, 0), (99, 0)]


def test_a_byte_order_mark_is_no_column_of_the_first_line() -> None:
    assert compact.expand("\ufeffu:a ⏎ more\n") == ("\ufeffu:a\n  more\n", {1: (1, 0), 2: (1, 4)})


def test_an_empty_compact_input_has_its_diagnostic_at_line_1() -> None:
    result = convert("", "compact", to="bbox")
    assert [(d.code, d.line, d.col) for d in result.diagnostics] == [("E004", 1, 1)]


def test_compact_finds_blobs_beside_its_file(tmp_path: Path) -> None:
    (tmp_path / ".bbox-blobs").mkdir()
    sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    text = HEADER + f"t:read a.rs→@blob sha256={sha} bytes=4\n"
    assert "E013" not in [d.code for d in compact.read_compact(text).diagnostics]
    beside = compact.read_compact(text, path=tmp_path / "s.cbox")
    assert [(d.code, d.line) for d in beside.diagnostics] == [("E013", 7)]
    converted = convert(text, "compact", to="bbox", path=tmp_path / "s.cbox")
    assert [(d.code, d.line) for d in converted.diagnostics] == [("E013", 7)]


def test_sniffing_finds_a_separator_in_the_first_million_characters_only() -> None:
    assert compact.sniff("u:a ⏎ b\n") == 3
    assert compact.sniff("u:" + "a" * 999_997 + " ⏎ b") == 0  # the mark is character 1,000,001
    assert compact.sniff("u:" + "a" * 999_996 + " ⏎ b") == 3


# -- the survivors of the whole module's run (2026-11-28) -------------------------------------


def test_split_compact_line_gives_where_each_piece_starts() -> None:
    assert compact.split_compact_line("u:a ⏎ b ⏎⏎ ⏎\tc") == [("u:a", 0), (" b ⏎", 5), ("\tc", 12)]
    assert compact.split_compact_line("⏎⏎u") == [("⏎u", 0)]


def test_a_last_line_without_an_ending_splits_with_the_file_s_ending() -> None:
    # Its bbox lines but the last take the file's first line ending; "\n" when it has none.
    assert compact.expand("u:a ⏎ b") == ("u:a\n  b", {1: (1, 0), 2: (1, 4)})
    assert compact.expand("u:a\r\nu:b ⏎ c ⏎") == (
        "u:a\r\nu:b\r\n  c\r\n",
        {1: (1, 0), 2: (2, 0), 3: (2, 4), 4: (2, 9)},
    )
    # A line with its own ending gives it to each of its bbox lines, whatever the first was.
    assert compact.expand("u:a\r\nu:b ⏎ c\n") == ("u:a\r\nu:b\n  c\n", {1: (1, 0), 2: (2, 0), 3: (2, 4)})


def test_each_continuation_s_column_shift() -> None:
    # "  c" is " c" after the separator: one column less of shift than a tab's or a blank's.
    assert compact.expand("u:a ⏎\tb ⏎ c ⏎\n")[1] == {1: (1, 0), 2: (1, 5), 3: (1, 8), 4: (1, 13)}


@pytest.mark.parametrize("lossy", [False, True])
def test_a_trailing_whitespace_only_line_after_several_is_dropped(lossy: bool) -> None:
    doc = parse_text(HEADER + "u: a\nu: b\n\nu: c\n  \t")
    assert compact.write_compact(doc, lossy=lossy) == HEADER + (
        "u:a\nu:b\nu:c\n" if lossy else "u:a\nu:b ⏎\nu:c\n"
    )


def test_write_compact_lossy_needs_no_report() -> None:
    doc = parse_text(HEADER + "u: a\n\n# note\nu: b\n")
    assert compact.write_compact(doc, lossy=True) == HEADER + "u:a\nu:b\n"


@pytest.mark.parametrize(
    ("line", "written"),
    [
        # `# metrics` inside quoted text or a quoted result, before the comment: the comment
        # is looked for after the line's last part only.
        ('u:  "quoted # metrics x"  # metrics  a=1', 'u:"quoted # metrics x" # metrics a=1'),
        ('t:read  →  "r # metrics"  # metrics  a=1', 't:read→"r # metrics" # metrics a=1'),
        # An empty comment, spacing to normalise: nothing after `# metrics`.
        ("u:  a  # metrics", "u:a # metrics"),
        ("t:read  →  [ok]  # metrics  ", "t:read→[ok] # metrics"),
    ],
    ids=slug,
)
def test_a_metrics_comment_after_quoted_text_or_empty(line: str, written: str) -> None:
    assert compact_body(line + "\n")[0] == written + "\n"


@pytest.mark.parametrize(
    ("line", "written"),
    [
        ("zz: unknown  ", "zz: unknown"),  # an unknown line: trailing whitespace removed
        ("zz:  a  b \t", "zz:  a  b"),
        ("---  ", "---"),  # still a body line: a fence only after the header's
        ("---\x0c", "---\x0c"),  # `---` without its form feed would be a fence: kept
        ("# plain   comment  ", "# plain   comment"),  # a plain comment: only its end
        ("#  t=00:05:00  ", "# t=00:05:00"),  # a structured comment, single-spaced
        ("#t=1", "# t=1"),
        ("# metrics  a=1  ", "# metrics a=1"),
        ("# a\rb  ", "# a\rb"),  # a carriage return the rewrite keeps
        ("u: a\rb", "u: a\rb"),  # one it would lose: the line is kept as written
        ("t:read → a\rb", "t:read → a\rb"),
    ],
    ids=slug,
)
def test_compact_line_of_each_kind(line: str, written: str) -> None:
    (event,) = [node for node in iter_nodes(HEADER + line + "\n") if isinstance(node, Event)]
    assert compact.compact_line(event) == written


def test_an_oversized_line_is_kept_whole() -> None:
    text = HEADER + "zz: " + "a" * 40 + "  \n"
    (event,) = [node for node in iter_nodes(text, max_line=20) if isinstance(node, Event)]
    assert compact.compact_line(event) == "zz: " + "a" * 40 + "  "


@pytest.mark.parametrize("size", [DEFAULT_MAX_LINE, DEFAULT_MAX_LINE - 1], ids=["at-the-limit", "one-under"])
def test_a_comment_gains_its_space_only_within_the_line_limit(size: int) -> None:
    raw = "#metrics a=" + "x" * (size - 11)
    (event,) = [node for node in iter_nodes(HEADER + raw + "\n") if isinstance(node, Event)]
    written = compact.compact_line(event)
    assert written == (raw if size == DEFAULT_MAX_LINE else "# metrics a=" + "x" * (size - 11))


@pytest.mark.parametrize(
    ("body", "written"),
    [
        # A line ending in a carriage return before its own CRLF, then a line ending in
        # "\n": the compact line ends in CRLF, so that the CR is not read as part of it.
        ("u: a\r\r\n  b\n", "u:a ⏎ b\r\n"),
        ("u: a\n  b\r\r\n  c\n", "u:a ⏎ b⏎r ⏎ c\r\n"),
        ("u: a\n  b\n  c\r\r\n", "u:a ⏎ b ⏎ c⏎r\r\n"),
    ],
    ids=["event", "middle", "last"],
)
def test_a_carriage_return_before_a_line_s_end_makes_the_compact_line_crlf(body: str, written: str) -> None:
    assert compact.write_compact(parse_text(HEADER + body)) == HEADER + written


def test_lossy_output_keeps_the_byte_order_mark_and_reports_what_it_kept() -> None:
    result = convert("\ufeff" + HEADER + "u: a\n\nu: b\n", "bbox", to="compact", lossy=True)
    assert result.text == "\ufeff" + HEADER + "u:a\nu:b\n"
    result = convert(HEADER + "u: a\n  more\nt:read x\n", "bbox", to="compact")
    kept = [
        (e.what, e.lines, e.count)
        for e in result.fidelity.entries
        if e.action == "kept" and e.stage == "write"
    ]
    assert kept == [("user lines", (7,), 1), ("continuation lines", (8,), 1), ("tool lines", (9,), 1)]


def test_a_line_over_the_default_limit_is_kept_whole() -> None:
    # Past the limit the line is Unknown (oversized), kept as read, trailing whitespace too.
    raw = "zz: " + "a" * DEFAULT_MAX_LINE + "  "
    (event,) = [node for node in iter_nodes(HEADER + raw + "\n") if isinstance(node, Event)]
    assert compact.compact_line(event) == raw
