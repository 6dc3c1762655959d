"""combo.io.flickr8k: expert and crowd caption judgments, with the published protocol."""

import pytest

from combo.errors import OptionError
from combo.io.flickr8k import read_flickr8k
from combo.testbed import Score
from testutil import input_error as _error, write_text as _w


def test_real_expert_protocol(data):
    tb = read_flickr8k(data / "flickr8k", "expert")
    md = tb.metadata
    assert md["dropped_own_caption_pairs"] == 158 and md["pairs"] == 5664 and md["dropped_images"] == 0
    assert len(tb) == 1000 and sum(len(c) for c in tb.candidates.values()) == 5664
    assert len(tb.scores) == 3 * 5664 and {s.rater for s in tb.scores} == {"e1", "e2", "e3"}
    assert {s.aspect for s in tb.scores} == {"expert"}
    assert all(len(seg.references) == 5 and seg.group == "test" for seg in tb.segments)
    # First line: 1056338697_4f7d7ce270.jpg  2549968784_39bfbe44f9.jpg#2  1 1 1
    seg = tb.segment_index()["1056338697_4f7d7ce270.jpg"]
    assert tb.segments[seg].ref_ids == [f"1056338697_4f7d7ce270.jpg#{k}" for k in range(5)]
    sysname = "2549968784_39bfbe44f9.jpg#2"
    assert [(s.rater, s.value) for s in tb.scores if s.system == sysname and s.segment == seg] == \
        [("e1", 1.0), ("e2", 1.0), ("e3", 1.0)]
    tokens = (data / "flickr8k" / "Flickr8k.token.txt").read_text(encoding="utf-8").split("\n")
    caption = next(line.split("\t")[1] for line in tokens if line.startswith(sysname + "\t"))
    assert tb.candidates[sysname][seg] == caption
    tb.validate()


def test_real_expert_without_protocol(data):
    tb = read_flickr8k(data / "flickr8k", "expert", drop_own_captions=False)
    assert tb.metadata["pairs"] == 5822 and tb.metadata["dropped_own_caption_pairs"] == 0


def test_real_crowd(data):
    tb = read_flickr8k(data / "flickr8k", "crowd")
    assert tb.metadata["pairs"] == 47109 and tb.metadata["dropped_own_caption_pairs"] == 721
    assert len(tb.scores) == 47109 and {s.aspect for s in tb.scores} == {"crowd"}
    assert all(0.0 <= s.value <= 1.0 for s in tb.scores)
    full = read_flickr8k(data / "flickr8k", "crowd", drop_own_captions=False)
    # First line: 1056338697_4f7d7ce270.jpg  1056338697_4f7d7ce270.jpg#2  1  3  0 (its own caption).
    assert full.scores[0] == Score("1056338697_4f7d7ce270.jpg#2", 0, 1.0, None, "crowd")


def test_bad_option(data):
    with pytest.raises(OptionError):
        read_flickr8k(data / "flickr8k", "experts")


# -- bad input on small files ----------------------------------------------------------------
@pytest.fixture
def toy(tmp_path):
    caps = "".join(f"{img}.jpg#{k}\t{img} caption {k}\n" for img in ("i1", "i2") for k in range(5))
    _w(tmp_path / "Flickr8k.token.txt", caps)
    _w(tmp_path / "ExpertAnnotations.txt", "i1.jpg\ti2.jpg#0\t1\t2\t2\ni1.jpg\ti1.jpg#3\t4\t4\t4\n"
                                            "i2.jpg\ti1.jpg#0\t3\t3\t4\n")
    _w(tmp_path / "CrowdFlowerAnnotations.txt", "i1.jpg\ti2.jpg#1\t0.333333333333333\t1\t2\n")
    return tmp_path


def test_toy_by_hand(toy):
    tb = read_flickr8k(toy)
    # i1.jpg#3 is i1's own caption: dropped. Two pairs remain, one per image.
    assert [s.id for s in tb.segments] == ["i1.jpg", "i2.jpg"] and tb.metadata["dropped_own_caption_pairs"] == 1
    assert tb.candidates == {"i2.jpg#0": {0: "i2 caption 0"}, "i1.jpg#0": {1: "i1 caption 0"}}
    assert tb.segments[1].references == [f"i2 caption {k}" for k in range(5)]
    assert [s.value for s in tb.scores] == [1.0, 2.0, 2.0, 3.0, 3.0, 4.0]
    crowd = read_flickr8k(toy, "crowd")
    assert crowd.scores == [Score("i2.jpg#1", 0, 0.333333333333333, None, "crowd")]


def test_unknown_caption_or_image(toy):
    p = _w(toy / "ExpertAnnotations.txt", "i1.jpg\ti2.jpg#0\t1\t2\t2\ni1.jpg\ti9.jpg#0\t1\t1\t1\n")
    err = _error(read_flickr8k, toy)
    assert (err.path, err.line) == (str(p), 2) and "unknown caption 'i9.jpg#0'" in str(err)
    _w(p, "i7.jpg\ti2.jpg#0\t1\t2\t2\n")
    err = _error(read_flickr8k, toy)
    assert (err.path, err.line) == (str(p), 1) and "unknown image" in str(err)


def test_nan_or_out_of_range_scores(toy):
    p = _w(toy / "ExpertAnnotations.txt", "i1.jpg\ti2.jpg#0\t1\tnan\t2\n")
    err = _error(read_flickr8k, toy)
    assert (err.path, err.line) == (str(p), 1) and "NaN" in err.fix
    _w(p, "i1.jpg\ti2.jpg#0\t1\t5\t2\n")
    assert "outside [1, 4]" in str(_error(read_flickr8k, toy))
    q = _w(toy / "CrowdFlowerAnnotations.txt", "i1.jpg\ti2.jpg#1\tinf\t1\t2\n")
    err = _error(read_flickr8k, toy, "crowd")
    assert (err.path, err.line) == (str(q), 1)
    _w(q, "i1.jpg\ti2.jpg#1\t0.5\t1\t2\n")
    assert "does not match" in str(_error(read_flickr8k, toy, "crowd"))


def test_duplicate_pair_and_field_count(toy):
    p = _w(toy / "ExpertAnnotations.txt", "i1.jpg\ti2.jpg#0\t1\t2\t2\ni1.jpg\ti2.jpg#0\t1\t1\t1\n")
    err = _error(read_flickr8k, toy)
    assert (err.path, err.line) == (str(p), 2) and "judged twice" in str(err)
    _w(p, "i1.jpg\ti2.jpg#0\t1\t2\n")
    assert _error(read_flickr8k, toy).line == 1


def test_bad_bytes_and_empty_files(toy):
    tok = toy / "Flickr8k.token.txt"
    plain = read_flickr8k(toy)
    tok.write_bytes(b"\xef\xbb\xbf" + tok.read_bytes())
    assert read_flickr8k(toy).segments == plain.segments  # the mark is dropped, not read as text
    tok.write_bytes(tok.read_bytes()[3:].replace(b"\n", b"\r\n"))
    assert "CRLF" in str(_error(read_flickr8k, toy))
    ex = toy / "ExpertAnnotations.txt"
    ex.write_bytes(b"")
    tok.write_bytes(tok.read_bytes().replace(b"\r\n", b"\n"))
    err = _error(read_flickr8k, toy)
    assert (err.path, err.line) == (str(ex), 1) and "empty" in str(err)
    ex.unlink()
    assert "not found" in str(_error(read_flickr8k, toy))


def test_duplicate_caption_id(toy):
    tok = _w(toy / "Flickr8k.token.txt", "i1.jpg#0\ta\ni1.jpg#0\tb\n")
    err = _error(read_flickr8k, toy)
    assert (err.path, err.line) == (str(tok), 2) and "duplicate caption id" in str(err)
