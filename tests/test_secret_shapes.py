"""Every form of each provider pattern and its near-misses, as a table (issue 32): a key of
each accepted form is found as its kind, and each near-miss (a prefix that is a name, not a
secret; one character short or long; a test key) is not found as that kind. Then a secret
in every position a line can hold one, continuation lines included, found by ``check`` at
its line and column and replaced by ``redact`` and ``convert --redact`` alike.

The keys are built at run time from a fixed seed (no file holds one whole)."""

from __future__ import annotations

import random
import string

import pytest

import bbox_lark
from bbox_lark.convert import convert
from bbox_lark.secrets.redaction import redact
from bbox_lark.secrets.scanner import find_secrets

_RNG = random.Random(32)
B62 = string.ascii_letters + string.digits
UP = string.ascii_uppercase + string.digits


def r(size: int, alphabet: str = B62) -> str:
    """``size`` random characters (fixed seed): a key's body."""
    return "".join(_RNG.choice(alphabet) for _ in range(size))


D, U = "-", "_"  # keys are joined from pieces: no file holds one whole
PEM_BODY = "\n".join("  " + r(64, B62 + "+/") for _ in range(3))

#: (expected kind or None, text): every accepted form and its near-misses.
SHAPES: list[tuple[str | None, str]] = [
    # AWS access key ids: AKIA (long-term), ASIA (temporary); AROA/AIDA are role/user ids.
    ("aws_access_key", "AK" + "IA" + r(16, UP)),
    ("aws_access_key", "AS" + "IA" + r(16, UP)),
    (None, "AR" + "OA" + r(16, UP)),
    (None, "AI" + "DA" + r(16, UP)),
    (None, "AK" + "IA" + r(15, UP)),
    (None, "AK" + "IA" + r(17, UP)),
    (None, "x" + "AK" + "IA" + r(16, UP)[:-1] + "q"),  # lower-case: not the shape
    # AWS secret access key: 40 characters after its name.
    ("aws_secret_key", "aws_secret_access_key = " + r(40, B62 + "/+")),
    ("aws_secret_key", "AWS_SECRET_KEY=" + r(40, B62 + "/+")),
    ("aws_secret_key", '"SecretAccessKey": "' + r(40, B62 + "/+") + '"'),
    # GitHub: each classic prefix at its exact length, fine-grained tokens.
    *(("github_token", "gh" + p + U + r(36)) for p in "pousr"),
    *((None, "gh" + p + U + r(35)) for p in "pousr"),
    (None, "gh" + "x" + U + r(36)),
    ("github_token", "github" + U + "pat" + U + r(22) + U + r(59)),
    (None, "github" + U + "pat" + U + r(40)),
    # OpenAI: project, service-account and classic keys.
    ("openai_key", "sk" + D + "proj" + D + r(74)),
    ("openai_key", "sk" + D + "svcacct" + D + r(74)),
    ("openai_key", "sk" + D + "admin" + D + r(20) + "T3Blbk" + "FJ" + r(20)),
    ("openai_key", "sk" + D + r(48)),
    (None, "sk" + D + r(47)),
    (None, "sk" + D + "proj" + D + "..."),
    # Anthropic: API and admin keys; a placeholder is not one.
    ("anthropic_key", "sk" + D + "ant" + D + "api03" + D + r(93)),
    ("anthropic_key", "sk" + D + "ant" + D + "admin01" + D + r(93)),
    (None, "sk" + D + "ant" + D + "api03" + D + r(20)),
    (None, "sk" + D + "ant" + D + "..."),
    # Slack: tokens and incoming webhooks.
    *(("slack_token", "xox" + p + D + r(12, string.digits) + D + r(24)) for p in "bpaors"),
    (None, "xox" + "z" + D + r(12, string.digits) + D + r(24)),
    ("slack_token", "https://hooks.slack.com/services/T" + r(9, UP) + "/B" + r(9, UP) + "/" + r(24)),
    # Google API keys.
    ("google_api_key", "AI" + "za" + r(35)),
    (None, "AI" + "za" + r(30)),
    # Stripe: live secret and restricted keys; test and publishable keys are not secrets.
    ("stripe_key", "sk" + U + "live" + U + r(24)),
    ("stripe_key", "rk" + U + "live" + U + r(24)),
    (None, "sk" + U + "test" + U + r(24)),
    (None, "pk" + U + "live" + U + r(24)),
    # Hugging Face.
    ("huggingface_token", "hf" + U + r(34)),
    (None, "hf" + U + r(20)),
    # Private key blocks: RSA, EC, OpenSSH, PGP; a public key is not one.
    *(
        (
            "private_key",
            f"-----BEGIN {name} PRIVATE KEY{block}-----\n{PEM_BODY}\n"
            f"  -----END {name} PRIVATE KEY{block}-----",
        )
        for name, block in (("RSA", ""), ("EC", ""), ("OPENSSH", ""), ("PGP", " BLOCK"))
    ),
    ("private_key", "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY),
    (None, "-----BEGIN PUBLIC KEY-----\n" + PEM_BODY + "\n  -----END PUBLIC KEY-----"),
    # JSON Web Tokens: three parts.
    ("jwt", "ey" + "J" + r(20) + ".ey" + "J" + r(40) + "." + r(43)),
    (None, "ey" + "J" + r(20) + ".ey" + "J" + r(40)),
    # Passwords in URLs: only a real password.
    ("url_password", "postgres://app:" + r(16) + "@db.internal:5432/app"),
    ("url_password", "https://user:" + r(12) + "@example.com/x"),
    (None, "https://user:${PASS}@example.com"),
    (None, "https://user@example.com"),
    (None, "git@github.com:owner/repo.git"),
    # Generic secrets (S002): a random value after a secret-ish name; identifiers are not.
    ("generic_secret", "CLIENT_SECRET=" + r(20)),
    ("generic_secret", "api_key: " + r(24)),
    (None, "secretKeyRef: name=db" + D + "credentials" + D + "5f7d9c8b6" + D + "x2x9z"),
    (None, "password: MyDatabasePassword2"),
    (None, "token_path=secret_store.backup.json"),
]


def _id(row: tuple[str | None, str]) -> str:
    kind, text = row
    return f"{kind or 'none'}:{text[:14]}"


@pytest.mark.parametrize("row", SHAPES, ids=_id)
def test_each_form_and_near_miss(row: tuple[str | None, str]) -> None:
    kind, text = row
    found = [m.kind for m in find_secrets(text)]
    if kind is None:
        assert found == [], text
    else:
        assert found == [kind], text


#: The kinds a provider prefix starts (the others need a name or a URL around them).
PREFIXED = {"aws_access_key", "github_token", "openai_key", "anthropic_key", "slack_token"}
PREFIXED |= {"google_api_key", "stripe_key", "huggingface_token", "jwt"}


@pytest.mark.parametrize(
    "row", [row for row in SHAPES if row[0] in PREFIXED and "://" not in row[1]], ids=_id
)
@pytest.mark.parametrize(
    "around",
    ["{}", "x={}", '"{}"', "'{}'", "(x {})", "_{}", "Bash_{}", "a\\n{}", "{}.", '{{"k": "{}"}}'],
)
def test_a_key_starts_after_any_non_key_character(row: tuple[str | None, str], around: str) -> None:
    """DECISIONS §13: a provider prefix starts a key after `_`, a letter escape's letter or a
    quote, as after a space."""
    kind, text = row
    framed = around.format(text)
    assert kind in [m.kind for m in find_secrets(framed)], framed


# -- every position a line can hold a secret, for check and redact alike -------------------

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n{extra}---\n"
KEY = "gh" + "p" + U + r(36)


def _positions() -> dict[str, tuple[str, int, int]]:
    """Each position: (the file, the line and column where the key starts)."""
    plain = HEADER.format(extra="")
    return {
        "header-value": (HEADER.format(extra=f"cwd: /home/{KEY}\n") + "u: hi\n", 6, 12),
        "user": (plain + f"u: use {KEY} now\n", 7, 8),
        "agent": (plain + f"a: found {KEY}\n", 7, 10),
        "thinking": (plain + f"th: the key {KEY} leaked\n", 7, 13),
        "written-text": (plain + f'u: "line1\\n{KEY}"\n', 7, 12),
        "argument": (plain + f"t:bash 'echo {KEY}' id=c1 → [ok]\n", 7, 14),
        "field-value": (plain + f"t:read path=/x/{KEY} id=c1 → [ok]\n", 7, 16),
        "result": (plain + f"t:bash 'env' id=c1 → GH={KEY}\n", 7, 25),
        "o-line": (plain + f"t:bash 'env' id=c1\no: id=c1 → {KEY}\n", 8, 12),
        "comment": (plain + f"# note {KEY}\n", 7, 8),
        "lifecycle": (plain + f"@end reason={KEY}\n", 7, 13),
        "tool-name": (plain + f"t!:Bash_{KEY}\n", 7, 9),
        "continuation": (plain + f"t:bash 'env' id=c1 → [ok]\n  GH={KEY}\n", 8, 6),
        "wrapped": (plain + f"t:bash 'cat' id=c1 → [ok]\n  x {KEY[:20]}\n  {KEY[20:]} y\n", 8, 5),
    }


POSITIONS = _positions()


@pytest.mark.parametrize("position", list(POSITIONS))
def test_check_finds_a_key_in_every_position(position: str) -> None:
    text, line, col = POSITIONS[position]
    found = [(d.code, d.line, d.col) for d in bbox_lark.check(text) if d.code.startswith("S")]
    assert found == [("S001", line, col)], position
    assert all(KEY not in d.message for d in bbox_lark.check(text))


@pytest.mark.parametrize("position", list(POSITIONS))
def test_redact_and_convert_redact_replace_a_key_in_every_position(position: str) -> None:
    text, _, _ = POSITIONS[position]
    for redacted in (redact(text).text, convert(text, "bbox", to="bbox", redact=True).text):
        assert KEY[4:14] not in redacted and KEY[-10:] not in redacted, position
        assert "[redacted:github_token]" in redacted
        assert not [d for d in bbox_lark.check(redacted) if d.code.startswith("S")]
        assert len(redacted.splitlines()) >= len(text.splitlines())  # no line is lost
