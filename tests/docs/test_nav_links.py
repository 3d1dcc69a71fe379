"""Every page of the site's navigation is reachable from the home page and from the README's
table, and every example module is in the quickstart's examples table."""

from __future__ import annotations

import re

import yaml

from tests.job_runner import ROOT


def nav_pages() -> list[str]:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    pages = []
    for entry in nav:
        (target,) = entry.values()
        pages.extend(target if isinstance(target, list) else [target])
    return [page for page in pages if isinstance(page, str) and page != "index.md"]


def test_every_nav_page_is_linked_from_the_home_page():
    home = (ROOT / "docs" / "index.md").read_text()
    assert [page for page in nav_pages() if f"]({page})" not in home] == []


def test_every_nav_page_is_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text()
    assert [page for page in nav_pages() if f"](docs/{page})" not in readme] == []


def test_every_example_is_in_the_quickstarts_examples_table():
    table = (ROOT / "docs" / "quickstart.md").read_text().split("## Examples", 1)[1]
    modules = sorted(path.stem for path in (ROOT / "flink_agents_ltm" / "examples").glob("*.py")
                     if path.stem != "__init__")
    listed = set(re.findall(r"\| `(\w+)` \|", table))
    assert [module for module in modules if module not in listed] == []
