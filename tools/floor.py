"""The floor: what the least a pure-Python checker could do per line costs, against the
bench's bare ``re`` classifier (``tools/bench.py``), in one process on the same text.

Not a parser of the product and not a test: a measuring stick for the "Core v3" goal (check
at >= 0.4 of the classifier, 0.5 as the aim). The toy checker below does one regex match a
line (the classifier's own patterns), makes one small slots object, finds the fields with
one ``findall`` when the line has a ``=``, and runs the cheapest forms of the per-line
checks the real ones must do: step order, a timestamp pattern, call ids opened and closed,
an odd number of quotes, redaction markers, one secrets pre-filter search. It keeps no
positions, no trivia, no typed results, no header, no continuation rules, no quote rules:
everything it leaves out only adds to the real cost. Its ratio is therefore an upper bound
for any design that builds a node per line in pure Python::

    python tools/floor.py [--corpus DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import _FIELD, _LINE, DEFAULT_CORPUS, generate_session, regex_classify

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


def best_time(function: Callable[[str], int], texts: Sequence[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for text in texts:
            function(text)
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--lines", type=int, default=100_000, help="lines of the generated session")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    sets: list[tuple[str, list[str]]] = []
    if args.corpus.is_dir():
        files = sorted(p for p in args.corpus.iterdir() if p.is_file())
        sets.append(
            (f"real logs ({args.corpus.name})", [p.read_text("utf-8", "surrogateescape") for p in files])
        )
    sets.append(("generated clean session", [generate_session(args.lines)]))
    print(
        "floor: CPU µs per line, best of",
        args.repeat,
        "(same process, same text; read the ratio, not the digits)",
    )
    for label, texts in sets:
        lines = sum(text.count("\n") + 1 for text in texts)
        baseline = best_time(regex_classify, texts, args.repeat)
        floor = best_time(floor_check, texts, args.repeat)
        print(f"  {label}: {lines:,} lines")
        print(f"    re classifier (baseline)   {baseline / lines * 1e6:6.2f} µs/line")
        print(
            f"    toy checker (the floor)    {floor / lines * 1e6:6.2f} µs/line"
            f"   ratio {baseline / floor:.3f}  (an upper bound for a node per line in pure Python)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
