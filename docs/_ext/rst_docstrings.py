"""A Griffe extension for the API reference (mkdocs.yml loads it): the package's docstrings
are written in reST, for Python's help() and IDEs; MkDocs renders Markdown. Sphinx roles
(:class:`X`, :meth:`~a.b.c`) become code spans and ``.. code-block:: python`` blocks become
fenced code, so the reference shows what the docstrings mean and not their markup."""

import re
import textwrap

from griffe import Extension

ROLE = re.compile(r":(?:class|meth|func|attr|data|mod|exc|obj):`(~?)([^`]+)`")
CODE_BLOCK = re.compile(r"^( *)\.\. code-block:: *(\w*)\n\n((?:\1 +.*\n|\n)+)", re.M)


def role(match: re.Match[str]) -> str:
    name = match.group(2)
    return f"`{name.rsplit('.', 1)[-1] if match.group(1) else name}`"


def code_block(match: re.Match[str]) -> str:
    indent, language, body = match.groups()
    code = textwrap.dedent(body).strip("\n")
    return textwrap.indent(f"```{language}\n{code}\n```\n\n", indent)


def markdown(docstring: str) -> str:
    return CODE_BLOCK.sub(code_block, ROLE.sub(role, docstring + "\n")).rstrip("\n")


class RstDocstrings(Extension):
    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
