"""Single-reference and reference-pair scores equal the metric's own segment scores, and survive a save/load."""

import numpy as np

import combo
from combo import example_path
from combo.scoring import ReferenceScores, reference_scores, score_testbed


def test_reference_scores_equal_single_reference_segment_scores(tmp_path):
    tb = combo.load_testbed(example_path())
    table = score_testbed(tb, ["bleu", "chrf"])
    rs = reference_scores(tb, table, ["bleu", "chrf"])
    for m, name in enumerate(["bleu", "chrf"]):
        metric = combo.get_metric(name)
        for i in (0, 7, 23):
            refs = tb.segments[i].references
            rows = rs.rows(i)
            for c, k in enumerate(rows):
                hyp = tb.candidates[table.systems[table.row_system[k]]][i]
                want = metric.segment_scores([hyp] * len(refs), [[r] for r in refs])
                np.testing.assert_allclose(rs.cand_ref(i)[m, c], want, atol=1e-12)
            want_rr = [metric.segment_scores([a] * len(refs), [[b] for b in refs]) for a in refs]
            np.testing.assert_allclose(rs.ref_ref(i)[m], np.array(want_rr), atol=1e-12)
    rs.save(tmp_path / "rs.npz")
    back = ReferenceScores.load(tmp_path / "rs.npz")
    np.testing.assert_array_equal(back.cand_ref(5), rs.cand_ref(5))
    assert back.metrics == rs.metrics and back.signatures == rs.signatures


def test_capped_references_are_a_seeded_sample():
    tb = combo.load_testbed(example_path())
    table = score_testbed(tb, ["bleu"])
    a = reference_scores(tb, table, ["bleu"], max_refs=3, seed=7)
    b = reference_scores(tb, table, ["bleu"], max_refs=3, seed=7)
    assert a.capped_segments == len(tb.segments)
    assert all(len(k) == 3 for k in a.ref_index)
    assert all(np.array_equal(x, y) for x, y in zip(a.ref_index, b.ref_index))
    np.testing.assert_array_equal(a.ref_ref_values, b.ref_ref_values)


def test_one_analysis_gives_the_same_table_and_reference_scores(tmp_path):
    from combo.scoring import score_with_references

    tb = combo.load_testbed(example_path())
    metrics = ["bleu", "chrf", "ter"]
    table, refs = score_with_references(tb, metrics, max_refs=4, seed=3, cache_dir=tmp_path)
    want_table = score_testbed(tb, metrics)
    want_refs = reference_scores(tb, want_table, metrics, max_refs=4, seed=3)
    np.testing.assert_array_equal(table.segment, want_table.segment)
    np.testing.assert_array_equal(table.system, want_table.system)
    np.testing.assert_array_equal(refs.cand_ref_values, want_refs.cand_ref_values)
    np.testing.assert_array_equal(refs.ref_ref_values, want_refs.ref_ref_values)
    assert all(np.array_equal(a, b) for a, b in zip(refs.ref_index, want_refs.ref_index))
    again, again_refs = score_with_references(tb, metrics, max_refs=4, seed=3, cache_dir=tmp_path)  # from cache
    np.testing.assert_array_equal(again.segment, table.segment)
    np.testing.assert_array_equal(again_refs.ref_ref_values, refs.ref_ref_values)
