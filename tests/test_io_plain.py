"""combo.io.plain: aligned plain-text files, on WMT12 de-en and on small bad files."""

import pytest

from combo.io.plain import names_from_paths, read_plain, read_plain_dir
from combo.testbed import Score
from testutil import input_error as _error


def _write(path, text: str, raw: bytes = None):
    path.parent.mkdir(parents=True, exist_ok=True)
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def small(tmp_path):
    """Three segments, two references with weights, two systems, a score file."""
    d = tmp_path
    return dict(
        source=_write(d / "src.txt", "eins\nzwei\ndrei\n"),
        references=[_write(d / "ref.a.txt", "one\ntwo\n\n"), _write(d / "ref.b.txt", "1\n2\n3\n")],
        weights=[_write(d / "w.a.txt", "1\n0.5\n-1\n"), _write(d / "w.b.txt", "0\n1\n0.25\n")],
        systems=[_write(d / "hyp.sysA.txt", "one\nto\n\n"), _write(d / "hyp.sysB.txt", "won\ntwo\nthree\n")],
        scores=_write(d / "scores.tsv", "sysA\t1\t0.9\tann\tadequacy\nsysB\t3\t0.1\n"),
    )


def test_small_plain_testbed(small):
    tb = read_plain(**small, name="toy")
    assert tb.name == "toy" and len(tb) == 3 and tb.systems == ["sysA", "sysB"]
    # Segment 3: source "drei", references "" (an empty reference is valid) and "3",
    # weights -1 (from w.a line 3) and 0.25 (from w.b line 3); ref ids from the file names.
    seg = tb.segments[2]
    assert (seg.id, seg.source, seg.references, seg.weights, seg.ref_ids) == \
        ("3", "drei", ["", "3"], [-1.0, 0.25], ["a", "b"])
    assert tb.candidates["sysA"] == {0: "one", 1: "to", 2: ""}
    assert tb.scores == [Score("sysA", 0, 0.9, "ann", "adequacy"), Score("sysB", 2, 0.1, None, "score")]
    assert tb.reference_weights()[1] == [0.5, 1.0]
    tb.validate()


def test_systems_as_mapping_and_no_source(small):
    tb = read_plain(references=small["references"][1], systems={"x": small["systems"][0]})
    assert len(tb) == 3 and tb.segments[0].source == "" and tb.systems == ["x"]
    assert tb.segments[0].ref_ids == ["ref.b"]


def test_names_from_paths():
    assert names_from_paths(["d/newstest2012.de-en.onlineA", "e/newstest2012.de-en.onlineB"]) == \
        ["onlineA", "onlineB"]
    assert names_from_paths(["sysA.txt", "sysB.txt"]) == ["sysA", "sysB"]
    assert names_from_paths(["x/newstest2012.de-en.QCRI--primary"]) == ["newstest2012.de-en.QCRI--primary"]
    assert names_from_paths(["a.v1.txt", "a.v2.txt"]) == ["v1", "v2"]


def test_real_wmt12_de_en(data, wmt12_de_en):
    plain = data / "wmt12" / "plain"
    ref, systems = wmt12_de_en
    files = sorted((plain / "system-outputs" / "newstest2012" / "de-en").iterdir())
    tb = read_plain(plain / "sources" / "newstest2012-src.de", [plain / "references" / "newstest2012-ref.en"],
                    files, name="de-en")
    assert len(tb) == 3003 and sorted(tb.systems) == sorted(systems)
    assert tb.references() == [[r] for r in ref]
    for name, lines in systems.items():
        assert [tb.candidates[name][i] for i in range(3003)] == lines
    tb.validate()


def test_plain_dir(tmp_path):
    _write(tmp_path / "source.txt", "a\nb\n")
    _write(tmp_path / "references" / "r1.txt", "A\nB\n")
    _write(tmp_path / "references" / "r2.txt", "AA\nBB\n")
    _write(tmp_path / "weights" / "r1.txt", "1\n1\n")
    _write(tmp_path / "weights" / "r2.txt", "-0.5\n0\n")
    _write(tmp_path / "systems" / "s.one.txt", "x\ny\n")
    _write(tmp_path / "scores.tsv", "s.one\t2\t3\n")
    tb = read_plain_dir(tmp_path)
    assert tb.systems == ["s.one"] and tb.segments[1].ref_ids == ["r1", "r2"]
    assert tb.segments[0].weights == [1.0, -0.5] and tb.scores == [Score("s.one", 1, 3.0)]
    (tmp_path / "weights" / "r2.txt").unlink()
    err = _error(read_plain_dir, tmp_path)
    assert err.path == str(tmp_path / "weights" / "r2.txt")


# -- bad input: one InputError naming the file and the line ------------------------------
def test_system_with_too_few_lines(small):
    _write(small["systems"][1], "won\ntwo\n")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["systems"][1]), 3) and "2 lines" in str(err) and err.fix


def test_reference_with_too_many_lines(small):
    _write(small["references"][0], "1\n2\n3\n4\n")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["references"][0]), 4)


def test_weight_file_with_wrong_line_count(small):
    _write(small["weights"][1], "1\n")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["weights"][1]), 2)


def test_empty_and_missing_files(small, tmp_path):
    _write(small["systems"][0], "")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["systems"][0]), 1) and "empty" in str(err)
    small["systems"][0] = tmp_path / "missing.txt"
    err = _error(read_plain, **small)
    assert err.path == str(tmp_path / "missing.txt") and "not found" in str(err)


def test_invalid_utf8_bom_crlf(small):
    _write(small["systems"][0], None, b"one\nt\xe9o\n\n")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["systems"][0]), 2) and "UTF-8" in str(err)
    _write(small["systems"][0], None, b"\xef\xbb\xbfone\nto\n\n")
    assert list(read_plain(**small).candidates.values())[0][0] == "one"  # the mark is dropped
    _write(small["systems"][0], None, b"one\r\nto\r\n\r\n")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["systems"][0]), 1) and "CRLF" in str(err)


def test_nan_and_infinite_values(small):
    _write(small["weights"][0], "1\nnan\n0\n")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["weights"][0]), 2) and "NaN" in err.fix
    _write(small["weights"][0], "1\n1\n1\n")
    _write(small["scores"], "sysA\t1\t0.5\nsysB\t2\tinf\n")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["scores"]), 2) and "NaN" in err.fix


def test_weight_out_of_range(small):
    _write(small["weights"][1], "0\n1.5\n0\n")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["weights"][1]), 2) and "outside" in str(err)


def test_scores_name_unknown_system_or_segment(small):
    _write(small["scores"], "sysA\t1\t0.5\nsysC\t1\t0.5\n")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["scores"]), 2) and "unknown system 'sysC'" in str(err)
    _write(small["scores"], "sysA\t4\t0.5\n")
    err = _error(read_plain, **small)
    assert (err.path, err.line) == (str(small["scores"]), 1) and "outside 1..3" in str(err)


def test_duplicate_system_names(small, tmp_path):
    a = _write(tmp_path / "a" / "sys.txt", "1\n2\n3\n")
    b = _write(tmp_path / "b" / "sys.txt", "1\n2\n3\n")
    small["systems"] = [a, b]
    err = _error(read_plain, **small)
    assert err.path == str(b) and "duplicate system name 'sys'" in str(err)


def test_weights_need_one_file_per_reference(small):
    small["weights"] = small["weights"][:1]
    err = _error(read_plain, **small)
    assert "1 weight files for 2 reference files" in str(err)


def test_jsonl_round_trip(small, tmp_path):
    from combo.io import read_jsonl, write_jsonl

    tb = read_plain(**small)
    write_jsonl(tb, tmp_path / "plain.jsonl")
    assert read_jsonl(tmp_path / "plain.jsonl") == tb
