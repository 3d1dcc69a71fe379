"""The home page's picture of the system is drawn from its text source by
scripts/architecture-diagram, is what that source draws today, names every part of the system,
and shows in the built site without fetching anything."""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.job_runner import ROOT

SCRIPT = ROOT / "scripts" / "architecture-diagram"
SOURCE = ROOT / "docs" / "architecture" / "architecture.toml"
SVG = ROOT / "docs" / "architecture" / "architecture.svg"
diagram = runpy.run_path(str(SCRIPT))
SVG_NS = "{http://www.w3.org/2000/svg}"


def texts(svg: str) -> list[str]:
    return [element.text or "" for element in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def test_the_committed_svg_is_what_its_source_draws_today():
    assert SVG.read_text() == diagram["render"](SOURCE.read_text()), (
        "docs/architecture/architecture.svg is out of date: run scripts/architecture-diagram")
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr


def test_the_picture_names_the_job_the_operator_its_threads_the_stores_and_the_java_side():
    shown = " | ".join(texts(SVG.read_text()))
    for part in ("source", "key_by", 'keyed operator "Agent: <name>"', "sink",
                 "mailbox thread", "actions", "Flink keyed state", "short-term memory",
                 "sensory memory", "run records, timers", "worker pool", "durable calls",
                 "chat and embedding models", "tools", "MCP servers", "Mem0",
                 "embedded SQLite store", "PostgreSQL + pgvector", "action-state store",
                 "event log", "Java agent", "Pemja", "the same long-term memory"):
        assert part in shown, part


def test_a_change_of_the_source_changes_the_picture_and_a_text_too_long_is_refused():
    source = SOURCE.read_text()
    assert "Event log" in texts(diagram["render"](source.replace('"event log"',
                                                                 '"Event log"')))
    with pytest.raises(diagram["DiagramError"], match="too long for its box"):
        diagram["render"](source.replace('title = "sink"', 'title = "' + "a sink " * 8 + '"'))
    with pytest.raises(diagram["DiagramError"], match="no box's id"):
        diagram["render"](source.replace('to = "sink"', 'to = "sinks"'))


def test_the_svg_fetches_nothing():
    svg = SVG.read_text()
    # the namespace is a name, not a fetch; nothing else may point outside the file
    assert re.findall(r"(?:href|src)\s*=|url\((?!#)|@import|<script|https?://(?!www\.w3\.org/2000/svg\")",
                      svg) == []


def test_the_home_page_shows_it_before_the_guides_and_the_readme_too():
    home = (ROOT / "docs" / "index.md").read_text()
    assert home.index("](architecture/architecture.svg)") < home.index("## The guides")
    readme = (ROOT / "README.md").read_text()
    assert readme.index("](docs/architecture/architecture.svg)") < readme.index("## Two commands")


def test_the_built_home_page_shows_the_svg_from_the_site_itself(site):
    html = (site / "index.html").read_text()
    assert re.search(r'<img alt="The system: [^"]*" src="architecture/architecture.svg"', html)
    assert (site / "architecture" / "architecture.svg").read_text() == SVG.read_text()
    assert not (site / "architecture" / "architecture.toml").exists()
