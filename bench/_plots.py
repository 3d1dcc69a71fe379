"""Draw the benches' JSON results (``--json``, see ``bench._results``) as PNG files.

    python -m bench._plots RESULTS_DIR OUT_DIR

One ``NAME.png`` in ``OUT_DIR`` for each ``NAME.json`` in ``RESULTS_DIR``; the machine the
figures were measured on is written under the plot. ``make bench-plots`` runs the benches
with ``--json`` into ``docs/bench/`` and then this, so the pictures on the benchmarks page
are always drawn from a bench run, never by hand. Needs matplotlib (the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def draw(results: dict[str, Any], out: Path) -> None:
    """Draw one bench's results into the PNG file ``out``."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(7, 4), dpi=110)
    series: dict[str, list[list[Any]]] = results["series"]
    if results["kind"] == "bar":
        labels = list(dict.fromkeys(str(x) for points in series.values() for x, _ in points))
        width = 0.8 / max(1, len(series))
        for index, (name, points) in enumerate(series.items()):
            values = {str(x): y for x, y in points}
            places = [n + index * width for n in range(len(labels))]
            bars = axes.bar(places, [values.get(label, 0) for label in labels], width,
                            label=name)
            axes.bar_label(bars, fmt="%.3g", fontsize=7)
        axes.set_xticks([n + width * (len(series) - 1) / 2 for n in range(len(labels))],
                        labels)
    else:
        xs = [x for points in series.values() for x, _ in points]
        for name, points in series.items():
            axes.plot([x for x, _ in points], [y for _, y in points], marker="o", label=name)
        if xs and min(xs) > 0 and max(xs) / min(xs) >= 10:
            axes.set_xscale("log")
        ys = [y for points in series.values() for _, y in points]
        if ys and min(ys) > 0 and max(ys) / min(ys) >= 100:
            axes.set_yscale("log")
    axes.set_title(results["title"], fontsize=10)
    axes.set_xlabel(results["x_label"])
    axes.set_ylabel(results["y_label"])
    axes.grid(True, alpha=0.3)
    if len(series) > 1:
        axes.legend(fontsize=8)
    machine = results.get("machine") or {}
    avx512 = "AVX-512" if machine.get("avx512") else "no AVX-512"
    caption = (f"python -m bench.{results['bench']}, {machine.get('cpu', '?')} ({avx512}), "
               f"{machine.get('cores', '?')} cores")
    if results.get("note"):
        caption += f"; {results['note']}"
    figure.text(0.01, 0.01, caption, fontsize=6, color="dimgray")
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out)
    pyplot.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="folder of the benches' JSON files")
    parser.add_argument("out", type=Path, help="folder for the PNG files")
    args = parser.parse_args(argv)
    files = sorted(args.results.glob("*.json"))
    if not files:
        print(f"bench._plots: no JSON results in {args.results} (run the benches with --json)",
              file=sys.stderr)
        return 2
    for path in files:
        out = args.out / f"{path.stem}.png"
        draw(json.loads(path.read_text(encoding="utf-8")), out)
        print(f"{path} -> {out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
