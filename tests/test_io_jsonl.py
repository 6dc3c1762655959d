"""combo.io.jsonl: the canonical JSONL form, lossless on every real test bed, strict on bad lines."""

import json

import pytest

from combo.io import (load_testbed, mutt_testbed, read_dstc7, read_flickr8k, read_jsonl, read_mutt, read_sick,
                      read_wmt12, write_jsonl)
from combo.testbed import Preference, Score, Segment, Testbed
from testutil import input_error as _error


def _toy() -> Testbed:
    tb = Testbed(name="toy", metadata={"note": "ü", "counts": {"a": 1}, "list": [1.5, None, "x"]})
    tb.segments = [Segment("s1", "Quelle", ["ref one", ""], [1.0, -0.25], ["r1", "r2"], "doc1"),
                   Segment("s2", "", [], None, None, "")]
    tb.candidates = {"sysA": {0: "hyp \"quoted\"\ttab", 1: ""}, "sysB": {1: "line\u2028sep"}}
    tb.scores = [Score("sysA", 0, 0.1, "r", "adequacy"), Score("sysB", 1, 3.0)]
    tb.preferences = [Preference(1, "sysA", "sysB", "j1", False, 7), Preference(1, "sysB", "sysA", None, True, None)]
    tb.system_scores = {"z": {"sysA": 0.5, "sysB": -1e-17}}
    return tb


def test_toy_round_trip_and_exact_lines(tmp_path):
    tb = _toy()
    p = tmp_path / "toy.jsonl"
    write_jsonl(tb, p)
    lines = p.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == 1 + 2 + 3 + 2 + 2 + 2 + 1
    assert json.loads(lines[0]) == {"type": "testbed", "format": 1, "name": "toy", "metadata": tb.metadata}
    assert json.loads(lines[1]) == {"type": "segment", "id": "s1", "source": "Quelle", "references": ["ref one", ""],
                                    "weights": [1.0, -0.25], "ref_ids": ["r1", "r2"], "group": "doc1"}
    assert json.loads(lines[3]) == {"type": "candidate", "system": "sysA", "segment": "s1",
                                    "text": "hyp \"quoted\"\ttab"}
    assert json.loads(lines[6]) == {"type": "score", "system": "sysA", "segment": "s1", "value": 0.1,
                                    "rater": "r", "aspect": "adequacy"}
    assert json.loads(lines[9]) == {"type": "preference", "segment": "s2", "better": "sysB", "worse": "sysA",
                                    "judge": None, "tie": True, "block": None}
    assert json.loads(lines[10]) == {"type": "system_score", "system": "sysA", "aspect": "z", "value": 0.5}
    assert read_jsonl(p) == tb
    assert load_testbed(p) == tb


@pytest.mark.parametrize("name", ["wmt12-cs-en", "wmt12-de-en", "wmt12-es-en", "wmt12-fr-en", "wmt12-en-es",
                                  "flickr8k-expert", "flickr8k-crowd", "dstc7", "sick", "mutt"])
def test_real_round_trip(data, tmp_path, name):
    if name.startswith("wmt12"):
        tb = read_wmt12(data / "wmt12", name[6:])
    elif name.startswith("flickr8k"):
        tb = read_flickr8k(data / "flickr8k", name[9:])
    elif name == "dstc7":
        tb = read_dstc7(data / "dstc7")
    elif name == "sick":
        tb = read_sick(data / "sick" / "SICK.txt")
    else:
        sets = read_mutt(data / "mutt" / "corruptions", flickr8k=data / "flickr8k")
        tb = mutt_testbed([t for v in sets.values() for t in v])
    p = tmp_path / f"{name}.jsonl"
    write_jsonl(tb, p)
    back = read_jsonl(p)
    assert back == tb
    assert back.systems == tb.systems  # system order kept too
    assert len(back.scores) == len(tb.scores) and len(back.preferences) == len(tb.preferences)


def test_write_rejects_what_it_cannot_keep(tmp_path):
    tb = _toy()
    tb.candidates["empty"] = {}
    assert "no candidates" in str(_error(write_jsonl, tb, tmp_path / "x.jsonl"))
    tb = _toy()
    tb.metadata = {"bad": {1, 2}}
    assert "metadata" in str(_error(write_jsonl, tb, tmp_path / "x.jsonl"))
    tb = _toy()
    tb.scores.append(Score("sysA", 0, float("nan")))
    assert "NaN" in str(_error(write_jsonl, tb, tmp_path / "x.jsonl"))


# -- validation: one InputError naming the line ----------------------------------------------
HEAD = '{"type": "testbed", "format": 1, "name": "t", "metadata": {}}'
SEG = '{"type": "segment", "id": "1", "source": "", "references": ["r"], "weights": null, "ref_ids": null, "group": ""}'
CAND = '{"type": "candidate", "system": "A", "segment": "1", "text": "h"}'


def _file(tmp_path, *lines):
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("bad, message", [
    ('{"type": "segment", "id": "1"', "invalid JSON"),
    ('[1, 2]', "not a JSON object"),
    ('{"type": "sentence"}', "unknown record type"),
    ('{"type": "candidate", "system": "A", "segment": "1"}', "no 'text'"),
    ('{"type": "candidate", "system": "A", "segment": "1", "text": "h", "extra": 1}', "unknown key 'extra'"),
    ('{"type": "candidate", "system": "A", "segment": 1, "text": "h"}', "must be a string"),
    ('{"type": "candidate", "system": "A", "segment": "9", "text": "h"}', "unknown segment id '9'"),
    ('{"type": "candidate", "system": "B", "segment": "1", "text": "h"}', None),  # fine: a second system
    (CAND, "second candidate"),
    ('{"type": "score", "system": "A", "segment": "1", "value": NaN, "rater": null, "aspect": "s"}', "NaN"),
    ('{"type": "score", "system": "A", "segment": "1", "value": 1e400, "rater": null, "aspect": "s"}', "not finite"),
    ('{"type": "score", "system": "A", "segment": "1", "value": "3", "rater": null, "aspect": "s"}', "must be a number"),
    ('{"type": "score", "system": "Z", "segment": "1", "value": 3, "rater": null, "aspect": "s"}', "no such candidate"),
    ('{"type": "preference", "segment": "1", "better": "A", "worse": "Z", "judge": null, "tie": false, "block": null}',
     "'Z'"),
    ('{"type": "preference", "segment": "1", "better": "A", "worse": "A", "judge": null, "tie": 0, "block": null}',
     "must be a boolean"),
    ('{"type": "system_score", "system": "Z", "aspect": "z", "value": 1}', "unknown system 'Z'"),
    ('{"type": "system_score", "system": "A", "aspect": "z", "value": -Infinity}', "Infinity"),
    (SEG, "duplicate segment id '1'"),
    ('{"type": "segment", "id": "2", "source": "", "references": ["r"], "weights": [1, 2], "ref_ids": null, '
     '"group": ""}', "2 weights for 1 references"),
    ('{"type": "segment", "id": "2", "source": "", "references": ["r"], "weights": [1.5], "ref_ids": null, '
     '"group": ""}', "outside [-1, 1]"),
    ('{"type": "segment", "id": "2", "source": "", "references": ["r"], "weights": null, "ref_ids": [], '
     '"group": ""}', "0 ref_ids for 1 references"),
    (HEAD, "second testbed header"),
    ("", "blank line"),
])
def test_bad_line(tmp_path, bad, message):
    p = _file(tmp_path, HEAD, SEG, CAND, bad)
    if message is None:
        assert read_jsonl(p).systems == ["A", "B"]
        return
    err = _error(read_jsonl, p)
    assert (err.path, err.line) == (str(p), 4) and message in str(err), str(err)


def test_bad_header(tmp_path):
    p = _file(tmp_path, SEG, HEAD)
    assert _error(read_jsonl, p).line == 1
    p = _file(tmp_path, HEAD.replace('"format": 1', '"format": 2'), SEG)
    err = _error(read_jsonl, p)
    assert err.line == 1 and "format 2" in str(err)


def test_bad_bytes(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + (HEAD + "\n" + SEG + "\n").encode())
    assert len(read_jsonl(p).segments) == 1  # the mark is dropped, as every reader drops it
    p.write_bytes((HEAD + "\r\n" + SEG + "\r\n").encode())
    assert "CRLF" in str(_error(read_jsonl, p))
    p.write_bytes((HEAD + "\n" + SEG.replace('"r"', '"\xe9"') + "\n").encode("latin-1"))
    err = _error(read_jsonl, p)
    assert err.line == 2 and "UTF-8" in str(err)
    p.write_bytes(b"")
    assert "empty" in str(_error(read_jsonl, p))
