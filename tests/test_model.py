"""Model files and tuned metrics: hand-worked scores, JSON round trip, every bad file, use as a metric, combo apply."""

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.special import expit

import combo
from combo import InputError, OptionError, get_metric, load_model, load_testbed, score_testbed
from combo import example_path
from combo.cli import main
from combo.combine.training import train_model
from combo.combine.ulc import minmax_normalise
from combo.metrics.tuned import FORMAT_VERSION, MetricEntry, TunedMetric, TunedModel
from combo.scoring import resolve_metric

SPECS = ["bleu", "chrf", "ter", "rouge-l"]


def _hand_model(output: str = "sigmoid") -> TunedModel:
    """chrF (range 0..1) and TER (range 0..2, flipped) with weights 2 and 1, bias -1 (DiscoTK's sigmoid output)."""
    entries = [MetricEntry.of(s, get_metric(s)) for s in ("chrf", "ter")]
    return TunedModel(entries, lo=[0.0, 0.0], hi=[1.0, 2.0], weights=[2.0, 1.0], bias=-1.0, method="pairwise-lr",
                      name="hand", output=output)


@pytest.fixture(scope="module")
def example():
    tb = load_testbed(example_path())
    return tb, score_testbed(tb, SPECS)


@pytest.fixture(scope="module")
def model_file(example, tmp_path_factory):
    tb, table = example
    model = train_model([(tb, table)])
    path = tmp_path_factory.mktemp("model") / "example.json"
    model.save(path)
    return path, model


def test_hand_worked_segment_and_system_scores():
    metric = TunedMetric(_hand_model(), [get_metric("chrf"), get_metric("ter")])
    hyps = ["a b", "", "a b", ""]
    refs = [["a b"], ["a b"], [""], [""]]
    # chrF, TER per segment: (1, 0), (0, 1), (0, 1), (0, 0)  (empty texts are valid, with defined scores)
    # features [chrF, 1 - TER / 2]: (1, 1), (0, .5), (0, .5), (0, 1)
    # raw = 2 chrF + 1 (1 - TER/2) - 1: 2, -.5, -.5, 0
    raw = np.array([2.0, -0.5, -0.5, 0.0])
    assert np.allclose(metric.raw_segment_scores(hyps, refs), raw)
    assert np.allclose(metric.segment_scores(hyps, refs), expit(raw))  # 0.8808, 0.3775, 0.3775, 0.5
    assert metric.corpus_score(hyps, refs) == pytest.approx(raw.mean())  # mean of raw, no sigmoid: 0.25
    # outside the stored range: extrapolated, not clipped (TER 2/1 = 2 -> feature 1 - 2/2 = 0; TER 3 -> -0.5)
    assert minmax_normalise(np.array([[0.5], [3.0]]), [0, 0], [1, 2], [True, False]).ravel().tolist() == [0.5, -0.5]
    # several references, their number varying per segment
    assert metric.segment_scores(["a b", "a c"], [["x"], ["a b", "a c", "z"]])[1] == pytest.approx(expit(2.0))
    assert metric.higher_is_better and metric.signature.startswith("tuned|model:hand|method:pairwise-lr|metrics:2")
    # the linear output (the default of new models): segment scores are raw, the system score their mean
    linear = TunedMetric(_hand_model("linear"), [get_metric("chrf"), get_metric("ter")])
    assert np.allclose(linear.segment_scores(hyps, refs), raw)
    assert linear.corpus_score(hyps, refs) == pytest.approx(linear.segment_scores(hyps, refs).mean())
    assert linear.signature != metric.signature  # the output is part of what the model's digest covers


def test_round_trip_gives_identical_scores(example, model_file):
    tb, table = example
    path, model = model_file
    loaded = load_model(path)
    in_memory = TunedMetric(model, [get_metric(s) for s in SPECS])
    a = score_testbed(tb, [loaded])
    b = score_testbed(tb, [in_memory])
    assert np.array_equal(a.segment, b.segment) and np.array_equal(a.system, b.system)
    assert loaded.signature == in_memory.signature
    assert loaded.model.to_json() == path.read_text()  # save(load(f)) == f
    assert np.array_equal(loaded.model.weights, model.weights) and np.array_equal(loaded.model.lo, model.lo)


def test_tuned_metric_through_score_testbed(example, model_file, tmp_path):
    tb, table = example
    path, model = model_file
    t = score_testbed(tb, [str(path), "chrf"], cache_dir=tmp_path / "cache")
    assert t.metrics == [str(path), "chrf"] and t.higher_is_better == [True, True]
    # by hand from the component metrics: raw = w . minmax(x) + b per row, the segment score itself (linear
    # output), mean raw per system
    raw = model.raw_scores(table.segment)
    assert model.output == "linear" and np.allclose(t.segment[0], raw, rtol=0, atol=1e-12)
    for s, name in enumerate(t.systems):
        assert t.system[0, s] == pytest.approx(raw[table.row_system == s].mean(), abs=1e-12)
    again = score_testbed(tb, [str(path)], cache_dir=tmp_path / "cache")  # from the cache
    assert np.array_equal(again.segment[0], t.segment[0])
    assert len(list((tmp_path / "cache").glob("tuned-*.npz"))) == 1


def test_model_files_are_resolved_above_the_registry(model_file, tmp_path):
    path, _ = model_file
    assert isinstance(resolve_metric(str(path)), TunedMetric)
    assert isinstance(resolve_metric("bleu:max_order=2"), combo.Metric)
    with pytest.raises(InputError, match="model file not found"):
        resolve_metric(str(tmp_path / "missing.json"))
    from combo.metrics.registry import get_metric as registered

    with pytest.raises(OptionError, match=r"combo\.load_model"):  # the registry says where model files are read
        registered(str(path))
    assert isinstance(get_metric(str(path)), TunedMetric)  # combo.get_metric reads them, as -m does


# -- bad model files -------------------------------------------------------------------------------

def _edit(doc, case):
    if case == "not a model":
        return {"weights": [1.0]}
    if case == "format_version 2":
        doc["format_version"] = FORMAT_VERSION + 1
    elif case == "format_version string":
        doc["format_version"] = "1"
    elif case == "unknown top field":
        doc["comment"] = "hi"
    elif case == "unknown metric field":
        doc["metrics"][0]["weight"] = 1.0
    elif case == "unknown normalisation field":
        doc["normalisation"]["mean"] = [0.0] * len(doc["weights"])
    elif case == "missing field":
        del doc["bias"]
    elif case == "metric not installed":
        doc["metrics"][1]["name"] = "nosuchmetric"
    elif case == "unknown option":
        doc["metrics"][0]["options"]["colour"] = "red"
    elif case == "signature mismatch":
        doc["metrics"][0]["signature"] = re.sub(r"impl:\d+", "impl:0", doc["metrics"][0]["signature"])
    elif case == "option changed":
        doc["metrics"][0]["options"]["max_order"] = 3  # signature still says n:4
    elif case == "direction changed":
        doc["metrics"][2]["higher_is_better"] = True  # TER
    elif case == "weights length":
        doc["weights"] = doc["weights"][:-1]
    elif case == "weights not numbers":
        doc["weights"][0] = "1.0"
    elif case == "bool as number":
        doc["bias"] = True
    elif case == "bias string":
        doc["bias"] = "0"
    elif case == "hi below lo":
        doc["normalisation"]["hi"][0] = doc["normalisation"]["lo"][0] - 1
    elif case == "unknown method":
        doc["method"] = "random-forest"
    elif case == "training not object":
        doc["training"] = []
    elif case == "empty metrics":
        doc["metrics"] = []
    return doc


BAD = {
    "truncated": "not valid JSON, truncated",
    "not json": "not valid JSON",
    "empty file": "file is empty|not valid JSON",
    "binary": "not UTF-8",
    "infinity": "non-finite",
    "not a model": "not a combo model file",
    "format_version 2": "incompatible",
    "format_version string": "format_version must be an integer",
    "unknown top field": "unknown field",
    "unknown metric field": "unknown field",
    "unknown normalisation field": "unknown field",
    "missing field": "lacks field",
    "metric not installed": "cannot be built in this installation",
    "unknown option": "cannot be built in this installation",
    "signature mismatch": "has changed since the model was trained",
    "option changed": "has changed since the model was trained",
    "direction changed": "higher_is_better",
    "weights length": "values for 4 metrics",
    "weights not numbers": "finite numbers",
    "bool as number": "bias must be a finite number",
    "bias string": "bias must be a finite number",
    "hi below lo": "hi < lo",
    "unknown method": "unknown method",
    "training not object": "training must be an object",
    "empty metrics": "non-empty",
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_model_files_give_one_clear_error(model_file, tmp_path, case):
    path, _ = model_file
    text = path.read_text()
    bad = tmp_path / "bad.json"
    if case == "truncated":
        bad.write_text(text[: len(text) // 2])
    elif case == "not json":
        bad.write_text("weights = [1, 2]\n")
    elif case == "empty file":
        bad.write_text("")
    elif case == "binary":
        bad.write_bytes(b"\x80\x03}q\x00.")  # a pickle: never unpickled
    elif case == "infinity":
        doc = json.loads(text)
        bad.write_text(json.dumps(doc).replace('"bias": 0.0', '"bias": Infinity'))
    else:
        bad.write_text(json.dumps(_edit(json.loads(text), case)))
    with pytest.raises(InputError, match=BAD[case]) as err:
        load_model(bad)
    assert str(bad) in str(err.value)


def test_missing_model_file(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        load_model(tmp_path / "none.json")


def test_signature_ignores_only_the_combo_release(model_file, tmp_path):
    """A model written by another combo release loads when every metric's options and implementation match."""
    path, _ = model_file
    doc = json.loads(path.read_text())
    doc["combo_version"] = "0.0.9"
    for m in doc["metrics"]:
        m["signature"] = m["signature"].replace("version:", "version:0.0.9-was-")
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    loaded, original = load_model(other), load_model(path)
    hyps, refs = ["the cat sat on the mat", "a dog"], [["the cat is on the mat"], ["the dog barks"]]
    assert loaded.segment_scores(hyps, refs).tolist() == original.segment_scores(hyps, refs).tolist()
    assert loaded.corpus_score(hyps, refs) == original.corpus_score(hyps, refs)
    doc["metrics"][0]["signature"] += "|other"  # anything else than the release: refused
    other.write_text(json.dumps(doc))
    with pytest.raises(InputError):
        load_model(other)


# -- the command line -------------------------------------------------------------------------------

def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _files(tmp_path):
    (tmp_path / "h1.txt").write_text("the cat sat on the mat\na dog ran\n\n")
    (tmp_path / "h2.txt").write_text("cat\nthe dog ran fast\nsomething\n")
    (tmp_path / "r1.txt").write_text("the cat sat on the mat\nthe dog ran fast\nsomething\n")
    (tmp_path / "r2.txt").write_text("a cat was on the mat\na dog ran\n\n")
    return [tmp_path / n for n in ("h1.txt", "h2.txt", "r1.txt", "r2.txt")]


def test_cli_apply_system_and_segment(model_file, tmp_path):
    path, _ = model_file
    h1, h2, r1, r2 = _files(tmp_path)
    metric = load_model(path)
    refs = [[a, b] for a, b in zip(r1.read_text().split("\n")[:3], r2.read_text().split("\n")[:3])]
    res = _run("apply", "--model", path, "--hyps", h1, h2, "--refs", r1, r2)
    assert res.exit_code == 0, res.output
    lines = [line for line in res.output.strip().split("\n") if not line.startswith("# ")]  # stderr: comparisons
    assert lines[0] == "system\tscore" and len(lines) == 3
    for line, h in zip(lines[1:], (h1, h2)):
        name, value = line.split("\t")
        assert name == h.stem  # as test beds name systems: the file name without .txt
        assert float(value) == pytest.approx(metric.corpus_score(h.read_text().split("\n")[:3], refs), abs=1e-6)
    same = _run("apply", "--model", path, "--hyps", h1, "--hyps", h2, "--refs", r1, "--refs", r2)
    assert same.output == res.output
    res = _run("apply", "--model", path, "--hyps", h1, "--refs", r1, r2, "--level", "segment", "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["signature"].startswith(metric.signature) and [r["segment"] for r in doc["scores"]] == [1, 2, 3]
    assert np.allclose([r["score"] for r in doc["scores"]],
                       metric.segment_scores(h1.read_text().split("\n")[:3], refs))


def test_cli_apply_bad_input_exit_2(model_file, tmp_path):
    path, _ = model_file
    h1, h2, r1, r2 = _files(tmp_path)
    short = tmp_path / "short.txt"
    short.write_text("one line\n")
    res = _run("apply", "--model", path, "--hyps", short, "--refs", r1)
    assert res.exit_code == 2 and "has 1 line but the references have 3" in res.output
    res = _run("apply", "--model", path, "--hyps", h1, "--refs", r1, short)
    assert res.exit_code == 2 and "short.txt" in res.output
    broken = tmp_path / "broken.json"
    broken.write_text(path.read_text()[:100])
    res = _run("apply", "--model", broken, "--hyps", h1, "--refs", r1)
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "truncated" in res.output


def test_model_in_score_evaluate_and_search(model_file):
    path, _ = model_file
    res = _run("score", "--testbed", "example", "-m", path, "-m", "chrf", "-q")
    assert res.exit_code == 0, res.output
    assert res.output.split("\n")[0] == f"system\t{path}\tchrf"
    res = _run("evaluate", "--testbed", "example", "-m", path, "-m", "chrf", "--criteria", "kendall",
               "--bootstrap", "0", "--format", "json")
    assert res.exit_code == 0, res.output
    assert [r["metric"] for r in json.loads(res.output)["rows"]][:2] == [str(path), "chrf"]
    res = _run("search", "--testbed", "example", "-m", path, "-m", "chrf", "-m", "bleu", "--criterion", "kendall",
               "--format", "json")  # kendall: the old name of wmt_kendall, still accepted
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert str(path) in {step["metric"] for step in doc["trace"]}
    assert doc["criterion"] == "wmt_kendall"


def test_real_wmt12_subset_train_then_score(data, tmp_path):
    """WMT12 de-en, 150 judged segments: the saved model scores the test bed as the training arrays predict."""
    from combo.io import read_wmt12

    tb = read_wmt12(data / "wmt12", "de-en")
    judged = sorted({p.segment for p in tb.preferences})[:150]
    tb = tb.subset(judged)
    specs = ["chrf", "bleu", "ter"]
    table = score_testbed(tb, specs)
    model = train_model([(tb, table)])
    assert model.training["testbeds"][0]["pairs"] == sum(not p.tie for p in tb.preferences)
    model.save(tmp_path / "de-en.json")
    t = score_testbed(tb, [str(tmp_path / "de-en.json")])
    assert np.allclose(t.segment[0], model.raw_scores(table.segment), rtol=0, atol=1e-12)  # linear output


def test_a_model_whose_extra_is_missing_names_the_install_command(tmp_path, monkeypatch):
    # Without the syntax extra the shallow parser's version reads "absent", which differs from the recorded one;
    # the fix is installing the extra, not training again.
    pytest.importorskip("textblob")  # training the model needs the syntax extra
    from combo.errors import ResourceMissing
    from combo.metrics import shallow
    from combo.metrics.base import analyser_versions

    tb = load_testbed(example_path())
    specs = ["sp-op", "chrf"]
    path = tmp_path / "m.json"
    train_model([(tb, score_testbed(tb, specs))]).save(path)

    def missing(self):
        raise ResourceMissing("TextBlob's Pattern parser (package textblob)", "pip install 'combo-eval[syntax]'")

    monkeypatch.setattr(shallow.PartOfSpeechOverlap, "check_resources", missing)
    monkeypatch.setattr("combo.metrics.tuned.analyser_versions",
                        lambda m: "analysers:shallow/pattern/absent" if m.name == "sp-op" else analyser_versions(m))
    with pytest.raises(ResourceMissing, match=r"combo-eval\[syntax\]"):
        load_model(path)
