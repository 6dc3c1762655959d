"""Trust, round two: the refusals of the issue, each with its fix followed to a working run.

The one-line messages themselves are cases of the catalogue (tests/bad_inputs/mtme_*, scores_*,
mutt_dataset_misspelt); here: the fixes the messages give work, nothing that read before stops reading, and
the real data behaves as the issue says.
"""

import os

import numpy as np
import pytest
from click.testing import CliRunner

import combo
from combo.cli import main
from combo.io import load_testbed
from combo.io.mutt import read_mutt, read_mutt_file
from test_external_scores import _evalset
from testutil import input_error, write_text as _w


def _run(*args):
    res = CliRunner().invoke(main, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr.strip("\n")


def _one_line_error(code, out, err, expect):
    assert code == 2 and out == "" and "\n" not in err and err.startswith("combo: error: "), (code, out, err)
    assert expect in err, err


# -- 1. two definitions in one column ------------------------------------------------------------

@pytest.mark.parametrize("sys_score, expect", [
    ("sysA\t0.5\nsysB\t0.4\n", "GOOD-refB.sys.score:3: mtme:GOOD: no system score for 'sysC'"),
    ("sysA\t0.5\nsysB\tNone\nsysC\t0.1\n", "GOOD-refB.sys.score:2: mtme:GOOD: system score of 'sysB' is None"),
])
def test_an_incomplete_sys_score_is_refused_and_both_fixes_work(tmp_path, sys_score, expect):
    d = _evalset(tmp_path)
    f = d / "metric-scores" / "he-en" / "GOOD-refB.sys.score"
    f.write_text(sys_score)
    args = ("evaluate", "--testbed", d, "-m", "mtme:GOOD", "--criteria", "pearson,sys_accuracy", "--bootstrap", "0",
            "-q", "--format", "json")
    _one_line_error(*_run(*args), expect)
    assert "give every system's score in GOOD-refB.sys.score, or remove the file" in _run(*args)[2]
    # fix 1: every system's score in the file -> the file's scores
    f.write_text("sysA\t0.5\nsysB\t0.4\nsysC\t0.1\n")
    code, out, _ = _run(*args)
    assert code == 0
    assert combo.score_testbed(load_testbed(d), ["mtme:GOOD"]).system_scores("mtme:GOOD") == \
        {"sysA": 0.5, "sysB": 0.4, "sysC": 0.1}
    # fix 2: no file -> every system score is the mean of its segment scores
    f.unlink()
    code, out, _ = _run(*args)
    assert code == 0
    means = combo.score_testbed(load_testbed(d), ["mtme:GOOD"]).system_scores("mtme:GOOD")
    assert means == pytest.approx({"sysA": 0.8875, "sysB": 0.6375, "sysC": 0.2125}, abs=1e-12)


def test_a_system_without_any_segment_score_may_lack_a_system_score(tmp_path):
    # no mixing: that system has no score of either definition
    d = _evalset(tmp_path)
    seg = d / "metric-scores" / "he-en" / "GOOD-refB.seg.score"
    seg.write_text("".join(line.split("\t")[0] + "\tNone\n" if line.startswith("sysC") else line + "\n"
                           for line in seg.read_text().split("\n") if line))
    (d / "metric-scores" / "he-en" / "GOOD-refB.sys.score").write_text("sysA\t0.5\nsysB\t0.4\n")
    table = combo.score_testbed(load_testbed(d), ["mtme:GOOD"])
    got = table.system_scores("mtme:GOOD")
    assert got["sysA"] == 0.5 and got["sysB"] == 0.4 and np.isnan(got["sysC"])


def _wmt23_with(tmp_path, data, lp, replace):
    """The WMT23 release under tmp_path, linked file by file, with ``replace`` = {metric-scores file: text}."""
    root = tmp_path / "wmt23"
    root.mkdir()
    for sub in (data / "wmt23").iterdir():
        if sub.name != "metric-scores":
            os.symlink(sub, root / sub.name)
    ms = root / "metric-scores" / lp
    ms.mkdir(parents=True)
    for f in (data / "wmt23" / "metric-scores" / lp).iterdir():
        if f.name in replace:
            if replace[f.name] is not None:
                (ms / f.name).write_text(replace[f.name], encoding="utf-8")
        else:
            os.symlink(f, ms / f.name)
    return root


def test_wmt23_chrf_without_one_system_score_is_refused(tmp_path, data):
    # the command: the others got the file's corpus chrF, ONLINE-W the mean of its segment chrF
    sys_file = data / "wmt23" / "metric-scores" / "en-de" / "chrF-refA.sys.score"
    lacking = "".join(line + "\n" for line in sys_file.read_text().split("\n") if line and
                      not line.startswith("ONLINE-W"))
    root = _wmt23_with(tmp_path, data, "en-de", {"chrF-refA.sys.score": lacking})
    args = ("evaluate", "--testbed", root, "--lp", "en-de", "-m", "mtme:chrF", "--criteria", "pearson,sys_accuracy",
            "--bootstrap", "0", "-q")
    _one_line_error(*_run(*args), "chrF-refA.sys.score:13: mtme:chrF: no system score for 'ONLINE-W'")
    # the fix: remove the file, and every system score is the mean of its segment scores
    (root / "metric-scores" / "en-de" / "chrF-refA.sys.score").unlink()
    assert _run(*args)[0] == 0
    tb = load_testbed(root, lp="en-de")
    table = combo.score_testbed(tb, ["mtme:chrF"])
    scores = table.system_scores("mtme:chrF")
    rows = table.segment[0][table.row_system == table.systems.index("ONLINE-W")]
    assert scores["ONLINE-W"] == pytest.approx(rows.mean(), abs=1e-12)


def test_wmt23_complete_sys_scores_are_still_the_files(data):
    tb = load_testbed(data / "wmt23", lp="he-en")
    table = combo.score_testbed(tb, ["mtme:chrF", "mtme:CometKiwi"])
    for spec, name in (("mtme:chrF", "chrF-refB"), ("mtme:CometKiwi", "CometKiwi-src")):
        lines = (data / "wmt23" / "metric-scores" / "he-en" / f"{name}.sys.score").read_text().split("\n")
        given = {line.split("\t")[0]: float(line.split("\t")[1]) for line in lines if line}
        got = table.system_scores(spec)
        assert got and all(got[s] == given[s] for s in got)


# -- 2. numbers that are not numbers (messages: the catalogue; here what must still read) ---------

def test_json_and_tsv_give_identical_scores_for_every_finite_spelling(tmp_path):
    tb = load_testbed(_evalset(tmp_path))
    spellings = [("0.5", "0.5"), ("-0", "-0"), ("1e-400", "1e-400"),
                 ("1.7976931348623157e308", "1.7976931348623157e308"),
                 ("12345678901234567890123", "12345678901234567890123"), ("3.", "3.0"), (".25", "0.25"), ("+2", "2"),
                 ("-1E+2", "-1E+2"), ("0.1000000000000000055511151231257827", "0.1000000000000000055511151231257827"),
                 (" 7 ", " 7 "), ("1e308", "1e308")]
    cands = [(s, str(i)) for s in ("sysA", "sysB", "sysC") for i in range(1, 5)]
    tsv = "".join(f"{s}\t{i}\t{spellings[k][0]}\n" for k, (s, i) in enumerate(cands))
    doc = {}
    for k, (s, i) in enumerate(cands):
        doc.setdefault(s, []).append(f'"{i}": {spellings[k][1]}')
    _w(tmp_path / "v.tsv", tsv)
    _w(tmp_path / "v.json", "{" + ", ".join(f'"{s}": {{{", ".join(v)}}}' for s, v in doc.items()) + "}")
    table = combo.score_testbed(tb, [f"scores:{tmp_path / 'v.tsv'}", f"scores:{tmp_path / 'v.json'}"])
    np.testing.assert_array_equal(table.segment[0], table.segment[1])
    assert [repr(float(v)) for v in table.segment[0]] == [repr(float(t)) for t, _ in spellings]


def test_an_empty_tsv_field_is_refused_and_none_or_null_still_mean_missing(tmp_path):
    tb = load_testbed(_evalset(tmp_path))
    body = "".join(f"{s}\t{i}\t0.5\n" for s in ("sysA", "sysB", "sysC") for i in range(1, 5))
    f = _w(tmp_path / "s.tsv", body.replace("sysB\t2\t0.5", "sysB\t2\t"))
    err = input_error(combo.score_testbed, tb, [f"scores:{f}"])
    assert (err.path, err.line) == (str(f), 6) and "score is empty" in err.reason
    for mark in ("None", "null"):  # the fix: None (or null) where there is no score
        _w(f, body.replace("sysB\t2\t0.5", f"sysB\t2\t{mark}"))
        assert combo.score_testbed(tb, [f"scores:{f}"]).metadata["missing_scores"] == {f"scores:{f}": 1}


def test_a_file_without_a_score_names_the_metric_and_the_file_not_an_index(tmp_path):
    # was: "metric 0 has infinite scores or none at all" from ULC, after scoring printed a column of nan
    d = _evalset(tmp_path)
    f = _w(tmp_path / "s.tsv", "".join(f"{s}\t{i}\tNone\n" for s in ("sysA", "sysB", "sysC") for i in range(1, 5)))
    code, out, err = _run("evaluate", "--testbed", d, "-m", "chrf", "-m", f"scores:{f}", "--bootstrap", "0", "-q")
    _one_line_error(code, out, err, f"{f}: scores:{f}: no candidate of test bed 'wmt23.he-en' has a score")
    assert "metric 0" not in err
    p = d / "metric-scores" / "he-en" / "GOOD-refB.seg.score"
    p.write_text("".join(f"{line.split()[0]}\tNone\n" for line in p.read_text().split("\n") if line))
    err = input_error(combo.score_testbed, load_testbed(d), ["mtme:GOOD"])
    assert err.path == str(p) and err.reason.startswith("mtme:GOOD: no candidate")
    # the fix: give the scores
    _w(f, "".join(f"{s}\t{i}\t0.{i}\n" for s in ("sysA", "sysB", "sysC") for i in range(1, 5)))
    assert _run("evaluate", "--testbed", d, "-m", "chrf", "-m", f"scores:{f}", "--bootstrap", "0", "-q")[0] == 0


def test_json_numbers_name_their_line(tmp_path):
    tb = load_testbed(_evalset(tmp_path))
    f = _w(tmp_path / "s.json", '{"sysA": {"1": 0.5, "2": 0.25},\n "sysB": {"1e400": 1,\n  "2": -1e400}}\n')
    err = input_error(combo.score_testbed, tb, [f"scores:{f}"])
    assert (err.path, err.line) == (str(f), 3) and "'-1e400' is beyond the float range" in err.reason


# -- 3. quietly a different file -----------------------------------------------------------------

def _two_reference_set(root):
    d = root / "wmt23"
    _w(d / "sources" / "en-de.txt", "s1\ns2\n")
    _w(d / "references" / "en-de.refA.txt", "the cat sat\na dog ran\n")
    _w(d / "references" / "en-de.synthetic_ref.txt", "the cat sits\na dog runs\n")
    _w(d / "system-outputs" / "en-de" / "sysA.txt", "the cat sat\na dog ran\n")
    _w(d / "system-outputs" / "en-de" / "sysB.txt", "cat\ndog\n")
    ms = d / "metric-scores" / "en-de"
    _w(ms / "chrF-refA.seg.score", "sysA\t0.9\nsysA\t0.8\nsysB\t0.1\nsysB\t0.2\n")
    _w(ms / "chrF-src.seg.score", "sysA\t0.7\nsysA\t0.6\nsysB\t0.3\nsysB\t0.4\nrefA\t0.5\nrefA\t0.5\n")
    return d


def test_a_missing_reference_file_is_not_replaced_by_the_reference_free_one_and_the_fixes_work(tmp_path):
    d = _two_reference_set(tmp_path)
    synthetic = load_testbed(d, lp="en-de", references="synthetic_ref")
    err = input_error(combo.score_testbed, synthetic, ["mtme:chrF"])
    assert err.path.endswith("chrF-synthetic_ref.seg.score")
    assert "found chrF-refA.seg.score, chrF-src.seg.score" in err.reason
    assert err.fix == ("choose a reference it was scored against: --testbed-option references=refA; "
                       "or read the reference-free scores on purpose: -m mtme:chrF-src")
    # fix 1: the reference it was scored against
    code, out, _ = _run("score", "--testbed", d, "--lp", "en-de", "--testbed-option", "references=refA",
                        "-m", "mtme:chrF", "-q")
    assert code == 0 and "sysA\t0.850000" in out
    # fix 2: the reference-free file, named
    code, out, _ = _run("score", "--testbed", d, "--lp", "en-de", "--testbed-option", "references=synthetic_ref",
                        "-m", "mtme:chrF-src", "-q")
    assert code == 0 and "sysA\t0.650000" in out


def test_a_reference_free_metric_still_reads_its_src_file(tmp_path):
    d = _two_reference_set(tmp_path)
    (d / "metric-scores" / "en-de" / "chrF-refA.seg.score").rename(d / "metric-scores" / "en-de" / "QE-src.seg.score")
    tb = load_testbed(d, lp="en-de", references="synthetic_ref")
    table = combo.score_testbed(tb, ["mtme:QE"])
    assert table.system_scores("mtme:QE")["sysA"] == pytest.approx(0.85)


def test_wmt23_reads_every_metric_as_before(data):
    # no metric of the release has both reference files and a -src file: every name resolves as it did
    for lp, ref in (("en-de", "synthetic_ref"), ("he-en", "refA")):
        tb = load_testbed(data / "wmt23", lp=lp, references=ref)
        names = sorted({p.name[:-len(".seg.score")].rsplit("-", 1)[0]
                        for p in (data / "wmt23" / "metric-scores" / lp).glob("*.seg.score")})
        for name in names:
            seg, _ = combo.get_metric(f"mtme:{name}").files(tb)
            assert seg.name in (f"{name}-{ref}.seg.score", f"{name}-src.seg.score")


# -- 4. a trial dropped for the wrong reason -----------------------------------------------------

TRIAL = ("\tdataset:     {d}\n\torig:        a dog runs\n\tsent:        A dog is running\n"
         "\tcorr:        No dog is running\n\tscore:       2.5\n")


@pytest.mark.parametrize("dataset", ["FLIKR", "flickr", "FLICKR ", "", "SemEval"])
def test_an_unknown_mutt_dataset_is_refused_naming_the_line(tmp_path, dataset):
    f = _w(tmp_path / "neg_subj.txt", "neg_subj\nnegate\n\n" + TRIAL.format(d="FLICKR") + TRIAL.format(d=dataset))
    err = input_error(read_mutt_file, f)
    assert (err.path, err.line) == (str(f), 9) and "unknown dataset" in err.reason
    assert "FLICKR, SEMEVAL" in err.reason
    _w(f, "neg_subj\nnegate\n\n" + TRIAL.format(d="FLICKR") + TRIAL.format(d="SEMEVAL"))  # the fix
    assert [t.dataset for t in read_mutt_file(f)] == ["FLICKR", "SEMEVAL"]


def test_the_released_mutt_files_read_as_before(data):
    sets = read_mutt(data / "mutt" / "corruptions")
    datasets = [t.dataset for trials in sets.values() for t in trials]
    assert set(datasets) == {"FLICKR", "SEMEVAL"} and len(datasets) > 0
