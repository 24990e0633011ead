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
