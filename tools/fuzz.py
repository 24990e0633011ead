"""Hostile-input fuzzer for bbox-lark: every input must parse, print back, format and check
without a traceback, in time linear in its size.

    python tools/fuzz.py                          # 60 s, seed 0
    python tools/fuzz.py --seconds 3600 --seed $RANDOM
    python tools/fuzz.py --inputs 500 --seed 1    # a fixed, reproducible sequence of inputs
    python tools/fuzz.py --replay fuzz-findings/*.bbox

Generators (``tools/fuzzgen.py``) run in rotation: mutations of real lines, grammar-generated
text, random bytes and text, shuffled real files, header attacks and pathological sizes.
Input number ``i`` of a run is drawn from ``random.Random(f"{seed}:{i}")`` only, so
``--seed`` fixes the sequence. The oracles, for every input (each under ``--timeout``):

* ``parse`` / ``check``: ``bbox_lark.parse`` and ``bbox_lark.check`` raise nothing, and
  ``check`` gives the diagnostics ``parse`` carries;
* ``dumps``: ``dumps(parse(data))`` is the input (decoded with ``surrogateescape``);
* ``position``: every diagnostic's line is within the file (1 for an empty one), its column
  within 1 .. the line's width + 1;
* ``stats``: ``compute_stats(document).to_json()`` raises nothing;
* ``fmt`` / ``fmt-idempotent`` / ``fmt-meaning``: ``format_document`` raises nothing,
  formats its own output to itself, and keeps ``document_signature``;
* ``timeout``: one input took longer than ``--timeout`` seconds;
* ``linear``: a scaling shape took more than ``--ratio`` times as long at ``4n`` as at
  ``n`` (linear is 4, quadratic 16);
* ``cli``: the commands run in a subprocess with ``PYTHONIOENCODING`` latin-1, ascii,
  cp1252 or utf-8 exit 0, 1 or 2 and print no traceback and no ``internal error`` (sampled:
  ``--cli-share`` of the run's time);
* ``convert`` / ``convert-check`` / ``convert-writable`` / ``convert-json`` /
  ``convert-roundtrip``: on the converter inputs (generators ``convert`` and ``export``, see
  :func:`run_convert_oracles`), no exception but a refusal, importer output without an error
  finding, output that encodes, strict JSON, exact round trips.

A finding is printed on one line and written to ``--out`` as ``<oracle>-<sha1>.bbox`` (the
input, shrunk while it still fails the same way) and ``.txt`` (traceback, details, how to
replay). Findings are deduplicated by (oracle, exception type, innermost frame in
``bbox_lark/``). Exit 1
when anything was found, 0 when clean, 2 on a usage error. See docs/fuzzing.md.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzzgen  # the sibling module, wherever the tool is run from

ROOT = fuzzgen.ROOT
DEFAULT_OUT = Path("fuzz-findings")


# -- what is fuzzed ---------------------------------------------------------------------------


@dataclass
class Target:
    """The functions under test (the tests swap in broken ones to prove the oracles work)."""

    parse: Callable[[bytes], Any]
    check: Callable[[bytes], list[Any]]
    dumps: Callable[[Any], str]
    format: Callable[[Any], str]
    signature: Callable[[Any], Any]
    #: ``compute_stats`` with its JSON form (``bbox-lark stats``).
    stats: Callable[[Any], Any]
    #: The command line, run as ``cli + [command, ...]`` with the input on stdin.
    cli: list[str] = field(default_factory=lambda: [sys.executable, "-m", "bbox_lark.cli"])
    #: Codes for ``explain``.
    codes: list[str] = field(default_factory=list)


def default_target() -> Target:
    import bbox_lark
    from bbox_lark.syntax.printer import document_signature

    return Target(
        parse=bbox_lark.parse,
        check=bbox_lark.check,
        dumps=bbox_lark.dumps,
        format=bbox_lark.format_document,
        signature=document_signature,
        stats=lambda document: bbox_lark.compute_stats(document).to_json(),
        codes=sorted(bbox_lark.registry()),
    )


# -- findings ---------------------------------------------------------------------------------


@dataclass
class Finding:
    oracle: str
    #: What makes two findings the same: (oracle, exception type or detail, innermost frame).
    key: tuple[str, ...]
    #: One line: the exception or what differed.
    summary: str
    #: The traceback or the details.
    detail: str
    data: bytes = b""
    generator: str = ""
    index: int | None = None
    path: Path | None = None
    hits: int = 1


class FuzzTimeout(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` swallows it."""


def _alarm(signum: int, frame: Any) -> None:
    raise FuzzTimeout


def _can_alarm() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`FuzzTimeout` in this block after ``seconds`` (POSIX main thread only)."""
    if seconds <= 0 or not _can_alarm():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _shown(filename: str) -> str:
    path = Path(filename)
    return (path.relative_to(ROOT) if path.is_relative_to(ROOT) else Path(path.name)).as_posix()


def _where(frames: list[tuple[str, int | None, str]]) -> tuple[str, str]:
    """(the innermost frame in ``bbox_lark/``, else the innermost; the innermost), each as
    ``path:line:function``. The first is what findings are told apart by: a RecursionError
    deep in PyYAML, or an encoding error inside Rich, is named after the project's code that
    called into it, wherever the library happened to be when it gave up."""
    if not frames:
        return "?", "?"
    package = ROOT / "bbox_lark"
    shown = [f"{_shown(name)}:{line}:{function}" for name, line, function in frames]
    ours = [i for i, (name, _, _) in enumerate(frames) if Path(name).is_relative_to(package)]
    return shown[ours[-1] if ours else -1], shown[-1]


def _frames(error: BaseException) -> list[tuple[str, int | None, str]]:
    here = str(Path(__file__).resolve())
    frames = traceback.extract_tb(error.__traceback__)
    # Leave out the fuzzer's own frames (the oracles, the alarm handler).
    return [(f.filename, f.lineno, f.name) for f in frames if str(Path(f.filename).resolve()) != here]


def _crash(oracle: str, error: BaseException) -> Finding:
    kind = "timeout" if isinstance(error, FuzzTimeout) else oracle
    name = "FuzzTimeout" if isinstance(error, FuzzTimeout) else type(error).__name__
    message = str(error).splitlines()[0][:160] if str(error) else ""
    frame, innermost = _where(_frames(error))
    at = frame if frame == innermost else f"{frame} (innermost: {innermost})"
    summary = f"{name}: {message} at {at}" if message else f"{name} at {at}"
    if kind == "timeout":
        summary = f"{oracle} ran out of time at {at}"
    detail = "".join(traceback.format_exception(error))
    return Finding(kind, (kind, name, frame), summary, detail)


_YAML_BREAKS = re.compile("\r(?!\n)|[\x85\u2028\u2029]")
_LINE_CLASS = re.compile(r"(t!|t~|th|td|[a-z]):|#|@|[ \t]|---")


def _line_class(line: str) -> str:
    """A rough kind for a line (its prefix), to tell apart formatter findings."""
    match = _LINE_CLASS.match(line)
    return (match[0].strip() or "indent") if match else "other"


def _first_difference(a: str, b: str) -> tuple[int, str, str]:
    left, right = a.split("\n"), b.split("\n")
    for number, (x, y) in enumerate(zip(left, right, strict=False), 1):
        if x != y:
            return number, x, y
    number = min(len(left), len(right)) + 1
    return number, "\n".join(left[number - 1 :]), "\n".join(right[number - 1 :])


def _lines(text: str) -> list[str]:
    """The file's lines as diagnostics count them (from 1; columns in code points)."""
    from bbox_lark.syntax.source import split_lines

    return [line for line, _ in split_lines(text.removeprefix("\ufeff"))]


# -- the oracles ----------------------------------------------------------------------------------


#: The formats each bbox input of the ``export`` generator is written in.
EXPORT_TARGETS = ("bbox", "compact", "atif", "jsonl", "lightbox")
#: Importers whose output may carry the errors of the bbox they carry (they hold bbox lines
#: or records of them): for them the oracle is the round trip, not a clean ``check``.
CARRIERS = ("jsonl", "compact")


def _convert_finding(oracle: str, what: str, detail: str) -> Finding:
    return Finding(oracle, (oracle, what), what, detail)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def run_convert_oracles(tagged: bytes, timeout: float = 5.0) -> list[Finding]:
    """The converter oracles on one tagged input (``fuzzgen.FUZZ_TAG`` + format + ``\\n``):

    * ``convert``: reading it as that format (or, for ``export``, writing the bbox input in
      every format) raises nothing but :class:`~bbox_lark.convert.ConvertError` (an input
      refused as a whole, with its message);
    * ``convert-writable``: the output encodes as UTF-8 (undecodable input bytes as they were);
    * ``convert-check``: an importer's bbox output has no error finding (carriers of bbox
      lines and ATIF written from bbox excepted: they give back what they carry);
    * ``convert-roundtrip``: ``bbox → jsonl → bbox`` gives the input byte for byte, and
      ``bbox → compact → bbox`` the same document.
    """
    import tempfile

    import bbox_lark
    from bbox_lark.convert import ConvertError, convert
    from bbox_lark.syntax.printer import document_signature

    first, _, data = tagged.partition(b"\n")
    source = first[len(fuzzgen.FUZZ_TAG) :].decode("ascii", "replace")
    findings: list[Finding] = []
    stage = "convert"
    try:
        with time_limit(timeout):
            outputs: list[tuple[str, str]] = []
            if source == "export":
                for target in EXPORT_TARGETS:
                    stage = f"convert-{target}"
                    with tempfile.TemporaryDirectory(prefix="bbox-fuzz-") as folder:
                        out = folder if target == "lightbox" else None
                        try:
                            done = convert(data, "bbox", to=target, output_path=out)
                        except ConvertError:  # refused with a message (lightbox: bytes not UTF-8)
                            continue
                    outputs.append((target, done.text))
                for carrier in ("jsonl", "compact"):
                    written = dict(outputs).get(carrier)
                    if written is None:
                        continue
                    back = convert(written, carrier, to="bbox").text
                    original = bbox_lark.syntax.source.decode(data)
                    if carrier == "jsonl":
                        same = back == original
                    else:
                        signature = document_signature(bbox_lark.parse(original))
                        same = document_signature(bbox_lark.parse(back)) == signature
                    if not same:
                        line, want, got = _first_difference(original, back)
                        findings.append(
                            _convert_finding(
                                "convert-roundtrip",
                                f"bbox → {carrier} → bbox differs at line {line}",
                                f"input: {want!r}\nback:  {got!r}",
                            )
                        )
            else:
                stage = f"convert-{source}"
                try:
                    done = convert(data, source, to="bbox")
                except ConvertError:
                    return []
                outputs.append(("bbox", done.text))
                carrier = source in CARRIERS or (source == "atif" and b'"bbox"' in data)
                if not carrier:
                    bad = [d for d in bbox_lark.check(done.text) if d.severity == "error"]
                    if bad:
                        findings.append(
                            _convert_finding(
                                "convert-check",
                                f"{source} → bbox output has {bad[0].code}",
                                "\n".join(f"{d.code} {d.line}:{d.col} {d.message}" for d in bad[:10]),
                            )
                        )
            for target, text in outputs:
                if target in ("atif", "jsonl"):
                    try:  # strict JSON: no NaN or Infinity, which other readers refuse
                        lines = [text] if target == "atif" else text.splitlines()
                        for piece in lines:
                            json.loads(piece, parse_constant=_no_constant)
                    except ValueError as error:
                        findings.append(
                            _convert_finding(
                                "convert-json", f"{source} → {target}: not strict JSON", str(error)
                            )
                        )
                try:
                    text.encode("utf-8", "surrogateescape")
                except UnicodeEncodeError as error:
                    findings.append(
                        _convert_finding(
                            "convert-writable", f"{source} → {target}: {error.reason}", repr(error)
                        )
                    )
    except (Exception, FuzzTimeout) as error:
        findings.append(_crash(stage, error))
    for finding in findings:
        finding.data = tagged
    return findings


def run_oracles(data: bytes, target: Target, timeout: float = 5.0) -> list[Finding]:
    """Every core oracle on one input; the findings (empty when it passes). A converter
    input (``fuzzgen.FUZZ_TAG``) gets the converter oracles instead."""
    from bbox_lark.syntax.source import decode

    if data.startswith(fuzzgen.FUZZ_TAG):
        return run_convert_oracles(data, timeout)
    findings: list[Finding] = []
    stage = "parse"
    try:
        with time_limit(timeout):
            text = decode(data)
            document = target.parse(data)
            stage = "check"
            diagnostics = target.check(data)
            if list(diagnostics) != list(document.diagnostics):
                findings.append(
                    Finding(
                        "check",
                        ("check", "differs"),
                        "check(data) differs from parse(data).diagnostics",
                        f"check: {diagnostics!r}\nparse: {list(document.diagnostics)!r}",
                    )
                )
            stage = "dumps"
            printed = target.dumps(document)
            if printed != text:
                line, want, got = _first_difference(text, printed)
                findings.append(
                    Finding(
                        "dumps",
                        ("dumps", "differs"),
                        f"dumps differs from the input at line {line}",
                        f"line {line}\ninput: {want!r}\ndumps: {got!r}",
                    )
                )
            stage = "position"
            lines = _lines(text)
            for d in document.diagnostics:
                width = len(lines[d.line - 1]) if 1 <= d.line <= len(lines) else 0
                if not (1 <= d.line <= max(1, len(lines)) and 1 <= d.col <= width + 1):
                    # YAML also breaks lines at \r, U+0085, U+2028 and U+2029, bbox only at \n.
                    breaks = "yaml-breaks" if _YAML_BREAKS.search(text) else "no-yaml-breaks"
                    where = f"line {d.line} of {len(lines)}" + (f" ({width} characters)" if width else "")
                    findings.append(
                        Finding(
                            "position",
                            ("position", d.code, breaks),
                            f"{d.code} at {d.line}:{d.col}, outside the file ({where})",
                            f"{d!r}\nthe file has {len(lines)} line(s); {where}",
                        )
                    )
                    break
            stage = "stats"
            target.stats(document)
            stage = "fmt"
            once = target.format(document)
            again = target.parse(once.encode("utf-8", "surrogateescape"))
            twice = target.format(again)
            if twice != once:
                line, want, got = _first_difference(once, twice)
                findings.append(
                    Finding(
                        "fmt-idempotent",
                        ("fmt-idempotent", _line_class(want)),
                        f"formatting the formatted text changes line {line}",
                        f"line {line}\nonce:  {want!r}\ntwice: {got!r}",
                    )
                )
            before, after = target.signature(document), target.signature(again)
            if before != after:
                detail, kind = _signature_difference(before, after)
                findings.append(
                    Finding(
                        "fmt-meaning",
                        ("fmt-meaning", kind),
                        "format_document changes the document's meaning",
                        detail,
                    )
                )
    except (Exception, FuzzTimeout) as error:
        findings.append(_crash(stage, error))
    for finding in findings:
        finding.data = data
    return findings


def _signature_difference(before: Any, after: Any) -> tuple[str, str]:
    """Where two document signatures differ, and a rough kind for deduplication."""
    if not isinstance(before, tuple) or len(before) != 3 or not isinstance(after, tuple) or len(after) != 3:
        return f"before: {before!r}\nafter:  {after!r}", "document"
    for name, x, y in zip(("bom", "header", "events"), before, after, strict=True):
        if x == y:
            continue
        if name != "events":
            return f"{name}: {x!r} -> {y!r}", name
        for number, (a, b) in enumerate(zip(x, y, strict=False)):
            if a != b:
                kind = str(a[0][0]) if isinstance(a, tuple) and a and isinstance(a[0], tuple) else "event"
                return f"event {number + 1}:\nbefore: {a!r}\nafter:  {b!r}", kind
        return f"events: {len(x)} -> {len(y)}", "event-count"
    return "signatures differ", "document"


# -- the command line, in a subprocess --------------------------------------------------------------

CLI_COMMANDS = (
    ("check", "-"),
    ("check", "-", "--format", "json"),
    ("check", "-", "--format", "github"),
    ("parse", "-"),
    ("parse", "-", "--json"),
    ("stats", "-"),
    ("stats", "-", "--json"),
    ("fmt", "-"),
    ("fix", "-", "--renumber-steps"),
    ("convert", "-", "--to", "compact"),
    ("convert", "-", "--to", "atif"),
    ("convert", "-", "--to", "jsonl"),
)
#: Larger inputs, and inputs the in-process oracles took longer than this many seconds on
#: (a slow input is already a finding), are left to the in-process oracles: eleven processes
#: parse each input the CLI gets.
CLI_MAX_SIZE = 16 * 1024
CLI_MAX_SECONDS = 1.0
CLI_ENCODINGS = ("latin-1", "ascii", "cp1252", "utf-8")
_TB_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)', re.M)
_TB_ERROR = re.compile(r"^(\w[\w.]*(?:Error|Exception|Exit|Interrupt)\w*)(?::|$)", re.M)


def run_cli(data: bytes, target: Target, batch: int, timeout: float = 30.0) -> list[Finding]:
    """The CLI commands on one input, all at once, the output encoding chosen by the batch
    number. Each process reads the input from a file (so none waits for another) and
    writes its standard error to a file; standard output is not looked at. The batch gets
    ``timeout`` seconds in all; a command still running then is a finding."""
    encoding = CLI_ENCODINGS[batch % len(CLI_ENCODINGS)]
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    commands = [list(c) for c in CLI_COMMANDS]
    if target.codes:
        commands.append(["explain", target.codes[batch % len(target.codes)]])
    findings = []
    with tempfile.TemporaryDirectory(prefix="bbox-fuzz-") as folder:
        source = Path(folder) / "input.bbox"
        source.write_bytes(data)
        with ExitStack() as files:
            started = []
            for number, command in enumerate(commands):
                stdin = files.enter_context(source.open("rb")) if "-" in command else subprocess.DEVNULL
                stderr = files.enter_context((Path(folder) / f"stderr-{number}").open("w+b"))
                process = subprocess.Popen(
                    [*target.cli, *command], stdin=stdin, stdout=subprocess.DEVNULL, stderr=stderr, env=env
                )
                started.append((command, process, stderr))
            deadline = time.monotonic() + timeout
            for command, process, stderr in started:
                code: int | None
                try:
                    code = process.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                    code = None
                stderr.seek(0)
                text = stderr.read().decode("utf-8", "replace")
                # The last-resort guard ("error: internal error (…)", exit 2) is a crash too.
                crashed = "Traceback (most recent call last)" in text or "internal error" in text
                if code in (0, 1, 2) and not crashed:
                    continue
                findings.append(_cli_finding(command, encoding, code, text, data))
    return findings


def _cli_finding(command: list[str], encoding: str, code: int | None, stderr: str, data: bytes) -> Finding:
    frames = [(name, int(line), function) for name, line, function in _TB_FRAME.findall(stderr)]
    errors = _TB_ERROR.findall(stderr)
    frame, innermost = _where(frames)
    at = frame if frame == innermost else f"{frame} (innermost: {innermost})"
    guard = re.search(r"internal error \((\w+)", stderr)
    error = errors[-1] if errors else guard[1] if guard else ("timeout" if code is None else f"exit {code}")
    shown = " ".join(command)
    key = ("cli", error, frame) if frames else ("cli", error, command[0])
    return Finding(
        "cli",
        key,
        f"`{shown}` with PYTHONIOENCODING={encoding}: {error} at {at} (exit {code})",
        f"PYTHONIOENCODING={encoding} bbox-lark {shown} < FILE\nexit {code}\n\n{stderr}",
        data=data,
    )


# -- time linear in size ----------------------------------------------------------------------------


def time_input(data: bytes, target: Target, timeout: float) -> float:
    """Seconds for parse (with checks) and format of one input; for a converter input, its
    conversion (an import to bbox; an export to every text format)."""
    gc.collect()
    start = time.perf_counter()
    with time_limit(timeout):
        if data.startswith(fuzzgen.FUZZ_TAG):
            _convert_only(data)
        else:
            target.format(target.parse(data))
    return time.perf_counter() - start


def _convert_only(tagged: bytes) -> None:
    from bbox_lark.convert import convert

    first, _, data = tagged.partition(b"\n")
    source = first[len(fuzzgen.FUZZ_TAG) :].decode("ascii", "replace")
    if source == "export":
        for target in EXPORT_TARGETS:
            if target != "lightbox":  # a folder: the writer is the same code as the others'
                convert(data, "bbox", to=target)
    else:
        convert(data, source, to="bbox")


def _best(data: bytes, target: Target, timeout: float, repeats: int) -> float:
    return min(time_input(data, target, timeout) for _ in range(repeats))


@dataclass
class Linearity:
    shape: str
    n: int
    small: float
    big: float

    @property
    def ratio(self) -> float:
        return self.big / max(self.small, 1e-9)


#: A ratio above this (linear is 4) is looked at again at four times the size.
SUSPICIOUS = 5.0
#: ...as long as the larger input takes less than this many seconds.
STEP_SECONDS = 3.0
#: A ratio over the limit is measured again this many times at both sizes.
CONFIRM = 5
#: Shapes grow up to this size (and are checked one step further, up to 4 MiB).
MAX_SHAPE_BYTES = 1 << 20


def check_linear(
    shape: fuzzgen.Shape,
    target: Target,
    *,
    timeout: float = 5.0,
    min_seconds: float = 0.02,
    ratio: float = 8.0,
    max_bytes: int = MAX_SHAPE_BYTES,
) -> tuple[Linearity | None, list[Finding]]:
    """Time ``shape`` (parse with checks, then format) at ``n`` and ``4n``.

    ``n`` starts at ``shape.start`` and grows until ``n`` takes ``min_seconds``; each time is
    the best of three runs. A ratio over ``SUSPICIOUS`` is measured again one step up
    (``4n`` and ``16n``) while that stays affordable: a quadratic term hiding behind a large
    linear one shows there, and a one-off jump (the data outgrowing a CPU cache) goes away.
    A finding is a last ratio over ``ratio`` (confirmed by measuring both sizes in turn), or
    an input of the shape running out of ``timeout``. Exceptions are left to the ordinary
    oracles, which are run on the input that raised."""
    n = running = max(1, shape.start)
    pairs: list[Linearity] = []
    try:
        while True:
            data = shape(n)
            small = _best(data, target, timeout, 3)
            if small >= min_seconds or len(shape(4 * n)) > max_bytes:
                break
            n *= 2 if small * 4 >= min_seconds else 4
            running = n
        while True:
            big_data = shape(4 * n)
            running = 4 * n
            result = Linearity(shape.name, n, small, _best(big_data, target, timeout, 3))
            if result.ratio > ratio:  # confirm: both sizes in turn, so both see the same load
                small, big = result.small, result.big
                for _ in range(CONFIRM):
                    small = min(small, time_input(data, target, timeout))
                    big = min(big, time_input(big_data, target, timeout))
                result = Linearity(shape.name, n, small, big)
            pairs.append(result)
            if result.ratio <= SUSPICIOUS or (result.ratio > ratio and len(pairs) > 1):
                break
            if result.big >= STEP_SECONDS or len(shape(16 * n)) > 4 * max_bytes:
                break
            n, data, small = 4 * n, big_data, result.big
    except FuzzTimeout:
        seen = ", ".join(f"x{p.ratio:.1f} at n={p.n}" for p in pairs)
        finding = Finding(
            "linear",
            ("linear", shape.name),
            f"shape {shape.name}: n={running} ran out of time ({timeout} s)"
            + (f" after {seen}" if seen else ""),
            f"shape {shape.name} at n={running} ({len(shape(running))} bytes) took over {timeout} s\n{seen}",
            data=shape(pairs[-1].n) if pairs else shape(running),  # the smaller input, when known
        )
        return None, [finding]
    except Exception:
        return None, run_oracles(shape(running), target, timeout)
    if result.ratio <= ratio:
        return result, []
    steps = "; ".join(
        f"{p.small * 1000:.1f} ms at n={p.n}, {p.big * 1000:.1f} ms at n={4 * p.n} (x{p.ratio:.1f})"
        for p in pairs
    )
    summary = f"shape {shape.name}: {steps}; linear is x4"
    detail = f"{summary}\ninput at n={n}: {len(data)} bytes; at 4n: {len(big_data)} bytes"
    return result, [Finding("linear", ("linear", shape.name), summary, detail, data=data)]


# -- shrinking a finding ----------------------------------------------------------------------------


def minimize(data: bytes, still_fails: Callable[[bytes], bool], seconds: float) -> bytes:
    """A smaller input that still fails: drop chunks of lines, then of bytes, halving the
    chunk size (greedy delta debugging), until nothing more goes or time is up."""
    deadline = time.monotonic() + seconds

    def shrink(parts: list[bytes]) -> list[bytes]:
        chunk = max(1, len(parts) // 2)
        while chunk >= 1 and time.monotonic() < deadline:
            start, removed = 0, False
            while start < len(parts) and time.monotonic() < deadline:
                candidate = parts[:start] + parts[start + chunk :]
                if candidate and still_fails(b"".join(candidate)):
                    parts, removed = candidate, True
                else:
                    start += chunk
            if not removed:
                chunk //= 2
        return parts

    lines = shrink(data.splitlines(keepends=True))
    data = b"".join(lines)
    if len(data) <= 200_000:
        data = b"".join(shrink([data[i : i + 1] for i in range(len(data))]))
    return data


# -- the run ---------------------------------------------------------------------------------------


@dataclass
class Options:
    seconds: float = 60.0
    #: Stop after this many inputs (None: only the time limit).
    inputs: int | None = None
    seed: int = 0
    max_size: int = 64 * 1024
    out: Path = DEFAULT_OUT
    corpus: list[Path] | None = None
    timeout: float = 5.0
    #: Time the scaling shapes at n and 4n.
    linear: bool = True
    ratio: float = 8.0
    #: Share of the run's time the CLI subprocesses may take (0 turns them off).
    cli_share: float = 0.1
    minimize_seconds: float = 10.0
    generators: list[str] = field(default_factory=lambda: list(fuzzgen.GENERATORS))
    quiet: bool = False


@dataclass
class Report:
    seed: int
    runs: Counter[str] = field(default_factory=Counter)
    findings: dict[tuple[str, ...], Finding] = field(default_factory=dict)
    linear: list[Linearity] = field(default_factory=list)
    shapes_timed: int = 0
    cli_batches: int = 0
    elapsed: float = 0.0

    @property
    def inputs(self) -> int:
        return sum(self.runs.values())

    def summary(self) -> str:
        lines = [
            f"fuzz: {self.inputs} inputs in {self.elapsed:.1f} s (seed {self.seed}); "
            + ", ".join(f"{name} {count}" for name, count in self.runs.items()),
            f"      {self.shapes_timed} shapes timed at n and 4n"
            + (f" (worst: {max(self.linear, key=lambda r: r.ratio).shape} x" if self.linear else "")
            + (f"{max(r.ratio for r in self.linear):.1f})" if self.linear else "")
            + f", {self.cli_batches} CLI batches",
        ]
        if not self.findings:
            lines.append("no findings")
        else:
            hits = sum(f.hits for f in self.findings.values())
            lines.append(f"{len(self.findings)} distinct finding(s), {hits} hit(s):")
            for finding in self.findings.values():
                where = f"  {finding.path}" if finding.path else ""
                lines.append(f"  {finding.oracle}: {finding.summary} (x{finding.hits}){where}")
        return "\n".join(lines)


def generate(name: str, seed: int, index: int, pool: fuzzgen.Pool, max_size: int) -> bytes:
    """Input ``index`` of a run: a pure function of the seed, the index and the pool."""
    rng = random.Random(f"{seed}:{index}")
    return fuzzgen.GENERATORS[name](rng, pool, max_size)[:max_size]


class Runner:
    def __init__(self, options: Options, target: Target, log: Callable[[str], None]) -> None:
        self.options, self.target, self.log = options, target, log
        self.report = Report(options.seed)
        self.cli_time = 0.0
        self.started = time.monotonic()

    def record(self, finding: Finding, generator: str, index: int | None) -> None:
        known = self.report.findings.get(finding.key)
        if known is None and finding.oracle == "cli":  # the core's own crash, seen through the CLI
            known = next((f for f in self.report.findings.values() if f.key[1:] == finding.key[1:]), None)
        if known is not None:
            known.hits += 1
            return
        finding.generator, finding.index = generator, index
        if finding.oracle not in ("timeout", "linear", "cli") and self.options.minimize_seconds > 0:
            key = finding.key

            def still_fails(candidate: bytes) -> bool:
                return any(f.key == key for f in run_oracles(candidate, self.target, self.options.timeout))

            finding.data = minimize(finding.data, still_fails, self.options.minimize_seconds)
            for again in run_oracles(finding.data, self.target, self.options.timeout):
                if again.key == key:  # describe the shrunk input, not the original
                    finding.summary, finding.detail = again.summary, again.detail
        self.report.findings[finding.key] = finding
        finding.path = self.write(finding)
        shown = repr(finding.data[:72]) + ("…" if len(finding.data) > 72 else "")
        self.log(
            f"FOUND {finding.oracle} [{generator}]: {finding.summary} — {len(finding.data)} bytes {shown}"
        )

    def write(self, finding: Finding) -> Path:
        out = self.options.out
        out.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha1(finding.data).hexdigest()[:12]
        path = out / f"{finding.oracle}-{digest}.bbox"
        path.write_bytes(finding.data)
        origin = f"generator {finding.generator}"
        if finding.index is not None:
            origin += f", input {finding.index} of seed {self.options.seed}"
        note = (
            f"oracle: {finding.oracle}\nkey: {' | '.join(finding.key)}\nsummary: {finding.summary}\n"
            f"origin: {origin}\ninput: {path.name} ({len(finding.data)} bytes)\n"
            f"replay: python tools/fuzz.py --replay {path}\n\n{finding.detail}\n"
        )
        path.with_suffix(".txt").write_text(note, encoding="utf-8", errors="backslashreplace")
        return path

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def one(self, name: str, index: int, pool: fuzzgen.Pool) -> None:
        data = generate(name, self.options.seed, index, pool, self.options.max_size)
        self.report.runs[name] += 1
        start = time.monotonic()
        found = run_oracles(data, self.target, self.options.timeout)
        fast = time.monotonic() - start < CLI_MAX_SECONDS
        for finding in found:
            self.record(finding, name, index)
        share = self.options.cli_share
        if share > 0 and fast and len(data) <= CLI_MAX_SIZE and self.cli_time <= share * self.elapsed():
            start = time.monotonic()
            for finding in run_cli(data, self.target, self.report.cli_batches):
                self.record(finding, name, index)
            self.report.cli_batches += 1
            self.cli_time += time.monotonic() - start

    def time_shape(self, shape: fuzzgen.Shape) -> None:
        result, found = check_linear(
            shape, self.target, timeout=self.options.timeout, ratio=self.options.ratio
        )
        self.report.shapes_timed += 1
        if result is not None:
            self.report.linear.append(result)
        for finding in found:
            self.record(finding, "sizes", None)

    def run(self, pool: fuzzgen.Pool) -> Report:
        options = self.options
        names = options.generators
        shapes = list(fuzzgen.SHAPES) if options.linear else []
        index = 0
        try:
            while self.elapsed() < options.seconds and (options.inputs is None or index < options.inputs):
                name = names[index % len(names)]
                if name == "sizes" and shapes:
                    self.time_shape(fuzzgen.SHAPES[shapes.pop(0)])
                self.one(name, index, pool)
                index += 1
        except KeyboardInterrupt:  # Ctrl-C ends a long run early, with its summary
            self.log(f"interrupted at input {index}")
        self.report.elapsed = self.elapsed()
        return self.report


def run(options: Options, target: Target | None = None, log: Callable[[str], None] | None = None) -> Report:
    """Run the fuzzer; returns the report (``log`` receives each finding line)."""
    unknown = [name for name in options.generators if name not in fuzzgen.GENERATORS]
    if unknown:
        raise ValueError(f"unknown generator(s): {', '.join(unknown)}")
    target = target or default_target()
    pool = fuzzgen.Pool.load(fuzzgen.default_folders(options.corpus))
    target.parse(fuzzgen.HEADER.encode())  # build the parser before any clock starts
    runner = Runner(options, target, log or (lambda line: None if options.quiet else print(line, flush=True)))
    return runner.run(pool)


def replay(paths: list[Path], options: Options, target: Target | None = None) -> int:
    """The oracles (and the CLI, unless ``--cli-share 0``) on saved inputs."""
    target = target or default_target()
    failed = 0
    for number, path in enumerate(paths):
        data = path.read_bytes()
        found = run_oracles(data, target, options.timeout)
        if options.cli_share > 0:
            found += run_cli(data, target, number)
        for finding in found:
            print(f"{path}: {finding.oracle}: {finding.summary}")
        if not found:
            print(f"{path}: ok")
        failed += bool(found)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="fuzz.py", description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="run this long (default 60)")
    parser.add_argument("--inputs", type=int, help="stop after this many inputs (a reproducible run)")
    parser.add_argument("--seed", type=int, default=0, help="fixes the sequence of inputs (default 0)")
    parser.add_argument("--max-size", type=int, default=64 * 1024, help="largest input in bytes")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where findings go (fuzz-findings/)")
    parser.add_argument(
        "--corpus",
        type=Path,
        nargs="+",
        help="folders of real files to mutate (default: ../shared/corpus-external/rlog-real and"
        " bbox-docs when present); corpus/valid is always used",
    )
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per input (default 5)")
    parser.add_argument("--ratio", type=float, default=8.0, help="time ratio at 4n that is a finding")
    parser.add_argument("--no-linear", action="store_true", help="do not time the scaling shapes")
    parser.add_argument(
        "--cli-share", type=float, default=0.1, help="share of the time for CLI subprocesses (0: none)"
    )
    parser.add_argument("--no-minimize", action="store_true", help="keep findings as found, unshrunk")
    parser.add_argument("--generators", nargs="+", choices=list(fuzzgen.GENERATORS), help="only these")
    parser.add_argument("--quiet", action="store_true", help="only the summary")
    parser.add_argument("--replay", type=Path, nargs="+", metavar="FILE", help="run the oracles on files")
    args = parser.parse_args(argv)
    options = Options(
        seconds=args.seconds,
        inputs=args.inputs,
        seed=args.seed,
        max_size=args.max_size,
        out=args.out,
        corpus=args.corpus,
        timeout=args.timeout,
        linear=not args.no_linear,
        ratio=args.ratio,
        cli_share=args.cli_share,
        minimize_seconds=0 if args.no_minimize else 10.0,
        generators=args.generators or list(fuzzgen.GENERATORS),
        quiet=args.quiet,
    )
    if args.replay:
        return replay(args.replay, options)
    report = run(options)
    print(report.summary())
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
