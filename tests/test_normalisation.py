"""One min-max normalisation: ULC (combo evaluate --combine ulc) and a ULC model file agree, inside and
outside the training range (Giménez & Màrquez 2008, §3.1; combo.normalise.minmax_normalise)."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from combo import load_testbed, score_testbed
from combo import example_path
from combo.cli import main
from combo.metrics.tuned import load_model
from combo.combine.ulc import fit_minmax, minmax_normalise, ulc
from combo.io import write_jsonl

SPECS = ["bleu", "ter"]  # one higher-is-better metric and one error rate (flipped)


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """The example test bed split in two: the first 4 segments train, the other 20 are new data (14 of their
    80 candidates score outside the training range of BLEU or TER)."""
    folder = tmp_path_factory.mktemp("split")
    tb = load_testbed(example_path())
    train, new = tb.subset(range(4), name="example-train"), tb.subset(range(4, 24), name="example-new")
    write_jsonl(train, folder / "train.jsonl")
    runner = CliRunner()
    metrics = [arg for m in SPECS for arg in ("-m", m)]
    result = runner.invoke(main, ["train", "--testbed", str(folder / "train.jsonl"), *metrics, "--method", "ulc",
                                  "--folds", "0", "--out", str(folder / "ulc.json"), "-q"])
    assert result.exit_code == 0, result.output
    return folder, train, new


def _run(args):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_ulc_model_scores_new_data_as_ulc_with_the_training_ranges(split):
    folder, train, new = split
    # `combo apply` on the 20 new segments of every system
    n_refs = len(new.segments[0].references)
    refs = []
    for r in range(n_refs):
        path = folder / f"ref{r}.txt"
        path.write_text("".join(seg.references[r] + "\n" for seg in new.segments), encoding="utf-8")
        refs.append(str(path))
    hyps = []
    for system in new.systems:
        path = folder / f"{system}.txt"
        path.write_text("".join(new.candidates[system][i] + "\n" for i in range(len(new.segments))), encoding="utf-8")
        hyps.append(str(path))
    doc = json.loads(_run(["apply", "--model", str(folder / "ulc.json"), "--hyps", *hyps, "--refs", *refs,
                           "--level", "segment", "--format", "json"]))
    applied = {(r["system"], r["segment"] - 1): r["score"] for r in doc["scores"]}

    # ULC's own normalisation, ranges fitted on the 4 training segments, applied to the 20 new ones
    fitted = score_testbed(train, SPECS)
    norm, _ = fit_minmax(fitted.segment, fitted.higher_is_better)
    table = score_testbed(new, SPECS)
    expected = norm.apply(table.segment).mean(axis=0)  # the linear output: the ULC itself
    got = np.array([applied[(table.systems[s], i)] for s, i in zip(table.row_system, table.row_segment)])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)

    # the comparison reaches outside the training range, where clipping would have given other scores
    lo, hi = norm.lo[:, 0:1], norm.hi[:, 0:1]
    outside = (table.segment < lo) | (table.segment > hi)
    assert outside.any(axis=0).sum() == 14
    clipped = np.clip(norm.apply(table.segment), 0, 1).mean(axis=0)
    assert np.abs(clipped - got).max() > 0.01


def test_evaluate_combine_ulc_equals_the_ulc_model_on_its_training_data(split):
    folder, train, _ = split
    common = ["evaluate", "--testbed", str(folder / "train.jsonl"), "--criteria", "wmt_kendall",
              "--bootstrap", "0", "--format", "json", "-q"]
    metrics = [arg for m in SPECS for arg in ("-m", m)]
    ulc_rows = json.loads(_run(common + metrics + ["--combine", "ulc"]))["rows"]
    model_rows = json.loads(_run(common + ["-m", str(folder / "ulc.json"), "--combine", ""]))["rows"]
    combined = next(r for r in ulc_rows if r["metric"] == "ULC(all)")
    model = next(r for r in model_rows if r["metric"].endswith("ulc.json"))
    # the same segment scores up to the model's sigmoid (monotone): the rank statistic is identical
    assert model["wmt_kendall"]["n"] == combined["wmt_kendall"]["n"] > 0
    assert model["wmt_kendall"]["value"] == pytest.approx(combined["wmt_kendall"]["value"], abs=1e-12)
    fitted = score_testbed(train, SPECS)
    loaded = load_model(folder / "ulc.json")
    np.testing.assert_allclose(loaded.model.raw_scores(fitted.segment), ulc(fitted.segment, fitted.higher_is_better),
                               rtol=0, atol=1e-12)


def test_minmax_normalise_hand_worked():
    # metric 0 (higher better) range [0, 10]; metric 1 (lower better) range [1, 3]; metric 2 constant 5
    scores = np.array([[5.0, 12.0, -2.0], [2.0, 0.0, 4.0], [5.0, 6.0, np.nan]])
    out = minmax_normalise(scores, [0, 1, 5], [10, 3, 5], [True, False, True])
    np.testing.assert_allclose(out[:2], [[0.5, 1.2, -0.2], [0.5, 1.5, -0.5]])
    assert out[2, 0] == 0 and out[2, 1] == 0 and np.isnan(out[2, 2])  # constant: 0; a missing score: NaN
    # ranges per metric and row (a group each), one range unknown (NaN): that row is NaN
    per_row = minmax_normalise(np.array([[1.0, 1.0]]), np.array([[0.0, np.nan]]), np.array([[2.0, np.nan]]), [True])
    assert per_row[0, 0] == 0.5 and np.isnan(per_row[0, 1])
