"""The table of credential shapes (docs/reference.md#secrets): one :class:`SecretPattern`
per shape, provider-specific first, as data. :mod:`bbox_lark.secrets.scanner` runs it (and
still answers to these names); ``docs/checks.md`` shows it.
"""

from __future__ import annotations

import re

from bbox_lark._classes import dataclass

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One shape of credential."""

    #: Lower-case name, used in ``[redacted:KIND]`` and in findings.
    kind: str
    #: ``error``: a provider's own key shape; ``warning``: a generic guess by name and entropy.
    severity: str
    #: The regular expression. The secret is its ``secret`` group (the whole match without
    #: one); the ``shown`` group, inside it, is the part that is not secret (a provider's
    #: fixed prefix), kept in :attr:`SecretMatch.masked`.
    pattern: str
    #: One line for the docs: what the pattern finds.
    description: str
    #: A fake secret in context that the pattern finds (docs and tests).
    example: str
    #: Literal strings one of which every match contains (the prefilter: short and
    #: shared where that makes fewer of them, as ``gh`` for every GitHub prefix). With
    #: ``fold=True`` the pattern and its hints are lower-case and run on the lower-cased
    #: text (offsets are the same; the secret is taken from the original text).
    hints: tuple[str, ...]
    fold: bool = False
    #: Names that hold a hint but do not count as it (taken out of the text before the
    #: hints are tested; the pattern itself still runs on the whole text): the writers'
    #: usage fields (``tokens_in=``) hold ``token`` on most lines of a real log.
    unless: tuple[str, ...] = ()
    #: Characters that must not come right before a match (a word boundary, tested after
    #: the match: a look-behind at the start of a pattern would slow every search).
    after: str = ""
    #: How many trailing characters the masked form shows.
    tail: int = 2
    #: ``shape``: a match counts unless it is a placeholder; ``random``: it must also look
    #: random (generic secrets, see :func:`looks_random`).
    test: str = "shape"


_B62 = "A-Za-z0-9"
_ASSIGN = r"""["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?"""
#: A generic secret's value (on lower-cased text).
_VALUE = r"(?P<secret>[a-z0-9+/=_\-.~!@#$%^&*]{16,512})"


def _after(*names: str) -> str:
    """A look-behind: the text so far ends with one of ``names``."""
    return "(?:" + "|".join(f"(?<={re.escape(name)})" for name in names) + ")"


def _generic(
    name: str, hint: str, description: str, example: str, unless: tuple[str, ...] = ()
) -> SecretPattern:
    """A generic secret: a high-entropy value assigned to a name that starts with ``name``."""
    return SecretPattern(
        "generic_secret",
        WARNING,
        name + r"[a-z0-9_.\-]{0,40}?" + _ASSIGN + _VALUE,
        description,
        example,
        (hint,),
        fold=True,
        unless=unless,
        test="random",
    )


#: Every shape of secret, provider-specific first (an overlap keeps the earlier row).
PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private_key",
        ERROR,
        r"(?P<secret>(?P<shown>-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----)"
        r"(?:(?:[A-Za-z0-9+/= \t]|\\[rn]|\r?\n[ \t]*|(?:Proc-Type|DEK-Info|Comment): [^\n]{1,200}){0,8000}?"
        r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        # Without its END line: the base64 that follows, never ending inside a word (a key on
        # the BEGIN line after it, `-----BEGIN … KEY----- then ghp_…`, is its own match).
        r"|[A-Za-z0-9+/=\\ \t]{0,8000}(?![\w-])"
        r"(?:\r?\n(?:  |\t)[ \t]*(?:[A-Za-z0-9+/=\\]{1,200}|(?:Proc-Type|DEK-Info|Comment): [^\n]{1,200})"
        r"[ \t]*(?=\r?\n|\Z)){0,200}))",
        "A PEM private key block (RSA, EC, OpenSSH, PGP, ...), from `BEGIN` to `END` across"
        " continuation lines; without its `END` line, the base64 that follows.",
        "-----BEGIN RSA PRIVATE KEY-----\n  MIIEFAKEkeyFORtestsONLYnotAREALkey0123456789abcdefFAKE\n"
        "  -----END RSA PRIVATE KEY-----",
        ("-----BEGIN",),
        tail=0,
    ),
    SecretPattern(
        "anthropic_key",
        ERROR,
        r"(?P<secret>(?P<shown>sk-ant-)[a-z]{2,10}[0-9]{0,3}-[A-Za-z0-9_\-]{32,200})",
        "An Anthropic API or admin key (`sk-ant-api03-…`).",
        "ANTHROPIC_API_KEY=sk-ant-api03-FAKEfakeFAKEfake0123456789-notARealKeyJustForTests_0123456789AA",
        ("sk-",),
        after=_B62,
    ),
    SecretPattern(
        "openai_key",
        ERROR,
        r"(?P<secret>(?P<shown>sk-(?:proj-|svcacct-|admin-|None-)?)"
        r"(?:(?<=-)[A-Za-z0-9_\-]{20,200}T3BlbkFJ[A-Za-z0-9_\-]{20,200}"
        r"|(?<=[jtn]-)[A-Za-z0-9_\-]{40,250}|[A-Za-z0-9]{48}(?![A-Za-z0-9_-])))",
        "An OpenAI API key (`sk-proj-…`, `sk-svcacct-…`, the classic `sk-` and 48 letters and digits).",
        "OPENAI_API_KEY=sk-proj-FAKEfakeFAKEfake0123456789-notARealKeyJustForTests0123456789xyz",
        ("sk-",),
        after=_B62,
    ),
    SecretPattern(
        "aws_access_key",
        ERROR,
        r"(?P<secret>(?P<shown>A[KS]IA)[A-Z0-9]{16})(?![A-Z0-9])",
        "An AWS access key id (`AKIA…`, long-term; `ASIA…`, temporary: 20 upper-case letters"
        " and digits). Role and user ids (`AROA…`, `AIDA…`) are names, not secrets.",
        "aws_access_key_id = AKIAFAKE0123456789AB",
        ("IA",),
        after="A-Z0-9",
    ),
    SecretPattern(
        "aws_secret_key",
        ERROR,
        r"secret(?:_?access_?key|_?key"
        + _after("aws_secret_key", "awssecretkey", "aws_secretkey", "awssecret_key")
        + ")"
        + _ASSIGN
        + r"(?P<secret>[a-z0-9/+]{40})(?![a-z0-9/+=])",
        "An AWS secret access key: 40 base64 characters after `aws_secret_access_key`,"
        " `SecretAccessKey` or `AWS_SECRET_KEY` (any case).",
        "aws_secret_access_key = FAKEfakeFAKEfake/0123456789+notARealKey0",
        ("secret",),
        fold=True,
    ),
    SecretPattern(
        "github_token",
        ERROR,
        # A classic token ends where another begins (``ghp_…ghp_…`` run together: two keys).
        r"(?P<secret>(?P<shown>gh[pousr]_)[" + _B62 + r"]{36}"
        r"(?:(?:(?!gh[pousr]_)[" + _B62 + r"]){0,215}(?=gh[pousr]_)|[" + _B62 + r"]{0,215}(?![A-Za-z0-9_]))"
        r"|(?P<shown2>github_pat_)[A-Za-z0-9_]{50,250}(?![A-Za-z0-9_]))",
        "A GitHub token: classic (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`) or fine-grained (`github_pat_`).",
        "git remote set-url origin https://x-access-token:ghp_FAKEfake0123456789notARealTokenABC12@github.com/o/r",
        ("gh", "github_pat_"),
        after=_B62,
    ),
    SecretPattern(
        "slack_token",
        ERROR,
        r"(?P<secret>(?P<shown>xox[abposre]-)[A-Za-z0-9\-]{10,250}"
        r"|(?P<shown2>https://hooks\.slack\.com/services/)T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/[A-Za-z0-9]{16,40})",
        "A Slack token (`xoxb-`, `xoxp-`, `xoxa-`, …) or incoming-webhook URL.",
        "SLACK_BOT_TOKEN=xoxb-0123456789-FAKEfake0123-notARealTokenForTests",
        ("xox", "://"),
        after=_B62,
    ),
    SecretPattern(
        "google_api_key",
        ERROR,
        r"(?P<secret>(?P<shown>AIza)[0-9A-Za-z_\-]{35})(?![A-Za-z0-9_-])",
        "A Google API key (`AIza` and 35 characters).",
        "GOOGLE_API_KEY=AIzaFAKEfake0123456789_notARealKey-0123",
        ("AIza",),
        after=_B62,
    ),
    SecretPattern(
        "stripe_key",
        ERROR,
        r"(?P<secret>(?P<shown>[sr]k_live_)[" + _B62 + r"]{20,250})(?![A-Za-z0-9_])",
        "A Stripe live secret or restricted key (`sk_live_`, `rk_live_`); test keys are not secrets.",
        "STRIPE_KEY=sk_live_FAKEfake0123456789notAReal",
        ("k_live_",),
        after=_B62,
    ),
    SecretPattern(
        "huggingface_token",
        ERROR,
        r"(?P<secret>(?P<shown>hf_)[" + _B62 + r"]{30,40})(?![A-Za-z0-9_])",
        "A Hugging Face access token (`hf_` and 34 letters).",
        "HF_TOKEN=hf_FAKEfakeFAKEnotARealTokenForTestsAB",
        ("hf_",),
        after=_B62,
    ),
    SecretPattern(
        "jwt",
        ERROR,
        r"(?P<secret>(?P<shown>eyJ)[A-Za-z0-9_\-]{10,4000}\.eyJ[A-Za-z0-9_\-]{10,8000}"
        r"\.[A-Za-z0-9_\-]{10,2000})(?![A-Za-z0-9_-])",
        "A JSON Web Token (three base64url parts, header and payload starting `eyJ`).",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlLXVzZXIifQ.FAKEsignatureNotReal0123",
        ("eyJ",),
        after=_B62,
    ),
    SecretPattern(
        "url_password",
        ERROR,
        r"://[^\s/:@\"'<>\[\]]{1,256}:(?P<secret>[^\s/@\"'<>]{1,256})@(?=[A-Za-z0-9\[])",
        "A password in a URL (`scheme://user:PASSWORD@host`); only the password is the secret.",
        "DATABASE_URL=postgres://app:Fake0Passw0rd9x@db.internal:5432/app",
        ("://",),
        tail=0,
    ),
    _generic(
        "secret",
        "secret",
        "A high-entropy value (16 characters or more, letters and digits, not hex) assigned to"
        " a name with `secret` in it (any case).",
        "CLIENT_SECRET=Fk9q2LmZ7vXw4RtY8pQs",
    ),
    _generic(
        "token",
        "token",
        "The same after a name with `token` in it.",
        'curl -H "X-Api-Token: Fk9q2LmZ7vXw4RtY8pQs"',
        ("tokens_in", "tokens_out", "tokens_cached", "max_tokens"),
    ),
    _generic(
        "passw(?:or)?d",
        "passw",
        "The same after a name with `password` or `passwd` in it.",
        "mysql --password=Fk9q2LmZ7vXw4RtY8pQs",
    ),
    _generic("pwd", "pwd", "The same after a name with `pwd` in it.", "DB_PWD=Fk9q2LmZ7vXw4RtY8pQs"),
    _generic(
        "credentials?",
        "credential",
        "The same after a name with `credential` in it.",
        "credential=Fk9q2LmZ7vXw4RtY8pQs",
    ),
    _generic(
        "key"
        + _after(
            *("apikey", "api_key", "api-key", "auth_key", "auth-key", "access_key", "access-key"),
            *("accesskey", "private_key", "private-key", "privatekey"),
        ),
        "key",
        "The same after `api_key`, `access_key`, `auth_key` or `private_key` (any spelling).",
        "api_key: Fk9q2LmZ7vXw4RtY8pQs",
    ),
    SecretPattern(
        "generic_secret",
        WARNING,
        r"bearer[ \t]+(?P<secret>[a-z0-9\-._~+/]{16,512}=*)",
        "The same after `Bearer` (an HTTP authorization header).",
        "Authorization: Bearer Fk9q2LmZ7vXw4RtY8pQs",
        ("bearer",),
        fold=True,
        test="random",
    ),
)


__all__ = ["ERROR", "PATTERNS", "WARNING", "SecretPattern"]
