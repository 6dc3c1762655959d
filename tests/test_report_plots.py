"""combo.report.plots draws the studies' and benchmarks' figures: each kind of figure from a small slice of a
measured result saved in docs/ (the series, bands, panels and labels asked for are in the SVG), and each study
script redraws its figures from its saved JSON with these functions."""

import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
from combo.report import plots  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"


def texts(svg: bytes):
    """The text elements of an SVG drawn with ``image_format="svg"`` (labels kept as text)."""
    return [t.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&")
            for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg.decode())]


def ids(svg: bytes, prefix: str):
    return re.findall(rf'<g id="({prefix}[^"]*)"', svg.decode())


def test_line_panels_draw_each_series_and_band_galley_curves():
    # Galley et al. 2015 on Flickr8k (docs/results/galley-2015.json): BLEU-2 and ΔBLEU-2, Spearman and Kendall
    # against the unit size M, the 95% band over 1,000 assignments.
    res = json.loads((RESULTS / "galley-2015.json").read_text(encoding="utf-8"))["protocols"]["anywhere"]["curves"]
    panels = {}
    for name in ("BLEU", "ΔBLEU"):
        curve = res[f"{name} | all"]
        panels[name] = [plots.Series(corr, [int(m) for m in curve], [curve[m][corr]["mean"] for m in curve],
                                     [curve[m][corr]["low"] for m in curve], [curve[m][corr]["high"] for m in curve])
                        for corr in ("spearman", "kendall")]
    svg = plots.line_panels(panels, title="units", log_x=True, share_y=True, image_format="svg")
    assert len(ids(svg, "series-")) == 4  # 2 panels x 2 series
    assert len(ids(svg, "FillBetweenPolyCollection")) == 4  # every series has its band
    assert len(ids(svg, "axes_")) == 2
    words = texts(svg)
    assert {"BLEU", "ΔBLEU", "units"} <= set(words)
    assert words.count("spearman") == 1 and words.count("kendall") == 1  # one legend: every panel the same
    assert {"1", "2", "5", "10", "20", "50", "100"} <= set(words)  # the sizes measured label the log axis
    png = plots.line_panels(panels)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_line_panels_with_different_series_give_each_panel_its_legend():
    # benchmarks/run_all.py rows (docs/benchmarks/run_all.json): combo solid, its peer dashed in one colour.
    rows = json.loads((ROOT / "docs" / "benchmarks" / "run_all.json").read_text(encoding="utf-8"))["rows"]
    by_dim = {}
    for r in rows[:2] + [r for r in rows if r["dimension"] == "references"]:
        by_dim.setdefault(r["dimension"], []).extend(
            [plots.Series(f"combo {r['benchmark']}", r["sizes"], r["combo_s"], colour_key=r["benchmark"]),
             plots.Series(r["peer"], r["sizes"], r["peer_s"], colour_key=r["benchmark"], dashed=True)])
    svg = plots.line_panels(by_dim, log_x=True, log_y=True, image_format="svg")
    assert len(ids(svg, "series-")) == 6
    assert len(ids(svg, "legend")) == 2
    words = texts(svg)
    for label in ("combo bleu", "combo chrf", "sacreBLEU 2.6 BLEU", "combo queen", "enumeration of triples"):
        assert words.count(label) == 1
    assert "2000" in words and "32" in words


def test_bar_intervals_colour_groups_with_a_legend_joty():
    # DiscoTK on WMT12 (docs/results/joty-2014.json): ours untuned and tuned with intervals, a published value.
    res = json.loads((RESULTS / "joty-2014.json").read_text(encoding="utf-8"))
    labels, vals, lows, highs, groups = [], [], [], [], []
    for kind in ("untuned", "tuned"):
        avg = res["combinations"]["lexical"][kind]["average"]
        labels.append(f"lexical, {kind}")
        vals.append(avg["kendall_discordant"])
        lows.append(avg["interval"]["kendall_discordant"][0])
        highs.append(avg["interval"]["kendall_discordant"][1])
        groups.append(f"ours, {kind}")
    labels.append("DiscoTK-party, untuned")
    vals.append(res["published"]["DiscoTK-party, untuned"])
    lows.append(float("nan"))
    highs.append(float("nan"))
    groups.append("published")
    svg = plots.bar_intervals(labels, vals, lows, highs, groups=groups, sort=False, xlim=(0.2, 0.3),
                              image_format="svg")
    words = texts(svg)
    for name in labels + ["ours, untuned", "ours, tuned", "published"]:
        assert words.count(name) == 1
    assert len(ids(svg, "legend")) == 1
    assert plots.group_colours(groups) == {"ours, untuned": plots.PALETTE[0], "ours, tuned": plots.PALETTE[1],
                                           "published": plots.PALETTE[2]}


def test_scatter_groups_and_labels_its_points_gimenez_marquez():
    # Giménez & Màrquez 2008 on Flickr8k (docs/results/gimenez-marquez-2008.json): KING against R_snt.
    res = json.loads((RESULTS / "gimenez-marquez-2008.json").read_text(encoding="utf-8"))
    ind = res["individual"]["Flickr8k"]
    names = ["bleu", "chrf", "cider", "sp-op", "sp-nist"]
    svg = plots.scatter([ind["r_snt"][m] for m in names], [ind["king"][m] for m in names], point_labels=names,
                        groups=["lexical"] * 3 + ["shallow-syntactic"] * 2, image_format="svg")
    assert len(ids(svg, "PathCollection")) == 2 + 2  # one set of points per group, and its legend marker
    words = texts(svg)
    assert all(words.count(m) == 1 for m in names)
    assert words.count("lexical") == 1 and words.count("shallow-syntactic") == 1


def test_heatmap_writes_cell_text_and_picks_readable_ink_mutt():
    # MUTT's FLICKR study at 5 references (docs/results/boag2016.json, experiment 2): accuracy cells, a share of
    # the optimum with raw text.
    records = json.loads((RESULTS / "boag2016.json").read_text(encoding="utf-8"))["flickr"]["records"]["5"]
    acc = {(r["metric"], r["corruption"]): 100 * r["accuracy"] for r in records}
    metrics, types = ["bleu", "ter"], ["neg_subj", "passive", "shuffled"]
    matrix = [[acc[m, c] for c in types] for m in metrics]
    svg = plots.heatmap(matrix, metrics, types, vmin=0, vmax=100, cmap="viridis", fmt="{:.0f}",
                        cell_text=[[f"{v:.1f}%" for v in row] for row in matrix], image_format="svg")
    words = texts(svg)
    assert all(f"{v:.1f}%" in words for row in matrix for v in row)
    ink = {text: "white" if "fill: #ffffff" in style else "black"
           for style, text in re.findall(r'<text[^>]*style="([^"]*)"[^>]*>([^<]*%)</text>', svg.decode())}
    # viridis is dark at 0 and light at 100: white ink on BLEU's passive (6%), black on shuffled (100%)
    assert ink[f"{acc['bleu', 'passive']:.1f}%"] == "white"
    assert ink[f"{acc['bleu', 'shuffled']:.1f}%"] == "black"


STUDIES = [
    ("experiments/galley_2015.py", "docs/results/galley-2015.json", "--figures",
     ["galley-2015-units-anywhere.png", "galley-2015-units-same-image.png"]),
    ("experiments/gimenez_marquez_2008.py", "docs/results/gimenez-marquez-2008.json", "--figures",
     ["gimenez-marquez-2008-individual-flickr8k.png", "gimenez-marquez-2008-individual-dstc7.png",
      "gimenez-marquez-2008-portability-king.png", "gimenez-marquez-2008-portability-r_snt.png"]),
    ("experiments/joty_2014.py", "docs/results/joty-2014.json", "--figures", ["joty-2014-kendall.png"]),
    ("benchmarks/run_all.py", "docs/benchmarks/run_all.json", "--plots", ["scaling.png"]),
]


def script(path: str, monkeypatch):
    """A study or benchmark script imported as a module, its folder on sys.path as when it runs (both the
    path and the environment it sets at import are restored after the test)."""
    monkeypatch.syspath_prepend(str((ROOT / path).parent))
    monkeypatch.setenv("COMBO_CACHE_DIR", os.environ.get("COMBO_CACHE_DIR", ""))  # run_all.py clears it
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path, saved, folder_option, pngs", STUDIES, ids=[s[0] for s in STUDIES])
def test_a_study_redraws_its_figures_from_its_saved_results(tmp_path, monkeypatch, capsys, path, saved,
                                                            folder_option, pngs):
    argv = ["--render", str(ROOT / saved), folder_option, str(tmp_path)]
    module = script(path, monkeypatch)
    if path.startswith("benchmarks"):
        monkeypatch.setattr(sys, "argv", [path] + argv)  # run_all.py parses sys.argv
        module.main()
    else:
        module.main(argv)
    for name in pngs:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(pngs)


def test_mutt_study_redraws_its_figures_beside_its_saved_results(tmp_path, monkeypatch):
    saved = tmp_path / "boag2016.json"
    saved.write_bytes((RESULTS / "boag2016.json").read_bytes())
    assert script("experiments/mutt_study.py", monkeypatch).main(["--render", str(saved)]) == 0
    for name in ("boag2016-references.png", "boag2016-metrics.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bars_put_the_best_on_top_whichever_way_is_better():
    from combo.report.plots import bar_order

    values = [0.3, float("nan"), 0.9, 0.5]
    assert bar_order(values).tolist() == [2, 3, 0]                          # KING: highest first
    assert bar_order(values, higher_is_better=False).tolist() == [0, 3, 2]  # ORANGE: lowest (best) first


def test_point_labels_of_crowded_systems_do_not_overlap_wmt23(data):
    """WMT23 en-de's 12 systems, XCOMET-XL's system score against MQM (the release's files): the good systems
    crowd the top right, where labels written beside their points overlapped; placed, none overlaps another
    and all stay inside the axes."""
    folder = data / "wmt23"
    if not (folder / "human-scores" / "en-de.mqm.sys.score").is_file():
        pytest.skip("WMT23 en-de not in the shared data")

    def scores(path):
        return {name: float(v) for name, v in (line.split("\t") for line in path.read_text().splitlines())
                if v != "None"}

    human = scores(folder / "human-scores" / "en-de.mqm.sys.score")
    metric = scores(folder / "metric-scores" / "en-de" / "XCOMET-XL-refA.sys.score")
    systems = sorted(s for s in human if s in metric and s != "refA")
    assert len(systems) == 12
    fig = plots._figure(3.4, 3.0)  # the size plots.scatter draws
    ax = fig.add_subplot()
    ax.scatter([metric[s] for s in systems], [human[s] for s in systems], s=14)
    fig.tight_layout()
    notes = [ax.annotate(s, (metric[s], human[s]), fontsize=6, xytext=(3, 2), textcoords="offset points")
             for s in systems]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()

    def overlapping():
        boxes = [n.get_window_extent(renderer) for n in notes]
        return sum(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])

    assert overlapping() > 0  # written beside each point, as before
    plots.place_labels(fig, ax, notes)
    frame = ax.get_window_extent(renderer)
    assert overlapping() == 0
    assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1
               for b in (n.get_window_extent(renderer) for n in notes))
