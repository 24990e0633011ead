"""The compact form (``bbox_lark/convert/compact.py``), pinned down where mutation testing found
nothing holding it: where a line's ``# metrics`` comment starts, the lossy summary of each kind
of event and what its report says, and the mapping table read from the module's docstring
(docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import re

import pytest

from bbox_lark.convert import Report, compact, convert
from bbox_lark.syntax.nodes import Event
from bbox_lark.syntax.parser import iter_nodes

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
