"""Header checks: the fences, the YAML, the required and known fields (docs/reference.md#header)."""

from __future__ import annotations

import re

from bbox_lark.checks.base import Context, Rule, describe, example, kinds, rule, shorten

FAMILY = "header"

REQUIRED = ("format", "id", "repo_sha")
KNOWN = frozenset(
    {
        *REQUIRED,
        # the summary spec's optional fields
        "mode", "model", "agent", "version", "repo", "branch", "dirty", "sandbox_id", "runner",
        "toolset", "skills", "mcp", "budget", "duration", "classification", "notes",
        # Known since the Claude Code conversions (docs/reference.md#header)
        "client_version", "slug", "cwd", "tokens_total_in", "tokens_total_out", "tokens_cached",
        "extra",
    }
)  # fmt: skip
_HEX = re.compile(r"[0-9a-fA-F]+")
_VERSIONS = ("1", "1.0")


def _doc(header_body: str, body: str = "") -> str:
    return "---\n" + header_body + "---\n" + body


describe(
    "E004",
    "missing-header",
    "error",
    "The file does not start with a `---` header.",
    "The header names the format and the session; without it a log cannot be identified or"
    " replayed. The body is still checked.",
    "a: hello\n",
    example("a: hello\n"),
    fix="Start the file with a header: `---`, `format: bbox/1`, `id: …`, `repo_sha: …`, then `---`.",
    family=FAMILY,
)
describe(
    "E005",
    "unclosed-header",
    "error",
    "The header's opening `---` has no closing `---`.",
    "Without the closing fence the reader must guess where the body starts (it takes the first"
    " blank line or body-like line).",
    "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n\na: hello\n",
    example("\na: hello\n"),
    fix="Add the closing `---` line after the header's last key.",
    family=FAMILY,
)
describe(
    "E006",
    "header-yaml-syntax",
    "error",
    "The header is not valid YAML.",
    "The header is YAML; a syntax error means no field in it can be trusted.",
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nnotes: [unclosed\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nnotes: [closed]\n"),
    fix="Correct the YAML at the reported line (quote a value that holds `: ` or starts with"
    " `[`, `{`, `&`, `*` or `!`).",
    family=FAMILY,
)
describe(
    "E007",
    "header-not-mapping",
    "error",
    "The header's YAML is not a mapping of keys to values.",
    "Header fields are looked up by key; a list or a scalar has no keys.",
    _doc("- format: bbox/1\n- id: s\n"),
    example(""),
    fix="Write the header as `key: value` lines.",
    family=FAMILY,
)
describe(
    "E008",
    "header-alias",
    "error",
    "The header uses a YAML anchor or alias.",
    "Aliases let a few bytes expand to gigabytes (an alias bomb); bbox headers never need them.",
    _doc("format: bbox/1\nid: &name s\nrepo_sha: 215db51\nrunner: local\nslug: *name\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nslug: s\n"),
    fix="Write each value out in full instead of an `&anchor` and `*alias`.",
    family=FAMILY,
)
describe(
    "E009",
    "header-too-large",
    "error",
    "The header is larger than 64 KiB.",
    "The header is small metadata; large structures belong in body lines or blobs.",
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nnotes: " + "x" * 70000 + "\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nnotes: short\n"),
    fix="Move large values out of the header, into body lines or blobs.",
    family=FAMILY,
)
describe(
    "E010",
    "missing-required-field",
    "error",
    "A required header field (`format`, `id`, `repo_sha`) is missing or empty.",
    "These three identify the format, the session and the code it ran on. Empty, `~` and"
    " `null` count as missing (real writers leave `id:` empty).",
    _doc("format: bbox/1\nid:\nrepo_sha: 215db51\nrunner: local\n"),
    _doc("format: bbox/1\nid: sess_1\nrepo_sha: 215db51\nrunner: local\n"),
    fix="Give the field a non-empty value (`format: bbox/1`, `id: <session id>`, `repo_sha: <commit sha>`).",
    family=FAMILY,
)
describe(
    "E011",
    "invalid-format",
    "error",
    "`format` does not start with `bbox/` (or its later name `rlog/`).",
    "The format field is how tools know they are reading a bbox log at all.",
    _doc("format: json\nid: s\nrepo_sha: 215db51\nrunner: local\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n"),
    fix="Write `format: bbox/1`.",
    family=FAMILY,
)
describe(
    "E015",
    "header-tag",
    "error",
    "The header uses a YAML tag other than the standard ones (such as a Python tag).",
    "Tags can make YAML loaders run code; the header is data only.",
    _doc("format: bbox/1\nid: !!python/name:os.system s\nrepo_sha: 215db51\nrunner: local\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n"),
    fix="Remove the tag (`!!python/…`) and write the value as plain YAML.",
    family=FAMILY,
)
describe(
    "E017",
    "header-too-deep",
    "error",
    "The header nests lists and maps more than 64 levels deep.",
    "Headers are flat; deep nesting is an attack on YAML readers (they recurse per level and"
    " slow down with every open bracket). The header is not read; the body is still checked.",
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nnotes: " + "[" * 65 + "]" * 65 + "\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nnotes: [[a]]\n"),
    family=FAMILY,
    fix="Flatten the header: keep large structures in body lines or a blob, never in the header.",
)
describe(
    "W008",
    "unexpected-format-version",
    "warning",
    "`format` is not `bbox/1` or `bbox/1.0`.",
    "This tool implements bbox/1; a later version may mean lines it does not understand.",
    _doc("format: bbox/2\nid: s\nrepo_sha: 215db51\nrunner: local\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n"),
    fix="Write `format: bbox/1`, or check the file with a bbox-lark that knows its version.",
    family=FAMILY,
)
describe(
    "W009",
    "repo-sha-shape",
    "warning",
    "`repo_sha` is not 6 to 40 hex digits.",
    "A commit sha that cannot be resolved makes the session impossible to replay.",
    _doc("format: bbox/1\nid: s\nrepo_sha: abc\nrunner: local\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: abc123\nrunner: local\n"),
    fix="Write the commit's sha: 6 to 40 hex digits.",
    family=FAMILY,
)
describe(
    "W010",
    "rlog-format-alias",
    "warning",
    "`format` uses the later name `rlog/` instead of `bbox/`.",
    "rlog/1 is bbox/1 renamed; it is read the same way, but other bbox tools may not know the name.",
    _doc("format: rlog/1\nid: s\nrepo_sha: 215db51\nrunner: local\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n"),
    fix="Write `format: bbox/1`.",
    family=FAMILY,
)
describe(
    "W026",
    "duplicate-header-key",
    "warning",
    "A header key appears twice; the first value is kept.",
    "YAML loaders disagree on which duplicate wins; the header should say it once.",
    _doc("format: bbox/1\nid: s\nid: t\nrepo_sha: 215db51\nrunner: local\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n"),
    fix="Remove the repeated key; the first value is the one read.",
    family=FAMILY,
)
describe(
    "I003",
    "auto-mode-without-sandbox",
    "info",
    "The header says `mode: auto` but has no `sandbox_id`.",
    "Autonomous sessions should record the sandbox they ran in, for replay and audit.",
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nmode: auto\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nmode: auto\nsandbox_id: dtn_1\n"),
    fix="Add `sandbox_id:` to the header.",
    family=FAMILY,
)
describe(
    "I004",
    "no-runner",
    "info",
    "The header has no `runner` field.",
    "The runner (local, daytona, ...) is recommended for deterministic replay.",
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n"),
    fix="Add `runner:` (where the session ran: `local`, `daytona`, …) to the header.",
    family=FAMILY,
)
describe(
    "I006",
    "unknown-header-key",
    "info",
    "A header key is not one the format defines (and not `extra.*`); it is kept.",
    "Unknown keys are often typos of known ones; custom data belongs under `extra.`.",
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nrunnr: x\n"),
    _doc("format: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\nextra.runnr: x\n"),
    fix="Correct the key if it is a typo; put custom data under `extra.` (`extra.team: …`).",
    family=FAMILY,
)


@rule
class HeaderRule(Rule):
    """Everything about the header, once it has been read."""

    family = FAMILY
    scope = "line"  # the header only: checked once, before any part
    sees = kinds()

    def start(self, ctx: Context) -> None:
        header_checks(ctx)


def header_checks(ctx: Context) -> None:
    info = ctx.head.header_info
    if info is None:
        ctx.report("E004", 1, 1, "no header: the file must start with a `---` line")
        return
    if info.close_line is None:
        ctx.report("E005", info.open_line or 1, 1, "the header's `---` is never closed")
    for code, line, col, message in info.faults:
        ctx.report(code, line, col, message)
    if any(code in ("E006", "E007", "E008", "E009", "E015", "E017") for code, *_ in info.faults):
        return  # the fields cannot be trusted; the YAML error says why
    fields = info.fields

    def where(key: str) -> int:
        return info.key_lines.get(key, info.open_line or 1)

    for key in REQUIRED:
        value = fields.get(key)
        if key not in fields:
            ctx.report("E010", 1, 1, f"required header field `{key}` is missing")
        elif key in info.null_keys or not isinstance(value, str) or not value.strip():
            ctx.report("E010", where(key), 1, f"required header field `{key}` is empty")
    fmt = fields.get("format")
    if isinstance(fmt, str) and fmt and "format" not in info.null_keys:
        family, slash, version = fmt.partition("/")
        if not slash or family not in ("bbox", "rlog"):
            ctx.report("E011", where("format"), 1, f"format {shorten(fmt)!r} does not start with `bbox/`")
        else:
            if family == "rlog":
                ctx.report("W010", where("format"), 1, f"format {shorten(fmt)!r} is the later name of bbox/")
            if version not in _VERSIONS:
                ctx.report("W008", where("format"), 1, f"format {shorten(fmt)!r} is not bbox/1")
    sha = fields.get("repo_sha")
    present = isinstance(sha, str) and bool(sha.strip()) and "repo_sha" not in info.null_keys
    if present and isinstance(sha, str) and not (6 <= len(sha) <= 40 and _HEX.fullmatch(sha)):
        ctx.report("W009", where("repo_sha"), 1, f"repo_sha {shorten(sha)!r} is not 6 to 40 hex digits")
    if fields.get("mode") == "auto" and "sandbox_id" not in fields:
        ctx.report("I003", where("mode"), 1, "mode: auto without sandbox_id")
    if "runner" not in fields:
        ctx.report("I004", 1, 1, "no runner in the header")
    for key in fields:
        if key not in KNOWN and not key.startswith("extra."):
            ctx.report("I006", where(key), 1, f"unknown header key {shorten(key)!r} (kept)")
