"""combo.io.mtme: the mt-metrics-eval folder layout, on a small folder built in tmp_path.

Layout as in google-research/mt-metrics-eval's README and data.py: sources/<lp>.txt,
documents/<lp>.docs, references/<lp>.<ref>.txt, system-outputs/<lp>/<sys>.txt,
human-scores/<lp>.<name>.<level>.score with whitespace-separated "SYSTEM SCORE" lines.
"""

import pytest

from combo.io import load_testbed
from combo.io.mtme import read_mtme
from combo.testbed import Score
from testutil import input_error as _error, write_text as _w


@pytest.fixture
def evalset(tmp_path):
    d = tmp_path / "toy22"
    _w(d / "sources" / "en-de.txt", "s1\ns2\ns3\n")
    _w(d / "documents" / "en-de.docs", "news doc1\nnews doc1\nsocial doc2\n")
    _w(d / "references" / "en-de.refA.txt", "a1\na2\na3\n")
    _w(d / "references" / "en-de.refB.txt", "b1\nb2\nb3\n")
    _w(d / "system-outputs" / "en-de" / "sys1.txt", "x1\nx2\nx3\n")
    _w(d / "system-outputs" / "en-de" / "sys2.txt", "y1\ny2\ny3\n")
    _w(d / "system-outputs" / "en-de" / "refB.txt", "b1\nb2\nb3\n")
    # seg scores: a block of 3 per system, in segment order; None = unrated.
    _w(d / "human-scores" / "en-de.mqm.seg.score",
       "sys1\t-1.0\nsys1\tNone\nsys1\t-0.5\nsys2 0\nsys2 -25\nsys2 -2\nrefB\t0\nrefB\t0\nrefB\t-1\n")
    _w(d / "human-scores" / "en-de.wmt-z.sys.score", "sys1\t0.25\nsys2\t-0.5\nrefB\tNone\n")
    _w(d / "human-scores" / "en-de.mqm.doc.score", "sys1 -1\nsys1 -2\n")
    return tmp_path


def test_all_references(evalset):
    tb = read_mtme(evalset, "toy22", "en-de", references="all")
    assert tb.name == "toy22.en-de" and len(tb) == 3
    # Both references are used, so the refB output is not a system (it would match itself).
    assert tb.systems == ["sys1", "sys2"]
    seg = tb.segments[2]
    assert (seg.id, seg.source, seg.references, seg.ref_ids, seg.group) == \
        ("3", "s3", ["a3", "b3"], ["refA", "refB"], "doc2")
    assert tb.scores == [Score("sys1", 0, -1.0, None, "mqm"), Score("sys1", 2, -0.5, None, "mqm"),
                         Score("sys2", 0, 0.0, None, "mqm"), Score("sys2", 1, -25.0, None, "mqm"),
                         Score("sys2", 2, -2.0, None, "mqm")]
    assert tb.system_scores == {"wmt-z": {"sys1": 0.25, "sys2": -0.5}}
    md = tb.metadata
    assert md["dropped_reference_outputs"] == ["refB"] and md["dropped_reference_output_scores"] == 4
    assert md["unrated"] == {"mqm": 1} and md["skipped_score_files"] == ["en-de.mqm.doc.score"]
    assert md["domains"] == ["news", "news", "social"]
    tb.validate()


def test_one_reference_keeps_the_other_as_human_system(evalset):
    tb = read_mtme(evalset, "toy22", "en-de", references=["refA"])
    assert sorted(tb.systems) == ["refB", "sys1", "sys2"] and tb.metadata["human_systems"] == ["refB"]
    assert tb.segments[0].references == ["a1"]
    assert [s.value for s in tb.scores if s.system == "refB"] == [0.0, 0.0, -1.0]
    assert tb.metadata["unrated"] == {"mqm": 1, "wmt-z": 1}


def test_load_testbed_finds_the_layout(evalset):
    tb = load_testbed(evalset / "toy22", references="refA")  # a single language pair: lp is found
    assert tb.name == "toy22.en-de"


def test_unknown_reference_name(evalset):
    err = _error(read_mtme, evalset, "toy22", "en-de", references=["refC"])
    assert "refC" in str(err) and "refA" in str(err)


def test_seg_scores_name_unknown_system(evalset):
    p = _w(evalset / "toy22" / "human-scores" / "en-de.mqm.seg.score", "sys1 1\nsys1 1\nsys1 1\nsys9 2\n")
    err = _error(read_mtme, evalset, "toy22", "en-de", references="all")
    assert (err.path, err.line) == (str(p), 4) and "unknown system 'sys9'" in str(err)


def test_seg_scores_too_many_or_too_few(evalset):
    p = _w(evalset / "toy22" / "human-scores" / "en-de.mqm.seg.score", "sys1 1\nsys1 1\nsys1 1\nsys1 1\n")
    err = _error(read_mtme, evalset, "toy22", "en-de", references="all")
    assert (err.path, err.line) == (str(p), 4) and "more than 3" in str(err)
    _w(p, "sys1 1\nsys1 1\n")
    err = _error(read_mtme, evalset, "toy22", "en-de", references="all")
    assert err.path == str(p) and "2 segment scores, expected 3" in str(err)


def test_nan_and_duplicate_system_scores(evalset):
    p = _w(evalset / "toy22" / "human-scores" / "en-de.wmt-z.sys.score", "sys1 nan\n")
    err = _error(read_mtme, evalset, "toy22", "en-de", references="all")
    assert (err.path, err.line) == (str(p), 1) and "NaN" in err.fix
    _w(p, "sys1 1\nsys2 1\nsys1 2\n")
    err = _error(read_mtme, evalset, "toy22", "en-de", references="all")
    assert (err.path, err.line) == (str(p), 3) and "second system-level score" in str(err)


def test_mismatched_lines_and_bad_bytes(evalset):
    p = _w(evalset / "toy22" / "system-outputs" / "en-de" / "sys2.txt", "y1\ny2\n")
    err = _error(read_mtme, evalset, "toy22", "en-de", references="all")
    assert (err.path, err.line) == (str(p), 3)
    p.write_bytes(b"y1\r\ny2\r\ny3\r\n")
    assert _error(read_mtme, evalset, "toy22", "en-de", references="all").line == 1
    p.write_bytes(b"\xef\xbb\xbfy1\ny2\ny3\n")  # an upstream quirk in system outputs: accepted and counted
    tb = read_mtme(evalset, "toy22", "en-de", references="all")
    assert tb.candidates["sys2"][0] == "y1" and tb.metadata["bom_stripped"] == ["sys2.txt"]
    r = evalset / "toy22" / "references" / "en-de.refA.txt"
    r.write_bytes(b"\xef\xbb\xbfa1\na2\na3\n")  # any file's mark is dropped, as every reader drops it
    assert read_mtme(evalset, "toy22", "en-de", references="all").segments[0].references[0] == "a1"
    r.write_bytes(b"a1\na2\na3\n")
    p.write_bytes(b"y1\ny2\ny\xff3\n")
    err = _error(read_mtme, evalset, "toy22", "en-de", references="all")
    assert (err.path, err.line) == (str(p), 3) and "UTF-8" in str(err)


def test_empty_or_missing_source(evalset):
    src = evalset / "toy22" / "sources" / "en-de.txt"
    src.write_bytes(b"")
    assert _error(read_mtme, evalset, "toy22", "en-de", references="all").line == 1
    src.unlink()
    assert "not found" in str(_error(read_mtme, evalset, "toy22", "en-de", references="all"))


def test_bad_document_line_and_score_file_name(evalset):
    p = _w(evalset / "toy22" / "documents" / "en-de.docs", "news doc1\nnews\nsocial doc2\n")
    err = _error(read_mtme, evalset, "toy22", "en-de", references="all")
    assert (err.path, err.line) == (str(p), 2)
    p.unlink()
    q = _w(evalset / "toy22" / "human-scores" / "en-de.mqm.para.score", "sys1 1\n")
    err = _error(read_mtme, evalset, "toy22", "en-de", references="all")
    assert err.path == str(q) and "<level>" in str(err)


def test_bad_reference_name(evalset):
    _w(evalset / "toy22" / "references" / "en-de.ref-C.txt", "1\n2\n3\n")
    assert "invalid reference name 'ref-C'" in str(_error(read_mtme, evalset, "toy22", "en-de", references="all"))


def test_jsonl_round_trip(evalset, tmp_path):
    from combo.io import read_jsonl, write_jsonl

    tb = read_mtme(evalset, "toy22", "en-de", references=["refA"])
    write_jsonl(tb, tmp_path / "mtme.jsonl")
    assert read_jsonl(tmp_path / "mtme.jsonl") == tb


def test_score_file_without_name(evalset):
    # The short form <lp>.<level>.score is read with aspect "score".
    (evalset / "toy22" / "human-scores" / "en-de.mqm.seg.score").rename(
        evalset / "toy22" / "human-scores" / "en-de.seg.score")
    tb = read_mtme(evalset, "toy22", "en-de", references="all")
    assert {s.aspect for s in tb.scores} == {"score"} and len(tb.scores) == 5


def test_reference_choice(evalset):
    # An unknown test set with several references needs references=; a list is comma-separated.
    err = _error(read_mtme, evalset, "toy22", "en-de")
    assert "references=" in err.fix and "refA, refB" in str(err)
    tb = read_mtme(evalset, "toy22", "en-de", references="refB,refA")
    assert tb.segments[0].references == ["b1", "a1"] and tb.metadata["references"] == ["refB", "refA"]
    assert "twice" in str(_error(read_mtme, evalset, "toy22", "en-de", references="refA,refA"))
    (evalset / "toy22" / "references" / "en-de.refB.txt").unlink()
    assert read_mtme(evalset, "toy22", "en-de").metadata["references"] == ["refA"]  # the only one


def test_wmt23_release_as_it_is(data):
    # The real WMT23 release: the standard reference refA, AIRC.txt's byte-order mark accepted and
    # counted, synthetic_ref a human system, MQM the default judgments.
    tb = load_testbed(data / "wmt23", lp="en-de")
    md = tb.metadata
    assert (len(tb), md["references"], md["standard_reference"]) == (557, ["refA"], "refA")
    assert md["bom_stripped"] == ["AIRC.txt"] and not tb.candidates["AIRC"][0].startswith("\ufeff")
    assert md["dropped_reference_outputs"] == ["refA"] and md["human_systems"] == ["synthetic_ref"]
    assert len(tb.systems) == 13 and md["default_aspect"] == "mqm"
    both = load_testbed(data / "wmt23", lp="en-de", references="refA,synthetic_ref")
    assert both.segments[0].ref_ids == ["refA", "synthetic_ref"] and len(both.systems) == 12
