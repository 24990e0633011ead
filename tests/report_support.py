"""Sessions for the HTML report's tests: one whose facts are known (which calls fail, which
observation arrives late, which lines have findings) and one with hostile text in every
place text can appear."""

from __future__ import annotations

DEMO = """\
---
format: bbox/1
id: demo-1
repo_sha: 215db51
repo: example/app
branch: main
model: claude-sonnet-4-5
agent: autopilot
runner: local
---
@start id=demo-1 ts=2025-12-20T14:00:00Z
u: Fix the failing test in parser.rs
@phase explore
th: Let me look at the test first. tokens_in=10 tokens_out=5 tokens_cached=1000
a: Reading the test. tokens_in=10 tokens_out=9 tokens_cached=1000
t!:Read id=r1 file_path=src/parser.rs → [running] tokens_in=10 tokens_out=9 tokens_cached=1000
o: id=r1 → [ok] 120 lines
t!:Bash id=b1 cmd="cargo test" ts=2025-12-20T14:00:05Z → [running] tokens_in=12 tokens_cached=1900
t!:Grep id=g1 tid=worker-2 pattern="fn parse" → [running]
o: id=g1 tid=worker-2 → [ok] 3 matches
o: id=b1 ts=2025-12-20T14:00:35Z → [error] Exit code 101
  running 12 tests
  test parse_empty ... ok
  test parse_nested ... FAILED
  failures: parse_nested
  test result: FAILED. 11 passed; 1 failed
m: auto
@phase design
t:Edit file_path=src/parser.rs → [err: old_string not found]
t:Bash cmd="cargo test" latency_ms=30000 → [ok] 12 passed
x:explore id=x1 tid=sub-1 → [ok] summary="found it"
t!:WebFetch id=w1 url=https://example.com → [running]
zzz an unknown line
a: Done: the parser handles nested input. tokens_in=14 tokens_out=80 tokens_cached=2600
@end
"""

#: Lines of DEMO (1-based) that the report must know about.
DEMO_FAILED = (18, 29)  # the Bash start whose late o: failed, and the Edit call
DEMO_FAR_OBSERVATION = 21  # the o: that completes line 18, two lines later
DEMO_FOLD = (22, 26)  # the observation's output
DEMO_UNKNOWN = 33  # W003
DEMO_NEVER_COMPLETED = 32  # W007

#: Pieces of hostile text (each sets ``window.__pwned`` or the title if it ever runs).
PAYLOADS = (
    "<script>window.__pwned=1;document.title='pwned'</script>",
    "</script><script>window.__pwned=2</script>",
    '<img src=x onerror="window.__pwned=3">',
    '<a href="javascript:window.__pwned=4">click me</a>',
    '<svg onload="window.__pwned=5">',
    "\"'><svg/onload=window.__pwned=6>",
)


def hostile_session() -> str:
    """A session with a payload in each place text can appear: header values and keys,
    messages, thinking, tool names, positional arguments, field values, results, comments,
    lifecycle and mode lines, continuation lines, unknown lines (and so in diagnostics)."""
    p = PAYLOADS
    quoted = [value.replace("\\", "\\\\").replace('"', '\\"') for value in p]
    return (
        "---\n"
        "format: bbox/1\n"
        f'id: "</title><script>window.__pwned=7</script>"\n'
        "repo_sha: 215db51\n"
        f'model: "{quoted[0]}"\n'
        f'agent: "{quoted[2]}"\n'
        f'branch: "{quoted[3]}"\n'
        f'"<svg onload=window.__pwned=8>": "{quoted[4]}"\n'
        "---\n"
        "@start ts=2025-12-20T14:00:00Z\n"
        f"u: {p[0]}\n"
        f"a: {p[1]} {p[2]}\n"
        f"th: {p[4]} thinking {p[5]}\n"
        f't:<img/src=x/onerror=window.__pwned=9> "{quoted[3]}" key="{quoted[2]}" → [err: {p[0]}]\n'
        f"t!:Bash id=h1 → [running]\n"
        f"o: id=h1 → [ok] {p[4]}\n"
        f"  {p[1]}\n"
        f"  {p[2]}\n"
        f"  {p[3]}\n"
        f"  {p[5]}\n"
        f"# {p[0]} a comment\n"
        f"@phase {p[4]}\n"
        f"m: {p[5]}\n"
        f"zzz {p[2]}\n"
        "t!:<svg/onload=window.__pwned=10> id=never → [running]\n"
        'c:srv.<script>window.__pwned=11</script> url="javascript:window.__pwned=12" → [ok]\n'
        "@end\n"
    )
