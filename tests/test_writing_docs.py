"""docs/writing.md: its example harness runs, writes a clean log, and is shown as it is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from printer_support import ROOT

from bbox_lark import parse, text_of

EXAMPLE = ROOT / "examples" / "harness.py"
PAGE = ROOT / "docs" / "writing.md"


def test_the_page_shows_the_example_as_it_is() -> None:
    assert EXAMPLE.read_text(encoding="utf-8") in PAGE.read_text(encoding="utf-8")
    assert len(EXAMPLE.read_text(encoding="utf-8").splitlines()) <= 45


def test_the_example_harness_writes_a_clean_log(tmp_path: Path) -> None:
    log = tmp_path / "session.bbox"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(log)], capture_output=True, text=True, timeout=300, check=False
    )
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "clean", "")
    text = log.read_text(encoding="utf-8")
    assert "sk-ant-api03" not in text and "[redacted:anthropic_key]" in text and "# redactions=1" in text
    events = parse(text).events
    assert text_of(events[1]) == "The login fails twice.\nFix it, and keep the old API."
    observed = [e for e in events if e.kind == "observation"]
    assert observed and observed[-1].result is not None and text_of(observed[-1].result) == "[ok] 128 passed"
    assert {e.fields.get("tid") for e in events if e.kind == "tool" and e.name == "read"} >= {"turn_1"}
    blobs = [e for e in events if e.result is not None and e.result.kind == "blob"]
    assert len(blobs) == 1 and (tmp_path / ".bbox-blobs" / (blobs[0].result.blob.sha256 or "")).is_file()  # type: ignore[union-attr]
    # The page's sample log is what the example writes (up to the order of the parallel reads).
    page = PAGE.read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line.startswith(("t:read src/", "o: id=call_1 ", "o: id=call_2 ")):
            assert line in page, line
