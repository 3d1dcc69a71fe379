"""The user documentation says what the package does, not how the project got there: no page of
docs/ and not the README cites a commit hash, an issue or pull request number, or a work
session. Code (fenced blocks and inline code spans) is left out: an id in an error message or a
file name is no citation. CHANGELOG.md is the project's history and is not checked."""

from __future__ import annotations

import re

from tests.examples.docs_pages import pages

HISTORY = re.compile(
    r"\b(?:issues?|pull requests?|PRs?|sessions?)\s+#?\d+"  # issue 22, PR #5, session 34
    r"|(?<![\w&])#[1-9]\d*(?![\w-])"  # #38 (not an anchor like #1-set-up, not &#38;)
    r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b",  # 075f964: a digit and a letter
    re.I)


def prose(text: str) -> str:
    """``text`` without its fenced code blocks and inline code spans."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`(?:[^`\n]|\n(?!\n))*`", "", text)  # a span may wrap, not across a blank line


def history(text: str) -> list[str]:
    return HISTORY.findall(prose(text))


def test_the_rule_finds_hashes_issue_numbers_and_sessions_but_not_code_or_anchors():
    assert history("three runs of 075f964 against 067d43d") == ["075f964", "067d43d"]
    assert history("(issue 39), see #38 and PR #5; after session 34") == [
        "issue 39", "#38", "PR #5", "session 34"]
    assert history("[set-up](#1-set-up), input #0, `savepoint-8a78e2d/`, deadbeef, 1234567, `k\n"
                   "k@ff25d2389ab7917a`\n"
                   "```\nk@ff25d2389ab7917a#0#0 issue 7\n```\n") == []


def test_no_page_of_the_docs_nor_the_readme_cites_project_history():
    found = {page.name: history(page.read_text()) for page in pages()}
    assert {name: hits for name, hits in found.items() if hits} == {}
