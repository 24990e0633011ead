"""Screenshots and timings of the HTML session report (``bbox-lark report``), to look at it.

    python tools/report_screens.py                      # into ./report-screens/
    python tools/report_screens.py --out /tmp/shots --lines 100000
    python tools/report_screens.py --real path/to/session.rlog --skip-big

Writes, for the biggest real log (default: the 928-line one in the external corpus), the page
at 1280 px (top, the timeline with the failed-calls filter on, a ``#L`` link), at 390 px (a
phone: the top and a ``#L`` link), and for a generated session of ``--lines`` lines the page
at 1280 px scrolled to a ``#L`` link near its end. Prints how long ``bbox-lark report`` took,
its peak memory (GNU time's maximum RSS), the page's size, and how long headless Chromium
took to open it (the load event) and to jump to the line; docs/report.md carries these
figures.

With ``--docs DIR`` it writes instead the four pictures docs/report.md shows: the "what went
wrong" card of the real log (``report-summary.png``), its loops (``report-loop.png``), the
index of the real logs' folder (``report-index.png``) and a live page (``report-live.png``:
``report --watch`` on a session another process appends to).

Needs selenium and Debian's ``chromium`` and ``chromium-driver`` (``/usr/bin/chromedriver``;
selenium-manager is never asked to download anything). Exit 2 when they are missing.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import chromium  # tools/chromium.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
EXTERNAL = ROOT.parent / "shared" / "corpus-external" / "rlog-real"
REAL = (
    ROOT.parent / "shared" / "corpus-external" / "rlog-real" / "20251220__153410-call-issue-ready-now-to.rlog"
)
_TOOLS = ("Read", "Bash", "Edit", "Grep", "Glob", "Write")
_PHASES = ("explore", "design", "review", "final")


def generate_session(lines: int, seed: int = 7) -> str:
    """A synthetic agent session of about ``lines`` lines: thinking with usage, tool starts
    and their observations (about 4% fail), some on ``tid`` lanes, output on continuation
    lines, a ``@phase`` every 500 calls."""
    rng = random.Random(seed)
    out = [
        "---",
        "format: bbox/1",
        "id: generated-session",
        "repo_sha: 215db51",
        "repo: example/app",
        "branch: main",
        "model: claude-sonnet-4-5",
        "agent: autopilot",
        "runner: local",
        "---",
        "@start id=generated-session ts=2025-12-20T14:00:00Z",
        "u: Work through the issue queue.",
    ]
    call = cached = second = 0
    while len(out) < lines - 1:
        call += 1
        second += rng.randint(1, 20)
        if call % 500 == 1:
            out.append(f"@phase {_PHASES[(call // 500) % len(_PHASES)]}")
        cached += rng.randint(0, 800)
        usage = f"tokens_in={rng.randint(1, 20)} tokens_out={rng.randint(1, 400)} tokens_cached={cached}"
        out.append(f"th: Let me check step {call} before the next edit. {usage}")
        tid = f" tid=worker-{rng.randint(1, 3)}" if rng.random() < 0.1 else ""
        clock = f"{14 + second // 3600 % 10:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
        tool = rng.choice(_TOOLS)
        out.append(
            f"t!:{tool} id=c{call}{tid} file_path=/src/mod_{call % 97}.rs ts=2025-12-20T{clock}Z"
            f" → [running] {usage}"
        )
        if rng.random() < 0.05:
            out.append(f"a: While that runs, reading more. {usage}")
        failed = rng.random() < 0.04
        result = (
            "[error] Exit code 101"
            if failed
            else rng.choice(["[ok] 128 tests passed", "[186 lines]", "[ok]"])
        )
        out.append(f"o: id=c{call}{tid} → {result}")
        if rng.random() < 0.08:
            out.extend(f"  output line {k} of call {call}" for k in range(rng.randint(2, 30)))
    out.append("@end")
    return "\n".join(out) + "\n"


def generate(source: Path, page: Path) -> tuple[float, float | None]:
    """Run ``bbox-lark report`` in a child process: seconds, and its peak RSS in MiB as GNU
    time measures it (None without ``/usr/bin/time``; a forked child's own ``ru_maxrss``
    would count this process's pages, copied before the exec)."""
    command = [sys.executable, "-m", "bbox_lark.cli", "report", str(source), "-o", str(page)]
    timer = Path("/usr/bin/time")
    if timer.exists():
        command = [str(timer), "-f", "%M", *command]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"bbox-lark report {source} exited {done.returncode}: {done.stderr[-400:]}")
    last = done.stderr.strip().splitlines()[-1] if timer.exists() else ""
    return seconds, int(last) / 1024 if last.isdigit() else None


def _mib(value: float | None) -> str:
    return f"{value:.0f} MiB" if value is not None else "not measured"


def browser(profile: str) -> Any:
    return chromium.start(profile, "--hide-scrollbars")


def shoot(driver: Any, url: str, out: Path, width: int, height: int, script: str | None = None) -> None:
    driver.set_window_size(width, height)
    driver.get(url)
    if script:
        driver.execute_script(script)
        time.sleep(0.3)
    driver.save_screenshot(str(out))
    print(f"wrote {out}")


def opening_time(driver: Any, url: str, line: int) -> tuple[float, float]:
    """Seconds to the load event, and to show line ``line`` after a ``#L`` jump."""
    driver.get("about:blank")
    driver.get(url)
    loaded = driver.execute_script("return performance.getEntriesByType('navigation')[0].loadEventEnd") / 1000
    started = time.perf_counter()
    driver.execute_script(f"location.hash = '#L{line}'")
    driver.execute_script(f"return document.getElementById('L{line}').getBoundingClientRect().top")
    return loaded, time.perf_counter() - started


def element_shot(driver: Any, selector: str, out: Path) -> None:
    """A picture of one element of the page (the card, the loops)."""
    element = driver.find_element("css selector", selector)
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", element)
    time.sleep(0.2)
    element.screenshot(str(out))
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB)")


def docs_shots(driver: Any, real: Path, out: Path, work: Path) -> None:
    """The pictures of docs/report.md (see the module's text)."""
    import socket
    import threading

    page = work / "real.html"
    generate(real, page)
    driver.set_window_size(1280, 900)
    driver.get(page.resolve().as_uri())
    driver.save_screenshot(str(out / "report-summary.png"))
    print(f"wrote {out / 'report-summary.png'}")
    # A loop: its "show them" button lists its calls (the polling of issue_ready).
    driver.execute_script(
        "var b = Array.from(document.querySelectorAll('button.find'))"
        ".filter(b => b.getAttribute('data-q').indexOf('issue_ready') !== -1)[0] || "
        "document.querySelector('button.find'); if (b) { b.click(); }"
    )
    time.sleep(0.8)
    driver.set_window_size(1280, 700)
    time.sleep(0.3)
    driver.execute_script(
        "document.querySelector('.r.hit').scrollIntoView({block: 'start'}); window.scrollBy(0, -60)"
    )
    time.sleep(0.3)
    driver.save_screenshot(str(out / "report-loop.png"))
    print(f"wrote {out / 'report-loop.png'}")
    folder = work / "index"
    command = [sys.executable, "-m", "bbox_lark.cli", "report", str(real.parent), "-o", str(folder)]
    subprocess.run(command, capture_output=True, text=True, check=False)
    driver.set_window_size(1280, 640)
    driver.get((folder / "index.html").resolve().as_uri())
    driver.execute_script("document.querySelectorAll('th')[6].click()")  # by failed calls
    time.sleep(0.2)
    driver.save_screenshot(str(out / "report-index.png"))
    print(f"wrote {out / 'report-index.png'}")
    # Live: a writer appends to a session while report --watch serves it.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    source = work / "live.bbox"
    lines = generate_session(400).splitlines(keepends=True)
    source.write_text("".join(lines[:40]), encoding="utf-8")
    server = subprocess.Popen(
        [sys.executable, "-m", "bbox_lark.cli", "report", str(source), "--watch", "--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        server.stderr.readline()  # "serving … at http://127.0.0.1:PORT/"
        driver.set_window_size(1280, 640)
        driver.get(f"http://127.0.0.1:{port}/")
        driver.execute_script(
            "var rows = document.querySelectorAll('#timeline .r');"
            "rows[rows.length - 1].scrollIntoView({block: 'end'})"
        )
        stop = threading.Event()

        def write() -> None:
            with source.open("a", encoding="utf-8") as stream:
                for line in lines[40:160]:
                    if stop.is_set():
                        return
                    stream.write(line)
                    stream.flush()
                    time.sleep(0.02)

        writer = threading.Thread(target=write)
        writer.start()
        writer.join()
        time.sleep(2.5)
        driver.execute_script(
            "var rows = document.querySelectorAll('#timeline .r');"
            "rows[rows.length - 1].scrollIntoView({block: 'end'}); window.scrollBy(0, 40)"
        )
        time.sleep(0.3)
        driver.save_screenshot(str(out / "report-live.png"))
        print(f"wrote {out / 'report-live.png'}")
    finally:
        server.terminate()
        server.wait(10)


def main(argv: list[str] | None = None) -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--out", type=Path, default=Path("report-screens"))
    parser.add_argument("--real", type=Path, default=REAL)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--skip-big", action="store_true", help="No generated session.")
    parser.add_argument("--docs", type=Path, help="Write docs/report.md's four pictures into this folder.")
    args = parser.parse_args(argv)
    problem = chromium.missing()
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.docs is not None:
        args.docs.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as work:
            driver = browser(str(Path(work) / "profile"))
            try:
                docs_shots(driver, args.real, args.docs, Path(work))
            finally:
                driver.quit()
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        driver = browser(str(Path(work) / "profile"))
        try:
            if args.real.exists():
                page = args.out / "real.html"
                seconds, peak = generate(args.real, page)
                print(f"{args.real.name}: generated in {seconds:.2f} s, peak RSS {_mib(peak)}")
                url = page.resolve().as_uri()
                shoot(driver, url, args.out / "real-top.png", 1280, 1000)
                errors = "document.getElementById('only-errors').click();"
                scroll = "document.getElementById('timeline').scrollIntoView();"
                shoot(driver, url, args.out / "real-failed.png", 1280, 1000, errors + scroll)
                shoot(driver, url, args.out / "real-narrow.png", 390, 1400)
                shoot(driver, url + "#L407", args.out / "real-line.png", 1280, 900)
                shoot(driver, url + "#L407", args.out / "real-narrow-line.png", 390, 900)
            else:
                print(f"{args.real}: not found; no real log", file=sys.stderr)
            if not args.skip_big:
                source = Path(work) / "generated.bbox"
                source.write_text(generate_session(args.lines), encoding="utf-8")
                page = args.out / "big.html"
                seconds, peak = generate(source, page)
                size = page.stat().st_size / (1 << 20)
                facts = f"generated in {seconds:.2f} s, peak RSS {_mib(peak)}, page {size:.1f} MiB"
                print(f"{args.lines:,} lines: {facts}")
                url = page.resolve().as_uri()
                driver.set_window_size(1280, 900)
                line = args.lines - 100
                loaded, jump = opening_time(driver, url, line)
                print(
                    f"{args.lines:,} lines: load event after {loaded:.2f} s; #L{line} shown in {jump:.2f} s"
                )
                shoot(driver, f"{url}#L{line}", args.out / "big-line.png", 1280, 900)
        finally:
            driver.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
