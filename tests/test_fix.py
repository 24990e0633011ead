"""``bbox-lark fix`` and the fixer framework (issue 3, DECISIONS §10 "Steps renumbering").

Table tests for each fixer's rules, byte-for-byte checks of everything a fix must not touch,
the framework's refusals, the command line (dry run, ``--write``, ``--output``, refusal on
errors, ``--force``, usage errors) and the atomic write.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner, Result

import bbox_lark
from bbox_lark.cli import app
from bbox_lark.files.atomic import write_atomic
from bbox_lark.fix import FIXERS, Edit, Fixer, FixError, FixResult, Note, apply_fixes, unified_diff
from bbox_lark.syntax.nodes import Document
from bbox_lark.syntax.source import encode

REPO = Path(__file__).resolve().parent.parent
FIX_MD = REPO / "docs" / "fix.md"
STEPS_EXAMPLE = REPO / "docs" / "examples" / "steps.bbox"

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
BODY_START = HEADER.count("\n") + 1
RENUMBER = [FIXERS["renumber-steps"]]
ARROWS = [FIXERS["arrows"]]

runner = CliRunner()


def body(text: str) -> str:
    return HEADER + text


def renumber(text: str) -> str:
    return apply_fixes(text, RENUMBER).new_text


def steps_of(text: str) -> list[int | None]:
    return [event.step for event in bbox_lark.parse(text).events if event.kind != "comment"]


def codes(text: str | bytes) -> set[str]:
    return {d.code for d in bbox_lark.check(text)}


# -- --renumber-steps: the ranking ------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ([5, 5, 9, 7], [1, 1, 2, 3]),  # dense rank, first appearance, equal steps stay equal
        ([1, 2, 3], [1, 2, 3]),
        ([3, 1, 2], [1, 2, 3]),
        ([0, 0, 4, 0], [1, 1, 2, 1]),
        ([10, 20, 10, 30, 20], [1, 2, 1, 3, 2]),
        ([7], [1]),
    ],
)
def test_dense_rank_in_order_of_first_appearance(before: list[int], after: list[int]) -> None:
    text = body("".join(f"a: line {n} step={step}\n" for n, step in enumerate(before)))
    outcome = apply_fixes(text, RENUMBER)
    assert steps_of(outcome.new_text) == after
    assert outcome.changes == {"renumber-steps": sum(1 for b, a in zip(before, after, strict=True) if b != a)}


def test_values_compare_as_integers() -> None:
    text = body("a: one step=05\na: two step=5\na: three step=08\n")
    assert renumber(text) == body("a: one step=1\na: two step=1\na: three step=2\n")


def test_lifecycle_lines_and_steps_after_the_arrow_take_part() -> None:
    text = body("@start step=4\nt:read a.rs → [1 lines] step=9\n@end step=12\n")
    assert renumber(text) == body("@start step=1\nt:read a.rs → [1 lines] step=2\n@end step=3\n")


def test_a_second_step_on_a_line_is_remapped_by_the_same_map() -> None:
    # The line's step is its first step= (as for Event.step); a second one follows the map.
    text = body("a: one step=5\nt:x step=9 → [ok] step=5\nt:y step=12 → [ok] step=77\n")
    outcome = apply_fixes(text, RENUMBER)
    assert outcome.new_text == body("a: one step=1\nt:x step=2 → [ok] step=1\nt:y step=3 → [ok] step=77\n")
    assert [(n.line, n.message) for n in outcome.notes] == [
        (BODY_START + 2, "step=77 refers to a step no event has; left unchanged")
    ]


# -- --renumber-steps: references -------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("# metrics step=9 prompt_tokens=5", "# metrics step=2 prompt_tokens=5"),
        ("# anchor step=9 note=x", "# anchor step=2 note=x"),
        ("# metrics prompt_tokens=5 step=9", "# metrics prompt_tokens=5 step=2"),
        ("o: id=c1 → [ok] # metrics step=9 cost=1", "o: id=c1 → [ok] # metrics step=2 cost=1"),
    ],
)
def test_references_follow_their_event(reference: str, expected: str) -> None:
    text = body(f"a: one step=5\na: two step=9\n{reference}\n")
    outcome = apply_fixes(text, RENUMBER)
    assert outcome.new_text == body(f"a: one step=1\na: two step=2\n{expected}\n")
    assert outcome.changes["renumber-steps"] == 3
    assert outcome.notes == ()


def test_references_before_their_event_are_remapped_too() -> None:
    text = body("# anchor step=9\na: one step=5\na: two step=9\n")
    assert renumber(text) == body("# anchor step=2\na: one step=1\na: two step=2\n")


def test_inline_metrics_step_follows_its_own_value_not_the_line() -> None:
    text = body("a: one step=5\na: two step=9 # metrics step=5 cost=1\n")
    assert renumber(text) == body("a: one step=1\na: two step=2 # metrics step=1 cost=1\n")


def test_a_dangling_reference_is_noted_and_left_unchanged() -> None:
    text = body("a: one step=5\n# metrics step=6 cost=1\n# anchor step=0\n")
    outcome = apply_fixes(text, RENUMBER)
    assert outcome.new_text == body("a: one step=1\n# metrics step=6 cost=1\n# anchor step=0\n")
    assert [(n.line, n.col, n.message, n.fixer) for n in outcome.notes] == [
        (BODY_START + 1, 16, "step=6 refers to a step no event has; left unchanged", "renumber-steps"),
        (BODY_START + 2, 15, "step=0 refers to a step no event has; left unchanged", "renumber-steps"),
    ]
    assert outcome.changes["renumber-steps"] == 1


# -- --renumber-steps: what is never touched ---------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "a: bounded max_step=7 steps=7 step_size=7 xstep=7",
        'a: quoted "step=7" text',
        "t:read note=\"at step=7\" 'step=7' → [ok]",
        "# step=7 is a plain comment",
        "# notes: step=7",
        "# budget: step=7",
        "tool: step=7 (an unknown line)",
    ],
)
def test_other_keys_quoted_text_and_other_comments_are_never_touched(line: str) -> None:
    text = body(f"a: first step=7\n{line}\na: last step=9\n")
    outcome = apply_fixes(text, RENUMBER)
    assert outcome.new_text == body(f"a: first step=1\n{line}\na: last step=2\n")
    assert outcome.changes["renumber-steps"] == 2


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('t:x step="9" → [ok]', 'step="9" is quoted; left unchanged'),
        ("t:x step=abc → [ok]", "step=abc is not a non-negative integer; left unchanged"),
        ("t:x step=-3 → [ok]", "step=-3 is not a non-negative integer; left unchanged"),
        ('# metrics step="9" cost=1', 'step="9" is quoted; left unchanged'),
        ("# anchor step=nine", "step=nine is not a non-negative integer; left unchanged"),
    ],
)
def test_quoted_and_malformed_values_are_noted_and_left(line: str, why: str) -> None:
    text = body(f"a: first step=9\n{line}\na: last step=12\n")
    outcome = apply_fixes(text, RENUMBER)
    assert outcome.new_text == body(f"a: first step=1\n{line}\na: last step=2\n")
    assert [(n.line, n.message) for n in outcome.notes] == [(BODY_START + 1, why)]


def test_a_dangling_reference_that_now_matches_a_new_number_says_so() -> None:
    text = body("a: one step=5\na: two step=9\n# metrics step=2 cost=1\n")
    outcome = apply_fixes(text, RENUMBER)
    assert outcome.new_text == body("a: one step=1\na: two step=2\n# metrics step=2 cost=1\n")
    assert [n.message for n in outcome.notes] == [
        "step=2 refers to a step no event has; left unchanged, but an event is now numbered 2"
    ]


def test_a_quoted_step_takes_no_part_in_the_ranking() -> None:
    text = body('a: one step="4"\na: two step=8\n# metrics step=4\n')
    outcome = apply_fixes(text, RENUMBER)
    assert outcome.new_text == body('a: one step="4"\na: two step=1\n# metrics step=4\n')
    assert [n.message for n in outcome.notes] == [
        'step="4" is quoted; left unchanged',
        "step=4 refers to a step no event has; left unchanged",
    ]


def test_the_header_is_never_touched() -> None:
    header = (
        "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nstep: 5\n"
        "extra.note: step=5 and step=9\n---\n"
    )
    text = header + "a: one step=5\na: two step=9\n"
    assert renumber(text) == header + "a: one step=1\na: two step=2\n"


def test_continuation_lines_are_opaque() -> None:
    text = body("t:read a.rs step=5 → [2 lines]\n  step=5 inside the output\n\tstep=9\na: two step=9\n")
    expected = body("t:read a.rs step=1 → [2 lines]\n  step=5 inside the output\n\tstep=9\na: two step=2\n")
    assert renumber(text) == expected


def test_no_steps_at_all_changes_nothing() -> None:
    text = body("a: hello\n# metrics step=3 cost=1\n")
    outcome = apply_fixes(text, RENUMBER)
    assert outcome.new_text == text
    assert outcome.diff == ""
    assert not outcome.changed
    assert [n.line for n in outcome.notes] == [BODY_START + 1]


# -- byte for byte ---------------------------------------------------------------------


MESSY = "a: one step=5\n\n  kept  \n# metrics step=5 x=1\na: two step=9  \na: three step=9"


@pytest.mark.parametrize("bom", [False, True], ids=["no-bom", "bom"])
@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("final", [True, False], ids=["final-newline", "no-final-newline"])
def test_line_endings_bom_and_final_newline_are_kept(bom: bool, eol: str, final: bool) -> None:
    def build(steps: tuple[str, str, str]) -> bytes:
        text = MESSY.replace("step=5", "step=" + steps[0]).replace("step=9", "step=" + steps[1])
        text = ("\ufeff" if bom else "") + body(text) + ("\n" if final else "")
        return text.replace("\n", eol).encode()

    data = build(("5", "9", ""))
    outcome = apply_fixes(data, RENUMBER)
    assert encode(outcome.new_text) == build(("1", "2", ""))


def test_invalid_bytes_survive() -> None:
    data = body("a: caf\xe9 step=5\n").encode("latin-1") + b"a: \xff\xfe step=9\n"
    outcome = apply_fixes(data, RENUMBER)
    assert encode(outcome.new_text) == data.replace(b"step=5", b"step=1").replace(b"step=9", b"step=2")


def test_no_header_and_a_bom_on_the_first_body_line() -> None:
    data = "\ufeffa: one step=5 -> x\nt:x a -> [ok] step=9\n".encode()
    outcome = apply_fixes(data, [*RENUMBER, *ARROWS])
    assert encode(outcome.new_text) == "\ufeffa: one step=1 -> x\nt:x a → [ok] step=2\n".encode()


# -- idempotence and the result is clean --------------------------------------------------


def test_the_example_is_renumbered_cleanly_and_idempotently() -> None:
    data = STEPS_EXAMPLE.read_bytes()
    assert {"W004", "I007"} <= codes(data)
    first = apply_fixes(data, list(FIXERS.values()))
    assert first.changes == {"renumber-steps": 8, "arrows": 1, "redact": 0}
    assert not {"W004", "I007", "W013"} & codes(first.new_text)
    second = apply_fixes(first.new_text, list(FIXERS.values()))
    assert second.new_text == first.new_text
    assert second.changes == {"renumber-steps": 0, "arrows": 0, "redact": 0}
    assert second.diff == ""


def test_idempotent_on_the_demo_and_the_corpus() -> None:
    files = [REPO / "examples" / "demo.bbox", *sorted((REPO / "corpus").rglob("*.bbox"))]
    assert len(files) > 10
    for path in files:
        data = path.read_bytes()
        once = apply_fixes(data, list(FIXERS.values())).new_text
        assert apply_fixes(once, list(FIXERS.values())).new_text == once, path
        skipped = [n for n in apply_fixes(data, RENUMBER).notes if "refers to" not in n.message]
        if not skipped:  # every step was renumbered: no gaps are left
            assert "I007" not in codes(once), path


# -- --arrows ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("t:read a.rs -> [3 lines]", "t:read a.rs → [3 lines]"),
        ("t:read a.rs   ->   [3 lines]", "t:read a.rs   →   [3 lines]"),
        ("t:read a.rs\t->\t[3 lines]", "t:read a.rs\t→\t[3 lines]"),
        ("t!:test id=c1 ->", "t!:test id=c1 →"),
        ("@checkpoint hour=4 -> [ok]", "@checkpoint hour=4 → [ok]"),
        ("o: id=c1 -> [ok] then -> more", "o: id=c1 → [ok] then -> more"),
        ('t:x "a -> b" -> [ok]', 't:x "a -> b" → [ok]'),
    ],
)
def test_ascii_result_arrows_become_unicode(line: str, expected: str) -> None:
    outcome = apply_fixes(body(line + "\n"), ARROWS)
    assert outcome.new_text == body(expected + "\n")
    assert outcome.changes == {"arrows": 1}
    assert "W013" not in codes(outcome.new_text)


@pytest.mark.parametrize(
    "line",
    [
        "a: first a -> then b",
        "u: map x -> y please",
        "th: a -> b",
        "t:x a->b → [ok]",
        't:x "a -> b"',
        "# note: a -> b",
        "t:read a.rs → [ok] -> x",
    ],
)
def test_ascii_arrows_that_are_not_result_arrows_stay(line: str) -> None:
    text = body(line + "\n  t:x -> [ok] (continuation)\n")
    outcome = apply_fixes(text, ARROWS)
    assert outcome.new_text == text
    assert outcome.changes == {"arrows": 0}


# -- the framework ---------------------------------------------------------------------


class _Fixed(Fixer):
    """A test fixer that proposes the edits it is given."""

    name = "test-fixed"
    description = "Proposes fixed edits."

    def __init__(self, *edits: Edit) -> None:
        self._edits = edits

    def edits(self, document: Document) -> FixResult:
        return FixResult(self._edits, len(self._edits), (Note(1, 1, "hello"),))


LINE = BODY_START  # "a: hello world"


@pytest.mark.parametrize(
    "edits",
    [
        (Edit(LINE, 4, 9, "x"), Edit(LINE, 8, 10, "y")),
        (Edit(LINE, 4, 9, "x"), Edit(LINE, 4, 4, "y")),
        (Edit(LINE, 4, 4, "x"), Edit(LINE, 4, 4, "y")),
    ],
)
def test_overlapping_edits_are_refused(edits: tuple[Edit, ...]) -> None:
    with pytest.raises(FixError, match="overlap"):
        apply_fixes(body("a: hello world\n"), [_Fixed(*edits)])


def test_edits_across_fixers_are_checked_together() -> None:
    with pytest.raises(FixError, match="overlap"):
        apply_fixes(body("a: hello world\n"), [_Fixed(Edit(LINE, 4, 9, "x")), _Fixed(Edit(LINE, 5, 6, "y"))])


def test_adjacent_edits_and_insertions_apply() -> None:
    fixer = _Fixed(Edit(LINE, 4, 9, "HELLO"), Edit(LINE, 9, 10, "_"), Edit(LINE, 15, 15, "!"))
    outcome = apply_fixes(body("a: hello world\n"), [fixer])
    assert outcome.new_text == body("a: HELLO_world!\n")
    assert outcome.notes == (Note(1, 1, "hello", "test-fixed"),)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (Edit(LINE, 0, 2, "x"), "out of range"),
        (Edit(LINE, 10, 20, "x"), "out of range"),
        (Edit(LINE, 5, 4, "x"), "out of range"),
        (Edit(2, 1, 2, "x"), "only to body lines"),  # a header line
        (Edit(LINE + 1, 1, 2, "x"), "only to body lines"),  # a continuation
        (Edit(LINE + 2, 1, 1, "x"), "only to body lines"),  # a blank line
        (Edit(LINE + 9, 1, 1, "x"), "only to body lines"),  # no such line
        (Edit(LINE, 1, 2, "u"), "kind of line"),  # a: becomes u:
        (Edit(LINE, 1, 1, "# "), "kind of line"),  # an event becomes a comment
    ],
)
def test_bad_edits_are_refused(edit: Edit, message: str) -> None:
    with pytest.raises(FixError, match=message):
        apply_fixes(body("a: hello\n  more\n\n"), [_Fixed(edit)])


def test_diff_has_labels_context_and_the_no_newline_marker() -> None:
    old = body("a: one step=5\na: two step=9")
    diff = apply_fixes(old, RENUMBER, label="dir/log.bbox").diff
    assert diff.startswith("--- a/dir/log.bbox\n+++ b/dir/log.bbox\n@@ -4,5 +4,5 @@\n repo_sha: 215db51\n")
    assert diff.endswith(
        "-a: one step=5\n-a: two step=9\n\\ No newline at end of file\n"
        "+a: one step=1\n+a: two step=2\n\\ No newline at end of file\n"
    )
    assert unified_diff(old, old, "x") == ""


def test_diff_splits_lines_only_at_newlines() -> None:
    old = "a: one\x0btwo\u2028three\rfour step=5\n"
    diff = unified_diff(old, old.replace("5", "1"), "x")
    assert diff.count("\n") == 5  # two labels, one hunk header, one removed, one added


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs the patch tool")
@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_diff_applies_with_patch(tmp_path: Path, eol: str) -> None:
    old = STEPS_EXAMPLE.read_text(encoding="utf-8").replace("\n", eol)
    (tmp_path / "log.bbox").write_bytes(old.encode())
    outcome = apply_fixes(old, list(FIXERS.values()), label="log.bbox")
    (tmp_path / "fix.diff").write_bytes(encode(outcome.diff))
    subprocess.run(["patch", "-s", "-p1", "-i", "fix.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / "log.bbox").read_bytes() == encode(outcome.new_text)


# -- the registry and its documentation ---------------------------------------------------


def test_every_fixer_is_registered_under_its_name_and_documented() -> None:
    text = FIX_MD.read_text(encoding="utf-8")
    assert list(FIXERS) == ["renumber-steps", "arrows", "redact"]
    for name, fixer in FIXERS.items():
        assert fixer.name == name
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", name)
        assert fixer.description.endswith(".")
        assert f"## `--{name}`" in text, f"docs/fix.md has no section for --{name}"
        assert f"--{name}" in run(["fix", "--help"]).output


def test_the_facade_exports_apply_fixes() -> None:
    assert bbox_lark.apply_fixes is apply_fixes


# -- the command line --------------------------------------------------------------------


def run(args: list[str], stdin: bytes | None = None) -> Result:
    result = runner.invoke(app, args, input=stdin)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "log.bbox"
    shutil.copyfile(STEPS_EXAMPLE, path)
    return path


#: A file with an error (E012: unterminated quote in a call) and steps to renumber.
BROKEN = body('a: one step=5\nt:grep "TODO src step=9 → [1 matches]\na: two step=9\n')


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    path = tmp_path / "broken.bbox"
    path.write_text(BROKEN, encoding="utf-8")
    return path


def test_dry_run_prints_the_diff_and_the_counts_and_writes_nothing(log: Path) -> None:
    before = log.read_bytes()
    result = run(["fix", str(log), "--renumber-steps", "--arrows"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"--- a/{log}\n+++ b/{log}\n")
    assert result.stdout == apply_fixes(before, list(FIXERS.values()), label=str(log)).diff
    assert "✓ Renumbered 8 step references" in result.stderr
    assert "✓ Rewrote 1 ASCII arrow as →" in result.stderr
    assert f"{log}:14:16: note step=99 refers to a step no event has; left unchanged" in result.stderr
    assert "Dry run: nothing written" in result.stderr
    assert log.read_bytes() == before
    assert sorted(p.name for p in log.parent.iterdir()) == ["log.bbox"]


#: Every rule of both fixers in one file, for a reviewed snapshot of the diff and the notes.
KITCHEN_SINK = (
    "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nstep: 7\n---\n"
    '# anchor step=12 note="before its event"\n'
    "@start step=7\n"
    'u: plan it -> then do it step=12 max_step=40 "step=7"\n'
    "t:read a.rs step=12 -> [3 lines] step=7 # metrics step=12 cost=0.1\n"
    "  t:read b.rs step=12 -> [continuation, opaque]\n"
    "t:grep x step=20   ->   [2 matches]\n"
    "# metrics step=20 prompt_tokens=5\n"
    "# metrics step=3 prompt_tokens=5\n"
    "# step=20 is a plain comment\n"
    't:curl step="21" → [ok]\n'
    "t:curl step=abc → [ok]\n"
    "tool: step=20 -> unknown line\n"
    "@end step=21\n"
)


def test_kitchen_sink(snapshot: SnapshotAssertion) -> None:
    outcome = apply_fixes(KITCHEN_SINK, list(FIXERS.values()), label="sink.bbox")
    notes = "".join(note.format("sink.bbox") + f" [{note.fixer}]\n" for note in outcome.notes)
    assert f"{outcome.diff}{notes}{outcome.changes}\n" == snapshot
    assert apply_fixes(outcome.new_text, list(FIXERS.values())).new_text == outcome.new_text


def test_dry_run_with_nothing_to_change(log: Path) -> None:
    run(["fix", str(log), "--renumber-steps", "--arrows", "--write"])
    result = run(["fix", str(log), "--renumber-steps"])
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "✓ Renumbered 0 step references" in result.stderr
    assert "Dry run" not in result.stderr


def test_write_rewrites_the_file_in_place(log: Path) -> None:
    before = log.read_bytes()
    log.chmod(0o640)
    result = run(["fix", str(log), "--renumber-steps", "--write"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert f"wrote {log}" in result.stderr
    assert log.read_bytes() == encode(apply_fixes(before, RENUMBER).new_text)
    assert log.read_bytes() != before
    assert stat.S_IMODE(log.stat().st_mode) == 0o640
    assert sorted(p.name for p in log.parent.iterdir()) == ["log.bbox"]


def test_write_with_nothing_to_change_leaves_the_file_alone(log: Path) -> None:
    run(["fix", str(log), "--renumber-steps", "--write"])
    inode = log.stat().st_ino
    result = run(["fix", str(log), "--renumber-steps", "--write"])
    assert result.exit_code == 0
    assert "nothing to change; not rewritten" in result.stderr
    assert log.stat().st_ino == inode


def test_output_writes_elsewhere_and_keeps_the_input(log: Path, tmp_path: Path) -> None:
    before = log.read_bytes()
    target = tmp_path / "fixed.bbox"
    result = run(["fix", str(log), "--arrows", "--output", str(target)])
    assert result.exit_code == 0, result.output
    assert log.read_bytes() == before
    assert target.read_bytes() == before.replace(b" -> ", " → ".encode())


def test_stdin_with_output(tmp_path: Path) -> None:
    target = tmp_path / "out.bbox"
    data = STEPS_EXAMPLE.read_bytes()
    result = run(["fix", "-", "--renumber-steps", "-o", str(target)], stdin=data)
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == encode(apply_fixes(data, RENUMBER).new_text)


def test_stdin_dry_run_labels_the_diff_stdin() -> None:
    result = run(["fix", "-", "--renumber-steps"], stdin=STEPS_EXAMPLE.read_bytes())
    assert result.exit_code == 0
    assert result.stdout.startswith("--- a/<stdin>\n+++ b/<stdin>\n")


@pytest.mark.parametrize("mode", [["--write"], ["--output", "OUT"]], ids=["write", "output"])
def test_writes_refuse_an_input_with_errors(broken: Path, tmp_path: Path, mode: list[str]) -> None:
    out = tmp_path / "out.bbox"
    args = [str(out) if word == "OUT" else word for word in mode]
    result = run(["fix", str(broken), "--renumber-steps", *args])
    assert result.exit_code == 1
    assert f"{broken}:8:8: E012 unterminated quoted string in the call part" in result.stderr
    assert result.stdout == ""
    assert "1 error(s); not written" in result.stderr
    assert broken.read_text(encoding="utf-8") == BROKEN
    assert not out.exists()


@pytest.mark.parametrize("mode", [["--write"], ["--output", "OUT"]], ids=["write", "output"])
def test_force_writes_an_input_with_errors(broken: Path, tmp_path: Path, mode: list[str]) -> None:
    out = tmp_path / "out.bbox"
    args = [str(out) if word == "OUT" else word for word in mode]
    result = run(["fix", str(broken), "--renumber-steps", "--force", *args])
    assert result.exit_code == 0, result.output
    assert "written anyway (--force)" in result.stderr
    written = broken if mode == ["--write"] else out
    assert written.read_text(encoding="utf-8") == BROKEN.replace("=5", "=1").replace("=9", "=2")


def test_dry_run_of_an_input_with_errors_shows_the_diff_and_exits_1(broken: Path) -> None:
    result = run(["fix", str(broken), "--renumber-steps"])
    assert result.exit_code == 1
    assert "+a: two step=2" in result.stdout
    assert "1 error(s)" in result.stderr
    assert run(["fix", str(broken), "--renumber-steps", "--force"]).exit_code == 0
    assert broken.read_text(encoding="utf-8") == BROKEN


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fix", "LOG"], "choose at least one fixer: --renumber-steps, --arrows"),
        (["fix", "LOG", "--arrows", "--write", "-o", "x.bbox"], "--write and --output exclude each other"),
        (["fix", "-", "--arrows", "--write"], "with - (stdin) use --output PATH"),
        (["fix", "missing.bbox", "--arrows"], "missing.bbox: no such file or directory"),
        (["fix", "DIR/empty", "--arrows"], "no *.bbox, *.blackbox or *.rlog files in this directory"),
        (
            ["fix", "LOG", "LOG2", "--arrows", "-o", "x.bbox"],
            "--output writes one file, but 2 inputs were given",
        ),
        (["fix", "LOG", "--arrows", "-o", "DIR/no/such/dir/x.bbox"], "cannot write"),
        (["fix", "LOG", "--arrows", "-o", "DIR"], "cannot write"),
        (["fix", "LOG", "--bogus"], "No such option"),
    ],
)
def test_usage_errors_exit_2(log: Path, args: list[str], message: str) -> None:
    before = log.read_bytes()
    (log.parent / "empty").mkdir()
    second = log.parent / "empty" / "second.rlog"
    words = [
        w.replace("LOG2", str(second)).replace("LOG", str(log)).replace("DIR", str(log.parent)) for w in args
    ]
    result = run(words, stdin=b"")
    assert result.exit_code == 2
    assert message in result.output
    assert log.read_bytes() == before
    assert sorted(p.name for p in log.parent.iterdir()) == ["empty", "log.bbox"]
    assert list((log.parent / "empty").iterdir()) == []


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00\x01\x02", b"\xff\xfe\xfd", b"---\n", b"@", b't:"', b"  x", b"---\n- a\n---\n", b"\r\r\n"],
)
def test_no_traceback_for_any_input(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "in.bbox"
    path.write_bytes(data)
    for mode in ([], ["--write"], ["--write", "--force"], ["-o", str(tmp_path / "o.bbox")]):
        result = run(["fix", str(path), "--renumber-steps", "--arrows", *mode])
        assert result.exit_code in (0, 1), result.output
    assert path.read_bytes() == data  # nothing to fix in any of them


# -- atomic writes ---------------------------------------------------------------------


def test_write_atomic_keeps_the_mode_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_bytes(b"old")
    path.chmod(0o600)
    write_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["a.bbox"]


def test_write_atomic_gives_a_new_file_the_default_mode(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.bbox", b"data")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.bbox").stat().st_mode) == 0o644


def test_write_atomic_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.bbox"
    real.write_bytes(b"old")
    link = tmp_path / "link.bbox"
    link.symlink_to(real)
    write_atomic(link, b"new")
    assert link.is_symlink()
    assert real.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.bbox", "real.bbox"]


def _failing_replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    raise OSError(28, "No space left on device")


def test_a_failed_write_keeps_the_original_and_removes_the_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.bbox"
    path.write_bytes(b"old")
    monkeypatch.setattr(os, "replace", _failing_replace)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(path, b"new")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.bbox"]


def test_a_failed_write_through_the_cli(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = log.read_bytes()
    monkeypatch.setattr(os, "replace", _failing_replace)
    result = run(["fix", str(log), "--renumber-steps", "--write"])
    assert result.exit_code == 2
    assert "cannot write: No space left on device" in result.stderr
    assert log.read_bytes() == before
    assert sorted(p.name for p in log.parent.iterdir()) == ["log.bbox"]
