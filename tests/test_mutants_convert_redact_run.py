"""``redact`` on files in other formats, over many files (``bbox_lark.convert.redact_run``):
what is told of each file, where it is written, and the exit code. A key must never reach a
written file or a message whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bbox_lark.convert.redact_run import ForeignRedactRun, redact_foreign_paths
from bbox_lark.files.said import Said, Told

ROOT = Path(__file__).resolve().parent.parent
KEY = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def session(folder: Path, name: str, text: str) -> Path:
    record = {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2030-01-02T03:04:05Z"}
    path = folder / name
    path.write_text(
        json.dumps({**record, "message": {"role": "user", "content": text}}) + "\n", encoding="utf-8"
    )
    return path


def diffs() -> tuple[list[tuple[str, str, str]], object]:
    seen: list[tuple[str, str, str]] = []

    def diff(old: str, new: str, label: str) -> str:
        seen.append((old, new, label))
        return f"diff of {label}\n"

    return seen, diff


def test_a_file_with_a_key_is_shown_as_a_diff_by_default(tmp_path: Path) -> None:
    path = session(tmp_path, "s.jsonl", f"my key {KEY}")
    old = path.read_text(encoding="utf-8")
    seen, diff = diffs()
    run = redact_foreign_paths({str(path): "claude-code"}, diff=diff)  # type: ignore[arg-type]
    (told,) = list(run)
    assert isinstance(run, ForeignRedactRun) and run.exit_code == 0
    ((before, after, label),) = seen
    assert before == old and label == str(path) and KEY not in after and "[redacted:github_token]" in after
    assert told.diff == f"diff of {path}\n" and told.said == () and told.shown == str(path)
    col = old.index('"my key') + 1
    assert told.before == (
        Said(f"{path}:1:{col}: note redacted github_token ghp_…r8"),
        Said("redact: 1 secret(s) replaced (claude-code, in place)", "done"),
    )
    assert path.read_text(encoding="utf-8") == old  # a diff writes nothing
    assert all(KEY not in s.text for s in told.before)


def test_in_place_a_file_with_a_key_is_rewritten(tmp_path: Path) -> None:
    path = session(tmp_path, "s.jsonl", f"my key {KEY}")
    seen, diff = diffs()
    (told,) = list(redact_foreign_paths({str(path): "claude-code"}, write=True, diff=diff))  # type: ignore[arg-type]
    assert KEY not in path.read_text(encoding="utf-8") and seen == []
    assert told.said == (Said(f"wrote {path}"),) and told.diff == ""
    assert told.shown == str(path)
    assert told.before[-1] == Said("redact: 1 secret(s) replaced (claude-code, in place)", "done")


def test_in_place_a_file_without_a_key_is_left_alone(tmp_path: Path) -> None:
    path = session(tmp_path, "s.jsonl", "nothing secret")
    before = path.stat().st_mtime_ns
    _, diff = diffs()
    (told,) = list(redact_foreign_paths({str(path): "claude-code"}, write=True, diff=diff))  # type: ignore[arg-type]
    assert told == Told(
        str(path), before=(Said("redact: 0 secret(s) replaced (claude-code, in place)", "done"),)
    )
    assert path.stat().st_mtime_ns == before


def test_to_an_output_it_is_written_even_without_a_key(tmp_path: Path) -> None:
    path = session(tmp_path, "s.jsonl", "nothing secret")
    out = tmp_path / "out.jsonl"
    _, diff = diffs()
    (told,) = list(redact_foreign_paths({str(path): "claude-code"}, output=out, diff=diff))  # type: ignore[arg-type]
    assert out.read_bytes() == path.read_bytes()
    assert told.said == (Said(f"wrote {out}"),)


def test_in_place_wins_over_an_output(tmp_path: Path) -> None:
    path = session(tmp_path, "s.jsonl", f"my key {KEY}")
    out = tmp_path / "out.jsonl"
    _, diff = diffs()
    list(redact_foreign_paths({str(path): "claude-code"}, write=True, output=out, diff=diff))  # type: ignore[arg-type]
    assert KEY not in path.read_text(encoding="utf-8") and not out.exists()


def test_a_file_that_cannot_be_redacted_is_refused_and_the_rest_go_on(tmp_path: Path) -> None:
    lightbox = tmp_path / "events.jsonl"
    lightbox.write_text("{}\n", encoding="utf-8")
    missing = tmp_path / "missing.jsonl"
    good = session(tmp_path, "s.jsonl", f"my key {KEY}")
    _, diff = diffs()
    run = redact_foreign_paths(
        {str(lightbox): "lightbox", str(missing): "claude-code", str(good): "claude-code"},
        write=True,
        diff=diff,  # type: ignore[arg-type]
    )
    first, second, third = list(run)
    assert first.said[0].mark == "error" and first.said[0].text.startswith(f"{lightbox}: a Lightbox chain")
    assert first.said[0].text.endswith("; not redacted")
    assert second.said == (Said(f"{missing}: No such file or directory; not redacted", "error"),)
    assert [t.shown for t in (first, second, third)] == [str(lightbox), str(missing), str(good)]
    assert third.said == (Said(f"wrote {good}"),)
    assert run.exit_code == 1


def test_a_file_that_cannot_be_written_is_exit_2(tmp_path: Path) -> None:
    path = session(tmp_path, "s.jsonl", f"my key {KEY}")
    out = tmp_path / "missing" / "out.jsonl"
    _, diff = diffs()
    run = redact_foreign_paths({str(path): "claude-code"}, output=out, diff=diff)  # type: ignore[arg-type]
    (told,) = list(run)
    assert told.said == (Said(f"{out}: cannot write: No such file or directory", "error"),)
    assert told.shown == str(path)
    assert told.before[-1] == Said("redact: 1 secret(s) replaced (claude-code, in place)", "done")
    assert run.exit_code == 2


def test_the_worst_exit_code_stays(tmp_path: Path) -> None:
    path = session(tmp_path, "s.jsonl", f"my key {KEY}")
    missing = tmp_path / "missing.jsonl"
    _, diff = diffs()
    run = redact_foreign_paths(
        {str(path): "claude-code", str(missing): "claude-code"},
        output=tmp_path / "no" / "out.jsonl",
        diff=diff,  # type: ignore[arg-type]
    )
    list(run)
    assert run.exit_code == 2


def test_a_key_the_configuration_allows_is_left(tmp_path: Path) -> None:
    path = session(tmp_path, "s.jsonl", f"my key {KEY}")
    (tmp_path / "bbox-lark.toml").write_text(f'allowed-secrets = ["{KEY}"]\n', encoding="utf-8")
    _, diff = diffs()
    (told,) = list(redact_foreign_paths({str(path): "claude-code"}, write=True, diff=diff))  # type: ignore[arg-type]
    assert KEY in path.read_text(encoding="utf-8")
    assert told.before == (Said("redact: 0 secret(s) replaced (claude-code, in place)", "done"),)


@pytest.mark.parametrize("fmt", ["claude-code", "jsonl"])
def test_a_key_outside_any_string_value_refuses_the_file(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(f'{{"{KEY}": 1}}\n', encoding="utf-8")
    _, diff = diffs()
    run = redact_foreign_paths({str(path): fmt}, write=True, diff=diff)  # type: ignore[arg-type]
    (told,) = list(run)
    assert run.exit_code == 1 and told.said[0].mark == "error"
    assert KEY not in told.said[0].text and told.said[0].text.endswith("; not redacted")
    assert path.read_text(encoding="utf-8") == f'{{"{KEY}": 1}}\n'
