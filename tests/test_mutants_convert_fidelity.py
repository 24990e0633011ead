"""The fidelity report (``bbox_lark.convert.fidelity``): what a conversion says it kept,
moved to an extra, synthesized, dropped and skipped. A report that miscounts tells a user
nothing was lost when something was: each count, line and rendering is pinned here."""

from __future__ import annotations

import pytest

from bbox_lark.convert.fidelity import FATES, LINES_KEPT, Fidelity, Report, ReportEntry, Skipped


def test_the_fates_in_the_order_reports_show_them() -> None:
    assert FATES == ("kept", "extra", "synthesized", "dropped")
    assert LINES_KEPT == 1_000
    assert Report is Fidelity


@pytest.mark.parametrize(
    ("entry", "text"),
    [
        (ReportEntry("dropped", "comment lines", ()), "dropped comment lines: 0"),
        (ReportEntry("dropped", "comment lines", (0, 0)), "dropped comment lines: 2"),
        (ReportEntry("kept", "ids", (7,)), "kept ids: 1 (line 7)"),
        (ReportEntry("kept", "ids", (7, 9)), "kept ids: 2 (lines 7, 9)"),
        (ReportEntry("kept", "ids", (1, 2, 3, 4, 5)), "kept ids: 5 (lines 1, 2, 3, 4, 5)"),
        (ReportEntry("kept", "ids", (1, 2, 3, 4, 5, 6)), "kept ids: 6 (lines 1, 2, 3, 4, 5, …)"),
        (ReportEntry("kept", "ids", (1, 2), count=9), "kept ids: 9 (lines 1, 2, …)"),
        (ReportEntry("kept", "ids", (0, 4), count=2), "kept ids: 2 (lines 4)"),
        (ReportEntry("kept", "ids", (4,), count=1), "kept ids: 1 (line 4)"),
    ],
)
def test_a_row_renders(entry: ReportEntry, text: str) -> None:
    assert entry.render() == text


def test_a_row_renders_up_to_its_limit() -> None:
    entry = ReportEntry("synthesized", "steps", (1, 2, 3))
    assert entry.render(limit=2) == "synthesized steps: 3 (lines 1, 2, …)"
    assert entry.render(limit=3) == "synthesized steps: 3 (lines 1, 2, 3)"


def test_a_row_counts_its_lines_unless_told() -> None:
    assert ReportEntry("kept", "x", (1, 2, 3)).count == 3
    assert ReportEntry("kept", "x", (1,), count=0).count == 0
    assert ReportEntry("kept", "x", (1,), count=5).count == 5
    assert ReportEntry("kept", "x", ()).stage == "write"


def test_a_row_as_json_keeps_twenty_lines() -> None:
    entry = ReportEntry("dropped", "metrics", tuple(range(0, 30)), count=40, stage="read")
    assert entry.to_dict() == {
        "fate": "dropped",
        "construct": "metrics",
        "count": 40,
        "lines": list(range(1, 21)),
        "stage": "read",
    }


def test_a_skipped_record_names_its_input_and_line() -> None:
    assert Skipped(8, "not a JSON record").render("s.jsonl") == "s.jsonl:8: skipped: not a JSON record"


def test_each_fate_is_counted_per_stage_and_construct() -> None:
    report = Fidelity()
    assert not report
    report.stage = "read"
    report.dropped("comment lines", 3)
    report.dropped("comment lines", 5, count=2)
    report.kept("ids", 4)
    report.stage = "write"
    report.synthesized("step numbers")
    report.extra("cost fields", 9)
    report.dropped("comment lines", 11)
    assert report
    assert report.entries == (
        ReportEntry("dropped", "comment lines", (3, 5), 3, "read"),
        ReportEntry("kept", "ids", (4,), 1, "read"),
        ReportEntry("synthesized", "step numbers", (0,), 1, "write"),
        ReportEntry("extra", "cost fields", (9,), 1, "write"),
        ReportEntry("dropped", "comment lines", (11,), 1, "write"),
    )
    assert report.count("dropped") == 4
    assert report.count("dropped", "comment lines") == 4
    assert report.count("dropped", "ids") == 0
    assert report.count("kept") == 1 and report.count("extra") == 1
    assert [e.what for e in report.losses] == ["comment lines", "step numbers", "comment lines"]


def test_the_old_names_are_the_new_ones() -> None:
    report = Fidelity()
    report.drop("a", 1)
    report.synthesize("b", 2, count=3)
    assert report.entries == (ReportEntry("dropped", "a", (1,), 1), ReportEntry("synthesized", "b", (2,), 3))


def test_an_unknown_fate_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown fate 'lost'"):
        Fidelity().note("lost", "x")


def test_a_row_keeps_its_first_lines_and_counts_on(monkeypatch: pytest.MonkeyPatch) -> None:
    import bbox_lark.convert.fidelity as fidelity

    monkeypatch.setattr(fidelity, "LINES_KEPT", 3)
    report = Fidelity()
    for line in range(1, 8):
        report.dropped("x", line)
    (entry,) = report.entries
    assert entry.lines == (1, 2, 3) and entry.count == 7


def test_a_writer_s_lines_are_the_input_s() -> None:
    report = Fidelity()
    report.origin = lambda line: (line * 10, 2)
    report.dropped("x", 3)  # written while the writer runs: the input's line 30
    report.dropped("y", 0)  # no line: none to map
    report.stage = "read"
    report.dropped("z", 3)  # the reader's own lines are the input's already
    assert [(e.what, e.lines) for e in report.entries] == [("z", (3,)), ("x", (30,)), ("y", (0,))]
    assert report.source_line(4) == 40
    report.origin = None
    assert report.source_line(4) == 4


def test_a_skipped_record_s_secret_is_masked() -> None:
    report = Fidelity()
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    report.skip(4, f"bad value {key}")
    assert report
    (skipped,) = report.skipped
    assert skipped.line == 4 and key not in skipped.message and skipped.message.startswith("bad value ghp_")


def test_the_report_as_json() -> None:
    report = Fidelity()
    report.kept("ids", 1)
    report.dropped("comments", 2, count=2)
    report.skip(7, "cut short")
    assert report.to_dict() == {
        "entries": [
            {"fate": "kept", "construct": "ids", "count": 1, "lines": [1], "stage": "write"},
            {"fate": "dropped", "construct": "comments", "count": 2, "lines": [2], "stage": "write"},
        ],
        "skipped": [{"line": 7, "message": "cut short"}],
        "totals": {"kept": 1, "extra": 0, "synthesized": 0, "dropped": 2},
    }


def test_the_report_as_text_reads_first_then_fates_in_order() -> None:
    report = Fidelity()
    report.dropped("comments", 2)
    report.kept("ids", 1)
    report.stage = "read"
    report.synthesized("steps", 4)
    report.skip(7, "cut short")
    assert report.render("s.jsonl") == (
        "s.jsonl: read: synthesized steps: 1 (line 4)\n"
        "s.jsonl: write: kept ids: 1 (line 1)\n"
        "s.jsonl: write: dropped comments: 1 (line 2)\n"
        "s.jsonl:7: skipped: cut short\n"
    )
    assert report.render() == (
        "read: synthesized steps: 1 (line 4)\n"
        "write: kept ids: 1 (line 1)\n"
        "write: dropped comments: 1 (line 2)\n"
        "<input>:7: skipped: cut short\n"
    )
    assert Fidelity().render() == ""


def test_only_a_skipped_record_makes_a_report() -> None:
    report = Fidelity()
    report.skip(1, "x")
    assert report


def test_the_defaults_are_no_line_and_one_occurrence() -> None:
    report = Fidelity()
    report.kept("a")
    report.extra("b")
    report.synthesized("c")
    report.dropped("d")
    report.note("kept", "e")
    assert [(e.what, e.lines, e.count) for e in report.entries] == [
        ("a", (0,), 1),
        ("b", (0,), 1),
        ("c", (0,), 1),
        ("d", (0,), 1),
        ("e", (0,), 1),
    ]


def test_each_fate_counts_what_it_is_given() -> None:
    report = Fidelity()
    report.kept("a", 1, count=3)
    report.extra("b", 2, count=4)
    report.synthesized("c", 3, count=5)
    report.dropped("d", 4, count=6)
    assert [e.count for e in report.entries] == [3, 4, 5, 6]


def test_only_a_line_is_mapped_to_the_input() -> None:
    report = Fidelity()
    report.origin = lambda line: (line + 100, 0)
    report.dropped("none", 0)
    report.dropped("first", 1)
    assert [(e.what, e.lines) for e in report.entries] == [("none", (0,)), ("first", (101,))]


def test_a_skipped_record_s_key_cut_short_is_masked() -> None:
    report = Fidelity()
    cut = "ghp_" + "A1b2C3d4E5f6G7h8"  # most of a key, cut short: still a leak
    report.skip(2, f'bad value "{cut}')
    (skipped,) = report.skipped
    assert cut not in skipped.message
