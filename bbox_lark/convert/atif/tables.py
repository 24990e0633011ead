"""The ATIF format's names and its mapping tables, as data (what ``docs/formats/atif.md``
renders)."""

from __future__ import annotations

from bbox_lark.convert.base import MappingRow

#: The versions the writer writes (``--atif-version``), newest last.
VERSIONS = ("ATIF-v1.7", "ATIF-v1.8")
DEFAULT_VERSION = VERSIONS[-1]
#: The key under which bbox keeps, in an ``extra`` object, what ATIF cannot hold.
EXTRA_KEY = "bbox"
#: The header key an import writes the source's ``schema_version`` to.
SCHEMA_HEADER = "atif"
#: The keyword of the comments an import writes for the trajectory (``# atif root``) and
#: for system steps (``# atif system``).
ATIF_COMMENT = "atif"
#: Continuation lines: ``| text`` (a text line) and ``+key JSON`` (an attachment).
TEXT_MARK = "|"
ATTACH_MARK = "+"


HEADER_KEYS = ("agent", "version", "model")


# -- the format -------------------------------------------------------------------------

EXPORT_MAPPING = (
    MappingRow(
        "header `id:`", "`session_id`", note="an empty id: session_id is left out (optional since v1.7)"
    ),
    MappingRow(
        "header `agent:`, `version:` (else `client_version:`), `model:`",
        "`agent.name`, `.version`, `.model_name`",
        note="no agent/version: `unknown` (synthesized)",
    ),
    MappingRow("every header key", "`extra.bbox.header`", "extra"),
    MappingRow("`u:`", "a user step; its text (fields cut out) and continuation lines are the message"),
    MappingRow("`a:`", "an agent step"),
    MappingRow("`th:`", "`reasoning_content` of the agent step it precedes"),
    MappingRow(
        "`t:` `t!:` `c:` `x:` `s:` `q:`",
        "`tool_calls` of the current agent step; fields and arguments as `arguments`",
    ),
    MappingRow(
        "an id reused while its call is open",
        "a unique `tool_call_id` (`id~2`), the id in the call's `extra.id`",
        "synthesized",
    ),
    MappingRow(
        "inline result, `o:` line, completion",
        "`observation.results` of the call's step, with `source_call_id`",
    ),
    MappingRow(
        "`x:` … `path=` (on the `x:` line or the `o:` that completes it)",
        "`subagent_trajectory_ref[].trajectory_path`; a session id alone: `extra.session_id`",
    ),
    MappingRow(
        "`tid=T` lines of a subagent whose result names `session_id=T` (the Claude Code importer's"
        " subagent logs)",
        "an embedded trajectory `T` in `subagent_trajectories`, referenced by `trajectory_id`; the"
        " lines' records stay in the parent's `extra.bbox`",
    ),
    MappingRow("blob pointer result", "the result's `extra.blob` (sha256, bytes, mime)", "extra"),
    MappingRow(
        "`# metrics step=N`, trailing `# metrics`",
        "that agent step's `metrics` (tokens, cost; the rest in `metrics.extra`)",
    ),
    MappingRow(
        "`tokens_in=` `tokens_out=` `tokens_cached=` on event lines (no `# metrics` in the file)",
        "the agent step's `metrics`, each model response once (docs/reference.md#usage; `prompt_tokens` ="
        " `tokens_in + tokens_cached`)",
    ),
    MappingRow(
        "the session's usage and stated cost (`bbox_lark.numbers.session`, as `stats` counts them)",
        "`final_metrics` (`total_*_tokens`, `total_cost_usd`, `total_steps`)",
    ),
    MappingRow("`ts=`", "`timestamp`; a malformed one: `extra.bbox.ts`"),
    MappingRow(
        "comments, lifecycle, `m:` `p:` `r:` `t~:` `td:`, unknown and blank lines",
        "the step's `extra.bbox.lines` records",
        "extra",
    ),
    MappingRow("every body line", "a record in its step's `extra.bbox.lines` (what brings it back)", "extra"),
)

IMPORT_MAPPING = (
    MappingRow(
        "`session_id`", "header `id:`", note="none: `imported-<uuid>` (synthesized) and `+session_id null`"
    ),
    MappingRow("`agent.name`, `.version`, `.model_name`", "header `agent:`, `version:`, `model:`"),
    MappingRow("`schema_version`, `trajectory_id`", "header `atif:`, `trajectory_id:`"),
    MappingRow(
        "`notes`, `final_metrics`, `extra`, `continued_trajectory_ref`, `subagent_trajectories`,"
        " `agent.tool_definitions`, `agent.extra`",
        "`# atif root` with `+key JSON` attachments",
    ),
    MappingRow("a system step", "`# atif system` with the message as `| …` lines"),
    MappingRow("a user step", "`u: step=N ts=…` with the message as `| …` lines"),
    MappingRow("an agent step", "`th:` (reasoning), then `a: step=N ts=… model=…`"),
    MappingRow("a multimodal message or content", "`+message [...]` / `+content [...]` (the parts as JSON)"),
    MappingRow("a tool call", "`t:NAME id=… key=value…`; other than plain strings: `+arguments {...}`"),
    MappingRow("an observation result", "`o: id=… →` with the content as `| …` lines"),
    MappingRow(
        "`metrics`", "`# metrics step=N prompt_tokens=… completion_tokens=… cached_tokens=… cost_usd=…`"
    ),
    MappingRow("other step, call and result values", "`+key JSON` attachments of their line", "extra"),
    MappingRow("`extra.bbox` (written from bbox)", "the recorded lines and header, rebuilt"),
)
