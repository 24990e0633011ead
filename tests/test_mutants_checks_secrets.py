"""The secrets rule (``bbox_lark/checks/secrets.py``, S001 and S002), pinned down where
mutation testing found nothing holding it: the words of a finding, a private key block over
continuation lines (one finding; the scan resumes after its ``END``), and a key wrapped over
a line and the continuation line after it (docs/testing.md, "Mutation testing").

Keys are joined from pieces at run time: no line of this file holds one whole."""

from __future__ import annotations

from pathlib import Path

import pytest

import bbox_lark

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"
GH = "gh" + "p" + "_" + "FAKEfake0123456789notARealTokenABC12"
BEGIN = "-----BEGIN RSA PRIVATE KEY-----"
END = "-----END RSA PRIVATE KEY-----"
KEY_BLOCK = ("S001", 7, 12, f"private_key {BEGIN}…")


def secrets(body: str, head: str = HEAD) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.col, d.message) for d in bbox_lark.check(head + body) if d.code[0] == "S"]


def test_a_finding_names_the_kind_and_the_masked_secret() -> None:
    assert secrets(f"u: {GH} and DEPLOY_TOKEN=Fk9q2LmZ7vXw4RtY8pQs\n") == [
        ("S001", 7, 4, "github_token ghp_…12"),
        ("S002", 7, 62, "generic_secret …Qs"),
    ]


def test_a_header_value_is_reported_at_its_line_and_column() -> None:
    head = HEAD.replace("runner: local\n", f"runner: local\nextra.k: {GH}\n")
    assert secrets("u: hi\n", head) == [("S001", 6, 10, "github_token ghp_…12")]


def test_a_continuation_line_first_in_the_body_is_scanned() -> None:
    assert secrets(f"  {GH}\n") == [("S001", 7, 3, "github_token ghp_…12")]


def test_a_key_block_in_the_header_is_reported_there() -> None:
    head = HEAD.replace("runner: local\n", f"runner: local\nextra.k: {BEGIN}\n")
    assert secrets("u: hi\n", head) == [("S001", 6, 10, f"private_key {BEGIN}…")]


def test_the_scan_resumes_after_a_key_blocks_end_line() -> None:
    body = f"t:read k → {BEGIN}\n  MIIEFAKEkeyFORtestsONLY{GH}\n  {END}\n  again {GH}\n"
    assert secrets(body) == [KEY_BLOCK, ("S001", 10, 9, "github_token ghp_…12")]


def test_a_key_block_without_its_end_ends_at_the_next_event() -> None:
    body = f"t:read k → {BEGIN}\n  MIIEFAKEkeyFORtestsONLY\n  {GH}\nu: {GH}\n"
    assert secrets(body) == [KEY_BLOCK, ("S001", 10, 4, "github_token ghp_…12")]


def test_a_key_block_ended_by_an_event_leaves_its_continuations_scanned() -> None:
    body = f"t:read k → {BEGIN}\n  MIIEFAKEkeyFORtestsONLY\nu: hi\n  {GH}\n"
    assert secrets(body) == [KEY_BLOCK, ("S001", 10, 3, "github_token ghp_…12")]


def test_a_key_block_ended_on_its_own_line_leaves_the_next_lines_scanned() -> None:
    body = f"t:read k → {BEGIN}\\n{END}\n  {GH}\n"
    assert secrets(body) == [KEY_BLOCK, ("S001", 8, 3, "github_token ghp_…12")]


@pytest.mark.parametrize(
    "end",
    [END, END.removesuffix("-----"), "-----END RSA PRIVATE KEY------"],
    ids=["closed", "without-closing-dashes", "six-dashes"],
)
def test_a_key_after_a_key_blocks_end_on_its_line_is_reported_at_its_column(end: str) -> None:
    # Without its closing dashes the END line's key was not scanned by check, while redact
    # replaced it (a listing that differed from redact --list).
    last = f"  {end} then {GH}"
    body = f"t:read k → {BEGIN}\n  MIIEFAKEkeyFORtestsONLY\n{last}\nu: hi\n"
    assert secrets(body) == [KEY_BLOCK, ("S001", 9, last.index(GH) + 1, "github_token ghp_…12")]
    assert [d.code for d in bbox_lark.check(HEAD + body, allowed_secrets=[GH])] == ["S001"]  # the block


def test_a_key_between_two_end_markers_is_scanned_from_the_first() -> None:
    last = f"  {END} {GH} {END}"
    body = f"t:read k → {BEGIN}\n  MIIEFAKEkeyFORtestsONLY\n{last}\n"
    assert secrets(body) == [KEY_BLOCK, ("S001", 9, last.index(GH) + 1, "github_token ghp_…12")]


def test_nothing_after_a_key_blocks_end_is_nothing_found() -> None:
    body = f"t:read k → {BEGIN}\n  MIIEFAKEkeyFORtestsONLY\n  {END}   \n  {END.removesuffix('-----')}\n"
    assert secrets(body) == [KEY_BLOCK]


@pytest.mark.parametrize(
    ("body", "col"),
    [
        (f"t:cat → [ok]\n  x {GH[:20]}\n  {GH[20:]} y\n", 5),  # from a continuation line
        (f"u: x {GH[:20]}\n  {GH[20:]} y\n", 6),  # from an event line
        (f"u: {'a ' * 400}{GH[:20]}\n  {GH[20:]} y\n", 804),  # far along a long line
    ],
)
def test_a_wrapped_key_is_one_finding_where_it_starts(body: str, col: int) -> None:
    line = body.count("\n", 0, body.index(GH[:20])) + 7
    assert secrets(body) == [("S001", line, col, "github_token ghp_…12")]


@pytest.mark.parametrize(
    "body",
    [
        f"t:cat → [ok]\n  x {GH[:20]} \n  {GH[20:]} y\n",  # the line ends with a space
        f"t:cat → [ok]\n  x {GH[:20]}\n   {GH[20:]} y\n",  # the next one starts with one
        f"t:cat → [ok]\n  x {GH[:20]}\n# c\n  {GH[20:]} y\n",  # a comment between them
        f"u: hi\n\n  {GH[20:]}\n",  # a blank line before it
        "t:cat → [ok]\n  password=\n  Fk9q2LmZ7vXw4RtY8pQs\n",  # a generic secret: no wrap
    ],
)
def test_what_is_no_wrapped_key(body: str) -> None:
    assert secrets(body) == []


def test_a_whole_key_that_a_wrap_would_lengthen_is_reported_once() -> None:
    assert secrets(f"t:cat → [ok]\n  x {GH}\n  abcd y\n") == [("S001", 8, 5, "github_token ghp_…12")]


def test_a_key_on_the_next_line_alone_is_reported_there() -> None:
    assert secrets(f"t:cat → [ok]\n  x\n  {GH}\n") == [("S001", 9, 3, "github_token ghp_…12")]


def test_an_allowed_key_is_not_reported_in_the_header_on_a_line_or_wrapped(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bbox_lark.cli import app

    log = tmp_path / "session.bbox"
    head = HEAD.replace("runner: local\n", f"runner: local\nextra.k: {GH}\n")
    log.write_text(head + f"t:cat → [ok]\n  x {GH[:20]}\n  {GH[20:]} y\nu: {GH}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["check", str(log)])
    assert result.exit_code == 1, result.output
    assert (
        "6:10" in result.output
        and "9:5" in result.output
        and "11:4" in result.output
        and "S001 github_token ghp_…12" in result.output
    )
    (tmp_path / "bbox-lark.toml").write_text(f'allowed-secrets = ["{GH}"]\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["check", str(log)])
    assert result.exit_code == 0, result.output
