"""The documentation site builds with warnings as errors, renders in a real browser, and no
page of it links to a page or an anchor that does not exist."""

import os
import posixpath
import signal
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.examples.docs_pages import DOCS

# Chromium on a machine without a network: every background service off, or it waits on them.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


class Page(HTMLParser):
    """The ids, links and code blocks of one HTML document."""

    def __init__(self, html: str):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.pre_texts: list[str] = []
        self.copy_buttons = 0
        self.html_classes: list[str] = []
        self.h1 = ""
        self._in: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "id" in attributes:
            self.ids.add(attributes["id"])
        if tag == "a" and attributes.get("href"):
            self.links.append(attributes["href"])
        if tag == "html":
            self.html_classes = (attributes.get("class") or "").split()
        if tag == "button" and "md-code__button" in (attributes.get("class") or "").split():
            self.copy_buttons += 1
        if tag == "pre":
            self.pre_texts.append("")
        if tag in ("pre", "h1"):
            self._in.append(tag)

    def handle_endtag(self, tag):
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data):
        if "pre" in self._in:
            self.pre_texts[-1] += data
        elif "h1" in self._in:
            self.h1 += data


def dump_dom(chromium: str, url: str) -> str:
    """The DOM after the page's scripts ran, as headless Chromium renders it."""
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        process = subprocess.Popen(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            start_new_session=True)
        try:
            out, _ = process.communicate(timeout=60)
        finally:
            if process.poll() is None:  # hung: stop it and the processes it started
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    assert process.returncode == 0, f"chromium exited with {process.returncode}"
    return out


def test_the_site_builds_strictly_without_a_single_warning(mkdocs_build):
    assert mkdocs_build.returncode == 0, mkdocs_build.stderr
    assert "WARNING" not in mkdocs_build.stderr + mkdocs_build.stdout
    built = {path.relative_to(mkdocs_build.site).with_suffix(".md").as_posix()
             for path in mkdocs_build.site.rglob("*.html") if path.name != "404.html"}
    assert built == {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}


def test_the_api_reference_documents_the_api_and_memory_modules_from_their_docstrings(site):
    html = (site / "reference" / "api.html").read_text()
    page = Page(html)
    # The docstrings' reST roles and code blocks arrive as Markdown (docs/_ext/).
    assert ":class:`" not in html and ".. code-block::" not in html
    assert any(text.startswith("class Greeter(Agent):") for text in page.pre_texts)
    for name in ("flink_agents_ltm.api.agent.Agent", "flink_agents_ltm.api.agent.action",
                 "flink_agents_ltm.api.memory.long_term_memory.BaseLongTermMemory",
                 "flink_agents_ltm.api.memory.long_term_memory.MemorySet.search",
                 "flink_agents_ltm.api.vector_stores.Document"):
        assert name in page.ids, name


def test_the_quickstart_renders_in_chromium_with_every_code_block(chromium, served_site):
    page = Page(dump_dom(chromium, f"{served_site}/quickstart.html"))
    assert page.h1.strip() == "Quickstart¶"  # with its permalink
    assert "js" in page.html_classes  # the theme's scripts ran ("no-js" in the file)
    fences = (DOCS / "quickstart.md").read_text().count("\n```") // 2
    assert len(page.pre_texts) == fences == page.copy_buttons  # each with its copy button
    (listing,) = [text for text in page.pre_texts if "class SupportAgent(Agent):" in text]
    assert "agents_env.from_datastream(messages" in listing
    assert any(text.startswith("make demo") for text in page.pre_texts)


def crawl(site: Path) -> tuple[int, int, list[str]]:
    """Every link of every built page that stays in the site: how many, how many with an
    anchor, and the broken ones (no such file, or no such id in it)."""
    pages = {path.relative_to(site).as_posix(): Page(path.read_text())
             for path in site.rglob("*.html")}
    checked, anchors, broken = 0, 0, []
    for name, page in pages.items():
        for href in page.links:
            url = urlsplit(href)
            if url.scheme or url.netloc:
                continue  # outside the site
            target = name
            if url.path:
                base = "" if url.path.startswith("/") else posixpath.dirname(name)  # 404.html
                target = posixpath.normpath(posixpath.join(base, unquote(url.path).lstrip("/")))
                if url.path.endswith("/"):
                    target = posixpath.join(target, "index.html")
            checked += 1
            if not (site / target).is_file():
                broken.append(f"{name}: {href} (no {target})")
            elif url.fragment and target in pages:
                anchors += 1
                if unquote(url.fragment) not in pages[target].ids:
                    broken.append(f"{name}: {href} (no #{url.fragment} in {target})")
    return checked, anchors, broken


def test_no_page_links_to_a_missing_page_or_anchor(site):
    checked, anchors, broken = crawl(site)
    assert broken == []
    assert checked > 500 and anchors > 300  # the crawl saw the site, not an empty folder

