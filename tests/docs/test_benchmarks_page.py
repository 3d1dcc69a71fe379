"""The benchmarks page answers one question per section: what the bench measures, the command
that runs it, and, for every figure it shows, the machine it ran on; every bench in bench/ is on
the page."""

from __future__ import annotations

import re

from tests.job_runner import ROOT

PAGE = ROOT / "docs" / "benchmarks.md"


def sections() -> dict[str, str]:
    parts = PAGE.read_text().split("\n## ")[1:]
    return {part.split("\n", 1)[0]: part for part in parts}


def test_each_section_is_a_question_with_what_it_measures_its_command_and_its_machine():
    found = sections()
    assert len(found) >= 15
    for title, text in found.items():
        if title == "Other benches":
            continue
        assert title.endswith("?"), title
        assert "**Measures:**" in text, title
        assert re.search(r"\*\*Command:\*\* `python -m bench\.\w+", text), title
        if "\n| ---" in text or "![" in text:
            assert "**Machine:**" in text, title


def test_every_bench_is_on_the_page():
    page = PAGE.read_text()
    benches = sorted(path.stem for path in (ROOT / "bench").glob("*.py")
                     if not path.stem.startswith("_"))
    assert [name for name in benches if f"python -m bench.{name}" not in page] == []
