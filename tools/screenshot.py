"""Screenshot an HTML page in headless Chromium, to look at what readers see.

    python tools/screenshot.py                          # docs/grammar.html -> grammar.png
    python tools/screenshot.py docs/grammar.html --out /tmp/grammar.png --width 1280 --height 4000
    python tools/screenshot.py site/index.html --out /tmp/site.png

Needs Debian's ``chromium`` package (``apt-get install chromium``). The page is loaded from
the file system with no network (the flags below keep Chromium from calling home), into a
fresh profile, and the PNG is written where ``--out`` says (default: the page's name with
``.png`` in the current folder). Exit 2 when Chromium is missing or fails.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: What a headless Chromium needs on a machine without a display or a network.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def screenshot(page: Path, out: Path, width: int = 1280, height: int = 3000) -> Path:
    """Write a PNG of ``page`` (an HTML file) to ``out``; raise RuntimeError on failure."""
    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError("no chromium on PATH (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        command = [
            chromium,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={out.resolve()}",
            page.resolve().as_uri(),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"chromium failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return out


def main(argv: list[str] | None = None) -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("page", nargs="?", type=Path, default=ROOT / "docs" / "grammar.html")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=3000)
    args = parser.parse_args(argv)
    out = args.out or Path(args.page.stem + ".png")
    try:
        screenshot(args.page, out, args.width, args.height)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
