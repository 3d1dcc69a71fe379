"""Every line of a code block shows whole at 1280 px: the site's stylesheet wraps long lines,
and a page opened in Chromium at that width has no code block wider than its box."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.docs.test_site import Page, dump_dom
from tests.job_runner import ROOT

# A page of the built site that opens another in a 1280 px wide frame and writes, for each of
# its code blocks, "fits" or "cut" (wider than its box) into its own body: Chromium's dumped
# DOM then carries the measurement (the frame loads before the page's load event).
PROBE = """<!doctype html><html><body>
<iframe id="page" src="{page}" style="width:1280px;height:900px;border:0"></iframe>
<script>
document.getElementById("page").addEventListener("load", function () {{
  var blocks = this.contentDocument.querySelectorAll("pre > code");
  var found = [];
  for (var i = 0; i < blocks.length; i++) {{
    found.push(blocks[i].scrollWidth > blocks[i].clientWidth + 1 ? "cut" : "fits");
  }}
  var out = document.createElement("pre");
  out.textContent = "measured:" + found.join(",");
  document.body.appendChild(out);
}});
</script></body></html>
"""


def test_the_site_loads_a_stylesheet_that_wraps_code_blocks(site):
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    (sheet,) = config["extra_css"]
    css = (ROOT / "docs" / sheet).read_text()
    rule = re.search(r"\.md-typeset pre > code\s*\{([^}]*)\}", css)
    assert rule and "white-space: pre-wrap" in rule.group(1)
    assert f'href="{sheet}"' in (site / "index.html").read_text()


@pytest.mark.parametrize("page", ["index.html", "quickstart.html"])
def test_no_code_block_is_cut_off_at_1280_px(page, site, served_site, chromium):
    probe = site / f"probe-{page}"
    probe.write_text(PROBE.format(page=page))
    try:
        dom = Page(dump_dom(chromium, f"{served_site}/{probe.name}"))
    finally:
        probe.unlink()
    (measured,) = [text for text in dom.pre_texts if text.startswith("measured:")]
    found = measured.removeprefix("measured:").split(",")
    assert found.count("fits") == (ROOT / "docs" / page.replace(".html", ".md")).read_text(
        ).count("\n```") // 2
    assert "cut" not in found
