"""Credentials in a log (docs/reference.md#secrets): a provider's key is an error, a random-looking value
under a secret-ish name a warning. The shapes are one table, :data:`bbox_lark.secrets.scanner.PATTERNS`
(shown in ``docs/checks.md``); this rule scans every line with it: message, thinking, call
arguments, fields, results, comments, continuation lines and the header's values.

A finding names the kind and shows the secret masked (``sk-ant-…AA``): the message must not
leak the secret into CI logs, SARIF or JSON. Values a config lists in ``allowed-secrets``
(test fixtures) are not reported.
"""

from __future__ import annotations

from bbox_lark.checks.base import EVERY_LINE, Context, Rule, describe, example, rule
from bbox_lark.secrets.scanner import ERROR, SecretMatch, find_secrets, might_hold_secrets
from bbox_lark.syntax.record import Record

FAMILY = "secrets"

_FAKE_KEY = "sk-ant-api03-FAKEfakeFAKEfake0123456789-notARealKeyJustForTests_0123456789AA"

describe(
    "S001",
    "provider-credential",
    "error",
    "A provider's credential: an Anthropic, OpenAI, AWS, GitHub, Slack, Google, Stripe or"
    " Hugging Face key, a private key block, a JWT or a password in a URL (see Shapes"
    " below).",
    "A log is read, shared, uploaded and used for training; a key in it is a leaked key. The"
    " finding shows the kind and the key masked, never whole.",
    example(f"u: use {_FAKE_KEY} for the API\n"),
    example("u: use [redacted:anthropic_key] for the API\n"),
    fix="Revoke the credential, then run `bbox-lark redact --write FILE` (it becomes"
    " `[redacted:KIND]`); a fake key in a fixture goes in `allowed-secrets`.",
    family=FAMILY,
)
describe(
    "S002",
    "generic-secret",
    "warning",
    "A random-looking value (16 characters or more, letters and digits, not a hash or UUID)"
    " assigned to a secret-ish name (`token`, `secret`, `password`, `api_key`, …) or after"
    " `Bearer`.",
    "No provider shape says for sure that it is a credential, but the name and the value make"
    " it likely; hashes, UUIDs, placeholders and `[redacted:…]` markers are never reported.",
    example("t:bash 'env' → DEPLOY_TOKEN=Fk9q2LmZ7vXw4RtY8pQs\n"),
    example("t:bash 'env' → DEPLOY_TOKEN=[redacted:generic_secret]\n"),
    fix="Run `bbox-lark redact --write FILE` if it is a secret; otherwise suppress it"
    " (`# bbox-lark: ignore[S002]`) or list the value in `allowed-secrets`.",
    family=FAMILY,
)


def code_of(found: SecretMatch) -> str:
    """The diagnostic code of a secret."""
    return "S001" if found.severity == ERROR else "S002"


def message(found: SecretMatch) -> str:
    """A finding's message: the kind and the masked secret."""
    return f"{found.kind} {found.masked}"


@rule
class SecretRule(Rule):
    """Scans each line's text, decoded (:func:`bbox_lark.secrets.scanner.find_secrets`). A private
    key block over continuation lines is one finding, at its first line: the continuation
    lines after a ``BEGIN`` without its ``END`` are not scanned again. A key wrapped over a
    line and the continuation line after it is one finding, where it starts."""

    family = FAMILY
    scope = "line"
    #: Every line: any text may hold a secret, and any line but a continuation ends a key block.
    sees = EVERY_LINE

    def __init__(self) -> None:
        self.in_key_block = False
        #: The last line (event or continuation), where its findings start (a key may go
        #: on over the next continuation line) and where its generic (S002) findings start.
        self.last: tuple[int, str, frozenset[int], frozenset[int]] | None = None

    def start(self, ctx: Context) -> None:
        for header_line in ctx.head.header_lines:
            if header_line.role == "yaml":
                self._scan(header_line.raw, header_line.line, ctx)

    def node(self, node: Record, ctx: Context) -> None:
        last, self.last = self.last, None
        kind = node.kind
        if self.in_key_block:
            if kind == "continuation":
                if "-----END" in node.raw:
                    self.in_key_block = False
                    self._after_end(node.raw, node.line, ctx)
                return
            self.in_key_block = False
        raw = node.raw
        starts: frozenset[int] = frozenset()
        weak: frozenset[int] = frozenset()
        if might_hold_secrets(raw):  # the prefilter alone first: most lines stop here
            found = find_secrets(raw, allowed_secrets=ctx.allowed_secrets)
            if found:
                self._report(found, raw, node.line, ctx)
                starts = frozenset(secret.start for secret in found)
                weak = frozenset(secret.start for secret in found if secret.severity != ERROR)
        if kind == "continuation" and last is not None:
            self._wrapped(last, raw, ctx)
        if kind != "blank":
            self.last = (node.line, raw, starts, weak)

    def _after_end(self, raw: str, line: int, ctx: Context) -> None:
        """What follows a key block's ``END`` marker on its line (the block itself was found
        at its first line), scanned as any text is: a key after it is a finding of its own."""
        # From ``END`` on, closing dashes or not (``-----END RSA PRIVATE KEY and then AKIA…``:
        # the whole-file scan finds that key, and ``check`` lists what ``redact`` replaces);
        # the marker's own words hold no key.
        after = raw.index("-----END") + len("-----END")
        rest = raw[after:]
        if might_hold_secrets(rest):
            for found in find_secrets(rest, allowed_secrets=ctx.allowed_secrets):
                ctx.report(code_of(found), line, after + found.start + 1, message(found))

    def _wrapped(self, last: tuple[int, str, frozenset[int], frozenset[int]], raw: str, ctx: Context) -> None:
        """A key that starts on the last line and goes on at the start of this one."""
        line, before, starts, weak = last
        if not before or not raw.strip():
            return
        if (not raw[2:3].strip() or not before[-1:].strip()) and "-----BEGIN" not in before[-60:]:
            # Cut at a space: only a private key's BEGIN line holds one (``-----BEGIN`` /
            # ``OPENSSH PRIVATE KEY-----``); every other provider key is one word. Joining
            # every indented line (code in a tool's output) to the one before costs a third
            # of ``check`` on such a log.
            return
        cut = max(0, len(before) - _WRAP_REACH)
        text = f"{before[cut:]}\n{raw}"
        if not might_hold_secrets(text):
            return
        for secret in find_secrets(text, allowed_secrets=ctx.allowed_secrets):
            start = cut + secret.start
            if secret.start < len(before) - cut < secret.end and (
                start not in starts or (secret.severity == ERROR and start in weak)
            ):
                # A provider key read whole only over the wrap is reported even where the
                # line alone held a generic guess at the same place (``Bearer ghp_…`` cut).
                ctx.report(code_of(secret), line, start + 1, message(secret))

    def _scan(self, text: str, line: int, ctx: Context) -> None:
        if might_hold_secrets(text):
            found = find_secrets(text, allowed_secrets=ctx.allowed_secrets)
            if found:
                self._report(found, text, line, ctx)

    def _report(self, secrets: list[SecretMatch], text: str, line: int, ctx: Context) -> None:
        for found in secrets:
            ctx.report(code_of(found), line, found.start + 1, message(found))
            if found.kind == "private_key" and "-----END" not in text[found.start :]:
                self.in_key_block = True


#: How far back on a line a key wrapped onto the next one may start (the longest key shape).
_WRAP_REACH = 600
