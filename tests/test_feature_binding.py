"""A tuned model's features bound at scoring time (``--feature NAME=SPEC``, ``load_model(path, features=...)``):
to scores a user holds, to a metric combo computes; an unbound release feature refused in one line; ``combo
apply`` with sources, bindings and the paired comparison of its systems; ``comet-score --to_json`` files."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import ttest_rel

import combo
from combo.cli import main
from combo.metrics.binding import parse_bindings
from combo.metrics.tuned import MetricEntry, TunedModel

HYPS = {"sysA": ["the cat sat on the mat", "a dog ran in the park", "it rained all day long"],
        "sysB": ["cat on mat", "the dog is running in a park", "all day it was raining"]}
REFS = ["the cat sat on the mat", "a dog was running in the park", "it rained the whole day"]
SRCS = ["die Katze sass auf der Matte", "ein Hund lief im Park", "es regnete den ganzen Tag"]
XCOMET = {"sysA": [0.91, 0.72, 0.64], "sysB": [0.55, 0.81, 0.47]}  # scores "held" by the user
LO, HI, W, B = [0.2, 0.0], [1.0, 1.0], [0.7, 0.3], -0.1


@pytest.fixture
def files(tmp_path):
    for name, lines in HYPS.items():
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "ref.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    (tmp_path / "src.txt").write_text("\n".join(SRCS) + "\n", encoding="utf-8")
    with open(tmp_path / "xcomet.tsv", "w", encoding="utf-8") as f:
        for name, values in XCOMET.items():
            for i, v in enumerate(values):
                f.write(f"{name}\t{i + 1}\t{v}\n")
    return tmp_path


@pytest.fixture
def model_path(tmp_path):
    """A model over a release's XCOMET-XL scores and chrF, as `combo train` on WMT23 writes one."""
    entries = [MetricEntry.of("mtme:XCOMET-XL", combo.get_metric("mtme:XCOMET-XL")),
               MetricEntry.of("chrf", combo.get_metric("chrf"))]
    path = tmp_path / "model.json"
    TunedModel(entries, LO, HI, W, B, "direct", "toy-wmt23").save(path)
    return path


def expected_segments(xcomet):
    chrf = combo.get_metric("chrf")
    out = {}
    for name in HYPS:
        c = chrf.segment_scores(HYPS[name], [[r] for r in REFS])
        x = np.asarray(xcomet[name])
        out[name] = W[0] * (x - LO[0]) / (HI[0] - LO[0]) + W[1] * (c - LO[1]) / (HI[1] - LO[1]) + B
    return out


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _apply(files, model_path, *extra):
    return _run("apply", "--model", model_path, "--hyps", files / "sysA.txt", files / "sysB.txt",
                "--refs", files / "ref.txt", *extra)


def test_unbound_release_feature_is_one_line_with_both_fixes(files, model_path):
    res = _apply(files, model_path)
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "mtme:XCOMET-XL" in res.output and "--feature mtme:XCOMET-XL=scores:" in res.output
    assert "comet:model=" in res.output and "features=" in res.output


def test_bound_to_scores_held_gives_the_hand_computed_scores(files, model_path):
    res = _apply(files, model_path, "--feature", f"mtme:XCOMET-XL=scores:{files / 'xcomet.tsv'}",
                 "--level", "segment", "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    want = expected_segments(XCOMET)
    for name in HYPS:
        got = [r["score"] for r in doc["scores"] if r["system"] == name]
        np.testing.assert_allclose(got, want[name], rtol=0, atol=1e-12)
    assert f"|bound:mtme:XCOMET-XL=scores:{files / 'xcomet.tsv'}" in doc["signature"]
    (pair,) = doc["significance"]
    diff = want["sysA"] - want["sysB"]
    assert (pair["system_a"], pair["system_b"], pair["segments"]) == ("sysA", "sysB", 3)
    assert pair["delta"] == pytest.approx(diff.mean(), abs=1e-9)
    assert pair["p_ttest"] == pytest.approx(ttest_rel(want["sysA"], want["sysB"]).pvalue, abs=1e-9)
    assert pair["low"] <= pair["delta"] <= pair["high"] and 0 <= pair["p_bootstrap"] <= 1
    # a bare existing file is read as scores:FILE; the system level is the mean of the segment scores
    res = _apply(files, model_path, "--feature", f"mtme:XCOMET-XL={files / 'xcomet.tsv'}", "-q")
    assert res.exit_code == 0, res.output
    rows = dict(line.split("\t") for line in res.output.strip().split("\n")[1:])
    assert float(rows["sysA"]) == pytest.approx(want["sysA"].mean(), abs=1e-6)


def test_bound_to_a_metric_computed_here(files, model_path):
    metric = combo.load_model(model_path, features={"mtme:XCOMET-XL": "chrf:word_order=2"})
    table = combo.score_testbed(combo.score_files.files_testbed([str(files / f"{n}.txt") for n in HYPS],
                                                                [str(files / "ref.txt")]), [metric])
    chrfpp = combo.get_metric("chrf:word_order=2")
    want = expected_segments({n: chrfpp.segment_scores(HYPS[n], [[r] for r in REFS]) for n in HYPS})
    np.testing.assert_allclose(table.segment[0], np.concatenate([want[n] for n in HYPS]), rtol=0, atol=1e-12)
    assert "|bound:mtme:XCOMET-XL=chrf:word_order=2" in metric.signature


def test_bindings_that_cannot_be_are_refused(files, model_path):
    res = _apply(files, model_path, "--feature", "mtme:COMET=chrf")
    assert res.exit_code == 2 and "not a feature of the model" in res.output and "mtme:XCOMET-XL" in res.output
    res = _apply(files, model_path, "--feature", "mtme:XCOMET-XL=ter")  # lower is better: another direction
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "higher-is-better" in res.output
    res = _apply(files, model_path, "--feature", f"mtme:XCOMET-XL=scores:file={files / 'xcomet.tsv'},"
                                                  "higher_is_better=no")
    assert res.exit_code == 2 and "higher_is_better=yes" in res.output
    res = _apply(files, model_path, "--feature", "mtme:XCOMET-XL")
    assert res.exit_code == 2 and "NAME=SPEC" in res.output
    res = _run("score", "--testbed", "example", "-m", "bleu", "--feature", "mtme:XCOMET-XL=chrf")
    assert res.exit_code == 2 and "no tuned model is scored here" in res.output


def test_binding_names_with_equals_signs():
    assert parse_bindings(["bleu:max_order=2=comet:model=Unbabel/wmt22-comet-da"]) == {
        "bleu:max_order=2": "comet:model=Unbabel/wmt22-comet-da"}
    assert parse_bindings(["mtme:COMET=comet:model=a/b", "mtme:X=scores:x.tsv"]) == {
        "mtme:COMET": "comet:model=a/b", "mtme:X": "scores:x.tsv"}
    with pytest.raises(combo.OptionError, match="twice"):
        parse_bindings(["mtme:X=chrf", "mtme:X=bleu"])


def test_score_and_evaluate_take_the_same_binding(tmp_path, model_path):
    """On the bundled example (not a release), -m MODEL.json scores once its release feature is bound."""
    tb = combo.load_testbed(combo.example_path())
    with open(tmp_path / "x.tsv", "w", encoding="utf-8") as f:
        for system, i, text in tb.rows():
            f.write(f"{system}\t{tb.segments[i].id}\t{len(text) / 100}\n")
    res = _run("score", "--testbed", "example", "-m", model_path, "-q")
    assert res.exit_code == 2 and "mtme:XCOMET-XL" in res.output
    bound = ("--feature", f"mtme:XCOMET-XL=scores:{tmp_path / 'x.tsv'}")
    res = _run("score", "--testbed", "example", "-m", model_path, "-m", "chrf", "-q", *bound)
    assert res.exit_code == 0, res.output
    direct = combo.score_testbed(tb, [combo.load_model(model_path, {"mtme:XCOMET-XL": f"scores:{tmp_path / 'x.tsv'}"})])
    assert [float(line.split("\t")[1]) for line in res.output.strip().split("\n")[1:]] == pytest.approx(
        direct.system[0].tolist(), abs=1e-6)
    res = _run("evaluate", "--testbed", "example", "-m", model_path, "-m", "chrf", "--criteria", "pearson",
               "--combine", "ulc", "--bootstrap", "0", "-q", *bound)
    assert res.exit_code == 0, res.output


def test_comet_score_json_is_read_with_its_texts_checked(files):
    tb = combo.score_files.files_testbed([str(files / f"{n}.txt") for n in HYPS], [str(files / "ref.txt")],
                                         str(files / "src.txt"))
    doc = {f"some/dir/{n}.txt": [{"src": s, "mt": h, "ref": r, "COMET": XCOMET[n][i]}
                                 for i, (s, h, r) in enumerate(zip(SRCS, HYPS[n], REFS))] for n in HYPS}
    (files / "comet.json").write_text(json.dumps(doc), encoding="utf-8")
    table = combo.score_testbed(tb, [f"scores:{files / 'comet.json'}"])
    np.testing.assert_array_equal(table.segment[0], np.concatenate([XCOMET[n] for n in HYPS]))
    doc["some/dir/sysB.txt"][1]["mt"] = "another text"
    (files / "comet.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(combo.InputError, match="its mt is not the candidate of system 'sysB'"):
        combo.score_testbed(tb, [f"scores:{files / 'comet.json'}"])


def test_a_release_feature_is_computed_by_the_checkpoint_the_model_names(files, tmp_path):
    """Off a release, a feature with a ``native`` entry is computed by that metric (here chrF++ stands in for a
    checkpoint); one without is refused; a binding still wins."""
    entries = [MetricEntry.of("mtme:XCOMET-XL", combo.get_metric("mtme:XCOMET-XL")),
               MetricEntry.of("chrf", combo.get_metric("chrf"))]
    model = TunedModel(entries, LO, HI, W, B, "direct", "toy-native",
                       native={"mtme:XCOMET-XL": {"metric": "chrf:word_order=2", "evidence": "a stand-in"}})
    path = tmp_path / "native.json"
    model.save(path)
    assert json.loads(path.read_text())["native"]["mtme:XCOMET-XL"]["metric"] == "chrf:word_order=2"
    res = _apply(files, path, "--level", "segment", "--format", "json")
    assert res.exit_code == 0, res.output
    chrfpp = combo.get_metric("chrf:word_order=2")
    want = expected_segments({n: chrfpp.segment_scores(HYPS[n], [[r] for r in REFS]) for n in HYPS})
    doc = json.loads(res.output)
    np.testing.assert_allclose([r["score"] for r in doc["scores"]], np.concatenate([want[n] for n in HYPS]),
                               rtol=0, atol=1e-12)
    assert "|native:mtme:XCOMET-XL=chrf:word_order=2|inputs:" in doc["signature"]
    res = _apply(files, path, "--feature", f"mtme:XCOMET-XL=scores:{files / 'xcomet.tsv'}", "--format", "json")
    assert "|bound:mtme:XCOMET-XL=scores:" in json.loads(res.output)["signature"]
    bad = json.loads(path.read_text())
    bad["native"] = {"mtme:COMET": {"metric": "chrf", "evidence": "x"}}
    path.write_text(json.dumps(bad))
    res = _apply(files, path)
    assert res.exit_code == 2 and "no feature of the model" in res.output


def test_train_records_the_public_checkpoint_of_each_release_feature():
    from combo.metrics.releases import NOT_NATIVE, native_inputs

    got = native_inputs(["mtme:XCOMET-XL", "mtme:MetricX-23", "chrf", "mtme:COMET"], ["wmt23"])
    assert {k: v["metric"] for k, v in got.items()} == {"mtme:XCOMET-XL": "comet:model=Unbabel/XCOMET-XL",
                                                       "mtme:COMET": "comet:model=Unbabel/wmt22-comet-da"}
    assert all(v["evidence"] for v in got.values()) and "MetricX-23" in NOT_NATIVE["wmt23"]
    assert native_inputs(["mtme:COMET"], ["wmt22"]) == {} and native_inputs(["mtme:COMET"], []) == {}


def test_apply_reads_a_byte_order_mark_as_the_release_reader_does(files, tmp_path):
    """WMT23's AIRC.txt starts with a byte-order mark: combo apply drops it as the mt-metrics-eval reader does."""
    (tmp_path / "marked.txt").write_bytes(b"\xef\xbb\xbf" + (files / "sysA.txt").read_bytes())
    model = tmp_path / "chrf.json"
    TunedModel([MetricEntry.of("chrf", combo.get_metric("chrf"))], [0.0], [1.0], [1.0], 0.0, "direct",
               "chrf").save(model)
    out = [_run("apply", "--model", model, "--hyps", f, "--refs", files / "ref.txt", "-q").output.split("\t")[-1]
           for f in (files / "sysA.txt", tmp_path / "marked.txt")]
    assert out[0] == out[1] and float(out[0]) > 0
