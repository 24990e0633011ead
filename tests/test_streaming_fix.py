"""``fix`` and ``redact`` as streams (issue 26.4): the streamed fixers give the bytes, counts,
notes and findings of the whole-document path (a line fixer's ``edits(document)``, the
``redact`` text fixer over the whole text), and ``fix --output``/``--write`` write what
``apply_fixes`` gives."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pytest
from conftest import CorpusFile, corpus_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbox_lark.fix import FIXERS, Fixer, FixResult, TextFixer, apply_fixes
from bbox_lark.secrets.redaction import redact
from bbox_lark.syntax.nodes import Document
from bbox_lark.syntax.source import encode

CORPUS = [*corpus_files("valid"), *corpus_files("invalid"), *corpus_files("hostile")]
HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
KEY = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


class _Whole(Fixer):
    """A built-in fixer run the whole-document way (a plain :class:`Fixer` is not streamed)."""

    def __init__(self, inner: Fixer) -> None:
        self.inner = inner
        self.name = inner.name
        self.resolves = inner.resolves

    def edits(self, document: Document) -> FixResult:
        return self.inner.edits(document)


class _WholeText(TextFixer):
    """``redact`` as the text fixer it was: the whole text at once."""

    name = "redact"
    resolves = frozenset({"S001", "S002"})

    def rewrite(
        self, text: str, path: Path | None, *, allowed_secrets: Collection[str] = ()
    ) -> tuple[str, FixResult]:
        return FIXERS["redact"].rewrite(text, path, allowed_secrets=allowed_secrets)  # type: ignore[attr-defined]


def _whole_text_redact(text: str) -> str:
    """What ``redact`` wrote before it read a part at a time: the secrets of the whole text."""
    from bbox_lark.secrets.redaction import _keep_count_true, _replace, text_parts
    from bbox_lark.secrets.scanner import find_secrets

    found = find_secrets(text)
    if not found:
        return text
    return _keep_count_true(_replace(text, found, len(next(text_parts(text)).text)))


def _whole(name: str) -> Fixer:
    return _WholeText() if name == "redact" else _Whole(FIXERS[name])


def _agree(data: str | bytes, names: list[str]) -> None:
    streamed = apply_fixes(data, [FIXERS[name] for name in names], allowed_secrets=())
    whole = apply_fixes(data, [_whole(name) for name in names], allowed_secrets=())
    assert streamed.new_text == whole.new_text
    assert streamed.changes == whole.changes
    assert streamed.notes == whole.notes
    assert streamed.document.diagnostics == whole.document.diagnostics
    assert streamed.resolved == whole.resolved
    assert streamed.diff == whole.diff


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.id)
def test_streamed_fixers_agree_with_the_whole_document(case: CorpusFile) -> None:
    data = case.path.read_bytes()
    _agree(data, list(FIXERS))
    text = data.decode("utf-8", "surrogateescape")
    assert redact(text).text == _whole_text_redact(text)


@pytest.mark.parametrize(
    "text",
    [
        HEAD + f"a: one step=5 -> x\n# metrics step=5 cost=1\nu: key {KEY}\n# redactions=7\n"
        "t:x a -> [ok] step=9\n",
        HEAD + f"u: a key\n  {KEY[:20]}\n  {KEY[20:]}\n\na: next\n",
        HEAD + "u: -----BEGIN RSA PRIVATE KEY-----\n"
        "  MIIEFAKEkeyFORtestsONLYnotAREALkey0123456789abcdefFAKE\n"
        "  -----END RSA PRIVATE KEY-----\na: after\n",
        f"\ufeffu: {KEY}\r\na: two\r\n",
        f"u: {KEY}",
        f"---\nformat: bbox/1\nid: s\ntoken: {KEY}\n---\n",
        f"---\nformat: bbox/1\nid: s\ntoken: {KEY}\n---",
        f"  orphan {KEY}\nu: hi\n# session end redactions=0 steps=1\n",
    ],
)
@pytest.mark.parametrize("names", [["redact"], ["arrows", "renumber-steps", "redact"]])
def test_streamed_fixers_agree_on_the_hard_cases(text: str, names: list[str]) -> None:
    _agree(text, names)
    assert redact(text).text == _whole_text_redact(text)
    assert apply_fixes(text, [FIXERS["redact"]], allowed_secrets=()).new_text.count(KEY) == 0 or (
        "redact" not in names
    )


_LINES = st.sampled_from(
    [
        "u: hi",
        f"u: the key {KEY}",
        f"  {KEY[:18]}",
        f"  {KEY[18:]}",
        "",
        "t:read a -> [ok] step=3",
        "a: one step=2",
        "# metrics step=3 cost=1",
        "# redactions=4",
        "a: [redacted:github_token] seen",
        "  more text",
        "@end",
        "-----BEGIN RSA PRIVATE KEY-----",
        "  MIIEFAKEkeyFORtestsONLYnotAREALkey0123456789abcdefFAKE",
        "  -----END RSA PRIVATE KEY-----",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LINES, max_size=12), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_streamed_fixers_agree_on_generated_logs(lines: list[str], eol: str, end: bool) -> None:
    text = HEAD + eol.join(lines) + (eol if end and lines else "")
    _agree(text, list(FIXERS))
    _agree(text, ["redact"])
    assert redact(text).text == apply_fixes(text, [FIXERS["redact"]], allowed_secrets=()).new_text
    assert redact(text).text == _whole_text_redact(text)


@pytest.mark.parametrize("case", CORPUS[::7], ids=lambda c: c.id)
def test_fix_output_writes_what_apply_fixes_gives(case: CorpusFile, tmp_path: Path) -> None:
    from bbox_lark.files.config import Settings
    from bbox_lark.files.discover import FoundInput
    from bbox_lark.fix.rewrite import fix_inputs

    copy = tmp_path / case.path.name
    copy.write_bytes(case.path.read_bytes())
    out = tmp_path / "out.bbox"
    fixers = list(FIXERS.values())
    expected = apply_fixes(copy.read_bytes(), fixers, path=copy, allowed_secrets=())
    [done] = fix_inputs([FoundInput(str(copy), Settings())], fixers, output=out, force=True)
    assert done.outcome is not None and done.outcome.changes == expected.changes
    assert done.outcome.notes == expected.notes
    assert out.read_bytes() == encode(expected.new_text)


# -- many files through the one runner: --jobs 2 gives what --jobs 1 gives ---------------------


def _folder(root: Path) -> Path:
    folder = root / "logs"
    folder.mkdir(parents=True)
    for case in [*corpus_files("valid"), *corpus_files("invalid")]:
        (folder / f"{case.folder}-{case.path.name}").write_bytes(case.path.read_bytes())
    (folder / "secrets.bbox").write_text(HEAD + f"u: the key {KEY}\na: next -> x\n", encoding="utf-8")
    return folder


def _tree(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.mark.parametrize(
    "arguments",
    [
        ["fmt", "--check"],
        ["fmt"],
        ["fix", "--arrows", "--renumber-steps"],
        ["fix", "--arrows", "--renumber-steps", "--redact", "--write", "--force"],
        ["redact", "--write"],
        ["redact", "--list"],
    ],
    ids=lambda a: " ".join(a),
)
def test_rewriting_many_files_with_jobs_2_is_jobs_1(
    arguments: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from bbox_lark.cli import app
    from bbox_lark.files import runner as files_runner

    monkeypatch.setattr(files_runner, "PARALLEL_MIN_BYTES", 0)  # even a small run uses workers
    results = []
    for jobs in ("1", "2"):
        folder = _folder(tmp_path / jobs)
        done = CliRunner().invoke(app, [*arguments, "--isolated", "--jobs", jobs, str(folder)])
        shown = (done.stdout + done.stderr).replace(str(folder), "DIR")
        results.append((done.exit_code, shown, _tree(folder)))
    assert results[0] == results[1]
    assert results[0][1].count("\n") > 10


def test_fix_inputs_with_jobs_2_are_those_of_jobs_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The results come back from worker processes (pickled): without the texts, equal.
    from bbox_lark.files import runner as files_runner
    from bbox_lark.files.config import Settings
    from bbox_lark.files.discover import FoundInput
    from bbox_lark.fix import rewrite

    monkeypatch.setattr(files_runner, "PARALLEL_MIN_BYTES", 0)
    folder = _folder(tmp_path)
    inputs = [FoundInput(str(path), Settings()) for path in sorted(folder.iterdir())]
    fixers = list(FIXERS.values())
    many = list(rewrite.fix_inputs(inputs, fixers, jobs=2))
    one = list(rewrite.fix_inputs(inputs, fixers, jobs=1))
    assert [(d.item.path, d.outcome, d.exit_code) for d in many] == [
        (d.item.path, d.outcome, d.exit_code) for d in one
    ]
    assert any(d.outcome is not None and d.outcome.diff for d in many)
