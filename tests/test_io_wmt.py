"""combo.io.wmt: WMT12 relative rankings as pairwise preferences."""

import pytest

from combo.io.wmt import (WMT12_INTO_ENGLISH, WMT12_NON_TIE_PAIRS, read_wmt12, read_wmt12_into_english)
from combo.testbed import Preference
from testutil import input_error as _error, write_text as _w

HEADER = ("srclang,trglang,srcIndex,documentId,segmentId,judgeId,system1Number,system1Id,system2Number,"
          "system2Id,system3Number,system3Id,system4Number,system4Id,system5Number,system5Id,"
          "system1rank,system2rank,system3rank,system4rank,system5rank")


@pytest.fixture
def toy(tmp_path):
    """WMT12-like folder: 3 de-en segments, systems A..E, two ranking rows."""
    plain = tmp_path / "plain"
    _w(plain / "sources" / "newstest2012-src.de", "eins\nzwei\ndrei\n")
    _w(plain / "references" / "newstest2012-ref.en", "one\ntwo\nthree\n")
    for s in "ABCDE":
        _w(plain / "system-outputs" / "newstest2012" / "de-en" / f"newstest2012.de-en.{s}", f"{s}1\n{s}2\n{s}3\n")
    rows = [
        # line 2: srcIndex 2, ranks A=1 B=3 C=1 D=-1 (blank) E=2
        "German,English,2,x,2,J1,1,A,2,B,3,C,4,D,5,E,1,3,1,-1,2",
        # line 3: another language pair: ignored for de-en
        "English,German,1,x,1,J2,1,A,2,B,3,C,4,D,5,E,1,2,3,4,5",
        # line 4: srcIndex 3, all ranked 2 except B=1
        "German,English,3,x,3,J2,1,E,2,D,3,C,4,B,5,A,2,2,2,1,2",
    ]
    _w(tmp_path / "wmt12.RNK_results.csv", HEADER + "\n" + "\n".join(rows) + "\n")
    return tmp_path


def test_toy_rankings_by_hand(toy):
    tb = read_wmt12(toy, "de-en")
    assert tb.systems == ["A", "B", "C", "D", "E"] and len(tb) == 3
    assert tb.segments[1].source == "zwei" and tb.segments[1].references == ["two"]
    # Row on line 2 (segment index 1): D is blank and dropped; A=1, B=3, C=1, E=2 give
    # A>B, A=C (tie), A>E, C>B, E>B, C>E in the order shown: 5 pairs + 1 tie.
    row2 = [p for p in tb.preferences if p.block == 2]
    assert row2 == [Preference(1, "A", "B", "J1", False, 2), Preference(1, "A", "C", "J1", True, 2),
                    Preference(1, "A", "E", "J1", False, 2), Preference(1, "C", "B", "J1", False, 2),
                    Preference(1, "E", "B", "J1", False, 2), Preference(1, "C", "E", "J1", False, 2)]
    # Row on line 4: B (rank 1) beats each of E, D, C, A; the other 6 pairs are ties.
    row4 = [p for p in tb.preferences if p.block == 4]
    assert sorted((p.better, p.worse) for p in row4 if not p.tie) == [("B", "A"), ("B", "C"), ("B", "D"), ("B", "E")]
    assert sum(p.tie for p in row4) == 6
    md = tb.metadata
    assert (md["rows"], md["blank_ranks"], md["pairs"], md["ties"], md["judged_segments"]) == (2, 1, 9, 7, 2)
    tb.validate()


def test_real_wmt12_into_english_pair_counts(data):
    beds = read_wmt12_into_english(data / "wmt12")
    assert list(beds) == list(WMT12_INTO_ENGLISH)
    expected_rows = {"cs-en": 1294, "de-en": 1427, "es-en": 1141, "fr-en": 1395}
    expected_systems = {"cs-en": 6, "de-en": 16, "es-en": 12, "fr-en": 15}
    for lp, tb in beds.items():
        non_tie = sum(not p.tie for p in tb.preferences)
        assert non_tie == WMT12_NON_TIE_PAIRS[lp] == tb.metadata["pairs"]
        assert tb.metadata["rows"] == expected_rows[lp]
        assert len(tb.systems) == expected_systems[lp] and len(tb) == 3003
        assert all(len(c) == 3003 for c in tb.candidates.values())
    assert [WMT12_NON_TIE_PAIRS[lp] for lp in WMT12_INTO_ENGLISH] == [11021, 11934, 9796, 11594]
    de = beds["de-en"]
    de.validate()
    assert de.metadata["ties"] == 2204 and de.metadata["bom_stripped"] == []


def test_real_first_csv_row(data):
    # Line 2 of the csv: Czech-English, srcIndex 1018, judge A3L1TNHRLMPUVO;
    # jhu-heiro ranked 2, onlineB/uk-dan-moses/cu-bojar/uedin-wmt12 ranked 1.
    tb = read_wmt12(data / "wmt12", "cs-en")
    row = [p for p in tb.preferences if p.block == 2]
    assert len(row) == 10 and all(p.segment == 1017 and p.judge == "A3L1TNHRLMPUVO" for p in row)
    assert sorted(p.better for p in row if not p.tie) == ["cu-bojar", "onlineB", "uedin-wmt12", "uk-dan-moses"]
    assert {p.worse for p in row if not p.tie} == {"jhu-heiro"} and sum(p.tie for p in row) == 6


def test_real_bom_in_upstream_output_is_stripped(data):
    tb = read_wmt12(data / "wmt12", "en-es")
    assert tb.metadata["bom_stripped"] == ["newstest2012.en-es.PROMT_DeepHybrid"]
    assert not tb.candidates["PROMT_DeepHybrid"][0].startswith("\ufeff")


# -- bad input -----------------------------------------------------------------------------
def _csv(toy, row):
    return _w(toy / "wmt12.RNK_results.csv", HEADER + "\n" + row + "\n")


def test_unknown_system(toy):
    p = _csv(toy, "German,English,2,x,2,J1,1,A,2,B,3,C,4,D,5,Z,1,3,1,-1,2")
    err = _error(read_wmt12, toy, "de-en")
    assert (err.path, err.line) == (str(p), 2) and "unknown system 'Z'" in str(err)


def test_unknown_segment(toy):
    p = _csv(toy, "German,English,4,x,2,J1,1,A,2,B,3,C,4,D,5,E,1,3,1,-1,2")
    err = _error(read_wmt12, toy, "de-en")
    assert (err.path, err.line) == (str(p), 2) and "srcIndex 4 is outside 1..3" in str(err)


def test_nan_or_bad_rank(toy):
    p = _csv(toy, "German,English,2,x,2,J1,1,A,2,B,3,C,4,D,5,E,1,nan,1,-1,2")
    err = _error(read_wmt12, toy, "de-en")
    assert (err.path, err.line) == (str(p), 2) and "not an integer" in str(err)
    _csv(toy, "German,English,2,x,2,J1,1,A,2,B,3,C,4,D,5,E,1,0,1,-1,2")
    assert "neither -1" in str(_error(read_wmt12, toy, "de-en"))


def test_duplicate_system_in_a_row(toy):
    _csv(toy, "German,English,2,x,2,J1,1,A,2,B,3,A,4,D,5,E,1,3,1,-1,2")
    err = _error(read_wmt12, toy, "de-en")
    assert err.line == 2 and "appears twice" in str(err)


def test_unknown_language_and_short_row(toy):
    _csv(toy, "Klingon,English,2,x,2,J1,1,A,2,B,3,C,4,D,5,E,1,3,1,-1,2")
    assert "unknown language name 'Klingon'" in str(_error(read_wmt12, toy, "de-en"))
    _csv(toy, "German,English,2,x,2,J1,1,A,2,B,3,C,4,D,5,E,1,3,1,-1")
    err = _error(read_wmt12, toy, "de-en")
    assert err.line == 2 and "expected 21" in str(err)


def test_crlf_csv_and_bad_output_file(toy):
    p = toy / "wmt12.RNK_results.csv"
    p.write_bytes((HEADER + "\r\n").encode())
    err = _error(read_wmt12, toy, "de-en")
    assert (err.path, err.line) == (str(p), 1) and "CRLF" in str(err)
    out = toy / "plain" / "system-outputs" / "newstest2012" / "de-en" / "newstest2012.de-en.C"
    out.write_bytes(b"C1\nC2\n")
    err = _error(read_wmt12, toy, "de-en")
    assert (err.path, err.line) == (str(out), 3)
    out.write_bytes(b"C1\nC\xc32\nC3\n")
    err = _error(read_wmt12, toy, "de-en")
    assert (err.path, err.line) == (str(out), 2) and "UTF-8" in str(err)


def test_bad_language_pair(toy):
    assert "not like 'de-en'" in str(_error(read_wmt12, toy, "german-english"))
