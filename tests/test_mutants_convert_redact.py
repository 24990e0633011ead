"""``redact`` on a file in another format (``bbox_lark/convert/redact.py``): what mutants of the
module showed no test pinned down, and what reading it found: a key the in-place rewrite
would have carried into the written file (in an object's key, in a string with a raw tab or
NUL, in text that is not JSON) and a surrogate escape it would have written as a raw,
unencodable character. The keys are made from pieces (no file holds one whole)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bbox_lark.convert.redact import (
    JSON_FORMATS,
    REFUSED,
    ForeignRedacted,
    ForeignRedactError,
    redact_foreign,
    redact_json,
    redact_path,
)
from bbox_lark.syntax.source import encode

GITHUB = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
AWS = "AK" + "IA" + "QWERTYUIOPASDFGH"
GH_MARK = "[redacted:github_token]"
AWS_MARK = "[redacted:aws_access_key]"


def _where(done: ForeignRedacted) -> list[tuple[int, int, str]]:
    return [(line, col, secret.kind) for line, col, secret in done.secrets]


# -- what is replaced, and every other byte -------------------------------------------------


def test_a_secret_in_a_string_value_is_replaced_and_every_other_byte_kept() -> None:
    text = '{ "a" :  "use ' + GITHUB + ' now",\t"b": "x\\/y", "c": [1, 2.50]}\r\n'
    done = redact_json(text)
    assert done.text == '{ "a" :  "use ' + GH_MARK + ' now",\t"b": "x\\/y", "c": [1, 2.50]}\r\n'
    assert done.changed
    assert done.kinds == {"github_token": 1}
    assert _where(done) == [(1, 10, "github_token")]


def test_a_text_without_secrets_comes_back_as_it_was() -> None:
    text = '{"a": "x\\u00e9 \\/ y", "key": "token"}\n{"b": "sk-"}\n'
    done = redact_json(text)
    assert done.text == text
    assert done.secrets == ()
    assert not done.changed
    assert done.kinds == {}


def test_the_line_and_column_of_each_string_that_held_a_secret() -> None:
    lines = [
        '{"a": "' + GITHUB + '", "b": "' + AWS + '"}',
        '{"n": 1}',
        '{"n": 2}',
        '  {"c": "x", "d": "two ' + GITHUB + " and " + AWS + '"}',
        '{"e": "' + AWS + '"}',
    ]
    done = redact_json("\n".join(lines) + "\n")
    assert _where(done) == [
        (1, 7, "github_token"),
        (1, 7 + len(GITHUB) + 9, "aws_access_key"),
        (4, 19, "github_token"),
        (4, 19, "aws_access_key"),
        (5, 7, "aws_access_key"),
    ]
    assert GITHUB not in done.text and AWS not in done.text
    assert done.kinds == {"aws_access_key": 3, "github_token": 2}
    assert [json.loads(line) for line in done.text.splitlines()][3]["d"] == f"two {GH_MARK} and {AWS_MARK}"


def test_a_secret_behind_a_json_escape_is_found_and_the_string_written_again() -> None:
    escaped = GITHUB[:3] + "\\u005f" + GITHUB[4:]  # ghp\u005f...
    done = redact_json('{"a": "' + escaped + '"}')
    assert done.text == '{"a": "' + GH_MARK + '"}'
    assert _where(done) == [(1, 7, "github_token")]


def test_an_ascii_string_is_written_ascii_and_a_utf8_one_as_utf8() -> None:
    ascii_text = '{"a": "caf\\u00e9 ' + GITHUB + '"}'
    assert redact_json(ascii_text).text == '{"a": "caf\\u00e9 ' + GH_MARK + '"}'
    utf8_text = '{"a": "café ' + GITHUB + '"}'
    assert redact_json(utf8_text).text == '{"a": "café ' + GH_MARK + '"}'


def test_a_value_after_a_key_on_the_next_line_is_still_a_value() -> None:
    # The key is followed by blanks, a line break and the colon; the value by a comma.
    text = '{"a"\n  \t:\n "' + GITHUB + '" ,\n "b" : "' + GITHUB + '"\n}'
    done = redact_json(text)
    assert done.text == '{"a"\n  \t:\n "' + GH_MARK + '" ,\n "b" : "' + GH_MARK + '"\n}'
    assert _where(done) == [(3, 2, "github_token"), (4, 8, "github_token")]


def test_an_allowed_secret_is_kept() -> None:
    text = '{"a": "' + GITHUB + '", "b": "' + AWS + '"}'
    done = redact_json(text, allowed=[GITHUB])
    assert done.text == '{"a": "' + GITHUB + '", "b": "' + AWS_MARK + '"}'
    assert _where(done) == [(1, 7 + len(GITHUB) + 9, "aws_access_key")]
    assert redact_json('{"a": "' + GITHUB + '"}', allowed=[GITHUB]).text == '{"a": "' + GITHUB + '"}'


# -- what reading the module found: keys the rewrite would have carried ---------------------


@pytest.mark.parametrize("char", ["\t", "\x00", "\x1f"], ids=["tab", "nul", "x1f"])
def test_a_raw_control_character_in_a_string_does_not_hide_its_key(char: str) -> None:
    # json.loads refuses a raw control character in a string by default: the string was
    # skipped, and its key written as it was.
    done = redact_json('{"a": "x' + char + GITHUB + '"}')
    assert GITHUB[4:] not in done.text
    assert json.loads(done.text) == {"a": "x" + char + GH_MARK}
    assert _where(done) == [(1, 7, "github_token")]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"' + GITHUB + '": 1}', id="an-object-key"),
        pytest.param('{"a": "\\q ' + GITHUB + '"}', id="a-string-not-json"),
        pytest.param('{"a": 1}\noops " {"k": "' + GITHUB + '"}\n', id="a-line-not-json"),
    ],
)
def test_a_key_outside_any_string_value_refuses_the_file(text: str) -> None:
    with pytest.raises(ForeignRedactError, match=r"github_token \(ghp_…A5\) outside any JSON string value"):
        redact_json(text)


def test_a_first_line_that_is_empty_counts_in_the_line_and_column() -> None:
    done = redact_json('\n{"a": "' + GITHUB + '"}\n')
    assert _where(done) == [(2, 7, "github_token")]
    done = redact_json('\n\n  "' + GITHUB + '"')
    assert _where(done) == [(3, 3, "github_token")]


def test_a_string_that_is_not_json_leaves_the_strings_after_it_redacted() -> None:
    # The hint (`sk-`) makes it a candidate; `\q` makes it no JSON string: it is skipped,
    # and the strings after it on the line and on the next ones are still redacted.
    text = '{"a": "sk-\\q", "b": "' + GITHUB + '"}\n{"c": "' + AWS + '"}\n'
    done = redact_json(text)
    assert done.text == '{"a": "sk-\\q", "b": "' + GH_MARK + '"}\n{"c": "' + AWS_MARK + '"}\n'
    assert _where(done) == [(1, 21, "github_token"), (2, 7, "aws_access_key")]


def test_the_refusal_says_what_to_do() -> None:
    with pytest.raises(ForeignRedactError) as raised:
        redact_json('{"' + GITHUB + '": 1}')
    assert str(raised.value) == (
        "line 1, column 3: a github_token (ghp_…A5) outside any JSON string value (an object's key,"
        " or text that is not valid JSON), which redacting in place would keep; remove it first"
    )


def test_the_refusal_names_the_line_and_column_of_the_key() -> None:
    text = '{"a": 1}\n{"b": "x"}\u2028\n  {"' + GITHUB + '": 2}\n'
    with pytest.raises(ForeignRedactError, match=r"^line 3, column 5: a github_token"):
        redact_json(text)


def test_an_allowed_key_outside_a_string_value_is_not_refused() -> None:
    text = '{"' + GITHUB + '": 1}'
    assert redact_json(text, allowed=[GITHUB]).text == text


def test_a_generic_secret_beside_its_name_is_not_refused() -> None:
    # Only a provider's credential refuses the file: a value that reads as a generic secret
    # only beside its key (which the scan of each value alone does not see) is left.
    text = '{"password": "Zx8-qP3r-Lm0vT7wK2s"}\n'
    assert redact_json(text).text == text


@pytest.mark.parametrize("escape", ["\\ud800", "\\udc80", "\\udfff"], ids=["d800", "dc80", "dfff"])
def test_a_lone_surrogate_escape_stays_an_escape_in_a_utf8_string(escape: str) -> None:
    text = '{"a": "é ' + escape + " " + GITHUB + '"}'
    done = redact_json(text)
    assert done.text == '{"a": "é ' + escape + " " + GH_MARK + '"}'
    encode(done.text)  # no UnicodeEncodeError, no byte that was not in the file


def test_an_undecodable_byte_in_a_string_is_written_back_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"a": "\xff\xc3\xa9 ' + GITHUB.encode() + b'"}\n{"b": "\xfe"}\n')
    old, done = redact_path(str(path), "jsonl")
    assert encode(old) == path.read_bytes()
    assert encode(done.text) == b'{"a": "\xff\xc3\xa9 ' + GH_MARK.encode() + b'"}\n{"b": "\xfe"}\n'


def test_a_surrogate_pair_escape_is_kept_whole() -> None:
    text = '{"a": "é \\ud83d\\ude00 ' + GITHUB + '"}'
    done = redact_json(text)
    assert json.loads(done.text) == {"a": "é \U0001f600 " + GH_MARK}
    encode(done.text)


# -- formats ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(JSON_FORMATS))
def test_each_json_format_is_redacted_in_place(fmt: str) -> None:
    done = redact_foreign('{"a": "' + GITHUB + '"}\n', fmt)
    assert done.text == '{"a": "' + GH_MARK + '"}\n'


def test_the_json_formats_are_the_four_the_docs_name() -> None:
    assert sorted(JSON_FORMATS) == ["atif", "bb7", "claude-code", "jsonl"]


def test_a_lightbox_chain_is_refused_with_its_reason() -> None:
    with pytest.raises(ForeignRedactError) as raised:
        redact_foreign('{"a": "' + GITHUB + '"}', "lightbox")
    assert str(raised.value) == REFUSED["lightbox"]
    assert "convert it with --redact instead" in str(raised.value)


@pytest.mark.parametrize("fmt", ["bbox", "compact", "otlp"])
def test_a_format_that_is_not_json_is_refused(fmt: str) -> None:
    with pytest.raises(ForeignRedactError) as raised:
        redact_foreign("u: " + GITHUB + "\n", fmt)
    assert str(raised.value) == f"{fmt} files cannot be redacted in place; convert them with --redact"


def test_redact_path_gives_the_text_read_and_the_text_redacted(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    text = '{"steps": [{"message": "' + GITHUB + '"}]}\n'
    path.write_text(text, encoding="utf-8")
    old, done = redact_path(str(path), "atif", allowed=())
    assert old == text
    assert done.text == '{"steps": [{"message": "' + GH_MARK + '"}]}\n'
    old, done = redact_path(str(path), "atif", allowed=[GITHUB])
    assert done.text == text
    with pytest.raises(ForeignRedactError):
        redact_path(str(path), "lightbox")


def test_the_command_refuses_a_key_it_cannot_redact_and_writes_nothing(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bbox_lark.cli import app

    fixture = Path(__file__).parent / "fixtures" / "claude-code" / "comments.jsonl"
    lines = fixture.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["toolUseResult"] = {GITHUB: "x"}
    text = "\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n"
    path = tmp_path / "session.jsonl"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["redact", str(path), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert f"line 2, column {json.dumps(record).index(GITHUB) + 1}: a github_token (ghp_…A5)" in result.output
    assert "not redacted" in result.output
    assert GITHUB[4:] not in result.output
    assert not out.exists()
    assert path.read_text(encoding="utf-8") == text
