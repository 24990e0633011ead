"""The toy checker of ``tools/floor.py``, alone in a module so that ``floor.py --compiled``
can compile it with mypyc as it is (see there)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import _FIELD, _LINE  # type: ignore[import-not-found]

_SECRET = re.compile(
    r"sk-|AKIA|gh[pousr]_|github_pat_|xox[abpr]-|AIza|sk_live|hf_|-----BEGIN|eyJ"
    r"|://[^/\s:@]+:[^/\s@]+@|(?i:token|secret|password|api_?key)"
)
_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$")


class Node:
    __slots__ = ("call", "fields", "kind", "line", "metrics", "name", "raw", "result")

    def __init__(
        self,
        kind: str,
        line: int,
        raw: str,
        name: str | None,
        call: str,
        result: str | None,
        metrics: str | None,
        fields: dict[str, str] | None,
    ) -> None:
        self.kind, self.line, self.raw, self.name = kind, line, raw, name
        self.call, self.result, self.metrics, self.fields = call, result, metrics, fields


def floor_check(text: str) -> int:
    """The toy checker: the number of findings (so no work is optimised away)."""
    findings: list[tuple[str, int]] = []
    open_ids: dict[str, int] = {}
    highest = -1
    number = 0
    for line in text.split("\n"):
        number += 1
        if line[:1] in (" ", "\t") or not line.strip():
            continue
        if "\0" in line:
            findings.append(("nul", number))
        match = _LINE.match(line)
        if match is None:
            kind = "comment" if line.startswith("#") else "other"
            node = Node(kind, number, line, None, line, None, None, None)
        else:
            rest, _, metrics = match[3].partition(" # metrics ")
            call, arrow, result = rest.partition("→")
            fields = dict(_FIELD.findall(rest)) if "=" in rest else {}
            node = Node(
                match[1], number, line, match[2], call, result.strip() if arrow else None, metrics, fields
            )
            if fields:
                step = fields.get("step")
                if step is not None and step.isdigit():
                    value = int(step)
                    if value < highest:
                        findings.append(("W004", number))
                    highest = max(highest, value)
                ts = fields.get("ts")
                if ts is not None and _TS.match(ts) is None:
                    findings.append(("W005", number))
                key = fields.get("id")
                if key is not None:
                    if match[1] == "t!" or (node.result or "").startswith("[running"):
                        open_ids[key] = number
                    elif match[1] == "o" and open_ids.pop(key, None) is None:
                        findings.append(("W002", number))
        if '"' in line and line.count('"') % 2:
            findings.append(("quote", number))
        if "[redacted:" in line:
            findings.append(("redacted", number))
        if _SECRET.search(line):
            findings.append(("secret", number))
    return len(findings)
