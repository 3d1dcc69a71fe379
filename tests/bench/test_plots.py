"""The benchmarks page's pictures are drawn from bench results: ``bench._results`` writes a
bench's figures as JSON, ``bench._plots`` draws each JSON as a PNG, and the page shows every
picture that ``make bench-plots`` draws (docs/bench/), each next to the JSON it came from."""

import importlib.util
import json
import re
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "docs" / "bench"


def bench_module(name):
    """``bench.<name>`` of the repository (here, ``bench`` is this test package)."""
    spec = importlib.util.spec_from_file_location(f"repo_bench_{name}",
                                                  ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_plots = bench_module("_plots")
write_results = bench_module("_results").write_results


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def test_a_benchs_figures_are_written_with_the_machine_they_were_measured_on(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("BENCH_NOTE", "two CI runs shared the cores")
    write_results(tmp_path / "b.json", bench="scoped_search", title="t", x_label="rows",
                  y_label="ms", series={"ours": [(5000, 0.8), (50000, 7.1)]})
    figures = json.loads((tmp_path / "b.json").read_text())
    assert figures["series"] == {"ours": [[5000, 0.8], [50000, 7.1]]}
    assert figures["note"] == "two CI runs shared the cores"
    assert figures["machine"]["cores"] >= 1 and figures["machine"]["cpu"]
    assert isinstance(figures["machine"]["avx512"], list)


def test_without_a_json_path_nothing_is_written(tmp_path):
    write_results(None, bench="b", title="t", x_label="x", y_label="y", series={"s": [(1, 2)]})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("series, kind, problem", [
    ({"s": [(1, 2)]}, "pie", "kind is one of ('line', 'bar'), got 'pie'"),
    ({"s": []}, "line", "series 's' needs [x, y] points"),
    ({"s": [(1, 2, 3)]}, "line", "series 's' needs [x, y] points"),
])
def test_figures_that_cannot_be_drawn_are_refused_naming_the_problem(tmp_path, series, kind,
                                                                     problem):
    with pytest.raises(ValueError, match=re.escape(problem)):
        write_results(tmp_path / "b.json", bench="b", title="t", x_label="x", y_label="y",
                      series=series, kind=kind)
    assert not (tmp_path / "b.json").exists()


def test_every_json_result_is_drawn_as_a_png_of_its_own_name(tmp_path, capsys):
    results, out = tmp_path / "results", tmp_path / "out"
    write_results(results / "lines.json", bench="b", title="t", x_label="keys",
                  y_label="ev/s", series={"ideal": [(1, 10), (64, 320)],
                                          "ours": [(1, 9.8), (64, 300)]})
    write_results(results / "bars.json", bench="b", title="t", x_label="store", y_label="ms",
                  kind="bar", series={"Mem0": [("embedded", 2086), ("pgvector", 2344)],
                                      "ours": [("embedded", 264), ("pgvector", 431)]})
    assert _plots.main([str(results), str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["bars.png", "lines.png"]
    assert png_size(out / "lines.png") == png_size(out / "bars.png") == (770, 440)
    assert capsys.readouterr().out.count(" -> ") == 2


def test_an_empty_results_folder_says_so_in_one_line(tmp_path, capsys):
    assert _plots.main([str(tmp_path), str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"bench._plots: no JSON results in {tmp_path} (run the benches with --json)\n")


def test_the_benchmarks_page_shows_every_drawn_picture_and_each_has_its_results():
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    shown = set(re.findall(r"!\[[^\]]*\]\(bench/([\w-]+)\.png\)", page))
    drawn = {p.stem for p in FIGURES.glob("*.png")}
    measured = {p.stem for p in FIGURES.glob("*.json")}
    assert drawn, "make bench-plots has drawn nothing into docs/bench"
    assert shown == drawn == measured
