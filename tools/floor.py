"""The floor: what the least a pure-Python checker could do per line costs, against the
bench's bare ``re`` classifier (``tools/bench.py``), in one process on the same text.

Not a parser of the product and not a test: a measuring stick for the "Core v3" goal (check
at >= 0.4 of the classifier, 0.5 as the aim). The toy checker (``tools/floor_checker.py``)
does one regex match a line (the classifier's own patterns), makes one small slots object,
finds the fields with one ``findall`` when the line has a ``=``, and runs the cheapest forms of the per-line
checks the real ones must do: step order, a timestamp pattern, call ids opened and closed,
an odd number of quotes, redaction markers, one secrets pre-filter search. It keeps no
positions, no trivia, no typed results, no header, no continuation rules, no quote rules:
everything it leaves out only adds to the real cost. Its ratio is therefore an upper bound
for any design that builds a node per line in pure Python. With ``--compiled`` the same
checker is also compiled with mypyc (it ships with mypy) in a temporary folder and measured
beside it: the bound for the opt-in compiled build::

    python tools/floor.py [--corpus DIR] [--repeat N] [--compiled] [--check]

``--check`` also times ``bbox_lark.check`` on the same text in the same run: its ratio, its
time as a multiple of the floor's, and 0.75 of the floor's ratio (issue "Core v4" sets
``check``'s goal at 0.75 of the floor).
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import DEFAULT_CORPUS, bbox_check, generate_session, regex_classify
from floor_checker import floor_check

HERE = Path(__file__).resolve().parent


def compiled_checker(folder: Path) -> Callable[[str], int]:
    """``floor_check`` compiled with mypyc in ``folder`` (SystemExit when mypyc fails)."""
    shutil.copy(HERE / "floor_checker.py", folder / "floor_compiled.py")  # its own name: both load
    done = subprocess.run(
        [sys.executable, "-m", "mypyc", "floor_compiled.py"], cwd=folder, capture_output=True, text=True
    )
    built = sorted(folder.glob("floor_compiled.*.so")) + sorted(folder.glob("floor_compiled.*.pyd"))
    if done.returncode != 0 or not built:
        sys.exit(
            f"error: mypyc could not compile the toy checker:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    spec = importlib.util.spec_from_file_location("floor_compiled", built[0])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function: Callable[[str], int] = module.floor_check
    return function


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
    parser.add_argument(
        "--compiled", action="store_true", help="also measure the checker compiled with mypyc"
    )
    parser.add_argument(
        "--check", action="store_true", help="also time bbox_lark.check on the same text, in the same run"
    )
    args = parser.parse_args(argv)
    compiled = None
    if args.compiled:
        folder = Path(tempfile.mkdtemp(prefix="bbox-floor-"))
        compiled = compiled_checker(folder)
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
        if args.check:
            real = best_time(bbox_check, texts, args.repeat)
            print(
                f"    bbox_lark.check            {real / lines * 1e6:6.2f} µs/line"
                f"   ratio {baseline / real:.3f}  ({real / floor:.2f}x the floor's time;"
                f" 0.75 of the floor is {0.75 * baseline / floor:.3f})"
            )
        if compiled is not None:
            assert compiled(texts[0]) == floor_check(texts[0])
            fast = best_time(compiled, texts, args.repeat)
            print(
                f"    toy checker, mypyc         {fast / lines * 1e6:6.2f} µs/line"
                f"   ratio {baseline / fast:.3f}  (the same bound, compiled)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
