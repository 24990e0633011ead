"""The secret scanner (``bbox_lark/secrets.py``, DECISIONS §12): every row of the table finds
its own example and nothing else, the decoys of §12 are never secrets, redaction replaces
only the secret, and scanning is linear on hostile text."""

from __future__ import annotations

import pytest

from bbox_lark.secrets import PATTERNS, find_secrets, mask, redact_secrets

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
    from bbox_lark.secrets import SecretPattern

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
    assert find_secrets(text, allowed={"AKIAIOSFODNN7EXAMPLE"}) == []


def test_mask_never_shows_a_short_secret() -> None:
    assert mask("hunter22", "") == "…"
    assert mask("sk-ant-api03-" + "Q" * 40 + "AA", "sk-ant-") == "sk-ant-…AA"
