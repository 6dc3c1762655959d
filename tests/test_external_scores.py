"""Scores a user already holds as metrics: -m mtme:NAME (mt-metrics-eval's metric-scores/) and -m scores:FILE."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

import combo
from combo.cli import main
from combo.errors import OptionError
from combo.io import load_testbed
from testutil import input_error, write_text as _w

SYSTEMS = ("sysA", "sysB", "sysC")


def _evalset(root, lp="he-en", ref="refB", testset="wmt23"):
    """A small mt-metrics-eval test set: 4 segments, 3 systems, MQM, and two metrics' scores."""
    d = root / testset
    _w(d / "sources" / f"{lp}.txt", "s1\ns2\ns3\ns4\n")
    _w(d / "references" / f"{lp}.{ref}.txt", "the cat sat\na dog ran\nit rains\nwe are here\n")
    outs = {"sysA": "the cat sat\na dog ran\nit rains\nwe are here\n",
            "sysB": "the cat sits\na dog runs\nit is raining\nwe are there\n",
            "sysC": "cat\ndog\nrain\nhere\n"}
    for s, text in outs.items():
        _w(d / "system-outputs" / lp / f"{s}.txt", text)
    mqm = {"sysA": [0, 0, -1, 0], "sysB": [-1, -2, -1, -5], "sysC": [-10, -8, -9, -7]}
    _w(d / "human-scores" / f"{lp}.mqm.seg.score", "".join(f"{s}\t{v}\n" for s in SYSTEMS for v in mqm[s]))
    good = {"sysA": [0.9, 0.95, 0.8, 0.9], "sysB": [0.7, 0.6, 0.75, 0.5], "sysC": [0.2, 0.3, 0.1, 0.25]}
    ms = d / "metric-scores" / lp
    _w(ms / f"GOOD-{ref}.seg.score", "".join(f"{s}\t{v}\n" for s in SYSTEMS for v in good[s]))
    _w(ms / f"GOOD-{ref}.sys.score", "sysA\t0.5\nsysB\t0.4\nsysC\t0.1\n")
    _w(ms / "QE-src.seg.score", "".join(f"{s}\t{-k}\n" for k, s in enumerate(SYSTEMS) for _ in range(4)))
    return d


def test_mtme_scores_follow_the_test_beds_reference(tmp_path):
    d = _evalset(tmp_path)
    tb = load_testbed(d)  # wmt23 he-en: the standard reference is refB
    assert tb.metadata["references"] == ["refB"]
    table = combo.score_testbed(tb, ["mtme:GOOD", "mtme:QE", "chrf"])
    m = table.metric_index("mtme:GOOD")
    row = {(table.systems[s], i): k for k, (s, i) in enumerate(zip(table.row_system, table.row_segment))}
    assert table.segment[m, row["sysB", 1]] == 0.6 and table.segment[m, row["sysC", 3]] == 0.25
    assert table.system_scores("mtme:GOOD") == {"sysA": 0.5, "sysB": 0.4, "sysC": 0.1}  # from .sys.score
    assert table.system_scores("mtme:QE") == {"sysA": 0.0, "sysB": -1.0, "sysC": -2.0}  # mean of segments
    sig = table.signatures[m]
    assert sig.startswith("mtme|metric:GOOD|") and "read:GOOD-refB.seg.score" in sig and "sha256:" in sig
    assert "read:QE-src.seg.score" in table.signatures[table.metric_index("mtme:QE")]


def test_a_subset_reads_its_own_lines(tmp_path):
    tb = load_testbed(_evalset(tmp_path))
    sub = tb.subset([1, 3])
    table = combo.score_testbed(sub, ["mtme:GOOD"])
    assert table.to_records("segment")[:2] == [{"system": "sysA", "segment": "2", "mtme:GOOD": 0.95},
                                               {"system": "sysA", "segment": "4", "mtme:GOOD": 0.9}]
    assert table.system_scores("mtme:GOOD")["sysB"] == pytest.approx(0.55)  # the subset's mean, not .sys.score


def test_scores_file_tsv_and_json_equal_mtme(tmp_path):
    d = _evalset(tmp_path)
    tb = load_testbed(d)
    lines = (d / "metric-scores" / "he-en" / "GOOD-refB.seg.score").read_text().split("\n")[:-1]
    tsv = "system\tsegment\tscore\n" + "".join(
        f"{line.split()[0]}\t{k % 4 + 1}\t{line.split()[1]}\n" for k, line in enumerate(lines))
    _w(tmp_path / "good.tsv", tsv)
    doc = {}
    for k, line in enumerate(lines):
        doc.setdefault(line.split()[0], {})[str(k % 4 + 1)] = float(line.split()[1])
    _w(tmp_path / "good.json", json.dumps(doc))
    table = combo.score_testbed(tb, ["mtme:GOOD", f"scores:{tmp_path / 'good.tsv'}", f"scores:{tmp_path / 'good.json'}"])
    np.testing.assert_array_equal(table.segment[0], table.segment[1])
    np.testing.assert_array_equal(table.segment[0], table.segment[2])
    low = combo.get_metric(f"scores:file={tmp_path / 'good.tsv'},higher_is_better=no")
    assert low.higher_is_better is False


def test_missing_scores_are_counted_and_left_out(tmp_path):
    d = _evalset(tmp_path)
    p = d / "metric-scores" / "he-en" / "GOOD-refB.seg.score"
    p.write_text(p.read_text().replace("sysB\t0.6\n", "sysB\tNone\n"))
    tb = load_testbed(d)
    table = combo.score_testbed(tb, ["mtme:GOOD", "chrf"])
    assert table.metadata["missing_scores"] == {"mtme:GOOD": 1}
    from combo.evaluate import MetaEvaluator

    ev = MetaEvaluator(tb, table)
    q_one = ev.quality([0], "r_snt")
    q_both = ev.quality([0, 1], "r_snt", "ulc")
    assert q_one.n == q_both.n == 11  # 12 candidates, one without a score
    assert ev.quality([1], "r_snt").n == 12


def test_a_model_refers_to_external_scores_by_name_and_applies_to_another_pair(tmp_path):
    from combo.combine.training import train_model

    src = _evalset(tmp_path / "a", lp="en-de", ref="refA")
    tb = load_testbed(src)
    table = combo.score_testbed(tb, ["mtme:GOOD", "chrf"])
    model = train_model([(tb, table)])
    path = tmp_path / "model.json"
    model.save(path)
    saved = json.loads(path.read_text())
    assert [m["spec"] for m in saved["metrics"]] == ["mtme:GOOD", "chrf"]
    assert "refA" not in json.dumps(saved["metrics"])  # no reference or file in the model's metrics
    other = load_testbed(_evalset(tmp_path / "b", lp="he-en", ref="refB"))
    scored = combo.score_testbed(other, [str(path)])
    assert np.isfinite(scored.segment).all()
    assert "inputs:" in scored.signatures[0]


def test_queen_and_king_refuse_external_scores(tmp_path):
    tb = load_testbed(_evalset(tmp_path))
    with pytest.raises(OptionError, match="reference-against-reference"):
        combo.scoring.reference_scores(tb, combo.score_testbed(tb, ["chrf"]), ["mtme:GOOD"])


@pytest.mark.parametrize("edit, expect", [
    (lambda d, f: None, "no NOPE-refB.seg.score or NOPE-src.seg.score"),
    (lambda d, f: f.write_text("".join(f"sysA\t0.5\n" for _ in range(3))), "3 segment scores, expected 4"),
    (lambda d, f: f.write_text(f.read_text().replace("0.95", "x")), "'x' is not a number"),
    (lambda d, f: f.write_text(f.read_text().replace("0.95", "nan")), "is 'nan'"),
    (lambda d, f: f.write_text("".join(line + "\n" for line in f.read_text().split("\n") if
                                       line and not line.startswith("sysC"))), "'sysC' of the test bed has no"),
])
def test_bad_score_files_one_line_exit_2_nothing_written(tmp_path, edit, expect):
    d = _evalset(tmp_path)
    f = d / "metric-scores" / "he-en" / "GOOD-refB.seg.score"
    edit(d, f)
    name = "NOPE" if "NOPE" in expect else "GOOD"
    out = tmp_path / "out.tsv"
    res = CliRunner().invoke(main, ["score", "--testbed", str(d), "-m", f"mtme:{name}", "--out", str(out), "-q"])
    assert res.exit_code == 2, res.output
    assert expect in res.output and len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output
    assert not out.exists()


@pytest.mark.parametrize("content, expect", [
    ("sysA\t1\t0.5\nsysA\t1\t0.4\n", "second score for system 'sysA', segment '1' (first at line 1)"),
    ("sysZ\t1\t0.5\n", "unknown system 'sysZ'"),
    ("sysA\t9\t0.5\n", "unknown segment id '9'"),
    ("sysA\t1\n", "expected 3 tab-separated fields"),
])
def test_bad_tsv_names_file_and_line(tmp_path, content, expect):
    tb = load_testbed(_evalset(tmp_path))
    f = _w(tmp_path / "s.tsv", content)
    err = input_error(combo.score_testbed, tb, [f"scores:{f}"])
    assert expect in str(err) and err.path == str(f)


def test_mtme_on_another_format_is_refused():
    tb = combo.load_testbed(combo.example_path())
    with pytest.raises(OptionError, match="scores:FILE"):
        combo.score_testbed(tb, ["mtme:XCOMET-XL"])


def test_wmt23_release_scores(data):
    # The shipped XCOMET-XL and chrF scores of WMT23 en-de: system scores from the .sys.score file,
    # segment scores line by line; combo's own chrF equals the released one to 0.11 points.
    tb = load_testbed(data / "wmt23", lp="en-de")
    table = combo.score_testbed(tb, ["mtme:XCOMET-XL", "mtme:chrF", "chrf"])
    assert len(table.systems) == 13 and table.segment.shape == (3, 13 * 557)
    assert abs(table.system_scores("mtme:XCOMET-XL")["GPT4-5shot"] - 0.8865010843806105) < 1e-15
    assert np.max(np.abs(table.segment[1] - 100 * table.segment[2])) < 0.11


def test_evaluate_over_two_language_pairs_gives_wmt23s_official_average(tmp_path):
    # Two pairs of one folder, the same small data in each: WMT23's task set by hand from mt-metrics-eval's
    # definitions (tasks.WMT23, AverageCorrs): system accuracy pooled over the pairs (weight 2 of 8), and per pair
    # system Pearson, segment Pearson without grouping and acc_eq by item (1 of 8 each), correlations as (r + 1) / 2.
    from scipy.stats import pearsonr

    _evalset(tmp_path, "he-en", "refB")
    d = _evalset(tmp_path, "en-de", "refA")
    res = CliRunner().invoke(main, ["evaluate", "--testbed", str(d), "--lp", "en-de,he-en", "-m", "mtme:GOOD",
                                    "--criteria", "seg_pearson,acc_eq_item,wmt23", "--bootstrap", "0", "-q",
                                    "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    good = [0.9, 0.95, 0.8, 0.9, 0.7, 0.6, 0.75, 0.5, 0.2, 0.3, 0.1, 0.25]
    mqm = [0, 0, -1, 0, -1, -2, -1, -5, -10, -8, -9, -7]
    sys_r = pearsonr([0.5, 0.4, 0.1], [-0.25, -2.25, -8.5])[0]  # .sys.score against the mean MQM of each system
    seg_r = pearsonr(good, mqm)[0]
    # acc_eq: segment 3 ties sysA and sysB in MQM (-1, -1) while GOOD gives 0.8 and 0.75; a threshold of 0.05 or
    # more (below the smallest other difference, 0.2) counts all 12 pairs right, so calibrated acc_eq is 1
    official = {r["metric"]: r for r in doc["wmt23_official"]["rows"]}["mtme:GOOD"]
    assert official["tasks"]["sys_accuracy"] == 1.0 and official["tasks"]["en-de seg_acc_eq"] == 1.0
    assert official["tasks"]["he-en sys_pearson"] == pytest.approx(sys_r, abs=1e-12)
    assert official["tasks"]["en-de seg_pearson"] == pytest.approx(seg_r, abs=1e-12)
    expected = (2 * 1.0 + 2 * (sys_r + 1) / 2 + 2 * (seg_r + 1) / 2 + 2 * 1.0) / 8
    assert official["average"] == pytest.approx(expected, abs=1e-12)
    per_pair = {p["testbed"]: {r["metric"]: r for r in p["rows"]} for p in doc["pairs"]}
    assert per_pair["wmt23.he-en"]["mtme:GOOD"]["r_snt"]["value"] == pytest.approx(seg_r, abs=1e-12)  # seg_pearson


def test_a_folder_with_two_pairs_names_the_option_that_chooses_one(tmp_path):
    _evalset(tmp_path, "he-en", "refB")
    d = _evalset(tmp_path, "en-de", "refA")
    res = CliRunner().invoke(main, ["score", "--testbed", str(d)])
    assert res.exit_code == 2 and "--lp en-de" in res.output and "lp=..." not in res.output
    assert CliRunner().invoke(main, ["score", "--testbed", str(d), "--lp", "en-de"]).exit_code == 0  # the fix works


def test_an_unknown_release_metric_names_the_metrics_scored_there(data):
    """The fix names the metrics it asks the user to choose from (it said "one of the 2 metrics" and no name)."""
    import combo

    tb = combo.load_testbed(data / "wmt23", lp="en-de")
    with pytest.raises(combo.InputError) as err:
        combo.score_testbed(tb, ["mtme:Qz"])
    assert "metrics scored there: " in err.value.fix and "BLEU" in err.value.fix
