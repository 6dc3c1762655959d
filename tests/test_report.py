"""combo report: the numbers equal combo evaluate's, the parts that do not apply say so, and the page works in
headless Chromium (no console messages, every figure drawn, every table sorts). Screenshots are kept in
test-artifacts/report/."""

import html
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import combo
from combo import example_path
from combo.cli import main
from combo.evaluate import MetaEvaluator, evaluate_entries, significance_clusters
from combo.report import ReportInputs, build_report, metric_correlations, worst_segments
from combo.scoring import score_testbed, score_with_references

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chromium import check_page, chromium  # noqa: E402

pytest.importorskip("matplotlib")
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "report"
needs_chromium = pytest.mark.skipif(chromium() is None, reason="chromium is not installed (apt-get install chromium)")
WMT_METRICS = ("bleu", "chrf", "ter", "rouge-l", "wer")
#: Bootstrap resamples of the reports here: each page's numbers are compared with the same resamples drawn by
#: combo evaluate (or are checked for what they show), so their count only sets how long the intervals take.
RESAMPLES = "50"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _browser(page: Path, name: str, figures_at_least: int):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    check = check_page(page, ARTIFACTS / f"{name}.png")
    assert check.errors == [] and check.console == [], (check.errors, check.console)
    assert len(check.figures) >= figures_at_least
    assert check.blank_figures == []
    assert check.unsorted == []
    assert any(t["name"] == "meta-evaluation" for t in check.tables) or "meta-evaluation" not in page.read_text()
    return check


class _Cells(HTMLParser):
    """data-value of each cell of the meta-evaluation table, by (row label, column index)."""

    def __init__(self):
        super().__init__()
        self.rows, self.inside, self.row, self.cell = [], False, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("data-table") == "meta-evaluation":
            self.inside = True
        elif self.inside and tag == "tr":
            self.row = []
        elif self.inside and tag == "td" and self.row is not None:
            self.row.append([a.get("data-value"), ""])

    def handle_data(self, data):
        if self.row and self.inside:
            self.row[-1][1] += data

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False
        elif tag == "tr" and self.inside and self.row:
            self.rows.append(self.row)
            self.row = None


def _embedded(page_text: str) -> dict:
    found = re.search(r'<script type="application/json" id="combo-evaluation">(.*?)</script>', page_text, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def _assert_same_numbers(page_text: str, evaluate_json: dict):
    doc = _embedded(page_text)
    assert doc["criteria"] == evaluate_json["criteria"]
    assert doc["rows"] == evaluate_json["rows"]  # every value, interval bound, n and note, exactly
    parser = _Cells()
    parser.feed(page_text)
    assert len(parser.rows) == len(evaluate_json["rows"])
    for cells, row in zip(parser.rows, evaluate_json["rows"]):
        assert cells[0][1] == row["metric"]
        for (value, _), crit in zip(cells[2:], evaluate_json["criteria"]):
            want = row[crit]
            if want is None or want["value"] is None:
                assert value in ("", None)
            else:
                assert float(value) == want["value"]


# -- the example test bed -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def example_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "example.html"
    res = run("report", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-m", "ter", "-m", "rouge-l",
              "--combine", "ulc,queen", "--search", "king", "--bootstrap", RESAMPLES, "-q", "--out", out)
    assert res.exit_code == 0, res.output
    return out


def test_example_report_has_every_part(example_page):
    text = example_page.read_text(encoding="utf-8")
    doc = _embedded(text)
    assert doc["criteria"] == ["king", "orange", "r_snt", "wmt_kendall", "pearson", "spearman", "acc_eq"]
    assert [r["metric"] for r in doc["rows"]] == ["bleu", "chrf", "ter", "rouge-l", "ULC(all)", "QUEEN(all)"]
    for anchor in ("meta", "bars", "correlation", "scatter", "search", "tuned", "mutt", "worst"):
        assert f'<section id="{anchor}">' in text
    for sig in doc["signatures"].values():
        assert html.escape(sig) in text
    assert f"combo version</th><td>{combo.__version__}" in text and "seed</th><td>0" in text
    # self-contained: nothing is fetched from elsewhere
    assert not re.search(r'(src|href)="(?!data:|#)', text)
    assert "http://" not in text and "https://" not in text
    # parts that do not apply say why in one sentence
    assert "No tuned metric" in text and "MUTT unit tests were not run" in text


def test_example_report_equals_evaluate_json(example_page):
    res = run("evaluate", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-m", "ter", "-m", "rouge-l",
              "--criteria", "king,orange,r_snt,wmt_kendall,pearson,spearman,acc_eq", "--combine", "ulc,queen",
              "--bootstrap", RESAMPLES, "--format", "json", "-q")
    assert res.exit_code == 0, res.output
    _assert_same_numbers(example_page.read_text(encoding="utf-8"), json.loads(res.output))


@needs_chromium
def test_example_report_in_chromium(example_page):
    # 7 criteria bars, correlation heatmap, 4 + 4 scatter plots, search trace
    check = _browser(example_page, "example", figures_at_least=17)
    names = {f["name"] for f in check.figures}
    assert {"correlation", "search-trace", "bars-king", "segment-bleu", "system-rouge-l"} <= names


# -- WMT12 de-en, real judgments -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wmt12_slice(data, tmp_path_factory):
    """The first 150 segments of WMT12 de-en (16 systems, relative rankings) as a JSONL test bed."""
    tb = combo.load_testbed(data / "wmt12", lp="de-en").subset(range(150))
    path = tmp_path_factory.mktemp("wmt12") / "wmt12-de-en-150.jsonl"
    combo.write_jsonl(tb, path)
    return path


@pytest.fixture(scope="module")
def wmt12_page(wmt12_slice):
    model = wmt12_slice.with_name("tuned.json")
    res = run("train", "--testbed", wmt12_slice, "-m", "bleu", "-m", "chrf", "-m", "ter", "--folds", "0",
              "--out", model, "-q")
    assert res.exit_code == 0, res.output
    out = wmt12_slice.with_name("wmt12.html")
    metrics = [x for m in WMT_METRICS for x in ("-m", m)] + ["-m", model]
    res = run("report", "--testbed", wmt12_slice, *metrics, "--search", "wmt_kendall", "--bootstrap", RESAMPLES, "-q",
              "--out", out)
    assert res.exit_code == 0, res.output
    return out, metrics


def test_wmt12_report_equals_evaluate_json(wmt12_slice, wmt12_page):
    out, metrics = wmt12_page
    text = out.read_text(encoding="utf-8")
    criteria = _embedded(text)["criteria"]
    assert criteria == ["r_snt", "wmt_kendall", "pearson", "spearman", "acc_eq"]  # one reference: no KING/ORANGE
    assert "king is not shown: needs at least 4 references" in text
    res = run("evaluate", "--testbed", wmt12_slice, *metrics, "--criteria", ",".join(criteria), "--bootstrap",
              RESAMPLES, "--format", "json", "-q")
    assert res.exit_code == 0, res.output
    _assert_same_numbers(text, json.loads(res.output))
    # the tuned model's weights, with signs, and the note that its figures here are in-sample
    assert '<section id="tuned"><h2>Tuned model</h2><h3>' in text and "in-sample" in text


@needs_chromium
def test_wmt12_report_in_chromium(wmt12_page):
    out, _ = wmt12_page
    # 5 criteria bars, heatmap, 6 + 6 scatter plots, search trace, tuned weights
    check = _browser(out, "wmt12-de-en", figures_at_least=20)
    assert out.stat().st_size < 5_000_000
    assert check.load_ms < 3000


# -- degenerate test beds: the parts that apply, and a sentence for the others -----------------------------

def _example(keep_systems=None, judged=True):
    tb = combo.load_testbed(example_path())
    if keep_systems is not None:
        tb.candidates = {s: c for s, c in tb.candidates.items() if s in keep_systems}
        tb.scores = [s for s in tb.scores if s.system in keep_systems]
        tb.preferences = [p for p in tb.preferences if p.better in keep_systems and p.worse in keep_systems]
        tb.system_scores = {a: {s: v for s, v in t.items() if s in keep_systems} for a, t in tb.system_scores.items()}
    if not judged:
        tb.scores, tb.preferences, tb.system_scores = [], [], {}
    return tb


def _evaluator(tb, metrics=("bleu", "chrf", "ter")):
    table, refs = score_with_references(tb, list(metrics))
    return MetaEvaluator(tb, table, refs)


@pytest.fixture(scope="module")
def edge_pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("edge")
    pages = {}
    one = _evaluator(_example(keep_systems=["strong"]))
    pages["one-system"] = build_report(one, ReportInputs(n_resamples=int(RESAMPLES)))
    unjudged = _evaluator(_example(judged=False))
    pages["no-judgments"] = build_report(unjudged, ReportInputs(n_resamples=int(RESAMPLES)))
    constant = _evaluator(_example())
    constant.table.segment[1] = 0.5  # a user-supplied metric that scores every candidate alike
    constant.table.system[1] = 0.5
    constant.refs = None  # KING would need the constant metric's single-reference scores too
    mutt = {"bleu": {"negation": 0.61, "antonym": 0.55, "passive": 0.2}, "chrf": {"negation": 0.7, "antonym": 0.4}}
    pages["constant-metric"] = build_report(constant, ReportInputs(
        n_resamples=int(RESAMPLES), mutt=mutt, tuned={"demo.json": ({"bleu": 0.8, "ter": -0.3}, 0.1)}))
    paths = {}
    for name, text in pages.items():
        paths[name] = folder / f"{name}.html"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def test_one_system_report_says_what_does_not_apply(edge_pages):
    text = edge_pages["one-system"].read_text(encoding="utf-8")
    assert "pearson is not shown: a system-level correlation needs at least 3 systems; the test bed has 1" in text
    assert "One system only (strong): a system-level plot needs at least two." in text
    assert _embedded(text)["criteria"] == ["king", "orange", "r_snt"]  # no pairs between systems


def test_unjudged_report_says_what_does_not_apply(edge_pages):
    text = edge_pages["no-judgments"].read_text(encoding="utf-8")
    assert "r_snt is not shown: needs human judgments; the test bed has none" in text
    assert "No segment-level human judgments: nothing to plot." in text
    assert "a metric&#x27;s worst-scored segments need a human score" in text
    assert 'data-figure="correlation"' in text  # metric-to-metric correlation needs no judgments


def test_constant_metric_report_marks_it_undefined(edge_pages):
    text = edge_pages["constant-metric"].read_text(encoding="utf-8")
    assert "Undefined (n/a) for chrf: the metric gives every candidate the same score." in text
    assert "undefined (constant)" in text
    assert "The metric gives every judged candidate the same score: it ranks nothing." in text
    assert 'data-figure="mutt"' in text and 'data-figure="tuned-demo.json"' in text


@needs_chromium
@pytest.mark.parametrize("name", ["one-system", "no-judgments", "constant-metric"])
def test_degenerate_reports_in_chromium(edge_pages, name):
    _browser(edge_pages[name], name, figures_at_least=2)


# -- the parts' computations ---------------------------------------------------------------------------

def test_metric_correlations_are_pearson_with_error_rates_negated():
    tb = combo.load_testbed(example_path())
    table = score_testbed(tb, ["bleu", "ter", "chrf"])
    corr = metric_correlations(table)
    oriented = table.segment * np.array([1, -1, 1])[:, None]
    assert np.allclose(corr, np.corrcoef(oriented), atol=1e-12)
    assert corr[0, 1] > 0  # BLEU and TER agree once TER is negated


def test_worst_segments_are_the_largest_rank_disagreements():
    ev = _evaluator(_example())
    worst = worst_segments(ev, 0, k=3)
    assert len(worst) == 3
    gaps = [abs(w["disagreement"]) for w in worst]
    assert gaps == sorted(gaps, reverse=True) and gaps[0] > 0.5
    first = worst[0]
    seg = next(s for s in ev.testbed.segments if s.id == first["segment"])
    assert first["references"] == seg.references
    assert first["candidate"] in ev.testbed.candidates[first["system"]].values()
    # over-rated means the metric ranks it above the humans
    assert (first["metric_percentile"] > first["human_percentile"]) == (first["disagreement"] > 0)


def test_identical_metrics_share_a_significance_cluster():
    ev = _evaluator(_example(), metrics=("bleu", "bleu:smooth=exp", "wer"))
    names, qualities = evaluate_entries(ev, ["r_snt"], (), n_resamples=0)
    clusters, reason = significance_clusters(ev, qualities["r_snt"], n_resamples=200)
    assert reason == "" and clusters[0] == clusters[1] == 1


def test_search_and_evaluate_write_the_report_too(tmp_path):
    res = run("search", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-m", "ter", "--criterion", "king",
              "--report", tmp_path / "search.html", "-q")
    assert res.exit_code == 0, res.output
    assert 'data-figure="search-trace"' in (tmp_path / "search.html").read_text(encoding="utf-8")
    res = run("evaluate", "--testbed", "example", "-m", "bleu", "-m", "chrf", "--criteria", "r_snt,wmt_kendall",
              "--bootstrap", RESAMPLES, "--format", "json", "--out", tmp_path / "eval.json", "--report",
              tmp_path / "eval.html", "-q")
    assert res.exit_code == 0, res.output
    _assert_same_numbers((tmp_path / "eval.html").read_text(encoding="utf-8"),
                         json.loads((tmp_path / "eval.json").read_text(encoding="utf-8")))


def test_without_matplotlib_only_the_report_is_unavailable(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    out = tmp_path / "r.html"
    res = run("report", "--testbed", "example", "-m", "bleu", "--out", out)
    assert res.exit_code == 2
    assert res.output.strip().count("\n") == 0 and "pip install 'combo-eval[report]'" in res.output
    assert not out.exists()
    assert run("score", "--testbed", "example", "-m", "bleu", "-q").exit_code == 0


def test_mutt_heatmap_from_the_released_trials(tmp_path, data):
    # --mutt runs combo.metric_unit_tests on the released corruption sets (FLICKR trials with their captions):
    # the report's accuracies equal run_unit_tests on the same trials.
    from combo.io.mutt import read_mutt, select_trials
    from combo.metric_unit_tests import run_unit_tests

    out = tmp_path / "r.html"
    res = run("report", "--testbed", "example", "-m", "bleu", "--mutt", data / "mutt" / "corruptions",
              "--mutt-flickr8k", data / "flickr8k", "--bootstrap", "0", "--out", out)
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert 'data-figure="mutt"' in text and "MUTT unit tests on" in text
    sets = read_mutt(data / "mutt" / "corruptions", flickr8k=data / "flickr8k")
    trials, _ = select_trials([t for v in sets.values() for t in v], "flickr")
    direct = run_unit_tests(trials, ["bleu"], seed=0).accuracy["bleu"]
    assert _embedded(text)["mutt"]["bleu"] == pytest.approx(direct)
    assert set(direct) == {"neg_subj", "neg_verb", "sem_opps", "passive", "near_syms", "det_sub", "shuffled"}

