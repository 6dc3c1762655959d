"""combo.io.mutt: MUTT corruption trials (Boag et al. 2016)."""


from combo.io.mutt import CORRUPTION_KINDS, MuttTrial, mutt_testbed, read_mutt, read_mutt_file
from testutil import input_error as _error

COUNTS = {"det_sub": 150, "near_syms": 515, "neg_subj": 543, "neg_verb": 339, "passive": 304,
          "sem_opps": 619, "shuffled": 19}


def test_real_mutt(data):
    sets = read_mutt(data / "mutt" / "corruptions")
    assert {k: len(v) for k, v in sets.items()} == COUNTS  # each equals the file's "num:" line
    first = sets["shuffled"][0]
    assert first == MuttTrial("shuffled", "fluency-disrupting", "FLICKR", "small girl riding in play car",
                              "A small girl is riding in a toy car", "A small toy girl is in a riding car",
                              2.7, None, 9)
    assert all(t.kind == CORRUPTION_KINDS[k] for k, v in sets.items() for t in v)
    assert {t.dataset for v in sets.values() for t in v} == {"FLICKR", "SEMEVAL"}


def test_real_mutt_with_flickr8k_references(data):
    sets = read_mutt(data / "mutt" / "corruptions", flickr8k=data / "flickr8k")
    trials = [t for v in sets.values() for t in v]
    flickr = [t for t in trials if t.dataset == "FLICKR"]
    with_refs = [t for t in flickr if t.references is not None]
    assert len(flickr) == 1173 and len(with_refs) == 1127
    assert all(t.references is None for t in trials if t.dataset == "SEMEVAL")
    first = sets["shuffled"][0]
    assert "Small girl riding in play car ." in first.references and len(first.references) == 5
    tb = mutt_testbed(trials)
    assert len(tb) == 2489 and tb.systems == ["original", "corrupted"]
    assert tb.segments[0].id == "det_sub:1" and tb.segments[0].group == "det_sub"
    tb.validate()


FILE = """neg_verb
negated action

num:     2
mean:    3.0
stddev:  0.5


\tdataset:     SEMEVAL
\torig:        a jet is flying
\tsent:        A jet is flying
\tcorr:        A jet is not flying
\tscore:       2.5
\tdataset:     FLICKR
\torig:        a dog runs
\tsent:        A dog is running 
\tcorr:        A dog is not running
\tscore:       3.5
"""


def _w(tmp_path, text, name="neg_verb.txt"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_toy_file(tmp_path):
    p = _w(tmp_path, FILE)
    trials = read_mutt_file(p)
    # Trailing white space of a sentence is kept; only the padding after "key:" goes.
    assert trials[1] == MuttTrial("neg_verb", "meaning-altering", "FLICKR", "a dog runs", "A dog is running ",
                                  "A dog is not running", 3.5, None, 14)
    tb = mutt_testbed(trials, name="toy")
    # No references known: the original description is the reference.
    assert tb.segments[0].references == ["a jet is flying"] and tb.segments[0].ref_ids == ["orig"]
    assert tb.candidates == {"original": {0: "A jet is flying", 1: "A dog is running "},
                             "corrupted": {0: "A jet is not flying", 1: "A dog is not running"}}


def test_count_and_mean_checked(tmp_path):
    p = _w(tmp_path, FILE.replace("num:     2", "num:     3"))
    err = _error(read_mutt_file, p)
    assert (err.path, err.line) == (str(p), 4) and "3 trials" in str(err)
    p = _w(tmp_path, FILE.replace("mean:    3.0", "mean:    3.1"))
    assert _error(read_mutt_file, p).line == 5


def test_block_order_and_truncation(tmp_path):
    p = _w(tmp_path, FILE.replace("\tsent:        A jet is flying\n", ""))
    err = _error(read_mutt_file, p)
    assert (err.path, err.line) == (str(p), 11) and "expected 'sent:'" in str(err)
    p = _w(tmp_path, FILE.rsplit("\tscore", 1)[0])
    err = _error(read_mutt_file, p)
    assert "stops after 'corr:'" in str(err) and err.line == 17


def test_nan_score_and_wrong_first_line(tmp_path):
    p = _w(tmp_path, FILE.replace("score:       3.5", "score:       nan"))
    err = _error(read_mutt_file, p)
    assert (err.path, err.line) == (str(p), 18) and "NaN" in err.fix
    p = _w(tmp_path, FILE, name="neg_subj.txt")
    assert _error(read_mutt_file, p).line == 1


def test_bad_bytes(tmp_path):
    p = tmp_path / "neg_verb.txt"
    p.write_bytes(FILE.replace("\n", "\r\n").encode())
    assert "CRLF" in str(_error(read_mutt_file, p))
    p.write_bytes(b"")
    assert "empty" in str(_error(read_mutt_file, p))
    p.write_bytes(FILE.encode().replace(b"a jet is flying", b"a j\xe9t"))
    assert _error(read_mutt_file, p).line == 10
    (tmp_path / "empty").mkdir()
    assert "no corruption files" in str(_error(read_mutt, tmp_path / "empty"))
    assert "not a folder" in str(_error(read_mutt, tmp_path / "missing"))
