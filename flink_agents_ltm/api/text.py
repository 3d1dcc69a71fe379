"""Text every store can keep: no NUL characters, no lone surrogates.

A NUL character works on embedded Qdrant and fails on PostgreSQL; a lone
surrogate is written by some stores and then cannot be read back. Long-term
memory (keys, names, values, metadata), the filter language and anything else
that reaches a store refuse both, the same way, before anything is written.
"""

from __future__ import annotations

import re

__all__ = ["check_text"]

_BAD_CHARACTER = re.compile("[\x00\ud800-\udfff]")


def check_text(text: str, what: str) -> None:
    """Raise ``ValueError`` naming ``what`` and the position if ``text`` holds a NUL
    character or a lone surrogate."""
    bad = _BAD_CHARACTER.search(text)
    if bad is None:
        return
    character = bad.group()
    kind = "a NUL character" if character == "\x00" else (
        f"a lone surrogate (U+{ord(character):04X}), which is not valid Unicode text")
    raise ValueError(f"{what} contains {kind} at position {bad.start()}; no store can keep it "
                     "reliably, so it is refused (encode binary data, e.g. as base64)")
