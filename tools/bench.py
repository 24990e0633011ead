"""How fast and how big ``bbox-lark check`` is, in one run (issue "Core v2", points 4 and 5).

Not a test: speed is measured, never asserted. Every figure that has a goal is a ratio to
something measured in the same run on the same machine, so the ratios are what to compare
across changes; the machine is noisy, so read the ordering, not the third digit.

* **Throughput**, on the real logs (``--corpus``, when present) and on a generated clean
  session (``--lines``): lines/s of ``bbox_lark.check`` in one process (CPU time, best of
  ``--repeat``) and with all cores (wall time), each divided by the lines/s of a bare ``re``
  line classifier run in this process on the same text. Goals: >= 0.5 in one process,
  >= 1.0 with all cores. All cores: ``multiprocessing`` over the files for the real logs;
  over chunks of one big file only once the library can check a file on several cores
  (:func:`library_parallel_check`, the pending ``check --jobs``).
* **Stages**: CPU µs per line of splitting, scanning (the one anchored scan, the LALR
  driver for the lines it declines), building the nodes and every check, each including the
  ones before it (interleaved run by run), beside the baseline; the share of lines the scan
  reads, and the LALR driver on every line for comparison.
* **Rates** (``--only rates``, issue "Core v4"): CPU time of whole ``check``, ``stats
  --json``, ``export`` and ``report`` processes (one job each) over the real logs, best of
  ``--repeat``, interleaved, and each command's lines/s as a share of ``check``'s (goal:
  >= 0.6). Start-up is included in each.
* **Peak memory**: the RSS high-water mark of a fresh ``bbox-lark check FILE`` process on
  generated files of 10k, 100k and 1M lines, and the ratio of the largest to the smallest.
* **Export** (``bbox-lark export``, the ``scale`` extra): lines/s of a fresh ``bbox-lark
  export DIR -o OUT`` over ``--export-sessions`` generated sessions (default 3,000) of
  ``--export-lines`` lines each, with ``--jobs 1`` and with all cores (wall time of the
  whole process), and the RSS high-water mark of its largest process (the parent or a
  worker: each holds one file's rows at a time).
* **Peak memory per command** (``--only commands``): the RSS high-water mark of a fresh
  ``check``, ``stats``, ``fmt``, ``fix``, ``redact``, ``convert``, ``report`` and ``export``
  process on a generated session of each ``--command-lines`` size (default 10,000 and
  1,000,000 lines; ``--quick`` 10,000 and 100,000), its ratio to ``check``'s peak on the
  same file, and its growth from the smallest size to the largest (a streaming command's
  stays near 1); ``--command NAME`` measures only the commands named.
* **Against harbor** (``--only harbor``, issue "Core v4"): Claude Code → ATIF (``convert
  --to atif``) and usage (``stats --json``) against harbor 0.25.0's own converter
  (``ClaudeCode.convert_trajectory``, the trajectory written as harbor writes it; usage:
  its ``final_metrics``), whole commands on generated sessions (``tools/gen_claude_code.py``,
  ``--harbor-records``, default 10,000 and 50,000 records), interleaved: best wall and CPU
  seconds, peak RSS, and whether both count the same calls and tokens. Skipped, with the
  reason, where harbor is not installed (``--harbor-python``; default ``/tmp/harbor-venv``).
* **Start-up**: CPU time of ``bbox-lark check`` on a 10-line file against
  ``python -c "import lark, yaml"``, many runs each (interleaved), min and median, and the
  ratio (goal <= 1.5). Bytecode caches are warm: ``PYTHONDONTWRITEBYTECODE`` is removed
  from the children's environment (with it, every run would recompile every module).

The regex baseline classifies each line by prefix and extracts what the full parser
extracts for statistics: the name, every ``key=value`` field, the result text after the
first arrow and an inline ``# metrics`` tail. bbox-lark does far more (typed results,
quote rules, continuations, header YAML, every check), so the ratio is the price of that.

    python tools/bench.py                      # everything: about 3 minutes here
    python tools/bench.py --quick              # 100k lines, fewer runs: under a minute
    python tools/bench.py --only startup --startup-runs 60
    python tools/bench.py --only stages        # µs per line: split, scan, build, checks
    python tools/bench.py --only rules         # µs per line of each rule alone, on records
    python tools/bench.py --only rates         # stats, export, report against check
    python tools/bench.py --corpus DIR --lines 200000 --repeat 5
    python tools/bench.py --only export --export-sessions 3000
    python tools/bench.py --only commands      # peak RSS per command at 10k and 1M lines
    python tools/bench.py --only harbor --harbor-records 10000,50000
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import multiprocessing
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

try:
    import bbox_lark
except ImportError:  # run with a Python that does not have the project installed
    sys.exit("error: bbox_lark is not installed for this Python; run .venv/bin/python tools/bench.py")

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus-external" / "rlog-real"
SECTIONS = ("throughput", "stages", "rules", "rates", "memory", "commands", "startup", "export", "harbor")
GOAL_ONE, GOAL_ALL, GOAL_STARTUP = 0.5, 1.0, 1.5

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


def count_lines(text: str) -> int:
    return text.count("\n") + (not text.endswith("\n"))


# -- the generated session -----------------------------------------------------------------

_TOOLS = ["Read", "Bash", "Grep", "Glob", "Edit", "Write"]
#: The 10-line file of the start-up measure: a clean session, as small as real ones get.
SMALL_FILE = (
    "---\nformat: bbox/1\nid: sess_small\nrepo_sha: 215db51\nrunner: local\n---\n"
    "@start id=sess_small ts=2025-12-20T14:44:58Z\nu: fix the failing test\n"
    "t:read src/main.rs → [186 lines]\n@end tokens_in=10 tokens_out=181 cost_usd=0.0330\n"
)


def generate_session(lines: int, seed: int = 7) -> str:
    """A synthetic rlog-like session of about ``lines`` lines, deterministic and clean:
    ``bbox_lark.check`` finds nothing in it (``tests/test_bench_tool.py``)."""
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
    call = 0
    step = 0  # the last step a line has named: steps go 1, 2, 3, ... with no gap
    while len(out) < lines - 1:
        call += 1
        tool = rng.choice(_TOOLS)
        usage = (
            f"tokens_in={rng.randint(0, 900)} tokens_out={rng.randint(1, 400)}"
            f" tokens_cached={rng.randint(0, 99999)}"
        )
        choice = rng.random()
        if choice < 0.25:
            out.append(
                f"th: Let me look at the {tool.lower()} output for call {call}. sig=Ep4E{call}... {usage}"
            )
        elif choice < 0.4:
            step += 1
            out.append(f"a: Step {step}: the change compiles and tests pass. step={step} {usage}")
        where = f"file_path=/src/mod_{call % 97}.rs"
        out.append(f't!:{tool} id=call_{call} {where} pattern="fn main" → [running] {usage}')
        result = rng.choice(["[ok] 128 tests passed", "[186 lines]", '[err: "permission denied"]', "[ok]"])
        out.append(f"o: id=call_{call} → {result}")
        if choice > 0.9 and step:
            out.append(f"# metrics step={step} prompt_tokens=520 completion_tokens=80 cost_usd=0.00045")
        if choice > 0.97:
            out.append("  continuation text of the previous line")
    out.append("@end tokens_in=10 tokens_out=181 cost_usd=0.0330")
    return "\n".join(out) + "\n"


# -- throughput ----------------------------------------------------------------------------


def best_times(function: Callable[[str], int], texts: Sequence[str], repeat: int) -> tuple[float, float]:
    """The least CPU time and the least wall time, in seconds, of ``repeat`` runs of
    ``function`` over ``texts``."""
    cpu = wall = float("inf")
    for _ in range(max(1, repeat)):
        gc.collect()
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        for text in texts:
            function(text)
        cpu = min(cpu, time.process_time() - start_cpu)
        wall = min(wall, time.perf_counter() - start_wall)
    return max(cpu, 1e-9), max(wall, 1e-9)


def _read(path: str) -> str:
    return Path(path).read_text(encoding="utf-8", errors="surrogateescape")


def _check_path(path: str) -> int:
    """One worker's job: read and check one file."""
    return bbox_check(_read(path))


def _classify_path(path: str) -> int:
    """One worker's job for the baseline: read and classify one file."""
    return regex_classify(_read(path))


def all_cores_files(
    paths: Sequence[Path], jobs: int, repeat: int, job: Callable[[str], int] = _check_path
) -> float:
    """The least wall time, in seconds, to run ``job`` (by default: check) on every file with
    ``jobs`` processes (``multiprocessing`` over the files, each file whole in one worker)."""
    bbox_check(SMALL_FILE)  # the parser, loaded once before the workers fork
    names = [str(p) for p in sorted(paths, key=lambda p: -p.stat().st_size)]  # biggest first
    with multiprocessing.Pool(jobs) as pool:
        pool.map(job, names[:jobs], chunksize=1)  # every worker started and warm
        best = float("inf")
        for _ in range(max(1, repeat)):
            start = time.perf_counter()
            pool.map(job, names, chunksize=1)
            best = min(best, time.perf_counter() - start)
    return max(best, 1e-9)


def library_parallel_check() -> Callable[[str, int], object] | None:
    """The library's own way to check one text on ``jobs`` cores: ``check --jobs`` as a
    library call (``bbox_lark.checks.workflow.check_paths(..., jobs=N)``, which splits a large file
    at lines that are not continuations), on the text written to a temporary file."""
    import tempfile

    from bbox_lark.checks.workflow import check_paths

    def check_on_cores(text: str, jobs: int) -> object:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "bench.bbox"
            path.write_text(text, encoding="utf-8")
            return [len(report.diagnostics) for report in check_paths([str(path)], jobs=jobs)]

    return check_on_cores


def all_cores_text(text: str, jobs: int, repeat: int) -> float | None:
    """The least wall time, in seconds, to check one big text on ``jobs`` cores with the
    library's own function; None when the library has none yet."""
    parallel = library_parallel_check()
    if parallel is None:
        return None
    best = float("inf")
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        parallel(text, jobs)
        best = min(best, time.perf_counter() - start)
    return max(best, 1e-9)


def throughput(
    label: str, texts: Sequence[str], repeat: int, jobs: int, paths: Sequence[Path] | None = None
) -> None:
    """Print lines/s of the regex baseline and of ``check`` (one process, all cores)."""
    lines = sum(count_lines(text) for text in texts)
    bbox_check(SMALL_FILE)  # build (or load the cached) parser before timing
    regex_cpu, regex_wall = best_times(regex_classify, texts, repeat)
    check_cpu, check_wall = best_times(bbox_check, texts, repeat)
    regex_rate, check_rate = lines / regex_cpu, lines / check_cpu
    print(f"  {label}: {len(texts)} file(s), {lines:,} lines")
    print(f"    re classifier, one process   {regex_rate:12,.0f} lines/s   (wall: {lines / regex_wall:,.0f})")
    print(
        f"    check, one process           {check_rate:12,.0f} lines/s"
        f"   ratio {check_rate / regex_rate:5.3f}  (goal >= {GOAL_ONE}; wall: {lines / check_wall:,.0f})"
    )
    if paths is not None:
        # What the cores give right now (other processes take their share): the baseline's
        # own speed-up over the same files, to read the check's all-cores figure against.
        regex_all = lines / all_cores_files(paths, jobs, repeat, _classify_path)
        print(
            f"    re classifier, all cores ({jobs}) {regex_all:12,.0f} lines/s"
            f"   {regex_all / (lines / regex_wall):.2f}x its one-process wall rate: what the cores give now"
        )
        seconds: float | None = all_cores_files(paths, jobs, repeat)
        how = "multiprocessing over the files"
    else:
        seconds = all_cores_text(texts[0], jobs, repeat) if len(texts) == 1 else None
        how = "check --jobs N: the file split at non-continuation lines"
    if seconds is None:
        print(f"    check, all cores ({jobs})        not implemented yet (check --jobs is pending)")
    else:
        rate = lines / seconds
        print(
            f"    check, all cores ({jobs})        {rate:12,.0f} lines/s"
            f"   ratio {rate / regex_rate:5.3f}  (goal >= {GOAL_ALL}; wall time, {how})"
        )


# -- where the time goes: the stages of one process, each run over the same text -----------


def stage_split(text: str) -> int:
    """Splitting into lines with the byte-level checks (E001-E003), as the parser reads them."""
    from bbox_lark.syntax.source import LineReader

    return sum(1 for _ in LineReader().lines(text))


def stage_driver(text: str) -> int:
    """Splitting, then the LALR driver on every line (tokens and reductions, no nodes): the
    reference path, shown for comparison (not a stage of ``check`` any more)."""
    from bbox_lark.syntax.parser import line_driver
    from bbox_lark.syntax.source import LineReader

    parse = line_driver().parse
    count = 0
    for raw, _eol, oversized in LineReader().lines(text):
        if raw and not oversized:
            # A header line or text the grammar has no line for raises: not a body line.
            with contextlib.suppress(Exception):
                parse(raw)
        count += 1
    return count


def scan_share(text: str) -> tuple[int, int]:
    """(lines the one anchored scan takes, lines) of ``text``."""
    from bbox_lark.syntax.scan import LINE_SCAN_MAX, line_scanner
    from bbox_lark.syntax.source import LineReader

    match = line_scanner().match
    taken = count = 0
    for raw, _eol, oversized in LineReader().lines(text):
        count += 1
        taken += not oversized and len(raw) <= LINE_SCAN_MAX and match(raw) is not None
    return taken, count


def stage_scan(text: str) -> int:
    """Splitting, then what reads each line's tokens: the one anchored scan
    (:func:`bbox_lark.syntax.scan.line_scanner`), and the LALR driver for the lines it declines."""
    from bbox_lark.syntax.parser import line_driver
    from bbox_lark.syntax.scan import LINE_SCAN_MAX, line_scanner
    from bbox_lark.syntax.source import LineReader

    parse = line_driver().parse
    match = line_scanner().match
    count = 0
    for raw, _eol, oversized in LineReader().lines(text):
        if not oversized and (len(raw) > LINE_SCAN_MAX or match(raw) is None):
            with contextlib.suppress(Exception):
                parse(raw)
        count += 1
    return count


def stage_build(text: str) -> int:
    """Splitting, the scan and building every node (:func:`bbox_lark.iter_nodes`): what
    ``parse`` and the converters read; not a stage of ``check`` since Core v4 (shown for
    comparison with the records)."""
    return sum(1 for _ in bbox_lark.iter_nodes(text))


def stage_records(text: str) -> int:
    """Splitting, the scan and each line's record (:func:`bbox_lark.syntax.record.iter_records`):
    what ``check`` reads (Core v4: no node built unless a check asks for one)."""
    from bbox_lark.syntax.record import iter_records

    return sum(1 for _ in iter_records(text))


#: The stages, each including the ones before it; ``check`` is the last.
STAGES: tuple[tuple[str, Callable[[str], int]], ...] = (
    ("split (lines, byte checks)", stage_split),
    ("scan (one scan; LALR if declined)", stage_scan),
    ("records (what check reads)", stage_records),
    ("checks (bbox_lark.check)", bbox_check),
)
#: Not a stage: the LALR driver on every line, the reference path the scan replaces.
REFERENCE = ("LALR driver, every line", stage_driver)
#: Not a stage of ``check``: every node built (``parse``, the converters), beside the records.
NODES = ("nodes (iter_nodes), every line", stage_build)


def stage_times(texts: Sequence[str], repeat: int) -> dict[str, float]:
    """µs per line of each cumulative stage and of the regex baseline (CPU time, best of
    ``repeat``); the stages are interleaved run by run so that load falls on all alike."""
    lines = sum(count_lines(text) for text in texts)
    bbox_check(SMALL_FILE)
    runs: list[tuple[str, Callable[[str], int]]] = [
        ("re classifier", regex_classify),
        *STAGES,
        REFERENCE,
        NODES,
    ]
    best = dict.fromkeys((name for name, _ in runs), float("inf"))
    for _ in range(max(1, repeat)):
        for name, function in runs:
            best[name] = min(best[name], best_times(function, texts, 1)[0])
    return {name: seconds / lines * 1e6 for name, seconds in best.items()}


def stages(label: str, texts: Sequence[str], repeat: int) -> None:
    """Print the per-stage table: µs per line, cumulative and the stage's own share."""
    micros = stage_times(texts, repeat)
    baseline = micros.pop("re classifier")
    reference = micros.pop(REFERENCE[0])
    nodes = micros.pop(NODES[0])
    shares = [scan_share(text) for text in texts]
    taken, lines = sum(t for t, _ in shares), sum(n for _, n in shares)
    print(f"  {label}: {lines:,} lines, {taken / max(lines, 1):.1%} of them read by the one scan")
    print(f"    {'re classifier (baseline)':34} {baseline:7.2f} µs/line")
    before = 0.0
    split = micros[STAGES[0][0]]
    for name, total in micros.items():
        print(
            f"    {name:34} {total:7.2f} µs/line   own {total - before:6.2f}   ratio {baseline / total:5.3f}"
        )
        before = total
    print(f"    ({REFERENCE[0]}: own {reference - split:.2f} µs/line, for comparison with the scan)")
    scan = micros[STAGES[1][0]]
    print(f"    ({NODES[0]}: own {nodes - scan:.2f} µs/line, for comparison with the records)")
    print(f"    (a ratio of {GOAL_ONE} allows {baseline / GOAL_ONE:.2f} µs/line in all)")


def rule_times(texts: Sequence[str], repeat: int) -> dict[str, float]:
    """CPU µs per line of each check rule run alone over fresh records of ``texts`` (the
    records made before the clock starts, so a node a rule builds is charged to it), and of
    the whole checker over the same records (its dispatch and suppressions included)."""
    from bbox_lark.checks import RULES, Checker, active_rules, selection
    from bbox_lark.checks.base import Context, Dispatch
    from bbox_lark.syntax.record import iter_records

    lines = sum(count_lines(text) for text in texts)
    rules = active_rules(selection())
    best: dict[str, float] = {}

    def fresh() -> list[list[Any]]:
        return [list(iter_records(text)) for text in texts]

    for _ in range(max(1, repeat)):
        for cls in [*rules, None]:
            documents = fresh()
            gc.collect()  # the records just made are not the rule's: no collection of them on its clock
            gc.disable()
            start = time.process_time()
            for head, *records in documents:
                if cls is None:
                    checker = Checker()
                    checker.start(head)
                    for record in records:
                        checker.record(record)
                    checker.finish()
                    continue
                rule = cls()
                ctx = Context(head)
                rule.start(ctx)
                dispatch = Dispatch([rule])
                for record in records:
                    for method in dispatch[record.kind]:
                        method(record, ctx)
                rule.finish(ctx)
            gc.enable()
            name = "every rule (the checker)" if cls is None else f"{cls.__name__} ({', '.join(cls.codes)})"
            best[name] = min(best.get(name, float("inf")), time.process_time() - start)
    assert len(RULES) >= len(rules)
    return {name: seconds / lines * 1e6 for name, seconds in best.items()}


def rule_table(label: str, texts: Sequence[str], repeat: int) -> None:
    micros = rule_times(texts, repeat)
    total = micros.pop("every rule (the checker)")
    print(f"  {label}: {sum(count_lines(t) for t in texts):,} lines")
    for name, value in sorted(micros.items(), key=lambda item: -item[1]):
        print(f"    {name[:60]:60} {value:6.2f} µs/line")
    print(f"    {'sum of the rules alone':60} {sum(micros.values()):6.2f} µs/line")
    print(f"    {'every rule (the checker: dispatch, suppressions)':60} {total:6.2f} µs/line")


# -- child processes: peak memory and start-up --------------------------------------------


def bbox_lark_command() -> list[str]:
    """How to run ``bbox-lark``: the console script beside this Python, else ``-m``."""
    script = Path(sys.executable).with_name("bbox-lark")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "bbox_lark.cli"]


def child_env() -> dict[str, str]:
    """This environment without ``PYTHONDONTWRITEBYTECODE`` (children keep warm bytecode
    caches, as an installed bbox-lark does) and without colour forcing."""
    drop = {"PYTHONDONTWRITEBYTECODE", "FORCE_COLOR", "TTY_COMPATIBLE"}
    return {key: value for key, value in os.environ.items() if key not in drop}


def run_child(command: Sequence[str], env: dict[str, str] | None = None) -> tuple[int, float, int]:
    """Run ``command`` to its end; return its exit code, its CPU time in seconds (user +
    system) and its peak RSS in KiB, read from this child's own resource usage."""
    process = subprocess.Popen(
        list(command), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


#: Runs its arguments as a command and prints the command's exit code and peak RSS (KiB).
#: A child's high-water mark includes what it had before ``exec``, the image of the process
#: it was forked from: this small process, not the benchmark holding a 1M-line text.
_PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(code, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)\n"
)


def peak_memory_mib(path: Path, arguments: Sequence[str] = ("check", "--quiet")) -> float:
    """The RSS high-water mark, in MiB, of a fresh ``bbox-lark ARGUMENTS PATH`` process."""
    return peak_and_cpu(path, arguments)[0]


def peak_and_cpu(path: Path, arguments: Sequence[str] = ("check", "--quiet")) -> tuple[float, float]:
    """The RSS high-water mark, in MiB, and the CPU time (user + system), in seconds, of a
    fresh ``bbox-lark ARGUMENTS PATH`` process."""
    command = [sys.executable, "-c", _PEAK_RSS, *bbox_lark_command(), *arguments, str(path)]
    done = subprocess.run(command, capture_output=True, text=True, env=child_env(), check=True)
    code, peak_kib, cpu = done.stdout.split()
    if int(code) not in (0, 1):
        raise RuntimeError(f"bbox-lark {' '.join(arguments)} {path} exited {code}")
    return int(peak_kib) / 1024, float(cpu)


#: The commands whose peak memory ``--only commands`` measures, each in a form that reads
#: the whole input and writes its output to a file under ``{out}`` (or nowhere).
COMMANDS: dict[str, tuple[str, ...]] = {
    "check": ("check", "--quiet"),
    "stats --json": ("stats", "--json"),
    "fmt --check": ("fmt", "--check"),
    "fmt": ("fmt",),
    "fix --arrows": ("fix", "--arrows", "--isolated", "-o", "{out}/fixed.bbox"),
    "redact --list": ("redact", "--list"),
    "redact": ("redact", "--isolated", "--force", "-o", "{out}/redacted.bbox"),
    "convert jsonl": ("convert", "--to", "jsonl", "-o", "{out}/out.jsonl"),
    "convert compact": ("convert", "--to", "compact", "-o", "{out}/out.bbox"),
    "convert atif": ("convert", "--to", "atif", "-o", "{out}/out.json"),
    "report": ("report", "-o", "{out}/page.html"),
    "export csv": ("export", "--format", "csv", "-j", "1", "-o", "{out}/tables"),
    "export parquet": ("export", "--format", "parquet", "-j", "1", "-o", "{out}/tables"),
}


def command_memory(folder: Path, sizes: Sequence[int], names: Sequence[str] | None = None) -> None:
    """Peak RSS and speed of each command of :data:`COMMANDS` on a generated session of each
    size: its ratio to ``check``'s peak on the same file (the goal: a streaming command stays
    within twice ``check``'s peak), between the largest and smallest size (a streaming
    command's stays near 1), and its lines/s of CPU time on the largest. Each command's row
    is printed once it is measured (a run at 1M lines takes a while)."""
    chosen = [name for name in COMMANDS if names is None or name in names]
    paths = []
    checks: list[float] = []
    for size in sizes:
        path = folder / f"commands-{size}.bbox"
        path.write_text(generate_session(size), encoding="utf-8")
        paths.append(path)
        checks.append(peak_memory_mib(path))
    header = "".join(f"{size:>12,}" for size in sizes)
    print(f"  {'command':16}{header} lines (MiB)   x check   x size   lines/s (CPU, {sizes[-1]:,})")
    print(f"  {'(check)':16}" + "".join(f"{value:12,.1f}" for value in checks), flush=True)
    for name in chosen:
        values: list[float] = []
        rate = float("nan")
        for size, path in zip(sizes, paths, strict=True):
            out = Path(tempfile.mkdtemp(dir=folder))
            arguments = [argument.format(out=out) for argument in COMMANDS[name]]
            try:
                peak, cpu = peak_and_cpu(path, arguments)
            except (RuntimeError, subprocess.CalledProcessError) as error:
                print(f"  {name}: failed ({str(error)[:120]})")
                peak, cpu = float("nan"), float("nan")
            shutil.rmtree(out, ignore_errors=True)
            values.append(peak)
            rate = size / cpu if cpu > 0 else float("nan")
        cells = "".join(f"{value:12,.1f}" for value in values)
        to_check = values[-1] / checks[-1]
        growth = values[-1] / values[0] if len(values) > 1 else 1.0
        print(f"  {name:16}{cells}          {to_check:6.2f}   {growth:6.2f}   {rate:12,.0f}", flush=True)
    for path in paths:
        path.unlink()


def startup_times(commands: dict[str, list[str]], runs: int, warm: int = 3) -> dict[str, list[float]]:
    """CPU milliseconds of each command over ``runs`` interleaved runs, after ``warm`` runs
    each that fill the bytecode and grammar caches."""
    env = child_env()
    for command in commands.values():
        for _ in range(warm):
            run_child(command, env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(max(1, runs)):
        for name, command in commands.items():
            times[name].append(run_child(command, env)[1] * 1000)
    return times


def startup(folder: Path, runs: int) -> None:
    small = folder / "small.bbox"
    small.write_text(SMALL_FILE, encoding="utf-8")
    base, check = 'python -c "import lark, yaml"', f"bbox-lark check ({count_lines(SMALL_FILE)} lines)"
    times = startup_times(
        {
            base: [sys.executable, "-c", "import lark, yaml"],
            check: [*bbox_lark_command(), "check", str(small)],
        },
        runs,
    )
    for name, values in times.items():
        print(f"  {name:32} min {min(values):7.1f} ms   median {statistics.median(values):7.1f} ms")
    low = min(times[check]) / min(times[base])
    middle = statistics.median(times[check]) / statistics.median(times[base])
    print(f"  {'ratio':32} min {low:7.2f}      median {middle:7.2f}      (goal <= {GOAL_STARTUP})")


def memory(folder: Path, sizes: Sequence[int]) -> None:
    peaks = []
    for size in sizes:
        path = folder / f"session-{size}.bbox"
        path.write_text(generate_session(size), encoding="utf-8")
        peak = peak_memory_mib(path)
        path.unlink()
        peaks.append(peak)
        print(f"  {size:>11,} lines   {peak:9,.1f} MiB")
    if len(sizes) > 1:
        print(f"  ratio {sizes[-1]:,} / {sizes[0]:,} lines: {peaks[-1] / peaks[0]:.2f}  (goal <= 1.2)")


def export_run(folder: Path, jobs: int) -> tuple[int, float, float]:
    """A fresh ``bbox-lark export FOLDER -o OUT --jobs JOBS``: its exit code, wall seconds
    and the peak RSS of its largest process, in MiB."""
    out = folder.with_name(folder.name + f"-out-{jobs}")
    command = [*bbox_lark_command(), "export", str(folder), "-o", str(out), "--jobs", str(jobs)]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, *command],
        capture_output=True,
        text=True,
        env=child_env(),
        check=True,
    )
    wall = time.perf_counter() - start
    code, peak_kib, _cpu = done.stdout.split()
    return int(code), max(wall, 1e-9), int(peak_kib) / 1024


def export(folder: Path, sessions: int, lines: int, jobs: int) -> None:
    logs = folder / "export-logs"
    logs.mkdir()
    total = 0
    for number in range(sessions):
        text = generate_session(lines, seed=number)
        total += count_lines(text)
        (logs / f"session-{number:05}.bbox").write_text(text, encoding="utf-8")
    print(f"  {sessions:,} generated sessions, {total:,} lines")
    for label, count in (("one core", 1), (f"all cores ({jobs})", jobs)):
        code, wall, peak = export_run(logs, count)
        failed = "" if code == 0 else f"   (exit {code})"
        print(f"    export, {label:16} {total / wall:12,.0f} lines/s   peak {peak:7,.1f} MiB{failed}")


# -- Claude Code → ATIF and usage against harbor ---------------------------------------------

#: harbor's own Claude Code → ATIF conversion, as its ``populate_context_post_run`` does it:
#: ``ClaudeCode.convert_trajectory(logs)``, then (argument ``write``) the trajectory written
#: with ``json.dump(indent=2, ensure_ascii=False)``; prints the calls and tokens as JSON.
_HARBOR_DRIVER = """
import json, sys
from pathlib import Path
from harbor.agents.installed.claude_code import ClaudeCode
logs, out = Path(sys.argv[1]), sys.argv[2]
trajectory = ClaudeCode(logs_dir=logs).convert_trajectory(logs)
if out != "-":
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(trajectory.to_json_dict(), handle, indent=2, ensure_ascii=False)
m = trajectory.final_metrics
calls = sum(len(step.tool_calls or ()) for step in trajectory.steps)
print(json.dumps({"calls": calls, "prompt": m.total_prompt_tokens,
                  "completion": m.total_completion_tokens, "cached": m.total_cached_tokens}))
"""

#: Runs its arguments as a command; prints its exit code, peak RSS (KiB), CPU and wall
#: seconds, then the command's own standard output.
_MEASURED = (
    "import resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
    "wall = time.perf_counter() - start\n"
    "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(done.returncode, use.ru_maxrss, use.ru_utime + use.ru_stime, wall)\n"
    "sys.stdout.write(done.stdout.decode())\n"
)

HARBOR_VENV = Path("/tmp/harbor-venv/bin/python")


#: Whole commands over the same files (``--only rates``), each with one job: the share of
#: ``check``'s lines/s that each reaches (issue "Core v4": >= 0.6 for stats, export, report).
RATE_COMMANDS: dict[str, tuple[str, ...]] = {
    "check": ("check", "--quiet", "--jobs", "1", "{input}"),
    "stats --json": ("stats", "--json", "--jobs", "1", "{input}"),
    "export": ("export", "{input}", "-o", "{out}", "--jobs", "1"),
    "report": ("report", "{input}", "-o", "{out}", "--jobs", "1"),
}
GOAL_RATE = 0.6


def command_rates(label: str, folder: Path, corpus: Path, runs: int) -> None:
    """Lines/s of each of :data:`RATE_COMMANDS` as a fresh process over ``corpus`` (CPU
    time of the process and its children, start-up included, best of ``runs``,
    interleaved), and each one's rate as a share of ``check``'s."""
    lines = sum(count_lines(_read(str(path))) for path in corpus.iterdir() if path.is_file())
    best = dict.fromkeys(RATE_COMMANDS, float("inf"))
    for run in range(runs):
        for name, arguments in RATE_COMMANDS.items():
            out = folder / f"rates-{run}-{name.split()[0]}"
            command = [*bbox_lark_command(), *(a.format(input=corpus, out=out) for a in arguments)]
            code, cpu, _peak = run_child(command, child_env())
            if code not in (0, 1):
                print(f"  {name}: exited {code}, skipped")
                best[name] = float("nan")
                continue
            best[name] = min(best[name], cpu)
    check = best["check"]
    print(f"  {label}: {lines:,} lines")
    for name, cpu in best.items():
        share = "" if name == "check" else f"   of check {check / cpu:.2f} (goal >= {GOAL_RATE})"
        print(f"    {name:<13} CPU {cpu:6.2f} s   {lines / cpu:>10,.0f} lines/s{share}")


def harbor_python(given: str | None) -> tuple[str | None, str]:
    """The Python that has harbor 0.25 installed (``--harbor-python``, ``$BBOX_HARBOR_PYTHON``,
    else ``/tmp/harbor-venv``), or None and why not."""
    python = (
        given or os.environ.get("BBOX_HARBOR_PYTHON") or (str(HARBOR_VENV) if HARBOR_VENV.exists() else None)
    )
    if python is None:
        return None, (
            "harbor not found: give --harbor-python (harbor 0.25.0 needs Python >= 3.12: python3.12 -m venv"
            " /tmp/harbor-venv; pip install --no-deps harbor==0.25.0; pip install toml tenacity shortuuid"
            " pydantic platformdirs jinja2)"
        )
    probe = "import harbor.agents.installed.claude_code, importlib.metadata as m; print(m.version('harbor'))"
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    except OSError as error:
        return None, f"{python}: cannot run: {error.strerror or error}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"{python} cannot import harbor's Claude Code agent: {last}"
    return python, done.stdout.strip()


def measured(command: Sequence[str]) -> tuple[int, float, float, float, str]:
    """Run ``command`` in a fresh process: exit code, peak RSS (MiB), CPU and wall seconds,
    and its standard output."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *command],
        capture_output=True,
        text=True,
        env=child_env(),
        check=True,
    )
    first, _, output = done.stdout.partition("\n")
    code, peak, cpu, wall = first.split()
    return int(code), int(peak) / 1024, float(cpu), float(wall), output


def ours_usage(stats_json: str) -> dict[str, int]:
    """Calls and tokens from ``bbox-lark stats --json`` in harbor's terms (ATIF's
    ``prompt_tokens`` include cache reads: DECISIONS §13)."""
    import json

    entry = json.loads(stats_json)["files"][0]
    usage = entry["usage"]
    calls = sum(entry["calls"][family]["total"] for family in ("tool", "mcp", "subagent"))
    return {
        "calls": calls,
        "prompt": usage["tokens_in"] + usage["tokens_cached"],
        "completion": usage["tokens_out"],
        "cached": usage["tokens_cached"],
    }


def harbor(folder: Path, sizes: Sequence[int], runs: int, given: str | None) -> None:
    """Claude Code → ATIF and usage, ours against harbor's converter, on generated sessions
    (``tools/gen_claude_code.py``), whole commands, interleaved run by run: the best wall
    and CPU seconds of ``runs`` and the peak RSS of each; and whether calls and tokens agree."""
    import json

    from gen_claude_code import write as write_session

    python, why = harbor_python(given)
    if python is None:
        print(f"  skipped: {why}")
        return
    print(f"  harbor {why} ({python}); best of {runs}, interleaved")
    ours = bbox_lark_command()
    for size in sizes:
        logs = folder / f"harbor-{size}"
        project = logs / "sessions" / "projects" / "-home-dev-project"
        project.mkdir(parents=True)
        session = project / "session.jsonl"
        megabytes = write_session(session, size) / 1e6
        out = folder / f"out-{size}"
        out.mkdir()
        commands = {
            "harbor → ATIF": [python, "-c", _HARBOR_DRIVER, str(logs), str(out / "harbor.json")],
            "ours → ATIF": [
                *ours,
                "convert",
                str(session),
                "--to",
                "atif",
                "-o",
                str(out / "ours.json"),
                "-q",
            ],
            "harbor usage": [python, "-c", _HARBOR_DRIVER, str(logs), "-"],
            "ours usage": [*ours, "stats", "--json", str(session)],
        }
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
        outputs: dict[str, str] = {}
        for _ in range(max(1, runs)):
            for name, command in commands.items():
                code, peak, cpu, wall, output = measured(command)
                if code not in (0, 1):
                    print(f"  {name}: exit {code}")
                results[name].append((wall, cpu, peak))
                outputs[name] = output
        print(f"  {size:,} records ({megabytes:.0f} MB):")
        for name, rows in results.items():
            wall = min(row[0] for row in rows)
            cpu = min(row[1] for row in rows)
            peak = max(row[2] for row in rows)
            print(f"    {name:14} wall {wall:7.2f} s   CPU {cpu:7.2f} s   peak {peak:8,.0f} MiB")
        for what in ("→ ATIF", "usage"):
            ratio = min(r[1] for r in results[f"ours {what}"]) / min(r[1] for r in results[f"harbor {what}"])
            print(f"    ours / harbor {what}: CPU x{ratio:.2f} (goal <= 1)")
        theirs = json.loads(outputs["harbor usage"].strip().splitlines()[-1])
        mine = ours_usage(outputs["ours usage"])
        same = "agree" if mine == theirs else f"DIFFER: ours {mine}, harbor {theirs}"
        print(f"    calls and tokens: {same}")
        harbor_cpu = min(min(r[1] for r in results[f"harbor {what}"]) for what in ("→ ATIF", "usage"))
        required_work(session, out / "ours.bbox", runs, harbor_cpu)
        session.unlink()
        for produced in out.iterdir():
            produced.unlink()


def _strings(value: object, out: list[str]) -> list[str]:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)
    return out


def required_work(session: Path, bbox: Path, runs: int, harbor_cpu: float) -> None:
    """What DECISIONS §13 asks of ours and harbor does not do, timed alone in this process
    (imports done, CPU s, best of ``runs``): the secret scan over the decoded text of every
    JSON string of the session, and the check pass over its bbox form; beside harbor's whole
    run (its smaller CPU time of the two commands)."""
    import json

    from bbox_lark.secrets.scanner import find_secrets, might_hold_secrets

    done = subprocess.run(
        [*bbox_lark_command(), "convert", str(session), "-o", str(bbox), "-q"], capture_output=True
    )
    if done.returncode not in (0, 1) or not bbox.exists():
        print("    required work: the bbox form could not be written, skipped")
        return
    lines = session.read_text(encoding="utf-8").splitlines()
    texts = [s for line in lines if line.strip() for s in _strings(json.loads(line), [])]
    bbox_text = bbox.read_text(encoding="utf-8", errors="surrogateescape")

    def scan() -> int:
        return sum(len(find_secrets(text)) for text in texts if might_hold_secrets(text))

    def check() -> int:
        return len(bbox_lark.check(bbox_text))

    best = {"secret scan of every decoded string": float("inf"), "check pass on the bbox form": float("inf")}
    for _ in range(max(1, runs)):
        for name, function in zip(best, (scan, check), strict=True):
            gc.collect()
            start = time.process_time()
            function()
            best[name] = min(best[name], time.process_time() - start)
    print(f"    required work alone ({len(texts):,} strings; {count_lines(bbox_text):,} bbox lines):")
    for name, cpu in best.items():
        print(f"      {name:38} CPU {cpu:6.2f} s   x{cpu / harbor_cpu:.2f} of harbor's whole run")
    total = sum(best.values())
    print(f"      {'both':38} CPU {total:6.2f} s   x{total / harbor_cpu:.2f} of harbor's whole run")
    bbox.unlink()


# -- the run ---------------------------------------------------------------------------------


def describe_machine(jobs: int) -> str:
    import lark
    import yaml

    libyaml = "with libyaml" if getattr(yaml, "__with_libyaml__", False) else "without libyaml"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = ""
    if hasattr(os, "getloadavg"):
        load = ", load average " + " ".join(f"{value:.1f}" for value in os.getloadavg())
    return (
        f"bbox-lark {bbox_lark.__version__}, Python {platform.python_version()}, lark {lark.__version__},"
        f" PyYAML {yaml.__version__} {libyaml}\n{platform.platform()}, {cores} core(s) usable,"
        f" {jobs} job(s) for 'all cores'{load}"
    )


def corpus_texts(corpus: Path) -> list[str]:
    """The text of each file of the real-log folder, in name order."""
    paths = sorted(p for p in corpus.iterdir() if p.is_file())
    return [p.read_text(encoding="utf-8", errors="surrogateescape") for p in paths]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of real logs")
    parser.add_argument("--lines", type=int, help="size of the generated session (default 1,000,000)")
    parser.add_argument("--repeat", type=int, help="runs per throughput figure, best kept (default 3)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes for 'all cores'")
    parser.add_argument("--startup-runs", type=int, help="runs of each start-up command (default 40)")
    parser.add_argument(
        "--memory-lines", help="comma-separated sizes for peak memory (default 10000,100000,1000000)"
    )
    parser.add_argument(
        "--command-lines", help="comma-separated sizes for peak memory per command (default 10000,1000000)"
    )
    parser.add_argument(
        "--command",
        action="append",
        choices=list(COMMANDS),
        help="peak memory of this command only (repeatable; default: every command)",
    )
    parser.add_argument("--export-sessions", type=int, help="sessions for export (default 3000)")
    parser.add_argument("--export-lines", type=int, default=300, help="lines per export session")
    parser.add_argument(
        "--harbor-records", help="comma-separated Claude Code session sizes for harbor (default 10000,50000)"
    )
    parser.add_argument("--harbor-runs", type=int, default=3, help="interleaved runs per harbor figure")
    parser.add_argument(
        "--harbor-python", help="a Python with harbor 0.25 installed (default /tmp/harbor-venv)"
    )
    parser.add_argument("--only", action="append", choices=SECTIONS, help="run only this section")
    parser.add_argument(
        "--quick", action="store_true", help="100k lines, fewer runs, memory up to 100k: under a minute"
    )
    args = parser.parse_args(argv)
    lines = args.lines if args.lines is not None else 100_000 if args.quick else 1_000_000
    repeat = args.repeat or (1 if args.quick else 3)
    runs = args.startup_runs or (15 if args.quick else 40)
    default_sizes = "10000,100000" if args.quick else "10000,100000,1000000"
    sizes = [int(size) for size in (args.memory_lines or default_sizes).split(",") if size]
    command_sizes = [
        int(size)
        for size in (args.command_lines or ("10000,100000" if args.quick else "10000,1000000")).split(",")
        if size
    ]
    sections = args.only or SECTIONS
    jobs = max(1, args.jobs)

    print(describe_machine(jobs))
    print(f"run {time.strftime('%Y-%m-%d %H:%M')}; the machine may be busy: read ratios, not digits\n")
    with tempfile.TemporaryDirectory(prefix="bbox-bench-") as tmp:
        folder = Path(tmp)
        if "throughput" in sections:
            print("throughput: lines/s; ratio = check / the bare re classifier on the same text")
            print(f"  (one process: CPU time, best of {repeat}; all cores: wall time, best of {repeat})")
            if args.corpus.is_dir():
                paths = sorted(p for p in args.corpus.iterdir() if p.is_file())
                texts = [p.read_text(encoding="utf-8", errors="surrogateescape") for p in paths]
                throughput(f"real logs ({args.corpus.name})", texts, repeat, jobs, paths)
            else:
                print(f"  real logs: {args.corpus} not found, skipped")
            if lines > 0:
                throughput("generated clean session", [generate_session(lines)], min(repeat, 2), jobs)
            print()
        if "stages" in sections:
            print(
                f"stages: CPU µs per line, each row includes the ones above (best of {repeat}, interleaved)"
            )
            if args.corpus.is_dir():
                stages(f"real logs ({args.corpus.name})", corpus_texts(args.corpus), repeat)
            if lines > 0:
                stages("generated clean session", [generate_session(min(lines, 200_000))], repeat)
            print()
        if "rules" in sections:
            print(f"rules: CPU µs per line of each rule alone over records (best of {repeat}, interleaved)")
            if args.corpus.is_dir():
                rule_table(f"real logs ({args.corpus.name})", corpus_texts(args.corpus), repeat)
            if lines > 0:
                rule_table("generated clean session", [generate_session(min(lines, 200_000))], repeat)
            print()
        if "rates" in sections:
            print("rates: whole commands over the same files, one job each; CPU of the process, best of")
            print(f"  {repeat}, interleaved; each command's lines/s as a share of check's")
            if args.corpus.is_dir():
                command_rates(f"real logs ({args.corpus.name})", folder, args.corpus, repeat)
            else:
                print(f"  real logs: {args.corpus} not found, skipped")
            print()
        if "memory" in sections and sizes:
            print("peak memory: RSS high-water mark of a fresh `bbox-lark check FILE` (generated)")
            memory(folder, sizes)
            print()
        if "commands" in sections and command_sizes:
            print("peak memory per command: RSS high-water mark of a fresh process (generated session)")
            command_memory(folder, command_sizes, args.command)
            print()
        if "startup" in sections:
            print(f"start-up: CPU time of a whole process, {runs} interleaved runs each, warm caches")
            startup(folder, runs)
        if "export" in sections:
            sessions = args.export_sessions or (300 if args.quick else 3000)
            print(
                "\nexport: wall time of a whole `bbox-lark export` process; peak RSS of its largest process"
            )
            try:
                export(folder, sessions, args.export_lines, jobs)
            except subprocess.CalledProcessError as error:
                print(f"  export failed (is the scale extra installed?): {error.stderr.strip()[:200]}")
        if "harbor" in sections:
            default_records = "3000" if args.quick else "10000,50000"
            records = [int(size) for size in (args.harbor_records or default_records).split(",") if size]
            print("\nClaude Code → ATIF and usage: ours against harbor's converter (whole commands)")
            harbor(folder, records, args.harbor_runs, args.harbor_python)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
