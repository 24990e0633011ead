"""The secret scanner (``bbox_lark/secrets/scanner.py``, DECISIONS §12): every row of the table finds
its own example and nothing else, the decoys of §12 are never secrets, redaction replaces
only the secret, and scanning is linear on hostile text."""

from __future__ import annotations

from pathlib import Path

import pytest
from printer_support import EXTERNAL, external_files, file_id, golden_files

import bbox_lark
from bbox_lark.secrets.scanner import (
    _CASED_HINTS,
    _FOLDED_HINTS,
    _UNLESS,
    PATTERNS,
    _hinted,
    find_secrets,
    mask,
    might_hold_secrets,
    redact_secrets,
)

DECOYS = [
    "sig=Es…...",
    "sig=EsYBCkYICxgCKkB...",
    "sk-ant-...",
    "ANTHROPIC_API_KEY=sk-ant-api03-...",
    "[redacted:anthropic_key]",
    "API_KEY=[redacted:env_var] token=[redacted:github_token]",
    "@blob sha256=" + "ab12" * 16 + " bytes=120",
    "repo_sha: 215db51c0ffee215db51c0ffee215db51c0ffee1",
    "token=550e8400-e29b-41d4-a716-446655440000",
    "session_token=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "password=${DB_PASSWORD} api_key=<your-key> secret=$SECRET token={{ token }}",
    "https://user:password@example.com https://user:${PASS}@example.com",
    "git@github.com:owner/repo.git https://github.com:443/owner/repo",
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx AKIAXXXXXXXXXXXXXXXX",
    "tokens_in=9 tokens_out=3 tokens_cached=12834 max_tokens=64000",
    "secret_key_path=secret_store_backup_v2.json",
    "sk_test_FAKEfake0123456789notAReal",
]


@pytest.mark.parametrize("row", PATTERNS, ids=lambda row: f"{row.kind}-{row.hints[0]}")
def test_each_row_finds_its_example(row: object) -> None:
    from bbox_lark.secrets.scanner import SecretPattern

    assert isinstance(row, SecretPattern)
    found = find_secrets(row.example)
    assert [m.kind for m in found] == [row.kind]
    assert [m.severity for m in found] == [row.severity]
    secret = row.example[found[0].start : found[0].end]
    assert secret not in found[0].masked
    assert "…" in found[0].masked


@pytest.mark.parametrize("text", DECOYS)
def test_decoys_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []


def test_redaction_replaces_only_the_secret() -> None:
    text = "git remote set-url origin https://x-access-token:ghp_FAKEfake0123456789notARealTokenABC12@github.com/o/r"
    redacted, found = redact_secrets(text)
    assert (
        redacted == "git remote set-url origin https://x-access-token:[redacted:github_token]@github.com/o/r"
    )
    assert [m.kind for m in found] == ["github_token"]
    assert find_secrets(redacted) == []


def test_allowed_values_are_not_reported() -> None:
    text = "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"
    assert [m.kind for m in find_secrets(text)] == ["aws_access_key"]
    assert find_secrets(text, allowed_secrets={"AKIAIOSFODNN7EXAMPLE"}) == []


def test_mask_never_shows_a_short_secret() -> None:
    assert mask("hunter22", "") == "…"
    assert mask("sk-ant-api03-" + "Q" * 40 + "AA", "sk-ant-") == "sk-ant-…AA"


# -- the checks (S001, S002) ---------------------------------------------------------------

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
REPO = Path(__file__).resolve().parent.parent
S001_FILE = REPO / "corpus" / "invalid" / "S001-provider-credentials.bbox"
S002_FILE = REPO / "corpus" / "invalid" / "S002-generic-secret.bbox"


def secrets_of(path: Path) -> list[str]:
    """Every secret written whole in ``path`` (what no output may contain)."""
    text = path.read_text(encoding="utf-8")
    return [text[m.start : m.end] for m in find_secrets(text)]


def test_the_corpus_files_hold_the_secrets_they_report() -> None:
    assert len(secrets_of(S001_FILE)) == len(bbox_lark.check(S001_FILE.read_text(encoding="utf-8")))
    assert {d.code for d in bbox_lark.check(S002_FILE.read_text(encoding="utf-8"))} == {"S002"}


def test_the_s001_corpus_file_covers_every_provider_kind() -> None:
    """The test above compares the scanner with the check built on it, so a secret both miss
    passes it. This one holds the corpus file to the table: every provider row (an error)
    has a finding in it, every finding is S001 and says its kind."""
    diagnostics = bbox_lark.check(S001_FILE.read_text(encoding="utf-8"))
    assert {d.code for d in diagnostics} == {"S001"}
    providers = {row.kind for row in PATTERNS if row.severity == "error"}
    named = {kind for kind in providers for d in diagnostics if kind in d.message}
    assert named == providers


@pytest.mark.parametrize("output_format", ["concise", "full", "json", "sarif", "github", "junit", "text"])
def test_no_check_output_shows_a_secret_whole(output_format: str) -> None:
    from typer.testing import CliRunner

    from bbox_lark.cli import app

    result = CliRunner().invoke(
        app,
        ["check", "--output-format", output_format, str(S001_FILE), str(S002_FILE)],
        env={"NO_COLOR": "1"},
    )
    assert result.exit_code == 1, result.output
    assert "S001" in result.output
    for secret in secrets_of(S001_FILE) + secrets_of(S002_FILE):
        assert secret not in result.output, f"{output_format} shows a secret whole"


def test_standard_input_full_output_shows_no_secret_whole() -> None:
    from typer.testing import CliRunner

    from bbox_lark.cli import app

    data = S001_FILE.read_bytes()
    result = CliRunner().invoke(app, ["check", "--output-format", "full", "-"], input=data)
    assert "S001" in result.output
    for secret in secrets_of(S001_FILE):
        assert secret not in result.output


def test_a_private_key_block_is_one_finding_at_its_first_line() -> None:
    text = HEADER + (
        "t:read id_rsa → -----BEGIN OPENSSH PRIVATE KEY-----\n"
        "  b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "  QyNTUxOQAAACDFAKEFAKEFAKEnotARealKeyForTestsOnly0123456789abcdefABCD\n"
        "  -----END OPENSSH PRIVATE KEY-----\n"
        "t:ls → [ok]\n"
    )
    found = bbox_lark.check(text)
    assert [(d.code, d.line, d.col) for d in found] == [("S001", 7, 17)]
    assert "private_key" in found[0].message


def test_header_values_and_comments_are_scanned() -> None:
    text = HEADER.replace(
        "runner: local\n", "runner: local\nextra.token: ghp_FAKEfake0123456789notARealTokenABC12\n"
    )
    text += "# rotated AKIAFAKE0123456789AB today\n"
    assert [(d.code, d.line) for d in bbox_lark.check(text)] == [("S001", 6), ("S001", 8)]


def test_suppression_and_selection_work_as_for_any_code() -> None:
    line = "u: sk-ant-api03-FAKEfakeFAKEfake0123456789-notARealKeyJustForTests_0123456789AA\n"
    assert [d.code for d in bbox_lark.check(HEADER + line)] == ["S001"]
    assert bbox_lark.check(HEADER + "# bbox-lark: ignore[S001]\n" + line) == []
    assert bbox_lark.check(HEADER + line, ignore=["S"]) == []
    assert [d.code for d in bbox_lark.check(HEADER + line, select=["S"])] == ["S001"]


def test_allowed_secrets_in_the_configuration(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bbox_lark.cli import app

    log = tmp_path / "session.bbox"
    log.write_text(HEADER + "t:bash env → AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["check", str(log)])
    assert result.exit_code == 1 and "S001 aws_access_key AKIA…LE" in result.output
    (tmp_path / "bbox-lark.toml").write_text('allowed-secrets = ["AKIAIOSFODNN7EXAMPLE"]\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["check", str(log)])
    assert result.exit_code == 0, result.output


EXTERNAL_LOGS = external_files()


@pytest.mark.skipif(not EXTERNAL_LOGS, reason="../shared/corpus-external is absent")
def test_the_real_logs_hold_no_secret() -> None:
    # They hold none (looked at when the scanner was written); a finding here is a false
    # positive to fix in the table, or a real secret to look at.
    found = {
        file_id(path): [
            f"{d.line}:{d.col} {d.message}" for d in bbox_lark.check(path.read_bytes(), select=["S"])
        ]
        for path in EXTERNAL_LOGS
    }
    assert {name: f for name, f in found.items() if f} == {}


IMPORTED_LOGS = sorted(
    path
    for folder in ("atif", "bb7", "claude-code", "lightbox")
    for path in (EXTERNAL / folder).glob("*.json*")
    if not path.name.endswith(".meta.json")
)


@pytest.mark.skipif(not IMPORTED_LOGS, reason="../shared/corpus-external is absent")
def test_the_real_logs_carry_no_secret_into_a_conversion() -> None:
    # Every importer and the bbox reader run the scanner: converting the real logs (ATIF,
    # bb7, Claude Code, Lightbox, bbox) to ATIF carries none over.
    from bbox_lark.convert import ConvertError

    carried: dict[str, dict[str, int]] = {}
    for path in [*IMPORTED_LOGS, *EXTERNAL_LOGS]:
        try:
            done = bbox_lark.convert_text(path.read_bytes(), to="atif", path=path)
        except ConvertError:  # an input refused as a whole (the INVALID cases): nothing written
            continue
        if done.secrets:
            carried[file_id(path)] = done.secrets
    assert len(IMPORTED_LOGS) >= 10
    assert carried == {}


def test_a_message_that_quotes_a_value_never_shows_a_secret() -> None:
    key = "sk-ant-api03-FAKEfakeFAKEfake0123456789-notARealKeyJustForTests_0123456789AA"
    found = bbox_lark.check(HEADER + f"t:curl api ts={key} → [ok]\n")
    assert {d.code for d in found} == {"S001", "W005"}
    for d in found:
        assert key not in d.message
    assert "sk-ant-…AA" in next(d.message for d in found if d.code == "W005")


# -- the prefilter ---------------------------------------------------------------------------

#: Texts made to catch a prefilter that drops a line the scan would look at: hints next to
#: and inside the names that only look like one (``tokens_in``), in other cases, and with
#: characters whose lower case is ASCII (the Kelvin sign) or whose case folding is (``ſ``).
PROBES = [
    "tokens_in=9 tokens_out=3 tokens_cached=1 max_tokens=64000",
    "secretokens_in=1",
    "max_tokens_in=1 token=Fk9q2LmZ7vXw4RtY8pQs",
    "tokens_in=1 TOKEN=Fk9q2LmZ7vXw4RtY8pQs",
    "max_tokensx=Fk9q2LmZ7vXw4RtY8pQs",
    "max_token=Fk9q2LmZ7vXw4RtY8pQs",
    "tokens_inx tokens_ou tokens_cache",
    "Max_Tokens=1 Tokens_In=2 tokens_out_token=Fk9q2LmZ7vXw4RtY8pQs",
    "to\u212aen=Fk9q2LmZ7vXw4RtY8pQs",
    "to\u212aens_in=Fk9q2LmZ7vXw4RtY8pQs",
    "token\u017f_in=Fk9q2LmZ7vXw4RtY8pQs",
    "\u0130API_KEY=Fk9q2LmZ7vXw4RtY8pQs",
    "Authorization: BEARER Fk9q2LmZ7vXw4RtY8pQs",
    *(f"tokens_in=3 {row.example} max_tokens=1" for row in PATTERNS),
    *(row.example.upper() for row in PATTERNS),
    *(row.example.lower() for row in PATTERNS),
    # each hint and name alone, at the start and the end of a text, and upper-cased
    *(f"{text}{end}" for text in (*_CASED_HINTS, *_FOLDED_HINTS, *_UNLESS) for end in ("", "=x", " ")),
    *(f"x={text}" for text in (*_CASED_HINTS, *_FOLDED_HINTS, *_UNLESS)),
    *(text.upper() for text in (*_FOLDED_HINTS, *_UNLESS)),
]


def _texts(source: str) -> list[str]:
    """The samples of this file, or each file of the project's corpus or of the external
    real logs, whole and line by line."""
    if source == "samples":
        return [*DECOYS, *PROBES, *(row.example for row in PATTERNS)]
    if source == "corpus":
        paths = [path for path in golden_files() if path.suffix == ".bbox"]
    else:
        paths = [path for path in EXTERNAL_LOGS if "rlog-real" in path.parts]
        if not paths:
            pytest.skip("../shared/corpus-external/rlog-real is absent")
    texts = []
    for path in paths:
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        texts += [text, *text.splitlines()]
    return texts


@pytest.mark.parametrize("source", ["samples", "corpus", "rlog-real"])
def test_the_prefilter_never_drops_what_the_scan_would_find(source: str) -> None:
    """Differential: where ``might_hold_secrets`` says no, the full scan looks at no row of
    the table (so it finds nothing)."""
    texts = _texts(source)
    assert texts
    for text in texts:
        if not might_hold_secrets(text):
            assert _hinted(text, text.lower()) == [], text
            assert find_secrets(text) == [], text
    if source != "samples":  # and it does stop most lines
        assert sum(1 for text in texts if not might_hold_secrets(text)) > len(texts) // 2


# -- found by the mutation session's reading (issue 32): a key beside a key block ----------

_GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
_BLOCK_HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\nt:read key.pem → [ok]\n"


def test_a_key_after_a_begin_line_is_found_whole_and_redacted_whole() -> None:
    """The base64 after a BEGIN line without its END never ends inside a word: a token after
    it on the same line is its own finding, and no part of it survives redaction."""
    from bbox_lark.secrets.scanner import find_secrets, mask_secrets

    text = f"-----BEGIN RSA PRIVATE KEY----- then {_GH}"
    assert [m.kind for m in find_secrets(text)] == ["private_key", "github_token"]
    assert _GH[4:30] not in mask_secrets(text)
    redacted = bbox_lark.redact(f"u: {text}\n").text
    assert "A1b2C3d4" not in redacted and "[redacted:github_token]" in redacted


def test_a_key_after_a_key_blocks_end_on_a_continuation_line_is_found() -> None:
    text = (
        _BLOCK_HEAD
        + "  -----BEGIN RSA PRIVATE KEY-----\n"
        + "  MIIEFAKEkeyFORtestsONLYnotAREALkey0123456789abcdefFAKE\n"
        + f"  -----END RSA PRIVATE KEY----- and {_GH}\n"
    )
    found = [(d.code, d.line, d.col) for d in bbox_lark.check(text) if d.code.startswith("S")]
    assert found == [("S001", 7, 3), ("S001", 9, text.splitlines()[8].index("ghp_") + 1)]
    assert "A1b2C3d4" not in bbox_lark.redact(text).text
