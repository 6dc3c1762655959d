"""`combo search` on real test beds: Flickr8k and DSTC7 (KING with QUEEN), WMT12 de-en (R_snt with ULC)."""

import json

import pytest
from click.testing import CliRunner

from combo.cli import main


def search(*args):
    res = CliRunner().invoke(main, ["search", "--format", "json", "-q", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_king_on_flickr8k_agrees_with_an_independent_count(data):
    # KING counted straight from the definition (king_segment_naive: QUEEN by explicit loops over reference
    # triples, each reference against every candidate) on the same single-reference scores, per image (5
    # captions each), equals the search's fast KING of the best single metric and of the chosen set.
    import numpy as np

    import combo
    from combo.meta.likeness import king_segment_naive
    from combo.scoring import score_with_references

    out = search("--testbed", str(data / "flickr8k"), "-m", "bleu", "-m", "chrf", "-m", "rouge-l",
                 "--strategy", "exhaustive")
    assert out["segments"] == 1000 and out["criterion"] == "king" and out["scheme"] == "queen"
    assert out["best_single"]["metric"] == "chrf"
    tb = combo.load_testbed(data / "flickr8k")
    specs = ["bleu", "chrf", "rouge-l"]
    _, refs = score_with_references(tb, specs)

    def naive(metrics):
        rows = [specs.index(m) for m in metrics]
        return np.mean([king_segment_naive(refs.cand_ref(i)[rows], refs.ref_ref(i)[rows])
                        for i in range(len(tb.segments))])

    assert out["best_single"]["quality"] == pytest.approx(naive(["chrf"]), abs=1e-12)  # 0.7566
    assert out["quality"] == pytest.approx(naive(out["selected"]), abs=1e-12)
    assert set(out) >= {"selected", "quality", "best_single", "trace"}
    assert out["quality"] >= out["best_single"]["quality"]
    assert [len(step["set"]) for step in out["trace"]] == [2, 3]  # exhaustive: best set of each size


def test_king_on_dstc7_counts_skipped_and_capped_segments(data):
    args = ["--testbed", str(data / "dstc7"), "-m", "rouge-l", "--max-refs", "5"]
    res = CliRunner().invoke(main, ["search", "-q", *args])
    assert res.exit_code == 2 and "fewer than 4 references" in res.output and "--min-refs" in res.output
    out = search(*args, "--min-refs", "4")
    assert out["segments"] == 951
    assert any("skipped 3 segments" in n for n in out["notes"])
    assert any("capped at 5" in n for n in out["notes"])
    assert 0 < out["best_single"]["quality"] < 1


def test_r_snt_with_ulc_on_wmt12_de_en(data, tmp_path):
    # The first 300 de-en segments (all 16 systems, their relative rankings), written as a JSONL test bed.
    from combo import load_testbed
    from combo.io.jsonl import write_jsonl

    write_jsonl(load_testbed(data / "wmt12", lp="de-en").subset(range(300)), tmp_path / "de-en.jsonl")
    out = search("--testbed", str(tmp_path / "de-en.jsonl"), "--criterion", "r_snt", "--scheme", "ulc",
                 "-m", "bleu", "-m", "chrf", "-m", "ter")
    assert out["aspect"] == "rr-wins" and out["segments"] == 300
    assert out["scheme"] == "ulc" and 0 < out["best_single"]["quality"] < 1
    assert [s["quality"] for s in out["trace"] if s["kept"]] == sorted(
        s["quality"] for s in out["trace"] if s["kept"])
