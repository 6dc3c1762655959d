"""combo.io.sick: SICK pairs as one-reference segments with relatedness scores."""

import pytest

from combo.io.sick import read_sick
from combo.testbed import Score
from testutil import input_error as _error

HEADER = ("pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\tentailment_AB\t"
          "entailment_BA\tsentence_A_original\tsentence_B_original\tsentence_A_dataset\tsentence_B_dataset\t"
          "SemEval_set")


def test_real_sick(data):
    tb = read_sick(data / "sick" / "SICK.txt")  # the released file has CRLF endings
    assert len(tb) == 9840 and tb.systems == ["B"] and len(tb.scores) == 9840
    first = tb.segments[0]
    assert (first.id, first.references, first.group) == \
        ("1", ["A group of kids is playing in a yard and an old man is standing in the background"], "TRAIN")
    assert tb.candidates["B"][0] == "A group of boys in a yard is playing and a man is standing in the background"
    assert tb.scores[0] == Score("B", 0, 4.5, None, "relatedness")
    ent = tb.metadata["entailment"]
    assert len(ent) == 9840 and ent["1"] == "NEUTRAL"
    counts = {label: sum(v == label for v in ent.values()) for label in ("NEUTRAL", "ENTAILMENT", "CONTRADICTION")}
    assert counts == {"NEUTRAL": 5595, "ENTAILMENT": 2821, "CONTRADICTION": 1424}
    assert {s.group for s in tb.segments} == {"TRAIN", "TEST", "TRIAL"}
    assert not any(s.group.endswith("\r") for s in tb.segments)
    tb.validate()


def _row(pid="1", a="A man sings", b="A woman sings", label="NEUTRAL", score="3.5"):
    return "\t".join([pid, a, b, label, score, "A_neutral_B", "B_neutral_A", a, b, "FLICKR", "FLICKR", "TEST"])


def test_toy(tmp_path):
    p = tmp_path / "SICK.txt"
    p.write_text(HEADER + "\n" + _row() + "\n" + _row("7", "x", "y", "ENTAILMENT", "5") + "\n", encoding="utf-8")
    tb = read_sick(p)
    assert [s.id for s in tb.segments] == ["1", "7"] and tb.candidates == {"B": {0: "A woman sings", 1: "y"}}
    assert [s.value for s in tb.scores] == [3.5, 5.0] and tb.metadata["entailment"] == {"1": "NEUTRAL", "7": "ENTAILMENT"}


@pytest.mark.parametrize("row, message", [
    (_row(score="nan"), "NaN"),
    (_row(score="6"), "outside [1, 5]"),
    (_row(label="MAYBE"), "unknown entailment label"),
    (_row()[:-5], "expected 12"),
])
def test_bad_rows(tmp_path, row, message):
    p = tmp_path / "SICK.txt"
    p.write_text(HEADER + "\n" + _row("0") + "\n" + row + "\n", encoding="utf-8")
    err = _error(read_sick, p)
    assert (err.path, err.line) == (str(p), 3) and message in str(err)


def test_duplicate_pair_bad_header_bom_utf8(tmp_path):
    p = tmp_path / "SICK.txt"
    p.write_text(HEADER + "\n" + _row() + "\n" + _row() + "\n", encoding="utf-8")
    assert "duplicate pair_ID" in str(_error(read_sick, p))
    p.write_text("id\t" + HEADER + "\n", encoding="utf-8")
    assert _error(read_sick, p).line == 1
    p.write_bytes(b"\xef\xbb\xbf" + (HEADER + "\n" + _row() + "\n").encode())
    assert len(read_sick(p).segments) == 1  # the mark is dropped: the header is read as a header
    p.write_bytes((HEADER + "\n").encode() + b"1\tA \xe9\n")
    err = _error(read_sick, p)
    assert err.line == 2 and "UTF-8" in str(err)
    p.write_bytes(b"")
    assert "empty" in str(_error(read_sick, p))
