"""A bench's figures as a JSON file (``--json FILE``), which ``bench._plots`` draws.

One file per bench run: what was measured (the bench's module and a title), on which
machine (CPU model and its AVX-512 flags, cores), the axes, and one or more series of
``[x, y]`` points. ``kind`` says how to draw it: ``line`` (x is a size or a count, drawn on
a log axis when it spans a factor of 10 or more) or ``bar`` (x is a label). Nothing else
goes in: no query, no item text, no store configuration.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

KINDS = ("line", "bar")


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="FILE",
                        help="also write the figures as JSON to FILE (make bench-plots draws it)")


def machine() -> dict[str, Any]:
    """The CPU the figures were measured on: its model, its AVX-512 flags, the cores."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                name, _, value = line.partition(":")
                if name.strip() == "model name":
                    model = value.strip()
                elif name.strip() == "flags":
                    flags = {flag for flag in value.split() if flag.startswith("avx512")}
    except OSError:
        pass
    return {"cpu": model, "avx512": sorted(flags), "cores": os.cpu_count()}


def write_results(path: str | os.PathLike[str] | None, *, bench: str, title: str,
                  x_label: str, y_label: str, series: Mapping[str, Sequence[Sequence[Any]]],
                  kind: str = "line", note: str = "") -> None:
    """Write the figures to ``path`` (nothing when ``None``). ``$BENCH_NOTE``, if set, is
    added to ``note`` (say what else ran on the machine, for instance)."""
    if path is None:
        return
    note = "; ".join(filter(None, [note, os.environ.get("BENCH_NOTE", "").strip()]))
    if kind not in KINDS:
        raise ValueError(f"kind is one of {KINDS}, got {kind!r}")
    for name, points in series.items():
        if not points or any(len(point) != 2 for point in points):
            raise ValueError(f"series '{name}' needs [x, y] points, got {points!r}")
    document = {"bench": bench, "title": title, "kind": kind, "x_label": x_label,
                "y_label": y_label, "note": note, "machine": machine(),
                "series": {name: [list(point) for point in points]
                           for name, points in series.items()}}
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
