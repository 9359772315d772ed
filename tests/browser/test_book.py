"""The course site (``make book`` → ``build/book/``) in a real browser.

Issue 22 §6: open one page of the built site — notebook 00, executed — and check that
a figure is shown (an ``<img>`` the browser decoded, not a broken link), that the page
offers a launch-on-Binder link to the same notebook, that an in-text link (to the
glossary) leads to a page that loads, and that the answers have their own part of the
site. ``make test-browser`` builds the site first if ``build/book/`` is missing.
Needs Chromium, like the JupyterLab tests (see ``test_lab_e2e.py``).
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

pytest.importorskip("playwright", reason="pip install 'dpgp_audit[browser]'")

from tests.browser.test_lab_e2e import SHOTS  # noqa: E402

pytestmark = pytest.mark.browser

SITE = Path(__file__).resolve().parents[2] / "build" / "book"


@pytest.fixture(scope="module")
def site():
    if not (SITE / "index.html").is_file():
        pytest.fail(f"{SITE}/index.html is missing: run `make book` (make test-browser does)")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_course_page_shows_its_figures_and_its_links_work(site, page):
    page.set_default_timeout(60_000)
    response = page.goto(f"{site}/notebooks/00_dp_basics.html")
    assert response is not None and response.ok
    assert "Differential privacy basics" in page.title()
    # a figure: an output image the browser has decoded
    figures = page.locator("div.cell_output img")  # the outputs of the executed cells
    figures.first.scroll_into_view_if_needed()
    figures.first.wait_for()
    sizes = figures.evaluate_all("els => els.map(e => [e.complete, e.naturalWidth])")
    shown = [w for done, w in sizes if done and w > 100]
    assert len(shown) >= 5, f"figures decoded by the browser: {sizes}"
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "book_00.png"), full_page=False)
    # launch on Binder: a link to mybinder.org that opens this very notebook
    binder = page.locator("a[href*='mybinder.org']")
    assert binder.count() >= 1
    href = binder.first.get_attribute("href") or ""
    assert "notebooks/00_dp_basics.ipynb" in href, href
    # the answers are a part of their own in the navigation
    assert page.locator("nav").get_by_text("Answers", exact=False).count() >= 1
    # an in-text link: the glossary
    link = page.locator("article a, main a").filter(has_text="glossary").first
    with page.expect_navigation():
        link.click()
    assert page.url.split("#")[0].endswith("/notebooks/GLOSSARY.html"), page.url
    assert page.get_by_role("heading", name="Glossary and notation").count() >= 1
