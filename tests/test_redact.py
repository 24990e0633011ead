"""Redaction (DECISIONS §12): ``bbox_lark.redact``, ``bbox-lark redact`` / ``fix --redact``,
and the scanner every ``convert`` runs (``--redact``). No output may show a secret whole."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from printer_support import fuzz_settings
from typer.testing import CliRunner, Result

import bbox_lark
from bbox_lark.cli import app
from bbox_lark.secrets.redaction import line_kinds
from bbox_lark.secrets.scanner import PATTERNS, find_secrets

REPO = Path(__file__).resolve().parent.parent
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
S001_FILE = REPO / "corpus" / "invalid" / "S001-provider-credentials.bbox"
EXAMPLE = REPO / "docs" / "examples" / "secrets.bbox"
KEY = "sk-ant-api03-FAKEfakeFAKEfake0123456789-notARealKeyJustForTests_0123456789AA"
GITHUB = "ghp_FAKEfake0123456789notARealTokenABC12"
FIXTURES = REPO / "tests" / "fixtures"

runner = CliRunner()


def secrets_in(text: str) -> list[str]:
    return [text[m.start : m.end] for m in find_secrets(text)]


def codes(text: str) -> list[str]:
    return [d.code for d in bbox_lark.check(text)]


def invoke(args: list[str], stdin: bytes | None = None) -> Result:
    result = runner.invoke(app, args, input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


# -- the library ------------------------------------------------------------------------


def test_redacting_the_corpus_file() -> None:
    text = S001_FILE.read_text(encoding="utf-8")
    done = bbox_lark.redact(text)
    assert len(done.secrets) == 14
    assert done.kinds["github_token"] == 3
    assert secrets_in(done.text) == []
    assert codes(done.text) == []  # no S code, W018 quiet, the header still reads
    assert line_kinds(done.text) == line_kinds(text)
    assert 'extra.deploy_key: "[redacted:github_token]"' in done.text
    assert "t:read ~/.ssh/id_rsa → [redacted:private_key]\n# note:" in done.text  # one marker
    assert "# redactions=13\n" in done.text  # body markers (the header's is not counted)
    assert bbox_lark.redact(done.text).text == done.text


def test_only_the_secret_is_replaced() -> None:
    line = f't:bash "git push https://x:{GITHUB}@github.com/o/r" id=c1 step=2 → [ok] note="{KEY}"\n'
    done = bbox_lark.redact(HEADER + line)
    body = done.text.split("---\n", 2)[2]
    assert body == (
        "# redactions=2\n"
        't:bash "git push https://x:[redacted:github_token]@github.com/o/r" id=c1 step=2 → [ok]'
        ' note="[redacted:anthropic_key]"\n'
    )
    event = bbox_lark.parse(done.text).lines[-1]
    assert isinstance(event, bbox_lark.Event)
    assert (event.kind, event.name, event.fields["id"], event.fields["step"]) == ("tool", "bash", "c1", "2")


def test_a_stated_count_is_updated_and_stays_true() -> None:
    text = (
        HEADER
        + f"t:read .env → API_KEY=[redacted:env_var] K={KEY}\n# redactions=1\n# tokens=4 redactions=1\n"
    )
    done = bbox_lark.redact(text)
    assert done.text.endswith("# redactions=2\n# tokens=4 redactions=2\n")
    assert "W018" not in codes(done.text)


def test_crlf_bom_and_no_final_newline_are_kept() -> None:
    text = "\ufeff" + HEADER.replace("\n", "\r\n") + f"u: {KEY}"
    done = bbox_lark.redact(text)
    assert (
        done.text == "\ufeff" + HEADER.replace("\n", "\r\n") + "# redactions=1\r\nu: [redacted:anthropic_key]"
    )


def test_allowed_values_are_kept() -> None:
    text = HEADER + "u: AKIAIOSFODNN7EXAMPLE\n"
    assert bbox_lark.redact(text, allowed_secrets={"AKIAIOSFODNN7EXAMPLE"}).text == text
    assert bbox_lark.redact(HEADER + "u: no secret here\n").text == HEADER + "u: no secret here\n"


# -- properties ----------------------------------------------------------------------------

FAKES = [row.example for row in PATTERNS if "\n" not in row.example] + [KEY, GITHUB]
TEMPLATES = [
    "u: {s}",
    "a: here {s} and more",
    "th: thinking about {s}",
    't:bash "echo {s}" → [ok]',
    "t:read .env → KEY={s} other=1",
    "# a comment with {s}",
    "@notify msg={s}",
    "  continuation {s}",
    "o: id=c1 → {s}",
    "t:read notes.md → [3 lines]",
    "a: nothing secret",
]


@fuzz_settings(60)
@given(
    st.lists(
        st.tuples(st.sampled_from(TEMPLATES), st.sampled_from(FAKES)),
        min_size=1,
        max_size=12,
    ),
    st.booleans(),
)
def test_redacting_is_idempotent_and_keeps_the_document_valid(
    lines: list[tuple[str, str]], count: bool
) -> None:
    body = "".join(template.format(s=secret) + "\n" for template, secret in lines)
    text = HEADER + "u: start\n" + body + ("# redactions=0\n" if count else "")
    before = bbox_lark.parse(text)
    done = bbox_lark.redact(text)
    after = bbox_lark.parse(done.text)
    assert secrets_in(done.text) == []
    assert not [d for d in after.diagnostics if d.code.startswith("S") or d.code == "W018"]
    new_errors = {d.code for d in after.diagnostics if d.severity == "error"}
    assert new_errors <= {d.code for d in before.diagnostics if d.severity == "error"}
    assert line_kinds(done.text) == line_kinds(text)
    assert bbox_lark.redact(done.text).text == done.text


# -- bad input: linear, no crash, nothing else changed ----------------------------------


def best_time(action: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best


def assert_linear(make: Callable[[int], str], n: int, action: Callable[[str], object]) -> None:
    """n → 4n may cost at most ~10× (linear: 4×, quadratic: 16×); generous, the machine is
    noisy (the same bound as tests/test_hostile.py)."""
    small, large = make(n), make(4 * n)
    t_small = best_time(lambda: action(small))
    t_large = best_time(lambda: action(large), repeat=2)
    assert t_large < max(10 * t_small, 0.05), (t_small, t_large)


def many_secrets(n: int) -> str:
    return HEADER + "".join(f"t:bash env → TOKEN={GITHUB[:-6]}{i:06d} k={KEY}\n" for i in range(n))


def test_ten_thousand_secrets_in_one_file() -> None:
    text = many_secrets(5_000)  # two per line
    done = bbox_lark.redact(text)
    assert len(done.secrets) == 10_000
    assert f"# redactions={10_000}\n" in done.text
    assert secrets_in(done.text) == []
    assert_linear(many_secrets, 500, bbox_lark.redact)
    assert_linear(many_secrets, 500, lambda text: bbox_lark.check(text, select=["S"]))


def base64_blob(n: int) -> str:
    import base64
    import random

    data = random.Random(n).randbytes(n * 600)
    return HEADER + "t:read image.png → " + base64.b64encode(data).decode() + "\n"


def huge_line(n: int) -> str:
    return HEADER + "a: " + "word token=abc " * (n * 40) + KEY + "\n"


@pytest.mark.parametrize("make", [base64_blob, huge_line], ids=["base64-blob", "huge-line"])
def test_huge_lines_are_scanned_in_linear_time(make: Callable[[int], str]) -> None:
    text = make(200)
    done = bbox_lark.redact(text)
    assert secrets_in(done.text) == []
    assert done.text.replace("\n# redactions=", "").count("\n") >= text.count("\n") - 1
    assert_linear(make, 100, find_secrets)
    assert_linear(make, 100, lambda text: bbox_lark.check(text, select=["S"]))


def test_a_key_split_over_a_line_end_is_no_crash() -> None:
    text = HEADER + f"u: {KEY[:30]}\n{KEY[30:]}\n"
    done = bbox_lark.redact(text)
    assert done.text == text  # neither half is a whole key: nothing changes
    assert bbox_lark.check(done.text, select=["S"]) == []


# -- the command line ----------------------------------------------------------------------


@pytest.fixture
def secret_log(tmp_path: Path) -> Path:
    path = tmp_path / "session.bbox"
    shutil.copy(EXAMPLE, path)
    return path


@pytest.mark.parametrize("command", [["redact"], ["fix", "--redact"], ["redact", "--list"]])
def test_no_command_output_shows_a_secret_whole(command: list[str], secret_log: Path) -> None:
    original = secret_log.read_text(encoding="utf-8")
    result = invoke([*command, str(secret_log)])
    assert result.exit_code == 0
    assert "anthropic_key sk-ant-…AA" in result.output
    for secret in secrets_in(original):
        for part in secret.splitlines():  # a key block's BEGIN and END lines are not secret
            assert "-----" in part or part.strip() not in result.output
    assert secret_log.read_text(encoding="utf-8") == original  # a dry run writes nothing


def test_redact_write_and_output(secret_log: Path, tmp_path: Path) -> None:
    target = tmp_path / "clean.bbox"
    assert invoke(["redact", str(secret_log), "--output", str(target)]).exit_code == 0
    assert secrets_in(target.read_text(encoding="utf-8")) == []
    assert invoke(["redact", str(secret_log), "--write"]).exit_code == 0
    assert secret_log.read_text(encoding="utf-8") == target.read_text(encoding="utf-8")
    assert codes(target.read_text(encoding="utf-8")) == []
    again = invoke(["redact", str(secret_log), "--write"])
    assert "nothing to change" in again.output


@pytest.mark.parametrize("mode", [[], ["--write"]])
def test_redacted_secrets_are_not_listed_again_as_errors(mode: list[str], secret_log: Path) -> None:
    # Each secret is one note (what was, or would be, redacted), not also an outstanding S001.
    (secret_log.parent / "more.bbox").write_text(  # and an error redacting does not fix: E010
        secret_log.read_text(encoding="utf-8").replace("id: sess_secrets_demo\n", ""), encoding="utf-8"
    )
    for path in (secret_log, secret_log.parent / "more.bbox"):
        result = invoke(["redact", *mode, str(path)])
        assert result.exit_code == 0
        assert "note redacted anthropic_key sk-ant-…AA" in result.output
        assert " S001 " not in result.output and " S002 " not in result.output
    assert "E010 required header field `id` is missing" in result.output  # still shown


def test_a_refused_redaction_still_lists_the_secrets(tmp_path: Path) -> None:
    path = tmp_path / "bad.bbox"
    path.write_bytes((HEADER + f"u: {KEY}\nu: caf\xe9\n").encode("latin-1"))
    result = invoke(["redact", str(path), "--write"])
    assert result.exit_code == 1 and "S001 anthropic_key" in result.output


def test_redact_refuses_a_file_it_cannot_read_faithfully(tmp_path: Path) -> None:
    path = tmp_path / "bad.bbox"
    path.write_bytes((HEADER + f"u: {KEY}\nu: caf\xe9\n").encode("latin-1"))
    result = invoke(["redact", str(path), "--write"])
    assert result.exit_code == 1
    assert "not written" in result.output
    assert KEY not in result.output
    assert invoke(["redact", str(path), "--write", "--force"]).exit_code == 0
    assert KEY.encode() not in path.read_bytes()


def test_redact_list_writes_nothing(secret_log: Path) -> None:
    result = invoke(["redact", "--list", str(secret_log), "--write"])
    assert result.exit_code == 2


def test_allowed_secrets_config_is_kept_by_redact(secret_log: Path) -> None:
    (secret_log.parent / "bbox-lark.toml").write_text(f'allowed-secrets = ["{GITHUB}"]\n', encoding="utf-8")
    invoke(["redact", str(secret_log), "--write"])
    text = secret_log.read_text(encoding="utf-8")
    assert secrets_in(text) == [GITHUB]


@pytest.mark.parametrize(
    "command",
    [["check"], ["redact"], ["redact", "--write"], ["fix", "--redact"], ["convert", "--to", "compact"]],
)
def test_an_allowed_value_is_never_reported(command: list[str], secret_log: Path) -> None:
    # S001 at 9:32 is the AWS key; allowed, no command lists it as a finding or a secret.
    aws = "AKIAFAKE0123456789AB"
    (secret_log.parent / "bbox-lark.toml").write_text(f'allowed-secrets = ["{aws}"]\n', encoding="utf-8")
    result = invoke([*command, str(secret_log)])
    assert "github_token" in result.output  # the secret that is not allowed is named
    assert "aws_access_key" not in result.output  # no finding, note or count names it


def test_apply_fixes_takes_the_allowed_values() -> None:
    from bbox_lark.fix import FIXERS, apply_fixes

    aws = "AKIAFAKE0123456789AB"
    done = apply_fixes(EXAMPLE.read_bytes(), [FIXERS["redact"]], allowed_secrets=[aws])
    assert aws in done.new_text
    assert [d.code for d in done.document.diagnostics if "aws" in d.message] == []


# -- conversions ---------------------------------------------------------------------------

WRITABLE = ["bbox", "compact", "atif", "jsonl"]


@pytest.mark.parametrize("to", WRITABLE)
def test_convert_refuses_a_file_with_a_provider_credential(to: str) -> None:
    """DECISIONS §13: without --redact or --keep-secrets, nothing is written (exit 1), and
    each credential is named by line, column and kind, never whole."""
    result = invoke(["convert", str(EXAMPLE), "--to", to])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "holds provider credentials (S001); not written" in result.stderr
    assert ":7:23: S001 anthropic_key" in result.stderr
    for secret in secrets_in(EXAMPLE.read_text(encoding="utf-8")):
        for part in secret.splitlines():
            assert "-----" in part or part.strip() not in result.stderr


@pytest.mark.parametrize("to", WRITABLE)
def test_convert_warns_about_secrets_it_carries_over(to: str) -> None:
    result = invoke(["convert", str(EXAMPLE), "--to", to, "--report", "--keep-secrets"])
    assert result.exit_code == 0
    assert "5 secret(s) carried over (anthropic_key 1, aws_access_key 1, generic_secret 1" in result.stderr
    assert "kept secrets (anthropic_key; convert --redact replaces them): 1 (line 7)" in result.stderr
    for secret in secrets_in(EXAMPLE.read_text(encoding="utf-8")):
        for part in secret.splitlines():  # a key block's BEGIN and END lines are not secret
            assert "-----" in part or part.strip() not in result.stderr


@pytest.mark.parametrize("to", WRITABLE)
def test_convert_redact_writes_no_secret(to: str) -> None:
    result = invoke(["convert", str(EXAMPLE), "--to", to, "--redact"])
    assert result.exit_code == 0
    assert secrets_in(result.stdout) == []
    assert "FAKE" not in result.stdout  # not a part of one either (the key block's lines)
    assert "carried over" not in result.stderr
    assert "dropped secrets (private_key), replaced by [redacted:private_key]: 1 (line 10)" in result.stderr


SECRETS_BODY = EXAMPLE.read_text(encoding="utf-8").split("---\n", 2)[2]


@pytest.mark.parametrize("to", ["bbox", "compact"])
@pytest.mark.parametrize(
    "text",
    [
        pytest.param(HEADER + SECRETS_BODY, id="none-stated"),
        pytest.param(HEADER + SECRETS_BODY.rstrip("\n"), id="none-stated-no-final-newline"),
        pytest.param(
            HEADER + "# redactions=1\nt:read .env → K=[redacted:env_var]\n" + SECRETS_BODY, id="at-top"
        ),
        pytest.param(
            HEADER + "t:read .env → K=[redacted:env_var]\n" + SECRETS_BODY + "# tokens_in=3 redactions=1\n",
            id="closing-summary",
        ),
    ],
)
def test_convert_redact_keeps_the_redaction_count_true(to: str, text: str) -> None:
    assert "W018" not in codes(text)
    done = bbox_lark.convert_text(text.encode(), to=to, redact=True)
    assert secrets_in(done.text) == []
    back = done.text if to == "bbox" else bbox_lark.convert_text(done.text.encode(), to="bbox").text
    assert "W018" not in codes(back), back
    assert back.count("redactions=") == 1
    assert bbox_lark.redact(back).text == back  # what redact would write


def test_a_redacted_lightbox_export_is_a_valid_chain_and_imports_clean(tmp_path: Path) -> None:
    leaky, clean = tmp_path / "leaky", tmp_path / "clean"
    assert invoke(["convert", str(EXAMPLE), "--to", "lightbox", "-o", str(leaky)]).exit_code == 1  # §13
    assert not leaky.exists()
    keep = ["--keep-secrets"]
    assert invoke(["convert", str(EXAMPLE), "--to", "lightbox", *keep, "-o", str(leaky)]).exit_code == 0
    assert invoke(["convert", str(EXAMPLE), "--to", "lightbox", "--redact", "-o", str(clean)]).exit_code == 0
    written = "".join(p.read_text(encoding="utf-8") for p in clean.iterdir())
    assert secrets_in(written) == [] and "FAKE" not in written
    assert invoke(["lightbox", "verify", str(clean)]).exit_code == 0
    # The importer runs the scanner too: the leaky export's secrets are counted, or replaced.
    assert invoke(["convert", str(leaky), "--to", "bbox"]).exit_code == 1  # refused (§13)
    carried = invoke(["convert", str(leaky), "--to", "bbox", "--keep-secrets"])
    assert "secret(s) carried over" in carried.stderr
    redacted = invoke(["convert", str(leaky), "--to", "bbox", "--redact"])
    assert secrets_in(redacted.stdout) == []


def test_the_claude_code_importer_runs_the_scanner(tmp_path: Path) -> None:
    records = [
        json.loads(line)
        for line in (FIXTURES / "claude-code" / "comments.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    for record in records:
        message = record.get("message")
        if (
            record.get("type") == "user"
            and isinstance(message, dict)
            and isinstance(message.get("content"), str)
        ):
            message["content"] += f" my key is {KEY} and env shows GITHUB_TOKEN={GITHUB}"
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert KEY in path.read_text(encoding="utf-8")
    refused = invoke(["convert", str(path), "--from", "claude-code", "--to", "bbox"])
    assert refused.exit_code == 1 and KEY not in refused.stdout and KEY not in refused.stderr  # §13
    carried = invoke(["convert", str(path), "--from", "claude-code", "--to", "bbox", "--keep-secrets"])
    assert KEY in carried.stdout
    assert "secret(s) carried over (anthropic_key" in carried.stderr
    redacted = invoke(["convert", str(path), "--from", "claude-code", "--to", "atif", "--redact"])
    assert KEY not in redacted.stdout and GITHUB not in redacted.stdout
    assert "[redacted:anthropic_key]" in redacted.stdout


def test_the_library_convert_takes_redact() -> None:
    done = bbox_lark.convert_text(EXAMPLE.read_bytes(), to="jsonl", redact=True)
    assert done.redacted and done.secrets["private_key"] == 1
    assert secrets_in(done.text) == []


@pytest.mark.parametrize("command", [["redact", "--help"], ["fix", "--help"]])
def test_the_help_shows_the_redaction_marker(command: list[str]) -> None:
    """Help is Rich markup: an unescaped ``[redacted:KIND]`` was taken for a style tag and
    vanished ("Replace each secret with  (docs/fix.md)")."""
    result = runner.invoke(app, command, env={"COLUMNS": "300", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert "[redacted:KIND]" in result.output


def test_report_stats_and_query_follow_allowed_secrets(secret_log: Path, tmp_path: Path) -> None:
    """The reading commands take the ``allowed-secrets`` of the configuration that applies to
    the file, as ``check`` does: an allowed value is no finding on the report page, in the
    ``diagnostics`` table or in ``stats``' errors."""
    aws = "AKIAFAKE0123456789AB"
    page = tmp_path / "page.html"
    assert "4 error(s)" in invoke(["stats", str(secret_log)]).output
    invoke(["report", str(secret_log), "-o", str(page)])
    assert "aws_access_key" in page.read_text(encoding="utf-8")  # found without the setting
    (secret_log.parent / "bbox-lark.toml").write_text(f'allowed-secrets = ["{aws}"]\n', encoding="utf-8")
    invoke(["report", str(secret_log), "-o", str(page)])
    shown = page.read_text(encoding="utf-8")
    assert "github_token" in shown and "aws_access_key" not in shown
    assert "3 error(s)" in invoke(["stats", str(secret_log)]).output
    pytest.importorskip("duckdb")
    listed = invoke(
        ["query", "--sql", "select message from diagnostics", "--format", "json", str(secret_log)]
    )
    assert "github_token" in listed.output and "aws_access_key" not in listed.output
