"""Two test beds scored in one process (a notebook): the second never sees the first one's state.

Before supplied trees, analyses and tree label numbering were scoped, all three lived in module variables: a
test bed without trees was scored with the trees of the one before, and a tree kernel's last digits depended on
the labels the process had numbered before (8 of 80 cp-tk scores below differed from a fresh process). Word
vectors were cached by path, so a vector file rewritten in place kept its old vectors.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from combo.errors import InputError
from combo.analysis import layers
from combo.analysis.embeddings import load_vectors
from combo.analysis.supplied import trees_in_use, using_trees
from combo.metrics.registry import get_metric
from combo.scoring import score_testbed
from combo.testbed import Segment, Testbed

ROOT = Path(__file__).resolve().parents[1]
HYP, REF = "I had it", "I had a lunch"
TREES_A = {HYP: "(S (NP (PRON I)) (VP (V had) (NP (PRON it))))",
           REF: "(S (NP (PRON I)) (VP (V had) (NP (ART a) (N lunch))))"}
TREES_B = {HYP: "(S (NP (PRON I)) (VP (V had) (NP (PRON it))))",
           REF: "(FRAG (NP (PRON I)) (V had) (NP (N lunch)))"}


def one_segment_testbed(name, trees=None):
    tb = Testbed(name=name, segments=[Segment(id="1", references=[REF])])
    tb.add_system("sys", [HYP])
    if trees is not None:
        tb.trees.add("constituents", list(trees), list(trees.values()))
    return tb


def test_supplied_trees_belong_to_their_test_bed():
    metric = "cp-stm:trees=supplied,depth=3"
    a = score_testbed(one_segment_testbed("a", TREES_A), [metric])
    b_bed = one_segment_testbed("b", TREES_B)
    b = score_testbed(b_bed, [metric])
    assert a.segment[0, 0] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3, abs=1e-12)  # hand-worked, Liu & Gildea
    with using_trees(b_bed.trees):  # b is scored with b's own trees, as if a had never been scored
        alone = get_metric(metric).segment_scores([HYP], [[REF]])[0]
    assert b.segment[0, 0] == alone != a.segment[0, 0]
    assert a.metadata["provenance"][metric] != b.metadata["provenance"][metric]  # each names its own trees
    assert b_bed.trees.digest("constituents") in b.metadata["provenance"][metric]
    assert trees_in_use() is None  # nothing left in use after a run
    with pytest.raises(InputError, match="no supplied constituents tree"):  # a third bed, without trees
        score_testbed(one_segment_testbed("c"), [metric])


def test_a_subset_keeps_its_trees_and_the_parent_keeps_its_own():
    tb = one_segment_testbed("a", TREES_A)
    part = tb.subset([0], name="part")
    part.trees.add("constituents", ["another text"], ["(S (X another) (Y text))"])
    assert "another text" not in tb.trees.tables["constituents"]
    assert part.trees.get("constituents", [HYP]) == tb.trees.get("constituents", [HYP])


def test_no_analysis_is_held_in_memory_after_a_run(monkeypatch):
    pytest.importorskip("textblob")
    layer = layers.get_layer("shallow")
    calls = []
    real = layer.annotate_batch
    monkeypatch.setattr(layer, "annotate_batch", lambda texts: calls.append(len(texts)) or real(texts))
    monkeypatch.setenv("COMBO_CACHE_DIR", "")  # no disk cache: whatever is not re-annotated was held in memory
    tb = one_segment_testbed("a")
    score_testbed(tb, ["cp-stm", "cp-tk"])  # two metrics reading the shallow layer: one analysis per run
    assert calls == [2]
    score_testbed(tb, ["cp-stm"])
    assert calls == [2, 2]  # the second run analysed again: the first kept nothing in memory


def test_a_vector_file_rewritten_in_place_is_read_again(tmp_path):
    """Word vectors are loaded once per file version, not once per path (a notebook that rewrites its file)."""
    path = tmp_path / "vectors.txt"
    path.write_text("cat 1 0\ndog 0 1\n", encoding="utf-8")
    first = load_vectors(str(path))
    assert load_vectors(str(path)) is first  # unchanged: loaded once
    path.write_text("cat 0 1\ndog 1 0\nbird 1 1\n", encoding="utf-8")
    second = load_vectors(str(path))
    assert (len(first), len(second)) == (2, 3)
    np.testing.assert_array_equal(second.vectors[second.index["cat"]], [0.0, 1.0])


def test_the_score_cache_follows_a_vector_file_s_content_not_its_path(tmp_path):
    """A score cached with one vector file is not served after the file at that path is rewritten."""
    path, cache = tmp_path / "vectors.txt", tmp_path / "cache"
    path.write_text("cat 1 0\ndog 0 1\nmat 1 1\n", encoding="utf-8")
    tb = Testbed(name="t", segments=[Segment(id="1", references=["cat mat"])], candidates={"s": {0: "dog mat"}})
    spec = f"emb-avg:vectors={path},tokenize=none"
    first = score_testbed(tb, [spec], cache_dir=cache).segment[0, 0]
    assert score_testbed(tb, [spec], cache_dir=cache).segment[0, 0] == first  # served from the cache
    path.write_text("cat 1 0\ndog 1 0\nmat 1 1\n", encoding="utf-8")  # dog now points where cat does
    second = score_testbed(tb, [spec], cache_dir=cache).segment[0, 0]
    assert second == pytest.approx(1.0) and first < 0.99
    assert len(list(cache.glob("*.npz"))) == 2


_FRESH_PROCESS = """
import json, sys
from combo.scoring import score_testbed
from combo.testbed import Segment, Testbed
spec = json.load(sys.stdin)
tb = Testbed(name="x", segments=[Segment(id=str(i), references=[r]) for i, r in enumerate(spec["refs"])])
for name, lines in spec["systems"].items():
    tb.add_system(name, lines)
print(json.dumps([float(v).hex() for v in score_testbed(tb, ["cp-tk"]).segment.ravel()]))
"""


def test_tree_kernel_scores_do_not_depend_on_what_the_process_scored_before(data):
    pytest.importorskip("textblob")
    plain = data / "wmt12" / "plain"
    ref = (plain / "references" / "newstest2012-ref.en").read_text(encoding="utf-8").split("\n")
    folder = plain / "system-outputs" / "newstest2012" / "de-en"
    systems = {f.name.split(".", 2)[2]: f.read_text(encoding="utf-8").split("\n") for f in sorted(folder.iterdir())[:2]}

    def testbed(name, lo, hi):
        tb = Testbed(name=name, segments=[Segment(id=str(i), references=[ref[i]]) for i in range(lo, hi)])
        for system, lines in systems.items():
            tb.add_system(system, lines[lo:hi])
        return tb

    score_testbed(testbed("before", 1500, 1600), ["cp-tk"])  # other texts, other labels, numbered first
    here = [float(v).hex() for v in score_testbed(testbed("x", 0, 40), ["cp-tk"]).segment.ravel()]
    spec = {"refs": ref[:40], "systems": {s: lines[:40] for s, lines in systems.items()}}
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    fresh = subprocess.run([sys.executable, "-c", _FRESH_PROCESS], input=json.dumps(spec), capture_output=True,
                           text=True, env=env, check=True, timeout=300)
    assert np.array_equal(here, json.loads(fresh.stdout))  # to the last bit
