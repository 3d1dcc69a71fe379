"""The user-facing text: the README (a landing page) and the documentation site's pages
(docs/*.md), read the way tests check what they show."""

import re
from pathlib import Path

from tests.job_runner import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"


def pages() -> list[Path]:
    """The README and every page of the site."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def blocks(language: str, page: Path | None = None) -> list[str]:
    """The fenced ```language blocks of one page, or of all of them."""
    texts = [page.read_text()] if page else [path.read_text() for path in pages()]
    return [block for text in texts for block in re.findall(rf"```{language}\n(.*?)```", text,
                                                            re.S)]


def section(page: Path, heading: str) -> str:
    """The text under ``heading`` (a whole line, e.g. ``## Filters``) up to the next heading."""
    text = page.read_text()
    start = text.index(f"\n{heading}\n")
    end = start + len(heading) + 2
    while (end := text.find("\n#", end)) != -1 and _in_code(text, end):
        end += 2  # a comment line inside a code block is no heading
    return text[start:end if end != -1 else len(text)]


def block_after(page: Path, heading: str, language: str = "python") -> str:
    """The first ```language block of the section ``heading`` of ``page``."""
    return re.search(rf"```{language}\n(.*?)```", section(page, heading), re.S).group(1)


def _in_code(text: str, position: int) -> bool:
    return text.count("\n```", 0, position) % 2 == 1


RECALLED = "        recalled: "


def demo_sample(page: Path) -> list[str]:
    """The lines of the page's sample output of the demo (its plain block with the summary)."""
    for language, block in re.findall(r"^```(\w*)\n(.*?)^```", page.read_text(), re.S | re.M):
        if not language and "memories recalled" in block:
            return block.splitlines()
    raise AssertionError(f"{page.name} shows no sample output of the demo")


def demo_sample_mismatches(sample: list[str], stdout: str) -> list[str]:
    """The lines of a sample of the demo's output that a run's ``stdout`` does not bear out:
    each message line must be printed, each recalled line under it among that message's
    recalled lines, the summary printed as shown but for its time ("..." stands for lines
    left out). Customers run concurrently, so only this, not the order, is fixed."""
    printed: dict[str, list[str]] = {}
    summaries, header = [], None
    for line in stdout.splitlines():
        if line.startswith("["):
            header = line
            printed[header] = []
        elif line.startswith(RECALLED) and header is not None:
            printed[header].append(line)
        elif line.startswith("done in "):
            summaries.append(re.sub(r"^done in [\d.]+ s", "done in T s", line))
    wrong, header = [], None
    for line in sample:
        if line == "...":
            continue
        if line.startswith("["):
            header = line
            ok = line in printed
        elif line.startswith(RECALLED):
            ok = line in printed.get(header or "", [])
        elif line.startswith("done in "):
            ok = re.sub(r"^done in [\d.]+ s", "done in T s", line) in summaries
        else:
            ok = False
        if not ok:
            wrong.append(line)
    return wrong
