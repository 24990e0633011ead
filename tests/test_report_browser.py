"""The HTML report in a real browser (headless Chromium): what a person checks.

One browser serves the module (``browser_support.browser``); the module is skipped, with
the reason, where Chromium, chromedriver or selenium is missing.
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

import pytest
from browser_support import browser, console_problems  # noqa: F401  (a fixture)
from report_support import (
    DEMO,
    DEMO_FAILED,
    DEMO_FAR_OBSERVATION,
    DEMO_NEVER_COMPLETED,
    DEMO_UNKNOWN,
    PAYLOADS,
    hostile_session,
)

from bbox_lark.report import render

# One worker starts this module's browser and rendered demo once (pytest -n auto --dist loadgroup).
pytestmark = pytest.mark.xdist_group("browser")


def page(tmp_path: Path, text: str, name: str = "session.bbox") -> Path:
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    out = io.StringIO()
    render(source, out)
    target = tmp_path / (source.stem + ".html")
    target.write_text(out.getvalue(), encoding="utf-8")
    return target


def wait_for(condition: Any, timeout: float = 10.0) -> Any:
    """Poll ``condition`` until it is truthy (the search box waits a moment before it runs)."""
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > end:
            return value
        time.sleep(0.05)


def visible(driver: Any, selector: str) -> list[int]:
    """Line numbers of the timeline rows matching ``selector`` that are displayed."""
    return [
        int(line)
        for line in driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0]))"
            ".filter(e => e.offsetParent !== null).map(e => e.id.slice(1))",
            selector,
        )
    ]


def in_view(driver: Any, element_id: str) -> bool:
    return bool(
        driver.execute_script(
            "var r = document.getElementById(arguments[0]).getBoundingClientRect();"
            "return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;",
            element_id,
        )
    )


@pytest.fixture(scope="module")
def demo(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:  # noqa: F811
    path = page(tmp_path_factory.mktemp("demo"), DEMO)
    browser.get(path.as_uri())
    console_problems(browser)  # start from an empty log
    return browser


def test_the_filter_shows_exactly_the_failed_calls(demo: Any) -> None:
    count = demo.find_element("id", "error-count").text
    assert count == str(len(DEMO_FAILED))
    demo.find_element("id", "only-errors").click()
    try:
        assert visible(demo, "#timeline .r.call") == list(DEMO_FAILED)
        # The late observation that failed is shown at its call, with a link to it.
        far = demo.find_element("css selector", f"#L{DEMO_FAILED[0]} .far")
        assert far.is_displayed()
        assert "Exit code 101" in far.text
        assert f"L{DEMO_FAR_OBSERVATION}" in far.text
    finally:
        demo.find_element("id", "only-errors").click()
    assert len(visible(demo, "#timeline .r.call")) > len(DEMO_FAILED)


def choose_view(driver: Any, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "view")).select_by_value(value)


def test_the_views_show_messages_calls_or_lines_with_findings(demo: Any) -> None:
    try:
        choose_view(demo, "messages")
        assert visible(demo, "#timeline .r") == [12, 15, 34]  # u:, a:, a:
        choose_view(demo, "calls")
        shown = visible(demo, "#timeline .r")
        assert set(visible(demo, "#timeline .r.call")) <= set(shown)
        assert DEMO_FAR_OBSERVATION in shown and DEMO_UNKNOWN not in shown and 12 not in shown
        choose_view(demo, "findings")
        assert visible(demo, "#timeline .r") == [DEMO_NEVER_COMPLETED, DEMO_UNKNOWN]
        assert (
            demo.execute_script(
                "return Array.from(document.querySelectorAll('#timeline .dg'))"
                ".filter(e => e.offsetParent).length"
            )
            == 2
        )
    finally:
        choose_view(demo, "all")
    assert len(visible(demo, "#timeline .r")) > 30


def test_a_line_link_scrolls_to_its_line(demo: Any) -> None:
    link = demo.find_element("css selector", f'#findings a[href="#L{DEMO_NEVER_COMPLETED}"]')
    demo.execute_script("window.scrollTo(0, 0)")
    link.click()
    target = f"L{DEMO_NEVER_COMPLETED}"
    assert wait_for(lambda: in_view(demo, target))
    assert "here" in demo.find_element("id", target).get_attribute("class")
    # Its finding is shown under it, and the code links to its explanation on the page.
    code = demo.find_element("css selector", f"#{target} + .dg a.code")
    assert code.text == "W007"
    code.click()
    assert wait_for(lambda: in_view(demo, "code-W007"))


def test_a_link_into_a_fold_opens_it(demo: Any) -> None:
    demo.execute_script("location.hash = '#L24'")
    assert wait_for(lambda: in_view(demo, "L24"))
    assert demo.find_element("id", "L24").is_displayed()


def test_the_search_finds_a_call(demo: Any) -> None:
    box = demo.find_element("id", "q")
    box.send_keys("WebFetch")
    try:
        assert wait_for(lambda: visible(demo, "#timeline .r") == [32])
        assert demo.find_element("id", "count").text == "1 line"
        box.send_keys("\n")
        assert wait_for(lambda: in_view(demo, "L32"))
    finally:
        box.clear()
        box.send_keys(" \b")
    assert wait_for(lambda: len(visible(demo, "#timeline .r")) > 20)


def laid_out(driver: Any, element_id: str) -> bool:
    """The element takes room on the page (WebDriver's own displayedness treats anything in a
    closed ``<details>`` as hidden, whatever the style says)."""
    return bool(
        driver.execute_script("return document.getElementById(arguments[0]).checkVisibility()", element_id)
    )


def test_printed_the_folds_are_open_and_the_toolbar_gone(demo: Any) -> None:
    demo.execute_script("history.replaceState(null, '', location.pathname)")  # no #L: no fold opened
    demo.refresh()
    assert not laid_out(demo, "L24") and not laid_out(demo, "L1")  # folded on screen
    demo.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        assert not demo.find_element("id", "q").is_displayed()
        assert laid_out(demo, "L24")  # the output of a call
        assert laid_out(demo, "L1")  # the header lines
    finally:
        demo.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    assert not laid_out(demo, "L24")


def test_no_console_errors(demo: Any) -> None:
    demo.refresh()
    assert demo.execute_script("return document.readyState") == "complete"
    assert console_problems(demo) == []


def test_hostile_text_is_shown_and_never_runs(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    path = page(tmp_path, hostile_session())
    browser.get(path.as_uri())
    console_problems(browser)
    # Unfold everything and use the page: nothing that came from the log may run.
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    browser.find_element("id", "q").send_keys("svg")
    wait_for(lambda: browser.find_element("id", "count").text)
    browser.find_element("id", "only-errors").click()
    assert browser.execute_script("return window.__pwned") is None
    assert browser.title == "bbox report · </title><script>window.__pwned=7</script>"
    markup = browser.execute_script(
        "return {scripts: document.scripts.length,"
        " images: document.images.length,"
        " handlers: Array.from(document.querySelectorAll('*')).filter("
        "   e => Array.from(e.attributes).some(a => a.name.startsWith('on'))).length,"
        " javascript: Array.from(document.querySelectorAll('[href]')).filter("
        "   e => /^\\s*javascript:/i.test(e.getAttribute('href'))).length,"
        " svgs: document.querySelectorAll('svg').length}"
    )
    assert markup == {"scripts": 1, "images": 0, "handlers": 0, "javascript": 0, "svgs": 0}
    text = browser.execute_script("return document.body.textContent")
    for payload in PAYLOADS:
        assert payload in text
    for marker in ("window.__pwned=8", "window.__pwned=9", "window.__pwned=10", "window.__pwned=11"):
        assert marker in text  # header key, tool names, MCP method (and their findings)
    assert console_problems(browser) == []


# -- the new parts: the summary card, the index, the live page (issue 30) -----------------------


def test_the_summary_card_shows_hostile_snippets_as_text(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    path = page(tmp_path, hostile_session())
    browser.get(path.as_uri())
    console_problems(browser)
    card = browser.find_element("id", "review").text
    assert "<img/src=x/onerror=window.__pwned=9>" in card  # the failed call's tool, as written
    assert PAYLOADS[0] in card  # its error text
    browser.execute_script("document.querySelectorAll('#review button.find').forEach(b => b.click())")
    assert browser.execute_script("return window.__pwned") is None
    assert console_problems(browser) == []


def test_the_index_sorts_filters_and_runs_nothing(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    from bbox_lark.convert.many import convert_inputs
    from bbox_lark.report.many import write_many

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "demo.bbox").write_text(DEMO, encoding="utf-8")
    (folder / "hostile.bbox").write_text(hostile_session(), encoding="utf-8")
    (folder / "quiet.bbox").write_text(DEMO.replace("demo-1", "quiet-3"), encoding="utf-8")
    out = tmp_path / "out"
    write_many(convert_inputs([str(folder)], None), out, jobs=1)
    browser.get((out / "index.html").as_uri())
    console_problems(browser)
    text = browser.find_element("id", "sessions").text
    assert "</title><script>window.__pwned=7</script>" in text and PAYLOADS[2] in text  # id, agent
    browser.find_element("id", "filter").send_keys("quiet")
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('#sessions tbody tr'))"
        ".filter(r => r.offsetParent !== null).map(r => r.cells[0].textContent)"
    )
    assert len(shown) == 1 and "quiet-3" in shown[0]
    browser.find_element("id", "filter").clear()
    browser.find_element("id", "filter").send_keys(" \b")
    browser.find_elements("css selector", "#sessions th")[4].click()  # lines, descending
    order = browser.execute_script(
        "return Array.from(document.querySelectorAll('#sessions tbody tr')).map(r => +r.cells[4].textContent)"
    )
    assert order == sorted(order, reverse=True)
    browser.find_element("css selector", "#sessions a").click()  # a link opens its page
    assert browser.title.startswith("bbox report · ")
    assert browser.execute_script("return window.__pwned") is None
    assert console_problems(browser) == []


WRITER = """
import sys, time
path, lines = sys.argv[1], sys.argv[2:]
with open(path, "a", encoding="utf-8") as stream:
    for line in lines:
        stream.write(line)
        stream.flush()
        time.sleep(0.05)
    stream.write("u: half a line")
    stream.flush()
"""


def test_the_live_page_follows_a_writer_in_another_process(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    import subprocess
    import sys
    import threading

    from bbox_lark.report.live import serve

    path = tmp_path / "live.bbox"
    path.write_text("---\nformat: bbox/1\nid: live-3\nrepo_sha: 215db51\n---\nu: first\n", encoding="utf-8")
    stop, ready, urls = threading.Event(), threading.Event(), []

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    server = threading.Thread(
        target=serve, args=(str(path),), kwargs={"port": 0, "on_ready": on_ready, "stop": stop}
    )
    server.start()
    try:
        assert ready.wait(30)
        browser.get(urls[0])
        console_problems(browser)
        assert wait_for(lambda: "live: 6 lines" in browser.find_element("id", "live-msg").text)
        browser.execute_script("window.__marker = 1")  # gone if the page reloads
        lines = [f"u: line {n} from the writer\n" for n in range(7, 27)]
        lines.append(f"a: {PAYLOADS[0]} {PAYLOADS[2]}\n")
        subprocess.run([sys.executable, "-c", WRITER, str(path), *lines], check=True, timeout=60)
        assert wait_for(lambda: browser.execute_script("return !!document.getElementById('L27')"), 20)
        assert "line 26 from the writer" in browser.find_element("id", "L26").text
        assert PAYLOADS[0] in browser.find_element("id", "L27").text
        assert not browser.execute_script("return !!document.getElementById('L28')")  # half a line
        assert browser.execute_script("return window.__marker") == 1  # no reload
        path.write_text(
            "---\nformat: bbox/1\nid: live-3\nrepo_sha: 215db51\n---\nu: again\n", encoding="utf-8"
        )
        assert wait_for(lambda: "truncated" in browser.find_element("id", "live-msg").text, 20)
        with path.open("ab") as stream:
            stream.write(b"u: \x00\xff binary\n")
        assert wait_for(lambda: "binary" in browser.find_element("id", "live-msg").text, 20)
        assert "again" in browser.find_element("id", "L6").text
        assert browser.execute_script("return window.__pwned") is None
        assert console_problems(browser) == []
    finally:
        stop.set()
        server.join(30)
    assert not server.is_alive()
