"""ATIF JSON Lines and ``continued_trajectory_ref`` chains (``bbox_lark/convert/atif/lines.py``):
what mutation testing showed no test pinned (docs/testing.md, "Mutation scores"). A chain's
merge feeds the numbers (its steps renumbered, its final metrics summed): each rule of the
merge has a test, as do the sniffing, the session addresses and the continuation's name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bbox_lark.convert.atif import lines
from bbox_lark.convert.atif.lines import (
    CONTINUED,
    address_input,
    chain_files,
    expand_sessions,
    is_lines,
    is_lines_file,
    line_input,
    merge_chain,
    session_address,
    sniff_lines,
    split_sessions,
    trajectory_lines,
)
from bbox_lark.convert.base import Input, RefusedInputError
from bbox_lark.files.config import Settings
from bbox_lark.files.discover import FoundInput

ONE = '{"schema_version": "ATIF-v1.7", "session_id": "a", "steps": []}'


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def _steps(*ids: Any) -> list[dict[str, Any]]:
    return [{"step_id": n, "source": "agent", "message": f"m{n}"} for n in ids]


# -- sniffing ---------------------------------------------------------------------------------


def test_a_first_line_holding_a_whole_atif_object_is_json_lines() -> None:
    assert sniff_lines(ONE + "\n" + ONE + "\n") == 4
    assert sniff_lines(ONE) == 4  # one line, no ending
    assert sniff_lines(ONE + "  \r\n") == 4
    assert sniff_lines("\ufeff \t" + ONE + "\n") == 4
    assert sniff_lines('{"schema_version":"ATIF-v1.7",\n"steps": []}\n') == 0  # not whole
    assert sniff_lines('{"schema_version": "v1.7"}\n') == 0  # not ATIF
    assert sniff_lines('["schema_version", "ATIF"]\n') == 0  # not an object
    assert sniff_lines('x{"schema_version": "ATIF"}\n') == 0
    assert sniff_lines("") == 0


def test_a_first_line_longer_than_the_sniffed_start_counts_as_whole() -> None:
    long = '{"schema_version": "ATIF-v1.7", "pad": "' + "x" * (1 << 16) + '"}\n{}\n'
    assert sniff_lines(long) == 4
    # The schema key past the first 64 KiB is not seen.
    late = '{"pad": "' + "x" * (1 << 16) + '", "schema_version": "ATIF-v1.7"}\n'
    assert sniff_lines(late) == 0


def test_is_lines_reads_the_inputs_head() -> None:
    assert is_lines(Input(None, (ONE + "\n").encode()))
    assert not is_lines(Input(None, b'{"record": "header"}\n'))
    assert is_lines(Input(None, b"\xff" + b" " * 3 + ONE.encode())) is False  # undecodable start


# -- session addresses ------------------------------------------------------------------------


def test_a_session_address_names_a_line_of_a_file(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(ONE + "\n", encoding="utf-8")
    assert session_address(f"{path}#1") == (str(path), 1)
    assert session_address(f"{path}#1234567890") == (str(path), 1234567890)
    assert session_address(f"{path}#12345678901") is None  # at most ten digits
    assert session_address(f"{path}#0") is None
    assert session_address(f"{path}#01") is None
    assert session_address(f"{path}#x") is None
    assert session_address(f"{path}#") is None
    assert session_address(str(path)) is None
    assert session_address(f"{tmp_path / 'gone.jsonl'}#1") is None
    assert session_address(f"{tmp_path}#1") is None  # a folder
    named = tmp_path / "odd#2"
    named.write_text(ONE, encoding="utf-8")
    assert session_address(str(named)) is None  # a file of that very name


def test_trajectory_lines_skip_blank_lines_and_keep_their_numbers() -> None:
    data = f"{ONE}\n\n  \n{ONE}\n".encode()
    assert [n for n, _ in trajectory_lines(Input(None, data))] == [1, 4]


def test_a_line_input_is_the_trajectory_on_that_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    second = ONE.replace('"a"', '"b"')
    path.write_text(f"{ONE}\n\n{second}\n", encoding="utf-8")
    assert json.loads(line_input(str(path), 3).read_bytes())["session_id"] == "b"
    assert json.loads(line_input(str(path), 1).read_bytes())["session_id"] == "a"
    with pytest.raises(RefusedInputError, match=rf"^{path}: no trajectory on line 2$"):
        line_input(str(path), 2)
    found = address_input(f"{path}#3")
    assert found is not None and json.loads(found.read_bytes())["session_id"] == "b"
    assert address_input(str(path)) is None


def test_expand_sessions_gives_one_input_per_trajectory(tmp_path: Path) -> None:
    two = tmp_path / "two.jsonl"
    two.write_text(f"{ONE}\n\n{ONE}\n", encoding="utf-8")
    one = tmp_path / "one.jsonl"
    one.write_text(ONE + "\n", encoding="utf-8")
    items = [
        FoundInput(str(two), Settings(strict=True)),
        FoundInput(str(one), Settings()),
        FoundInput(str(two), Settings(), problem="refused"),
        FoundInput("-", Settings()),
    ]
    out = expand_sessions(items)
    assert [(i.path, i.settings.strict) for i in out] == [
        (f"{two}#1", True),
        (f"{two}#3", True),
        (str(one), False),
        (str(two), False),
        ("-", False),
    ]
    assert is_lines_file(str(two)) and not is_lines_file(str(one))
    assert not is_lines_file(str(tmp_path)) and not is_lines_file(str(tmp_path / "gone"))


def test_is_lines_file_is_false_when_the_file_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two = tmp_path / "two.jsonl"
    two.write_text(f"{ONE}\n{ONE}\n", encoding="utf-8")

    def unreadable(self: Input) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(Input, "head", unreadable)
    assert is_lines_file(str(two)) is False


def test_split_sessions(tmp_path: Path) -> None:
    two = tmp_path / "two.jsonl"
    two.write_text(f"{ONE}\n{ONE}\n", encoding="utf-8")
    found = list(split_sessions(Input(two), None))
    assert [(f, name) for _, f, name in found] == [("atif", f"{two}#1"), ("atif", f"{two}#2")]
    assert json.loads(found[1][0].read_bytes())["session_id"] == "a"
    assert [(f, name) for _, f, name in split_sessions(Input(two), "atif")] == [
        ("atif", f"{two}#1"),
        ("atif", f"{two}#2"),
    ]
    [(same, fmt, name)] = split_sessions(Input(two), "bbox")  # another format asked: as it is
    assert fmt == "bbox" and name == str(two) and same.path == two
    [(same, fmt, name)] = split_sessions(Input(tmp_path), None)  # a folder
    assert fmt is None and same.path == tmp_path
    piped = split_sessions(Input(None, (ONE + "\n" + ONE).encode()), None)
    assert [(f, name) for _, f, name in piped] == [("atif", "<stdin>#1"), ("atif", "<stdin>#2")]
    [(same, fmt, name)] = split_sessions(Input(None, ONE.replace("ATIF", "x").encode()), None)
    assert fmt is None and name == "<stdin>"  # standard input names no chain


def test_split_sessions_reads_a_chain_as_one(tmp_path: Path) -> None:
    head = _write(tmp_path / "run.json", {"steps": _steps(1), CONTINUED: "run.cont-1.json"})
    _write(tmp_path / "run.cont-1.json", {"steps": _steps(1)})
    [(merged, fmt, name)] = split_sessions(Input(head), None)
    assert fmt == "atif" and name == str(head) and merged.path == head
    assert [s["step_id"] for s in json.loads(merged.read_bytes())["steps"]] == [1, 2]
    plain = _write(tmp_path / "plain.json", {"steps": _steps(1)})
    [(same, fmt, name)] = split_sessions(Input(plain), None)
    assert fmt is None and same.path == plain


# -- the continuation's file ------------------------------------------------------------------


def test_a_continuation_is_the_file_named_or_the_renamed_sibling(tmp_path: Path) -> None:
    head = tmp_path / "job-7__run.json"
    head.write_text("{}", encoding="utf-8")
    (tmp_path / "cont-1.json").write_text("{}", encoding="utf-8")
    assert lines._continuation(head, "cont-1.json") == tmp_path / "cont-1.json"
    # Renamed with a prefix: the sibling that ends with the name and shares the longest prefix.
    (tmp_path / "job-7__run.cont-2.json").write_text("{}", encoding="utf-8")
    (tmp_path / "job-9__run.cont-2.json").write_text("{}", encoding="utf-8")
    (tmp_path / "j.cont-2.json").write_text("{}", encoding="utf-8")
    assert lines._continuation(head, "sub/run.cont-2.json") == tmp_path / "job-7__run.cont-2.json"
    (tmp_path / "x.cont-3.json").mkdir()
    assert lines._continuation(head, "cont-3.json") is None  # a folder is no continuation
    assert lines._continuation(head, "") is None
    assert lines._continuation(head, "cont-1\x00.json") is None
    assert lines._continuation(head, "run.json") is None  # only itself ends with the name


def test_the_sibling_with_the_longest_shared_prefix_wins_whatever_the_order(tmp_path: Path) -> None:
    head = tmp_path / "b-run.json"
    head.write_text("{}", encoding="utf-8")
    for name in ("a-run.c.json", "b-run.c.json", "b-r.c.json", "c-run.c.json"):
        (tmp_path / name).write_text("{}", encoding="utf-8")
    assert lines._continuation(head, "zz/c.json") == tmp_path / "b-run.c.json"


def test_common_prefix() -> None:
    assert lines._common_prefix("abcd", "abxy") == "ab"
    assert lines._common_prefix("ab", "abc") == "ab"
    assert lines._common_prefix("abc", "ab") == "ab"
    assert lines._common_prefix("x", "y") == ""


def test_the_continuation_key_is_looked_for_at_both_ends(tmp_path: Path) -> None:
    pad = "x" * (1 << 16)
    start = _write(tmp_path / "s.json", {CONTINUED: "n.json", "pad": pad})
    end = tmp_path / "e.json"
    end.write_text(json.dumps({"pad": pad, CONTINUED: "n.json"}), encoding="utf-8")
    middle = tmp_path / "m.json"
    middle.write_text(json.dumps({"a": pad, CONTINUED: "n.json", "b": pad}), encoding="utf-8")
    assert lines._names_continuation(start) and lines._names_continuation(end)
    assert not lines._names_continuation(middle)
    assert not lines._names_continuation(tmp_path / "gone.json")


# -- chains ---------------------------------------------------------------------------------


def test_chain_files_lists_the_continuations_in_order(tmp_path: Path) -> None:
    head = _write(tmp_path / "run.json", {"steps": [], CONTINUED: "run.c1.json"})
    one = _write(tmp_path / "run.c1.json", {"steps": [], CONTINUED: "run.c2.json"})
    two = _write(tmp_path / "run.c2.json", {"steps": []})
    assert chain_files(head) == [one, two]
    assert chain_files(one) == [two]
    assert chain_files(two) == []
    assert chain_files(tmp_path / "gone.json") == []
    other = tmp_path / "run.jsonl"
    other.write_text(json.dumps({CONTINUED: "run.c1.json"}), encoding="utf-8")
    assert chain_files(other) == []  # not a .json file


def test_chain_files_stop_at_a_loop_a_gap_or_a_bad_file(tmp_path: Path) -> None:
    head = _write(tmp_path / "a.json", {CONTINUED: "b.json"})
    b = _write(tmp_path / "b.json", {CONTINUED: "a.json"})
    assert chain_files(head) == [b]
    _write(tmp_path / "c.json", {CONTINUED: "d.json"})
    d = tmp_path / "d.json"
    d.write_text("[1, 2]", encoding="utf-8")
    assert chain_files(tmp_path / "c.json") == [d]  # not an object: nothing follows it
    _write(tmp_path / "e.json", {CONTINUED: "f.json"})
    f = tmp_path / "f.json"
    f.write_text("{broken", encoding="utf-8")
    assert chain_files(tmp_path / "e.json") == [f]
    _write(tmp_path / "g.json", {CONTINUED: "nowhere.json"})
    assert chain_files(tmp_path / "g.json") == []
    h = tmp_path / "h.json"
    h.write_bytes(b"\xef\xbb\xbf" + json.dumps({CONTINUED: "i.json"}).encode())
    i = _write(tmp_path / "i.json", {})
    assert chain_files(h) == [i]  # a BOM is read past


def test_chain_files_stop_at_the_longest_chain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "MAX_CHAIN", 2)
    for n in range(5):
        _write(tmp_path / f"p{n}.json", {CONTINUED: f"p{n + 1}.json"})
    assert chain_files(tmp_path / "p0.json") == [tmp_path / "p1.json", tmp_path / "p2.json"]
    merged = merge_chain(Input(tmp_path / "p0.json"))
    assert merged is not None
    value = json.loads(merged)
    assert value["extra"]["continued_from_files"] == ["p0.json", "p1.json"]
    # The reference past the last file read stays (it was dropped before: a real bug).
    assert value[CONTINUED] == "p2.json"


def test_a_merged_chain_renumbers_the_steps_and_sums_the_metrics(tmp_path: Path) -> None:
    head = _write(
        tmp_path / "run.json",
        {
            "session_id": "s",
            "steps": _steps(1, 2),
            "final_metrics": {
                "total_prompt_tokens": 100,
                "total_cost_usd": 0.5,
                "total_steps": 2,
                "note": "a",
            },
            "extra": {"kept": 1},
            CONTINUED: "run.c1.json",
        },
    )
    _write(
        tmp_path / "run.c1.json",
        {
            "steps": [*_steps(1), "not a step", {"step_id": "3", "message": "odd"}, {"step_id": True}],
            "final_metrics": {
                "total_prompt_tokens": 20,
                "total_cost_usd": 0.25,
                "total_steps": 4,
                "total_completion_tokens": 7,
                "note": "b",
            },
            CONTINUED: "run.c2.json",
        },
    )
    _write(tmp_path / "run.c2.json", {"steps": _steps(1, 2), "final_metrics": {"total_prompt_tokens": 3}})
    merged = merge_chain(Input(head))
    assert merged is not None
    value = json.loads(merged)
    assert [s["step_id"] if isinstance(s, dict) else s for s in value["steps"]] == [
        1,
        2,
        3,
        "not a step",
        "3",
        3,  # True + 2: a bool is an int here
        7,
        8,
    ]
    assert value["final_metrics"] == {
        "total_prompt_tokens": 123,
        "total_cost_usd": 0.75,
        "total_steps": 8,
        "note": "a",
        "total_completion_tokens": 7,
    }
    assert value["extra"] == {"kept": 1, "continued_from_files": ["run.json", "run.c1.json", "run.c2.json"]}
    assert CONTINUED not in value and value["session_id"] == "s"


def test_a_chain_without_final_metrics_gets_none(tmp_path: Path) -> None:
    head = _write(tmp_path / "run.json", {"steps": _steps(1), CONTINUED: "run.c1.json"})
    _write(tmp_path / "run.c1.json", {"steps": None})
    value = json.loads(merge_chain(Input(head)) or b"null")
    assert "final_metrics" not in value and [s["step_id"] for s in value["steps"]] == [1]
    assert value["extra"] == {"continued_from_files": ["run.json", "run.c1.json"]}


def test_total_steps_is_counted_only_when_the_metrics_have_it(tmp_path: Path) -> None:
    head = _write(
        tmp_path / "run.json",
        {"steps": _steps(1), "final_metrics": {"total_prompt_tokens": 1}, CONTINUED: "run.c1.json"},
    )
    _write(tmp_path / "run.c1.json", {"steps": _steps(1)})
    value = json.loads(merge_chain(Input(head)) or b"null")
    assert value["final_metrics"] == {"total_prompt_tokens": 1}


def test_a_chain_that_loops_or_breaks_keeps_its_reference(tmp_path: Path) -> None:
    head = _write(tmp_path / "a.json", {"steps": _steps(1), CONTINUED: "b.json"})
    _write(tmp_path / "b.json", {"steps": _steps(1), CONTINUED: "a.json"})
    value = json.loads(merge_chain(Input(head)) or b"null")
    assert value[CONTINUED] == "a.json" and len(value["steps"]) == 2
    assert value["extra"]["continued_from_files"] == ["a.json", "b.json"]
    alone = _write(tmp_path / "c.json", {"steps": _steps(1), CONTINUED: "gone.json"})
    assert merge_chain(Input(alone)) is None  # its continuation is not there: as it is


def test_what_is_no_chain_merges_to_none(tmp_path: Path) -> None:
    assert merge_chain(Input(None, json.dumps({CONTINUED: "x.json"}).encode())) is None
    plain = _write(tmp_path / "plain.json", {"steps": []})
    assert merge_chain(Input(plain)) is None
    broken = tmp_path / "broken.json"
    broken.write_text('{"continued_trajectory_ref": "x.json"', encoding="utf-8")
    assert merge_chain(Input(broken)) is None
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([CONTINUED]), encoding="utf-8")
    assert merge_chain(Input(listed)) is None
    number = _write(tmp_path / "number.json", {CONTINUED: 3})
    assert merge_chain(Input(number)) is None
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"continued_trajectory_ref": "x.json", "a": "\xff"}')
    assert merge_chain(Input(binary)) is None


def test_a_continuation_that_is_no_trajectory_is_refused(tmp_path: Path) -> None:
    head = _write(tmp_path / "run.json", {"steps": [], CONTINUED: "run.c1.json"})
    (tmp_path / "run.c1.json").write_text("[1]", encoding="utf-8")
    with pytest.raises(RefusedInputError, match=r"^run\.c1\.json: not an ATIF trajectory$"):
        merge_chain(Input(head))


def test_a_bom_in_the_chain_is_read_past(tmp_path: Path) -> None:
    head = tmp_path / "run.json"
    head.write_bytes(b"\xef\xbb\xbf" + json.dumps({"steps": _steps(1), CONTINUED: "run.c1.json"}).encode())
    (tmp_path / "run.c1.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"steps": _steps(1)}).encode())
    value = json.loads(merge_chain(Input(head)) or b"null")
    assert [s["step_id"] for s in value["steps"]] == [1, 2]


def test_the_shared_prefix_is_counted_one_character_at_a_time() -> None:
    assert lines._common_prefix("ab", "ax") == "a"
    assert lines._common_prefix("abcd", "abcx") == "abc"


def test_a_chain_that_loops_back_past_its_head_lists_each_file_once(tmp_path: Path) -> None:
    head = _write(tmp_path / "a.json", {CONTINUED: "b.json"})
    b = _write(tmp_path / "b.json", {CONTINUED: "c.json"})
    c = _write(tmp_path / "c.json", {CONTINUED: "b.json"})
    assert chain_files(head) == [b, c]


def test_a_key_named_only_inside_the_trajectory_is_no_chain(tmp_path: Path) -> None:
    nested = _write(tmp_path / "n.json", {"steps": [], "extra": {CONTINUED: "x.json"}})
    (tmp_path / "x.json").write_text("{}", encoding="utf-8")
    assert merge_chain(Input(nested)) is None


def test_a_merged_chain_that_loops_back_past_its_head_reads_each_file_once(tmp_path: Path) -> None:
    head = _write(
        tmp_path / "a.json", {"steps": _steps(1), "final_metrics": {"total_steps": 1}, CONTINUED: "b.json"}
    )
    _write(
        tmp_path / "b.json",
        {"steps": _steps(1), "final_metrics": {"total_prompt_tokens": 5}, CONTINUED: "c.json"},
    )
    _write(
        tmp_path / "c.json",
        {"steps": _steps(1), "final_metrics": {"total_prompt_tokens": 7}, CONTINUED: "b.json"},
    )
    value = json.loads(merge_chain(Input(head)) or b"null")
    assert [s["step_id"] for s in value["steps"]] == [1, 2, 3]
    assert value["final_metrics"] == {"total_steps": 3, "total_prompt_tokens": 12}
    assert value[CONTINUED] == "b.json"


def test_an_empty_continuation_is_refused_as_a_trajectory(tmp_path: Path) -> None:
    head = _write(tmp_path / "run.json", {"steps": [], CONTINUED: "run.c1.json"})
    (tmp_path / "run.c1.json").write_text("", encoding="utf-8")
    with pytest.raises(RefusedInputError, match=r"^empty file: an ATIF trajectory is a JSON object$"):
        merge_chain(Input(head))


def test_only_a_bom_and_spaces_may_come_before_the_brace() -> None:
    assert sniff_lines('X{"schema_version": "ATIF-v1.7"}\n') == 0
    assert sniff_lines('\r{"schema_version": "ATIF-v1.7"}\n') == 4


def test_the_last_64_kib_are_read_from_their_very_first_byte(tmp_path: Path) -> None:
    window = 1 << 16
    tail = f'{CONTINUED}": "n.json"}}'
    tail += " " * (window - len(tail.encode()))
    head = '{"pad": "' + "x" * (2 * window) + '", "'
    path = tmp_path / "t.json"
    path.write_text(head + tail, encoding="utf-8")
    data = path.read_bytes()
    assert data.index(CONTINUED.encode()) == len(data) - window  # the key opens the window
    assert json.loads(data)[CONTINUED] == "n.json"
    assert lines._names_continuation(path)
