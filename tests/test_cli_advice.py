"""Refusals whose fix works when followed, in the options of the command that prints them.

On a test bed with 5 references per segment and a ``scores:`` TSV (tests/five_refs.py): combo report's default
criteria leave KING and ORANGE out and say the true reason, instead of refusing the whole report; a run that asked
for KING, ORANGE or QUEEN is refused with a fix that works (leave the file's scores out of -m, or a criterion that
needs no references and reads the test bed's judgments), never one that leads back to another refusal; and a
criterion the judgments cannot measure says what is missing (no judgments, rankings only, system scores only) and
names evaluate's --criteria, search's --criterion, report's --criteria or --search.
"""

import re

import pytest
from click.testing import CliRunner

from combo.cli import main
from five_refs import write_scores, write_testbed


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def options_of(command: str):
    return {opt for p in main.commands[command].params for opt in p.opts + p.secondary_opts}


def refused(command, *args, expect=""):
    """Run ``combo COMMAND ARGS``: one error line, exit 2, every option its fix names exists on COMMAND."""
    res = run(command, *args)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("combo: error: ") and "Traceback" not in res.output, res.output
    line = lines[0]
    assert expect in line, line
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", line))
    assert named <= options_of(command), (named - options_of(command), line)
    return line


def works(command, *args):
    res = run(command, *args, "-q")
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture
def bed(tmp_path):
    return {"tb": write_testbed(tmp_path), "ranks": write_testbed(tmp_path, "preferences", "ranks"),
            "bare": write_testbed(tmp_path, "none", "bare"), "system": write_testbed(tmp_path, "system", "sys"),
            "short": write_testbed(tmp_path, name="short", few_references=2),
            "S": f"scores:{write_scores(tmp_path)}", "dir": tmp_path}


PAIRS = "scores read from a file rate candidates only"


# -- combo report skips what does not apply, and says the true reason --------------------------------------------

@pytest.mark.parametrize("extra", [[], ["--combine", "ulc", "--search", "wmt_kendall"]])
def test_report_with_a_scores_file_leaves_king_out_and_says_why(bed, extra):
    pytest.importorskip("matplotlib")
    out = bed["dir"] / "r.html"
    works("report", "--testbed", bed["tb"], "-m", bed["S"], "-m", "bleu", "--bootstrap", "20", "--out", out, *extra)
    page = out.read_text(encoding="utf-8")
    reason = (f"king is not shown: {bed['S']} is read per candidate from a file, without the reference-against-"
              f"reference scores QUEEN needs; for KING and ORANGE, leave {bed['S']} out of -m (-m bleu).")
    assert reason in page and reason.replace("king is", "orange is") in page
    assert "needs at least 4 references" not in page  # every segment has 5
    out.unlink()
    works("report", "--testbed", bed["tb"], "-m", "bleu", "--bootstrap", "20", "--out", out, *extra)  # the fix
    assert "king is not shown" not in out.read_text(encoding="utf-8")


def test_report_says_king_was_not_asked_for_or_which_segments_lack_references(bed):
    pytest.importorskip("matplotlib")
    out = bed["dir"] / "r.html"
    works("report", "--testbed", bed["tb"], "-m", "bleu", "--criteria", "r_snt", "--bootstrap", "20", "--out", out)
    assert "king is not shown: not asked for (--criteria r_snt)." in out.read_text(encoding="utf-8")
    works("report", "--testbed", bed["short"], "-m", "bleu", "--bootstrap", "20", "--out", out)
    assert ("king is not shown: needs at least 4 references per segment; 2 of 6 segments have fewer."
            in out.read_text(encoding="utf-8"))
    works("evaluate", "--testbed", bed["tb"], "-m", "bleu", "--criteria", "r_snt", "--bootstrap", "20",
          "--report", out)
    assert "king is not shown: not asked for (--criteria r_snt)." in out.read_text(encoding="utf-8")


# -- asked for KING, ORANGE or QUEEN with a scores file: refused with fixes that work ------------------------------

def test_search_king_with_a_scores_file_gives_fixes_that_work_and_no_circle(bed):
    tb, s = bed["tb"], bed["S"]
    line = refused("search", "--testbed", tb, "--criterion", "king", "-m", s, "bleu", "-q", expect=PAIRS)
    assert line.endswith(f"(fix: leave {s} out of -m (-m bleu), or use --criterion r_snt --scheme ulc, which needs "
                         "no references)")
    works("search", "--testbed", tb, "--criterion", "king", "-m", "bleu")
    works("search", "--testbed", tb, "--criterion", "r_snt", "--scheme", "ulc", "-m", s, "bleu")
    # the old fix, --scheme ulc with KING, is refused before any scoring, and its own fix leads back to the
    # first message (whose fixes work), not to another circle
    line = refused("search", "--testbed", tb, "--criterion", "king", "--scheme", "ulc", "-m", s, "bleu", "-q",
                   expect="king measures QUEEN combinations: use --scheme queen (its default)")
    refused("search", "--testbed", tb, "--criterion", "king", "--scheme", "queen", "-m", s, "bleu", "-q",
            expect=PAIRS)
    # on rankings the criterion offered reads rankings
    line = refused("search", "--testbed", bed["ranks"], "--criterion", "king", "-m", s, "bleu", "-q", expect=PAIRS)
    assert "or use --criterion wmt_kendall --scheme ulc, which needs no references" in line
    works("search", "--testbed", bed["ranks"], "--criterion", "wmt_kendall", "--scheme", "ulc", "-m", s, "bleu")
    # without judgments no criterion is offered, only leaving the file out
    line = refused("search", "--testbed", bed["bare"], "--criterion", "king", "-m", s, "bleu", "-q", expect=PAIRS)
    assert line.endswith(f"(fix: leave {s} out of -m (-m bleu))")
    works("search", "--testbed", bed["bare"], "--criterion", "king", "-m", "bleu")


def test_evaluate_and_report_name_their_own_options(bed):
    pytest.importorskip("matplotlib")
    tb, s, out = bed["tb"], bed["S"], bed["dir"] / "r.html"
    line = refused("evaluate", "--testbed", tb, "-m", s, "bleu", "--criteria", "r_snt,king", "-q", expect=PAIRS)
    assert "or use --criteria r_snt, which needs no references" in line
    works("evaluate", "--testbed", tb, "-m", s, "bleu", "--criteria", "r_snt", "--bootstrap", "20")
    line = refused("evaluate", "--testbed", tb, "-m", s, "bleu", "--combine", "queen", "-q", expect=PAIRS)
    assert "or use --combine ulc, which needs no references" in line
    works("evaluate", "--testbed", tb, "-m", s, "bleu", "--combine", "ulc", "--bootstrap", "20")
    line = refused("report", "--testbed", tb, "-m", s, "bleu", "--search", "king", "--out", out, "-q", expect=PAIRS)
    assert "or use --search r_snt, which needs no references" in line
    works("report", "--testbed", tb, "-m", s, "bleu", "--search", "r_snt", "--bootstrap", "20", "--out", out)
    line = refused("report", "--testbed", tb, "-m", s, "bleu", "--criteria", "r_snt,king", "--combine", "ulc,queen",
                   "--out", out, "-q", expect=PAIRS)
    assert "or use --criteria r_snt --combine ulc, which needs no references" in line
    works("report", "--testbed", tb, "-m", s, "bleu", "--criteria", "r_snt", "--combine", "ulc", "--bootstrap", "20",
          "--out", out)
    refused("evaluate", "--testbed", tb, "-m", "bleu", "--criteria", "r_snt", "--king-segments", "3", "-q",
            expect="drop it, or ask for --criteria king")
    refused("evaluate", "--testbed", tb, "-m", "bleu", "--criteria", "mutt", "--combine", "queen", "-q",
            expect="mutt compares the combined scores of a sentence and its corruption: leave queen out of --combine")


def test_report_advice_for_too_few_references_names_only_its_own_options(bed):
    refused("report", "--testbed", bed["short"], "-m", "bleu", "--criteria", "king", "--out", bed["dir"] / "r.html",
            "-q", expect="2 of 6 segments have fewer than 4 references")
    refused("search", "--testbed", bed["short"], "-m", "bleu", "--criterion", "king", "-q",
            expect="pass --min-refs 4 to skip them")


# -- what the judgments lack, in the command's options ---------------------------------------------------------

def test_a_folder_without_judgments_says_so_and_adding_them_works(tmp_path):
    root = tmp_path / "plain"
    (root / "systems").mkdir(parents=True)
    (root / "references").mkdir()
    (root / "references" / "r1.txt").write_text("the cat sat\nthe dog ran\n")
    for name, text in {"A": "the cat sat\na dog ran\n", "B": "cat\ndog\n", "C": "a cat\nthe dog\n"}.items():
        (root / "systems" / f"{name}.txt").write_text(text)
    for command, args in (("evaluate", ["--bootstrap", "20"]), ("search", ["--criterion", "r_snt"])):
        line = refused(command, "--testbed", root, "-m", "bleu", "chrf", "-q", *args,
                       expect="test bed 'plain' has no human judgments (no scores, rankings or system scores): r_snt "
                              "compares metric scores with them (fix: add human judgments to the test bed")
        assert "--criterion wmt_kendall" not in line and "relative rankings)" not in line
    (root / "scores.tsv").write_text("A\t1\t5\nA\t2\t4\nB\t1\t2\nB\t2\t1\nC\t1\t3\nC\t2\t3\n")  # the fix
    works("evaluate", "--testbed", root, "-m", "bleu", "chrf", "--bootstrap", "20")
    works("search", "--testbed", root, "-m", "bleu", "chrf", "--criterion", "r_snt")


def test_no_judgments_with_enough_references_offers_king_in_the_commands_options(bed):
    line = refused("evaluate", "--testbed", bed["bare"], "-m", "bleu", "-q", expect="has no human judgments")
    assert line.endswith("or measure human likeness, which needs references only: --criteria king)")
    works("evaluate", "--testbed", bed["bare"], "-m", "bleu", "--criteria", "king", "--bootstrap", "20")
    line = refused("search", "--testbed", bed["bare"], "-m", "bleu", "chrf", "--criterion", "wmt_kendall", "-q",
                   expect="has no human judgments")
    assert line.endswith("--criterion king)")


@pytest.mark.parametrize("command, ask, extra", [
    ("evaluate", "--criteria", ["--criteria", "seg_kendall", "--bootstrap", "20"]),
    ("search", "--criterion", ["--criterion", "acc_eq_item"]),
    ("report", "--search", ["--search", "wmt23", "--bootstrap", "20"]),
    ("report", "--criteria", ["--criteria", "sys_accuracy", "--bootstrap", "20"]),
])
def test_wmt23_statistics_on_rankings_only_name_the_commands_option(bed, command, ask, extra):
    if command == "report":
        pytest.importorskip("matplotlib")
        extra = extra + ["--out", bed["dir"] / "r.html"]
    wanted = extra[extra.index(ask) + 1]
    line = refused(command, "--testbed", bed["ranks"], "-m", "bleu", "chrf", "-q", *extra,
                   expect=f"test bed 'ranks' has relative rankings only, no absolute segment scores (MQM, DA): "
                          f"{wanted} needs them (fix: use {ask} wmt_kendall or {ask} acc_eq, which read rankings)")
    followed = list(extra)
    followed[followed.index(ask) + 1] = "wmt_kendall"
    works(command, "--testbed", bed["ranks"], "-m", "bleu", "chrf", *followed)


def test_system_scores_only_offer_the_system_level_criteria(bed):
    refused("evaluate", "--testbed", bed["system"], "-m", "bleu", "--criteria", "r_snt", "-q",
            expect="test bed 'sys' has system-level human scores only: r_snt needs segment-level judgments "
                   "(fix: use --criteria pearson or --criteria spearman, which read system scores)")
    works("evaluate", "--testbed", bed["system"], "-m", "bleu", "--criteria", "pearson", "--bootstrap", "20")
