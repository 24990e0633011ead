"""The HTML report without a browser: its markup, what it knows about a session, the
command, the formats it reads, and that it streams (browser checks: test_report_browser.py)."""

from __future__ import annotations

import io
import json
import tracemalloc
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from printer_support import EXTERNAL
from report_support import (
    DEMO,
    DEMO_FAILED,
    DEMO_FAR_OBSERVATION,
    DEMO_FOLD,
    DEMO_NEVER_COMPLETED,
    DEMO_UNKNOWN,
    PAYLOADS,
    hostile_session,
)
from typer.testing import CliRunner

from bbox_lark.cli import app
from bbox_lark.report import render

ROOT = Path(__file__).resolve().parent.parent
CORPUS = [p for folder in ("valid", "hostile") for p in sorted((ROOT / "corpus" / folder).glob("*.bbox"))]
REAL = EXTERNAL / "rlog-real" / "20251220__153410-call-issue-ready-now-to.rlog"


def html_of(text: str | bytes, **options: Any) -> str:
    out = io.StringIO()
    render(text.encode("utf-8") if isinstance(text, str) else text, out, **options)
    return out.getvalue()


class Markup(HTMLParser):
    """Every start tag with its attributes, and the text, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.script: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        (self.script if self._in_script else self.text).append(data)


def markup(page: str) -> Markup:
    parser = Markup()
    parser.feed(page)
    parser.close()
    return parser


def assert_self_contained(page: str) -> Markup:
    """One script (the page's), nothing loaded from anywhere, no handler attributes, no
    ``javascript:`` link, and a CSP that allows nothing else, before any style or script."""
    found = markup(page)
    names = [tag for tag, _ in found.tags]
    assert names.count("script") == 1
    csp = [attrs for tag, attrs in found.tags if tag == "meta" and attrs.get("http-equiv")]
    assert len(csp) == 1
    policy = csp[0]["content"] or ""
    assert "default-src 'none'" in policy and "'unsafe-inline'" not in policy
    assert "script-src 'sha256-" in policy and "style-src 'sha256-" in policy
    assert names.index("meta") < names.index("style") < names.index("script")
    for tag, attrs in found.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert "src" not in attrs, (tag, attrs)
        href = attrs.get("href")
        if href is not None:
            assert href.startswith("#") or href == "data:,", (tag, attrs)
    return found


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_every_corpus_file_gives_a_self_contained_page(path: Path) -> None:
    page = html_of(path.read_bytes())
    assert_self_contained(page)
    lines = path.read_bytes().count(b"\n") + (not path.read_bytes().endswith(b"\n"))
    assert f"id=L{lines}>" in page  # every line has its anchor


def test_hostile_text_is_escaped_everywhere() -> None:
    page = html_of(hostile_session())
    found = assert_self_contained(page)
    assert {tag for tag, _ in found.tags} <= {
        "html", "head", "meta", "link", "title", "style", "body", "header", "span", "input", "label",
        "b", "main", "section", "h2", "h3", "dl", "div", "dt", "dd", "p", "ul", "li", "a", "small",
        "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "pre", "script", "code",
        "select", "option", "button", "br", "i",
    }  # fmt: skip
    text = "".join(found.text)
    for payload in PAYLOADS:
        assert payload in text
    assert "window.__pwned" not in "".join(found.script)
    title = page[page.index("<title>") : page.index("</title>") + 8]
    assert title == "<title>bbox report · &lt;/title&gt;&lt;script&gt;window.__pwned=7&lt;/script&gt;</title>"


def test_text_that_is_not_utf8_or_holds_nul_is_shown_escaped() -> None:
    page = html_of(b"---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\nu: caf\xe9 \x00 end\n")
    assert_self_contained(page)
    assert "caf\\udce9 \\x00 end" in page
    page.encode("utf-8")  # nothing unencodable reached the page


def test_the_page_knows_the_session() -> None:
    page = html_of(DEMO)
    found = assert_self_contained(page)
    rows = {
        attrs["id"]: (attrs.get("class") or "").split()
        for tag, attrs in found.tags
        if tag == "div" and attrs.get("id")
    }
    failed = sorted(int(key[1:]) for key, kinds in rows.items() if "call" in kinds and "o-error" in kinds)
    assert failed == list(DEMO_FAILED)
    assert "o-pending" in rows[f"L{DEMO_NEVER_COMPLETED}"]
    assert {"obs", "join", "o-error"} <= set(rows[f"L{DEMO_FAR_OBSERVATION}"])
    assert f'<a href="#L{DEMO_FAR_OBSERVATION}">o: L{DEMO_FAR_OBSERVATION}</a>' in page
    assert "(+3 lines, 30.0 s)" in page  # the gap between the call and its late observation
    first, last = DEMO_FOLD
    assert f"<summary>{last - first + 1:,} lines of output</summary>" in page
    assert "sec" in rows["L13"] and "sec" in rows["L27"] and "sec" in rows["L28"]  # @phase, m:
    assert "ln0" in rows["L19"] and "ln1" in rows["L31"]  # tid lanes
    for line, code in ((DEMO_NEVER_COMPLETED, "W007"), (DEMO_UNKNOWN, "W003")):
        row = page.index(f"id=L{line}>")
        assert page.index(f'href="#code-{code}">{code}</a>', row) < page.index(f"id=L{line + 1}>")
        assert f'id="code-{code}"' in page
    card = "".join(found.text)
    for expected in ("demo-1", "claude-sonnet-4-5", "autopilot", "example/app", "215db51", "2 warning"):
        assert expected in card


def test_the_usage_chart_shows_steps_when_the_totals_come_from_metrics() -> None:
    text = (
        "---\nformat: bbox/1\nid: m1\nrepo_sha: abcdef1\n---\n"
        "a: one step=1 tokens_in=1 tokens_out=1 tokens_cached=0\n"
        "# metrics step=1 prompt_tokens=100 completion_tokens=10\n"
        "a: two step=2\n# metrics step=2 prompt_tokens=300 completion_tokens=30\n"
    )
    page = html_of(text)
    assert "<h2>Usage over 2 steps (# metrics)</h2>" in page
    assert "steps 2–2 from L8: input ≤ 300, output 30" in page
    assert "model responses</h2>" not in page


def test_the_card_shows_duration_calls_and_usage() -> None:
    page = html_of(DEMO)
    assert "<dt>duration</dt><dd>35.0 s</dd>" in page
    assert "<dt>calls</dt><dd>7 (2 failed, 1 pending)</dd>" in page
    assert "Usage over 3 model responses" in page
    assert "<dt>model responses</dt><dd>3</dd>" in page
    assert "<dt>tokens_out (responses)</dt><dd>89</dd>" in page  # 9 + 80: largest per response
    assert page.count("<rect ") == 3


def test_the_facade_renders_the_report() -> None:
    import bbox_lark

    out = io.StringIO()
    bbox_lark.render_report(DEMO.encode(), out)
    assert out.getvalue() == html_of(DEMO)


def test_a_long_line_is_folded_not_cut() -> None:
    body = "x" * 5000
    page = html_of(f"---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\nu: {body}\n")
    assert "3,003 more characters" in page
    assert page.count("x" * 1000) >= 1 and page.count("x") >= 5000


def test_a_claude_code_session_is_reported_through_its_bbox_form() -> None:
    source = ROOT / "tests" / "fixtures" / "claude-code" / "errors.jsonl"
    page = html_of(source.read_bytes())
    assert_self_contained(page)
    assert "o-error" in page and "call" in page


def test_parallel_subagents_get_their_own_lanes() -> None:
    folder = ROOT / "tests" / "fixtures" / "claude-code-subagents"
    out = io.StringIO()
    render(folder / "sess-sub.jsonl", out)
    page = out.getvalue()
    assert_self_contained(page)
    assert '<span class="lane ln0">a1</span>' in page and '<span class="lane ln1">b2</span>' in page
    found = markup(page)
    lanes = {
        (attrs.get("class") or "").split()[-1]
        for tag, attrs in found.tags
        if tag == "div" and "r" in (attrs.get("class") or "").split() and "ln" in (attrs.get("class") or "")
    }
    assert lanes == {"ln0", "ln1"}


def test_an_atif_trajectory_is_reported_through_its_bbox_form(tmp_path: Path) -> None:
    from bbox_lark.convert import convert

    trajectory = convert(DEMO, "bbox", to="atif").text
    json.loads(trajectory)
    path = tmp_path / "run.json"
    path.write_text(trajectory, encoding="utf-8")
    out = io.StringIO()
    render(path, out)
    page = out.getvalue()
    assert_self_contained(page)
    assert "cargo test" in page and "Exit code 101" in page


@pytest.mark.skipif(not REAL.exists(), reason="the external corpus is not here")
def test_the_biggest_real_log_shows_its_four_failed_calls() -> None:
    page = html_of(REAL.read_bytes())
    assert_self_contained(page)
    assert "<b id=error-count>4</b>" in page
    assert page.count("call o-error") == 4


def test_generation_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ONE_PARSE_MAX_BYTES the page is written as the input is read again: beyond what
    a tiny page costs, the peak of traced memory stays well below the page's size (the page
    and the document are never held; what grows is a few ints per call). (Below it the
    survey keeps the records for the page: one parse, memory bounded by that size.)"""
    import bbox_lark.report
    from bbox_lark.report import render as render_report

    monkeypatch.setattr(bbox_lark.report, "ONE_PARSE_MAX_BYTES", 1_000)

    lines = ["---", "format: bbox/1", "id: s", "repo_sha: 215db51", "---"]
    for n in range(2_000):
        lines += [
            f"th: step {n} thinking about the next call tokens_in=9 tokens_out={n} tokens_cached={n * 10}",
            f't!:Bash id=c{n} cmd="make test" → [running]',
            f"o: id=c{n} → [ok] {n} tests passed",
            f"  output line of call {n}",
        ]
    data = ("\n".join(lines) + "\n").encode()

    class Count(io.TextIOBase):
        size = 0

        def write(self, text: str) -> int:
            self.size += len(text)
            return len(text)

    def traced_peak(text: bytes, sink: Count) -> int:
        tracemalloc.start()
        try:
            render_report(text, sink)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    render_report(data[:2000], Count())  # warm up: the parser, the registry, the price table
    baseline = traced_peak(data[:2000], Count())  # what any page costs, however small
    sink = Count()
    peak = traced_peak(data, sink)
    assert sink.size > 3 * len(data)
    assert peak - baseline < sink.size / 2, (peak, baseline, sink.size)  # holding the page: > size


# -- the command --------------------------------------------------------------------------------

runner = CliRunner()


def test_report_writes_the_page_beside_where_it_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "in" / "demo.bbox"
    source.parent.mkdir()
    source.write_text(DEMO, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["report", str(source)])
    assert done.exit_code == 0, done.output
    assert "wrote demo.html" in done.output
    assert_self_contained((tmp_path / "demo.html").read_text(encoding="utf-8"))


def test_report_output_and_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import webbrowser

    source = tmp_path / "demo.bbox"
    source.write_text(DEMO, encoding="utf-8")
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url) or True)
    target = tmp_path / "out" / "page.html"
    target.parent.mkdir()
    done = runner.invoke(app, ["report", str(source), "-o", str(target), "--open"])
    assert done.exit_code == 0, done.output
    assert opened == [target.resolve().as_uri()]
    done = runner.invoke(app, ["report", str(source), "-o", "-"])
    assert done.exit_code == 0
    assert done.stdout.startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.bbox"], "missing.bbox: no such file or directory"),
        (["DEMO", "-o", "-", "--open"], "--open needs a file"),
        (["DEMO", "--from", "nope"], "nope"),
        (["DEMO", "-o", "no/such/dir/page.html"], "no/such/dir/page.html: cannot write"),
    ],
)
def test_report_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: list[str], message: str
) -> None:
    (tmp_path / "DEMO").write_text(DEMO, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["report", *arguments])
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert "Traceback" not in done.output
    assert not list(tmp_path.glob("*.html"))


def test_records_the_importer_skipped_are_named_and_exit_1(tmp_path: Path) -> None:
    """A record the conversion could not read is not on the page: ``report`` says so, as
    ``convert`` does (its line, then a count), and exits 1; it used to exit 0 in silence."""
    good = (ROOT / "tests" / "fixtures" / "claude-code" / "tool-ids.jsonl").read_bytes()
    source = tmp_path / "cut.jsonl"
    source.write_bytes(good.rstrip(b"\n") + b'\n{"type": "user", "message": \n')
    cut = good.rstrip(b"\n").count(b"\n") + 2
    target = tmp_path / "cut.html"
    done = runner.invoke(app, ["report", str(source), "-o", str(target)])
    assert done.exit_code == 1, done.output
    assert f"{source}:{cut}: skipped: not a JSON record" in done.stderr
    assert "1 record(s) skipped (not on the page)" in done.stderr
    assert_self_contained(target.read_text(encoding="utf-8"))
    whole = runner.invoke(
        app,
        ["report", str(ROOT / "tests" / "fixtures" / "claude-code" / "tool-ids.jsonl"), "-o", str(target)],
    )
    assert whole.exit_code == 0 and "skipped" not in whole.stderr


# -- what went wrong, less noise (issue 30) ------------------------------------------------------


def test_the_summary_card_comes_first_and_links_to_its_lines() -> None:
    page = html_of(DEMO)
    assert page.index("id=review") < page.index("id=summary") < page.index("id=timeline")
    card = page[page.index("id=review") : page.index("id=summary")]
    for line in DEMO_FAILED:
        assert f'<a href="#L{line}">L{line}</a>' in card
    assert f'<a href="#L{DEMO_NEVER_COMPLETED}">L{DEMO_NEVER_COMPLETED}</a>' in card
    for title in ("Failed calls", "Never finished", "Retries", "Loops", "Long gaps", "Costliest responses"):
        assert title in card
    assert card.count("class=def>") >= 6  # each item is defined on the page


def test_a_call_and_its_next_line_result_are_one_row() -> None:
    page = html_of(DEMO)
    # L16 starts Read, L17 completes it: L17 is inside L16's row, and [running] is marked hidden.
    row = page[page.index("id=L16>") : page.index("id=L18>")]
    assert 'class="jn o-ok" id=L17>' in row and row.count("class=badge>") == 1
    assert "<span class=ph>→ [running]</span>" in row
    # The late result is one line at its own place, linked back, and previewed at its call.
    assert (
        "far-o"
        in page[page.index(f"id=L{DEMO_FAR_OBSERVATION}>") - 60 : page.index(f"id=L{DEMO_FAR_OBSERVATION}>")]
    )


def test_blank_lines_are_anchors_not_rows() -> None:
    page = html_of("---\nformat: bbox/1\nid: b\nrepo_sha: 215db51\n---\nu: one\n\n\nu: two\n")
    assert "<span class=bl id=L7></span>" in page and 'class="r blank' not in page


def test_importer_records_are_folded_away_and_findings_grouped() -> None:
    text = (
        "---\nformat: bbox/1\nid: c\nrepo_sha: unknown\n---\n"
        '# claude-code record queue-operation {"a": 1}\n  {"b": 2}\nu: hi\nt!:Bash id=x → [running]\n'
    )
    page = html_of(text)
    assert 'class="r k-comment bk"' in page and 'class="r cont bk"' in page
    assert "id=show-bk" in page
    about = page[page.index("About the session") : page.index("About how the log was written")]
    assert "W007" in about and "W009" not in about and "I004" not in about
    writer = page[page.index("About how the log was written") :]
    assert "W009" in writer


def test_never_finished_filter_and_pending_column() -> None:
    page = html_of(DEMO)
    assert "id=only-pending" in page and "<b id=pending-count class=pend>1</b>" in page
    assert "<th>pending</th>" in page and '<td class="num o-pending">1</td>' in page


def test_hostile_text_is_inert_in_the_summary_card() -> None:
    page = html_of(hostile_session())
    found = assert_self_contained(page)
    card = page[page.index("id=review") : page.index("id=summary")]
    assert "<script>" not in card and "<svg" not in card and "<img" not in card
    assert "&lt;img/src=x/onerror=window.__pwned=9&gt;" in card  # the failed tool's name, as text
    assert "window.__pwned" not in "".join(found.script)


# -- many sessions ---------------------------------------------------------------------------


def test_many_sessions_give_pages_and_an_index(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "demo.bbox").write_text(DEMO, encoding="utf-8")
    (folder / "bad.bbox").write_text(hostile_session(), encoding="utf-8")
    claude = ROOT / "tests" / "fixtures" / "claude-code" / "tool-ids.jsonl"
    (tmp_path / "cc.jsonl").write_bytes(claude.read_bytes())
    out = tmp_path / "out"
    done = runner.invoke(
        app, ["report", str(folder), str(tmp_path / "cc.jsonl"), "-o", str(out), "--jobs", "1"]
    )
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.iterdir()) == ["bad.html", "cc.html", "demo.html", "index.html"]
    index = (out / "index.html").read_text(encoding="utf-8")
    found = markup(index)
    assert [tag for tag, _ in found.tags].count("script") == 1
    links = [attrs["href"] for tag, attrs in found.tags if tag == "a"]
    assert sorted(links) == ["./bad.html", "./cc.html", "./demo.html"]
    for tag, attrs in found.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    text = "".join(found.text)
    assert "demo-1" in text and "</title><script>window.__pwned=7</script>" in text
    assert "<script>window" not in index.split("<script>", 1)[0].split("</style>", 1)[1]
    row = index[index.index("demo-1") :]
    assert "claude-sonnet-4-5" in row[:600] and "autopilot" in row[:600]


def test_many_sessions_named_twice_or_beside_their_parent_get_one_page(tmp_path: Path) -> None:
    # Each session once (DECISIONS §13): the paths are searched together, so a file named
    # twice, or a subagent log named beside its parent, is on one page and one index row.
    import shutil

    (tmp_path / "a.bbox").write_text(DEMO, encoding="utf-8")
    shutil.copytree(ROOT / "tests" / "fixtures" / "claude-code-subagents", tmp_path / "logs")
    parent = tmp_path / "logs" / "sess-sub.jsonl"
    agents = sorted(str(p) for p in (tmp_path / "logs" / "sess-sub").rglob("*.jsonl"))
    a = str(tmp_path / "a.bbox")
    out = tmp_path / "out"
    done = runner.invoke(app, ["report", a, a, str(parent), *agents, "-o", str(out), "--jobs", "1"])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.iterdir()) == ["a.html", "index.html", "sess-sub.html"]
    assert f"{a}: on the page of {a} (the same file)" in done.output
    for agent in agents:
        assert f"{agent}: on the page of {parent} (a subagent log of its parent session)" in done.output
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.count('href="./a.html"') == 1 and index.count("demo-1") == 1


def test_many_sessions_need_a_folder(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(DEMO, encoding="utf-8")
    (tmp_path / "b.bbox").write_text(DEMO, encoding="utf-8")
    done = runner.invoke(app, ["report", str(tmp_path / "a.bbox"), str(tmp_path / "b.bbox")])
    assert done.exit_code == 2 and "give -o DIR" in done.output


def test_many_sessions_on_worker_processes_agree(tmp_path: Path) -> None:
    from bbox_lark.convert.many import convert_inputs
    from bbox_lark.report.many import write_many

    for n in range(4):
        (tmp_path / f"s{n}.bbox").write_text(DEMO.replace("demo-1", f"demo-{n}"), encoding="utf-8")
    inputs = convert_inputs([str(tmp_path)], None)
    one = write_many(inputs, tmp_path / "one", jobs=1)
    two = write_many(inputs, tmp_path / "two", jobs=2)
    assert one == two and [r.session for r in one] == [f"demo-{n}" for n in range(4)]
    assert one[0].failures == 2 and one[0].pending == 1 and one[0].calls == 7


# -- live ------------------------------------------------------------------------------------


def test_the_watcher_follows_growth_truncation_rotation_and_binary(tmp_path: Path) -> None:
    from bbox_lark.report.live import Watcher

    path = tmp_path / "live.bbox"
    head = "---\nformat: bbox/1\nid: live-1\nrepo_sha: 215db51\n---\n"
    path.write_text(head + "u: first\nu: half", encoding="utf-8")
    watcher = Watcher(str(path))
    watcher.poll()
    assert "first" in watcher.current() and "half" not in watcher.current()  # a line being written
    version = watcher.state()["version"]
    watcher.poll()
    assert watcher.state()["version"] == version  # nothing new
    with path.open("a", encoding="utf-8") as stream:
        stream.write(" done\n")
    watcher.poll()
    assert "half done" in watcher.current() and watcher.state()["message"] is None
    path.write_text(head + "u: again\n", encoding="utf-8")  # shorter: truncated
    watcher.poll()
    assert "again" in watcher.current() and "truncated" in watcher.state()["message"]
    other = tmp_path / "other"
    other.write_text(
        head + "u: rotated in <script>window.__pwned=1</script> and longer still\n", encoding="utf-8"
    )
    other.replace(path)
    watcher.poll()
    assert "replaced" in watcher.state()["message"]
    assert "&lt;script&gt;window.__pwned=1" in watcher.current()
    with path.open("ab") as stream:
        stream.write(b"\x00\xff\xfe binary\n")
    watcher.poll()
    assert "binary" in watcher.state()["message"] and "binary" in watcher.current()
    path.unlink()
    watcher.poll()
    assert "gone" in watcher.state()["message"] and "rotated in" in watcher.current()  # the last page stays


def test_the_live_server_answers_on_localhost(tmp_path: Path) -> None:
    import threading
    import urllib.request

    from bbox_lark.report.live import serve

    path = tmp_path / "live.bbox"
    path.write_text("---\nformat: bbox/1\nid: live-2\nrepo_sha: 215db51\n---\nu: hello\n", encoding="utf-8")
    stop = threading.Event()
    urls: list[str] = []
    ready = threading.Event()

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    thread = threading.Thread(
        target=serve, args=(str(path),), kwargs={"port": 0, "on_ready": on_ready, "stop": stop}
    )
    thread.start()
    try:
        assert ready.wait(30)
        assert urls[0].startswith("http://127.0.0.1:")
        with urllib.request.urlopen(urls[0]) as answer:
            page = answer.read().decode()
        assert "hello" in page and "connect-src 'self'" in page and "data-live=1" in page
        with urllib.request.urlopen(urls[0] + "version") as answer:
            state = json.loads(answer.read())
        assert state["lines"] == 6 and state["message"] is None
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()


def test_the_loop_threshold_is_an_option(tmp_path: Path) -> None:
    body = "".join("t:issue_ready → [ok] none\n" for _ in range(5))
    source = tmp_path / "poll.bbox"
    source.write_text("---\nformat: bbox/1\nid: p\nrepo_sha: 215db51\n---\n" + body, encoding="utf-8")
    for option, loops in (("5", 1), ("6", 0)):
        target = tmp_path / f"poll-{option}.html"
        done = runner.invoke(app, ["report", str(source), "-o", str(target), "--loop-min", option])
        assert done.exit_code == 0, done.output
        assert f"<h3>Loops <b>{loops}</b></h3>" in target.read_text(encoding="utf-8")


def test_watch_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    source = tmp_path / "live.bbox"
    source.write_text(DEMO, encoding="utf-8")
    command = [sys.executable, "-m", "bbox_lark.cli", "report", str(source), "--watch", "--port", "0"]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        first = server.stderr.readline()
        assert "at http://127.0.0.1:" in first and "Ctrl-C" in first
        server.send_signal(signal.SIGINT)
        assert server.wait(60) == 0
        rest = server.stderr.read()
        assert "stopped" in rest and "Traceback" not in rest
    finally:
        if server.poll() is None:
            server.kill()


def test_a_result_with_a_finding_keeps_its_own_row() -> None:
    head = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\n"
    text = head + "t!:Bash id=a → [running]\no: id=a → [ok] fine ts=bad\n"
    page = html_of(text)
    assert 'class="jn' not in page  # not folded into the call's row: the findings view shows it
    assert 'class="r k-observation has-dg obs join o-ok" id=L7>' in page


def test_one_parse_and_two_passes_write_the_same_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page from the records the survey kept equals the page from a second read."""
    from printer_support import external_files, golden_files

    import bbox_lark.report

    files = golden_files()[::3] + external_files()[::10]
    assert len(files) > 40
    for path in files:
        data = path.read_bytes()
        monkeypatch.setattr(bbox_lark.report, "ONE_PARSE_MAX_BYTES", 1 << 40)
        once = html_of(data)
        monkeypatch.setattr(bbox_lark.report, "ONE_PARSE_MAX_BYTES", -1)
        assert html_of(data) == once, path
