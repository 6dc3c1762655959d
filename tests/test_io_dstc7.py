"""combo.io.dstc7: DSTC7 Task 2 responses, multi-references and human ratings."""

from collections import defaultdict

import pytest

from combo.errors import OptionError
from combo.io.dstc7 import copy_key, read_dstc7
from combo.testbed import Score
from testutil import input_error as _error, write_text as _w


def test_real_dstc7(data):
    tb = read_dstc7(data / "dstc7")
    md = tb.metadata
    assert md["instances"] == 1000 and md["skipped_no_references"] == 46 and len(tb) == 954
    assert md["human_copy_instances"] == 893 and md["human_copy_references_removed"] == 909
    assert len(tb.systems) == 10 and "Human" in tb.systems and "TeamEC" not in tb.systems
    assert all(len(c) == 954 for c in tb.candidates.values())
    # 33,000 per-judge rows, 46 skipped instances x 11 judged system labels x 3 judges = 1,518 skipped.
    assert md["skipped_judgments"] == 1518
    per_judge = [s for s in tb.scores if s.aspect in ("relevance", "informativeness")]
    assert len(per_judge) == 2 * (33000 - 1518)
    assert sum(s.aspect == "mean" for s in tb.scores) == 954 * 10
    assert tb.system_scores["mean"]["Human"] == 3.55 and len(tb.system_scores["mean"]) == 10
    # First instance: the Human response copies Reference2, which is removed.
    seg = tb.segments[tb.segment_index()["001b44fffd2e2208487824836dbc9594b06068defc9f5164e2c54fc7"]]
    assert "Reference2" not in seg.ref_ids and seg.ref_ids[:2] == ["Reference1", "Reference3"]
    assert seg.references[0] == "Selling forehead DM me"
    assert seg.source.startswith("lauda returned to running his airline")
    tb.validate()


def test_real_teamec_judgments_pool_into_teamce(data):
    # The organisers' mean file equals the mean of Relevance and Informativeness over
    # all of a system's ratings, TeamEC's pooled into TeamCE: check every cell.
    tb = read_dstc7(data / "dstc7")
    pooled = defaultdict(list)
    means = {}
    for s in tb.scores:
        if s.aspect == "mean":
            means[s.system, s.segment] = s.value
        else:
            pooled[s.system, s.segment].append(s.value)
    assert len(pooled) == len(means) == 9540
    worst = max(abs(round(sum(v) / len(v), 2) - means[k]) for k, v in pooled.items())
    assert worst < 1e-9
    assert {len(v) for k, v in pooled.items() if k[0] == "TeamCE"} == {12}  # 6 ratings x 2 aspects


def test_real_min_references_and_no_copy_removal(data):
    tb3 = read_dstc7(data / "dstc7", min_references=3)
    assert len(tb3) == 953 and tb3.metadata["human_copy_instances"] == 893  # "893 of 953" in the data README
    raw = read_dstc7(data / "dstc7", remove_human_copy=False)
    assert len(raw) == 954 and raw.metadata["human_copy_instances"] == 0
    human = raw.candidates["Human"]
    copied = sum(copy_key(human[i]) in {copy_key(r) for r in seg.references} for i, seg in enumerate(raw.segments))
    assert copied == 893


def test_copy_key():
    assert copy_key("nah, he just left us in south africa. :|") == copy_key("Nah , he just left us in South Africa . :")
    assert copy_key(":(") == ":(" and copy_key("?? ?") == copy_key("? ? ?") != copy_key(":(")
    assert copy_key("\\*goes and makes\\*") == copy_key("* Goes and makes *")


# -- small files -------------------------------------------------------------------------
@pytest.fixture
def toy(tmp_path):
    _w(tmp_path / "dstc7-task2-context.tsv", "InstanceID\tDepth\tContext\nq1\t2\tctx one\nq2\t3\tctx two\n"
       "q3\t2\tctx three\n")
    _w(tmp_path / "dstc7-task2-gold_responses.tsv", "InstanceID\tReference1\t...\nq1\tHello , World !\tbye\n"
       "q2\t\nq3\tyes\tno\tmaybe\n")
    _w(tmp_path / "dstc7-task2-system_responses.tsv",
       "SystemID\tInstanceID\tResponse\nHuman\tq1\thello, world!\nHuman\tq2\tx\nHuman\tq3\tsure\n"
       "Bot\tq1\thi\nBot\tq2\tyo\nBot\tq3\tyes\n")
    (tmp_path / "dstc7-task2-human-eval-per-judge.tsv").write_bytes(
        "\ufeffJudgeID\tInstanceID\tSystemID\tRelevance\tInformativeness\n"
        "j1\tq1\tHuman\t5\t4\nj2\tq1\tBot\t2\t1\nj1\tq2\tBot\t3\t3\nj3\tq3\tBotAlias\t4\t2\n".encode("utf-8"))
    _w(tmp_path / "dstc7-task2-human_evaluation.tsv", "InstanceID\tBot\tHuman\nq1\t1.50\t4.50\nq2\t3.00\t2.00\n"
       "q3\t3.00\t1.00\nAverage\t2.50\t2.50\n")
    return tmp_path


def test_toy_by_hand(toy):
    tb = read_dstc7(toy, system_aliases={"BotAlias": "Bot"})
    # q2 has no reference: skipped with its judgment (j1 on q2) and its 2 mean values.
    # In q1 the Human response "hello, world!" copies "Hello , World !" (same letters once
    # lower-cased), so that reference is removed; q3 has no copy.
    assert [s.id for s in tb.segments] == ["q1", "q3"]
    assert tb.segments[0].references == ["bye"] and tb.segments[0].ref_ids == ["Reference2"]
    assert tb.segments[1].references == ["yes", "no", "maybe"] and tb.segments[1].source == "ctx three"
    assert tb.candidates == {"Human": {0: "hello, world!", 1: "sure"}, "Bot": {0: "hi", 1: "yes"}}
    assert tb.scores[:2] == [Score("Human", 0, 5.0, "j1", "relevance"), Score("Human", 0, 4.0, "j1", "informativeness")]
    assert Score("Bot", 1, 4.0, "j3", "relevance") in tb.scores
    assert sorted((s.system, s.segment, s.value) for s in tb.scores if s.aspect == "mean") == \
        [("Bot", 0, 1.5), ("Bot", 1, 3.0), ("Human", 0, 4.5), ("Human", 1, 1.0)]
    md = tb.metadata
    assert (md["skipped_no_references"], md["human_copy_instances"], md["skipped_judgments"],
            md["skipped_mean_scores"]) == (1, 1, 1, 2)
    assert tb.system_scores == {"mean": {"Bot": 2.5, "Human": 2.5}}
    assert md["depth"] == {"q1": 2, "q3": 2}


def test_unknown_system_in_judgments(toy):
    err = _error(read_dstc7, toy)  # BotAlias without an alias
    assert err.line == 5 and err.path.endswith("per-judge.tsv") and "unknown system 'BotAlias'" in str(err)


def test_unknown_instance_and_nan(toy):
    p = toy / "dstc7-task2-human-eval-per-judge.tsv"
    p.write_bytes("JudgeID\tInstanceID\tSystemID\tRelevance\tInformativeness\nj1\tq9\tBot\t1\t1\n".encode())
    err = _error(read_dstc7, toy)
    assert (err.path, err.line) == (str(p), 2) and "unknown InstanceID 'q9'" in str(err)
    p.write_bytes("JudgeID\tInstanceID\tSystemID\tRelevance\tInformativeness\nj1\tq1\tBot\t1\tNaN\n".encode())
    err = _error(read_dstc7, toy)
    assert (err.path, err.line) == (str(p), 2) and "NaN" in err.fix
    p.write_bytes("JudgeID\tInstanceID\tSystemID\tRelevance\tInformativeness\nj1\tq1\tBot\t1\t2\n".encode())
    m = _w(toy / "dstc7-task2-human_evaluation.tsv", "InstanceID\tBot\tHuman\nq1\t1.50\tinf\n")
    err = _error(read_dstc7, toy)
    assert (err.path, err.line) == (str(m), 2)


def test_duplicate_system_column_and_short_row(toy):
    m = _w(toy / "dstc7-task2-human_evaluation.tsv", "InstanceID\tBot\tBot\nq1\t1\t2\n")
    err = _error(read_dstc7, toy, system_aliases={"BotAlias": "Bot"})
    assert (err.path, err.line) == (str(m), 1) and "duplicate system column 'Bot'" in str(err)
    _w(m, "InstanceID\tBot\tHuman\nq1\t1\n")
    assert _error(read_dstc7, toy, system_aliases={"BotAlias": "Bot"}).line == 2


def test_bom_dropped_and_crlf_rejected_in_other_files(toy):
    c = toy / "dstc7-task2-context.tsv"
    plain = read_dstc7(toy, system_aliases={"BotAlias": "Bot"})
    c.write_bytes(b"\xef\xbb\xbf" + c.read_bytes())
    assert read_dstc7(toy, system_aliases={"BotAlias": "Bot"}).segments == plain.segments  # a mark, not text
    c.write_bytes(c.read_bytes()[3:].replace(b"\n", b"\r\n"))
    assert "CRLF" in str(_error(read_dstc7, toy))


def test_response_problems(toy):
    s = _w(toy / "dstc7-task2-system_responses.tsv", "SystemID\tInstanceID\tResponse\nHuman\tq1\ta\nHuman\tq1\tb\n")
    err = _error(read_dstc7, toy)
    assert (err.path, err.line) == (str(s), 3) and "second response" in str(err)
    _w(s, "SystemID\tInstanceID\tResponse\nHuman\tq7\ta\n")
    assert _error(read_dstc7, toy).line == 2
    _w(s, "SystemID\tInstanceID\tResponse\nHuman\tq1\n")
    assert "expected 3" in str(_error(read_dstc7, toy))
    s.write_bytes(b"")
    assert "empty" in str(_error(read_dstc7, toy))


def test_invalid_utf8_in_gold(toy):
    g = toy / "dstc7-task2-gold_responses.tsv"
    g.write_bytes(b"InstanceID\tReference1\nq1\tok\nq2\t\xff\nq3\tx\n")
    err = _error(read_dstc7, toy)
    assert (err.path, err.line) == (str(g), 3) and "UTF-8" in str(err)


def test_bad_option(toy):
    with pytest.raises(OptionError):
        read_dstc7(toy, min_references=0)
