"""Throughput of ``bbox_lark.check`` against a plain ``re`` line classifier.

Not a test: speed is measured, never asserted. Both sides run in this process, on the same
text, and the ratio (bbox-lark lines/s / regex lines/s) is what to compare across changes;
the machine is noisy, so read the ordering, not the third digit.

The regex baseline classifies each line by prefix and extracts what the full parser
extracts for statistics: the name, every ``key=value`` field, the result text after the
first arrow and an inline ``# metrics`` tail. bbox-lark does far more (typed results,
quote rules, continuations, header YAML, every check), so the ratio is the price of that.

    python tools/bench.py                      # rlog-real corpus + a generated 1M-line session
    python tools/bench.py --lines 200000       # a smaller generated session
    python tools/bench.py --corpus DIR --repeat 5
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bbox_lark

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus-external" / "rlog-real"

_LINE = re.compile(r"(t!|t~|th|td|[uatosmprxcq]):(\S*)(.*)")
_FIELD = re.compile(r'([A-Za-z_][A-Za-z0-9_.-]*)=("(?:[^"\\]|\\.)*"|\S*)')


def regex_classify(text: str) -> int:
    """The baseline: classify every line and extract name, fields, result and metrics."""
    count = 0
    for line in text.split("\n"):
        match = _LINE.match(line)
        if match is None:
            kind = "comment" if line.startswith("#") else "lifecycle" if line.startswith("@") else "other"
            record: tuple[object, ...] = (kind, line)
        else:
            rest = match[3]
            rest, _, metrics = rest.partition(" # metrics ")
            _call, arrow, result = rest.partition("→")
            fields = dict(_FIELD.findall(rest))
            record = (match[1], match[2], fields, result.strip() if arrow else None, metrics)
        count += record is not None
    return count


def bbox_check(text: str) -> int:
    return len(bbox_lark.check(text))


_TOOLS = ["Read", "Bash", "Grep", "Glob", "Edit", "Write"]


def generate_session(lines: int, seed: int = 7) -> str:
    """A synthetic rlog-like session of about ``lines`` lines, deterministic."""
    rng = random.Random(seed)
    out = [
        "---",
        "format: bbox/1",
        "id: sess_bench",
        "repo_sha: 215db51",
        "runner: local",
        "---",
        "@start id=sess_bench ts=2025-12-20T14:44:58Z",
    ]
    step = 0
    while len(out) < lines - 1:
        step += 1
        tool = rng.choice(_TOOLS)
        call = f"call_{step}"
        usage = (
            f"tokens_in={rng.randint(0, 900)} tokens_out={rng.randint(1, 400)}"
            f" tokens_cached={rng.randint(0, 99999)}"
        )
        choice = rng.random()
        if choice < 0.25:
            out.append(
                f"th: Let me look at the {tool.lower()} output for step {step}. sig=Ep4E{step}... {usage}"
            )
        elif choice < 0.4:
            out.append(f"a: Step {step}: the change compiles and tests pass. step={step} {usage}")
        out.append(
            f't!:{tool} id={call} file_path=/src/mod_{step % 97}.rs pattern="fn main" → [running] {usage}'
        )
        result = rng.choice(["[ok] 128 tests passed", "[186 lines]", '[err: "permission denied"]', "[ok]"])
        out.append(f"o: id={call} → {result}")
        if choice > 0.9:
            out.append(f"# metrics step={step} prompt_tokens=520 completion_tokens=80 cost_usd=0.00045")
        if choice > 0.97:
            out.append("  continuation text of the previous line")
    out.append("@end tokens_in=10 tokens_out=181 cost_usd=0.0330")
    return "\n".join(out) + "\n"


def best_of(function: Callable[[str], int], texts: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        for text in texts:
            function(text)
        best = min(best, time.perf_counter() - start)
    return best


def measure(label: str, texts: list[str], repeat: int) -> None:
    lines = sum(text.count("\n") + (not text.endswith("\n")) for text in texts)
    bbox_check(texts[0][:2000])  # build (or load the cached) parser before timing
    regex_s = best_of(regex_classify, texts, repeat)
    lark_s = best_of(bbox_check, texts, repeat)
    print(f"{label}: {len(texts)} file(s), {lines} lines")
    print(f"  regex classifier : {lines / regex_s:12,.0f} lines/s")
    print(f"  bbox-lark check  : {lines / lark_s:12,.0f} lines/s")
    print(f"  ratio            : {regex_s / lark_s:12.3f}  (bbox-lark / regex)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of real logs")
    parser.add_argument("--lines", type=int, default=1_000_000, help="size of the generated session")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is kept)")
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, bbox-lark {bbox_lark.__version__}")
    if args.corpus.is_dir():
        texts = [
            p.read_text(encoding="utf-8", errors="surrogateescape") for p in sorted(args.corpus.iterdir())
        ]
        measure(f"corpus {args.corpus.name}", texts, args.repeat)
    else:
        print(f"corpus {args.corpus} not found: skipped")
    if args.lines > 0:
        measure("generated session", [generate_session(args.lines)], max(1, min(args.repeat, 2)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
