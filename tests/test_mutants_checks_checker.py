"""The checker (``bbox_lark.checks.Checker``) and the selection of codes, in this process:
which codes a run reports under ``select`` and ``ignore``, that streaming gives the findings
of a whole-file run, in order, each once, and that suppressions and byte faults reach the
rules. The corpus tests guard each rule; these guard the runner around them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bbox_lark.api import run
from bbox_lark.checks import REGISTRY, Checker, Rule, active_rules, registry, selection
from bbox_lark.syntax.nodes import Diagnostic
from bbox_lark.syntax.parser import iter_nodes
from bbox_lark.syntax.record import iter_records

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "corpus" / "invalid").glob("*.bbox")) + sorted(
    (ROOT / "corpus" / "valid").glob("*.bbox")
)
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"


def found(data: bytes, **options: object) -> list[Diagnostic]:
    checker = Checker(**options)  # type: ignore[arg-type]
    return list(run(checker, iter_records(io.BytesIO(data))))


def codes(data: bytes, **options: object) -> list[str]:
    return [d.code for d in found(data, **options)]


# -- the selection -------------------------------------------------------------------------------


def test_selection_by_code_or_prefix_any_case_comma_separated() -> None:
    enabled = selection(["w004, i007", " e"], None)
    assert enabled("W004") and enabled("I007") and enabled("E001") and enabled("E017")
    assert not enabled("W003") and not enabled("I001") and not enabled("S001")
    assert selection(None, None)("S001")
    assert not selection([], None)("E001")  # an empty selection selects nothing
    assert selection([",", " "], None)("E001") is False


def test_ignore_wins_over_select() -> None:
    enabled = selection(["W"], ["w00"])
    assert not enabled("W004") and enabled("W010")
    assert not selection(None, ["E,W"])("W001") and selection(None, ["E,W"])("I001")
    assert selection(None, [])("E001")


def test_only_the_rules_that_can_report_a_selected_code_run() -> None:
    every = active_rules(lambda code: True)
    assert every and all(issubclass(cls, Rule) for cls in every)
    secrets = active_rules(lambda code: code.startswith("S"))
    assert secrets and all(any(c.startswith("S") for c in cls.codes) for cls in secrets)
    assert len(secrets) < len(every)
    assert active_rules(lambda code: False) == []
    checker = Checker(select=["S001"])
    assert [type(r) for r in checker.rules] == secrets or {type(r) for r in checker.rules} <= set(secrets)


def test_the_registry_is_every_code_sorted() -> None:
    listed = registry()
    assert list(listed) == sorted(listed) and "E001" in listed and "S001" in listed
    assert listed == dict(sorted(REGISTRY.items()))


# -- a run ----------------------------------------------------------------------------------------


def test_a_run_reports_the_selected_codes_sorted_by_line_column_code() -> None:
    data = (ROOT / "corpus" / "invalid" / "E001-invalid-utf8.bbox").read_bytes()
    every = found(data)
    assert every == sorted(every, key=lambda d: (d.line, d.col, d.code))
    assert "E001" in [d.code for d in every]
    assert codes(data, select=["E001"]) == ["E001"]
    assert "E001" not in codes(data, ignore=["E001"])


def test_byte_faults_reach_the_rules_that_read_them() -> None:
    for name, code in (("E001-invalid-utf8.bbox", "E001"), ("E002-nul-byte.bbox", "E002")):
        data = (ROOT / "corpus" / "invalid" / name).read_bytes()
        assert code in codes(data), name
    long = HEADER.encode() + b"a: " + b"x" * 2000 + b"\n"
    checker_codes = [d.code for d in run(Checker(), iter_records(io.BytesIO(long), max_line=100))]
    assert "E003" in checker_codes


def test_a_suppression_silences_what_it_names_and_reports_what_it_did_not() -> None:
    body = "# bbox-lark: ignore[W003] a writer's own line kind\ntool: what is this\n"
    unknown = codes((HEADER + "tool: what is this\n").encode())
    assert "W003" in unknown
    assert "W003" not in codes((HEADER + body).encode())
    unused = (HEADER + "# bbox-lark: ignore[W003]\nu: hi\n").encode()
    assert codes(unused) == ["I010"]
    assert codes(unused, ignore=["I"]) == []


def test_the_file_s_path_and_allowed_secrets_reach_the_rules() -> None:
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    data = (HEADER + f"a: {key}\n").encode()
    assert "S001" in codes(data)
    assert "S001" not in codes(data, allowed_secrets=[key])
    checker = Checker(path=Path("x.bbox"), blobs=Path("blobs"))
    list(run(checker, iter_records(io.BytesIO(data))))
    assert checker.context is not None
    assert (checker.context.path, checker.context.blobs) == (Path("x.bbox"), Path("blobs"))
    assert checker.context.allowed_secrets == frozenset()


def test_nodes_are_read_as_their_records() -> None:
    data = (ROOT / "corpus" / "invalid" / "E012-unterminated-quote.bbox").read_bytes()
    by_records = found(data)
    by_nodes = list(run(Checker(), iter_nodes(io.BytesIO(data), attach=False)))  # type: ignore[call-arg]
    assert by_nodes == by_records


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_streaming_gives_the_whole_file_s_findings_once_each(path: Path) -> None:
    data = path.read_bytes()
    whole = found(data)
    checker = Checker(stream=True)
    streamed = list(run(checker, iter_records(io.BytesIO(data))))
    assert sorted(streamed, key=lambda d: (d.line, d.col, d.code, d.message)) == sorted(
        whole, key=lambda d: (d.line, d.col, d.code, d.message)
    )


def test_streaming_takes_nothing_twice_and_sorts_each_batch() -> None:
    data = (HEADER + "tool: a\nu: b\ntool: c\n").encode()
    checker = Checker(stream=True)
    stream = iter_records(io.BytesIO(data))
    head = next(stream)
    checker.start(head)  # type: ignore[arg-type]
    assert checker.take() == []
    batches = []
    for record in stream:
        checker.record(record)  # type: ignore[arg-type]
        batches.append(checker.take())
    assert [[d.code for d in batch] for batch in batches] == [["W003"], [], ["W003"]]
    assert checker.take() == []
    rest = checker.finish()
    assert all(d.code != "W003" for d in rest)


def test_streaming_with_select_drops_the_rest() -> None:
    data = (HEADER + "tool: a\n").encode()
    assert [d.code for d in run(Checker(stream=True, select=["I"]), iter_records(io.BytesIO(data)))] == []
    assert [d.code for d in run(Checker(stream=True), iter_records(io.BytesIO(data)))] == ["W003"]


def test_a_streamed_unused_suppression_comes_at_the_end() -> None:
    data = (HEADER + "# bbox-lark: ignore[W003]\nu: hi\nu: later\n").encode()
    streamed = list(run(Checker(stream=True), iter_records(io.BytesIO(data))))
    assert [d.code for d in streamed] == ["I010"]


def test_a_finish_sorts_what_rules_report_at_the_end() -> None:
    data = (ROOT / "corpus" / "invalid" / "I002-start-without-end.bbox").read_bytes()
    whole = found(data)
    assert "I002" in [d.code for d in whole]
    assert whole == sorted(whole, key=lambda d: (d.line, d.col, d.code))
    streamed = list(run(Checker(stream=True), iter_records(io.BytesIO(data))))
    assert "I002" in [d.code for d in streamed]


def _batches(body: str, stream: bool) -> tuple[list[list[tuple[str, int]]], list[tuple[str, int]]]:
    checker = Checker(stream=stream)
    records = iter_records(io.BytesIO((HEADER + body).encode()))
    checker.start(next(records))  # type: ignore[arg-type]
    batches = []
    for record in records:
        checker.record(record)  # type: ignore[arg-type]
        if stream:
            batches.append([(d.code, d.line) for d in checker.take()])
    return batches, [(d.code, d.line) for d in checker.finish()]


def test_a_checker_is_whole_file_unless_told() -> None:
    assert Checker().stream is False and Checker(stream=True).stream is True
    checker = Checker()
    checker.start(next(iter_records(io.BytesIO(HEADER.encode()))))  # type: ignore[arg-type]
    with pytest.raises(AssertionError):
        checker.take()  # taking is for a streaming run


def test_an_unreadable_suppression_is_given_at_its_line_when_streaming() -> None:
    body = "u: a\n# bbox-lark: ignore\nu: b\n"
    assert _batches(body, stream=False) == ([], [("I011", 8)])
    assert _batches(body, stream=True) == ([[], [("I011", 8)], []], [])


def test_an_ignore_file_suppression_streamed_applies_from_its_line_on() -> None:
    body = "tool: a\n# bbox-lark: ignore-file[W003]\ntool: b\n"
    assert _batches(body, stream=False) == ([], [])
    assert _batches(body, stream=True) == ([[("W003", 7)], [], []], [])


def test_a_node_is_checked_as_its_record() -> None:
    import bbox_lark

    data = (ROOT / "corpus" / "invalid" / "E012-unterminated-quote.bbox").read_bytes()
    document = bbox_lark.parse(data)
    checker = Checker()
    checker.start(next(iter_records(io.BytesIO(data))))  # type: ignore[arg-type]
    for node in document.lines:
        checker.node(node)
    assert checker.finish() == found(data)
