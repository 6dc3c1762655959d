"""The bundled example test bed combo/data/example.jsonl: structure, judgments and provenance checks."""

import json
import re
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

import pytest

from combo.io.fetch import example_path

SYSTEMS = ["strong", "literal", "weak", "copy"]
PATH = example_path()


@pytest.fixture(scope="module")
def records():
    lines = PATH.read_text(encoding="utf-8").splitlines()
    assert lines and all(line.strip() for line in lines)
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def parts(records):
    by_type = defaultdict(list)
    for rec in records[1:]:
        by_type[rec["type"]].append(rec)
    return by_type


def words(text):
    return set(re.findall(r"\w+", text.lower()))


def test_header_and_record_types(records, parts):
    head = records[0]
    assert head["type"] == "testbed" and head["format"] == 1 and head["name"] == "example-de-en"
    assert "not a research data set" in head["metadata"]["provenance"]
    assert set(parts) == {"segment", "candidate", "score", "preference", "system_score"}
    assert [r["type"] for r in records].count("testbed") == 1
    # segments come before everything that refers to them
    first_other = next(i for i, r in enumerate(records) if r["type"] not in ("testbed", "segment"))
    assert all(r["type"] != "segment" for r in records[first_other:])


def test_segments_have_five_distinct_references(parts):
    segments = parts["segment"]
    assert [s["id"] for s in segments] == [f"s{i:02d}" for i in range(1, 25)]
    for seg in segments:
        assert set(seg) == {"type", "id", "source", "references", "weights", "ref_ids", "group"}
        refs = seg["references"]
        assert len(refs) == 5 >= 4  # `combo search --criterion king` needs at least 4
        assert len(set(refs)) == 5 and all(isinstance(r, str) and r.strip() == r and r for r in refs)
        assert seg["weights"] is None and seg["ref_ids"] == ["ref1", "ref2", "ref3", "ref4", "ref5"]
        assert seg["group"] == "de-en" and seg["source"].strip()
        # real paraphrase variety: on average two references share well under half their word types
        overlap = [len(words(a) & words(b)) / len(words(a) | words(b)) for a, b in combinations(refs, 2)]
        assert sum(overlap) / len(overlap) < 0.6, seg["id"]
    assert len({s["source"] for s in segments}) == 24


def test_every_system_has_one_candidate_per_segment(parts):
    ids = [s["id"] for s in parts["segment"]]
    refs = {s["id"]: s["references"] for s in parts["segment"]}
    seen = Counter((c["system"], c["segment"]) for c in parts["candidate"])
    assert set(seen) == {(system, seg) for system in SYSTEMS for seg in ids} and set(seen.values()) == {1}
    for cand in parts["candidate"]:
        assert cand["text"].strip() and cand["text"] not in refs[cand["segment"]]
    # the copying system leaves German words in some outputs and none in others
    sources = {s["id"]: words(s["source"]) for s in parts["segment"]}
    copied = [len((words(c["text"]) & sources[c["segment"]]) - {"2015", "2030", "30", "300"})
              for c in parts["candidate"] if c["system"] == "copy"]
    assert sum(n >= 2 for n in copied) >= 12 and sum(n <= 1 for n in copied) >= 5


def test_scores_two_raters_adequacy_1_to_5(parts):
    table = defaultdict(dict)
    for s in parts["score"]:
        assert s["aspect"] == "adequacy" and s["rater"] in ("r1", "r2")
        assert s["value"] in (1.0, 2.0, 3.0, 4.0, 5.0)
        assert s["rater"] not in table[(s["system"], s["segment"])]
        table[(s["system"], s["segment"])][s["rater"]] = s["value"]
    assert len(table) == 96 and all(set(v) == {"r1", "r2"} for v in table.values())
    assert all(abs(v["r1"] - v["r2"]) <= 1 for v in table.values())
    mean = {system: sum(v["r1"] + v["r2"] for (s, _), v in table.items() if s == system) / 48
            for system in SYSTEMS}
    assert mean["strong"] > mean["literal"] > mean["copy"] > mean["weak"]
    system_scores = {r["system"]: r["value"] for r in parts["system_score"]}
    assert set(system_scores) == set(SYSTEMS)
    for system in SYSTEMS:
        assert system_scores[system] == pytest.approx(mean[system], abs=1e-6)


def test_preferences_follow_the_mean_scores(parts):
    per_rater = defaultdict(float)
    for s in parts["score"]:
        per_rater[(s["system"], s["segment"])] += s["value"] / 2
    blocks = defaultdict(list)
    for p in parts["preference"]:
        assert p["judge"] is None and isinstance(p["block"], int) and isinstance(p["tie"], bool)
        better, worse = per_rater[(p["better"], p["segment"])], per_rater[(p["worse"], p["segment"])]
        assert better >= worse and p["tie"] == (better == worse)
        blocks[p["block"]].append(p)
    assert sorted(blocks) == list(range(24))
    for block, prefs in blocks.items():
        assert {p["segment"] for p in prefs} == {f"s{block + 1:02d}"}
        assert {frozenset((p["better"], p["worse"])) for p in prefs} == \
            {frozenset(pair) for pair in combinations(SYSTEMS, 2)}


def test_sources_are_not_taken_from_wmt12(data):
    wmt = set((data / "wmt12/plain/sources/newstest2012-src.de").read_text(encoding="utf-8").splitlines())
    ours = [json.loads(line)["source"] for line in PATH.read_text(encoding="utf-8").splitlines()[1:25]]
    assert not wmt.intersection(ours)


def test_loads_with_the_jsonl_reader():
    try:
        from combo.io import read_jsonl
    except ImportError:  # the reader is another module's job
        pytest.skip("combo.io.read_jsonl is not available")
    tb = read_jsonl(PATH).validate()
    summary = tb.summary()
    assert summary["segments"] == 24 and summary["systems"] == 4 and summary["candidates"] == 96
    assert summary["references_min"] == summary["references_max"] == 5
    assert summary["scores"] == 192 and summary["preferences"] == 144
    assert tb.systems == SYSTEMS and sum(p.tie for p in tb.preferences) == 9
    assert tb.system_scores["adequacy"]["strong"] > tb.system_scores["adequacy"]["weak"]


# -- the first-run sample: the DSTC7 release in the data home, cut by the rule of combo.io.dstc7 ----------------

#: SHA-256 of each file the rule writes from the DSTC7 release (the slice the first-run figures were measured on).
SAMPLE_SHA256 = {
    "dstc7-task2-context.tsv": "e6e861b8d0ba976c6019b50de6e9fdac78f9fcaaf3d1065312cdcbc496063d25",
    "dstc7-task2-gold_responses.tsv": "20b708b388237a56a0bcea49a77335855e64dc9fa1b77824cd2b7e848818967f",
    "dstc7-task2-human-eval-per-judge.tsv": "7d91d54150ce906e357f0203ce0f1591f2d6add9b0d8c7a02a07e43c49fdddd8",
    "dstc7-task2-human_evaluation.tsv": "6dfb928720bd6b32f6f707af30e0f2d97a63d0a2c7e6a88adf018b1412d6a4b7",
    "dstc7-task2-system_responses.tsv": "1d623fe16467ae0c9a85a78343795fff956d91392818c84db445578aa14c45fa",
}


@pytest.fixture
def data_home(data, monkeypatch):
    """The real data as the data home, where --testbed dstc7-sample finds the DSTC7 release."""
    monkeypatch.setenv("COMBO_DATA_HOME", str(data))
    monkeypatch.delenv("COMBO_DATA_DIR", raising=False)
    return data


def test_sample_is_the_committed_rule_applied_to_the_release(data, tmp_path):
    """Byte for byte the slice the rule gave when it was committed: nothing hand-picked, nothing drifted."""
    import hashlib

    from combo.io.dstc7 import write_sample

    counts = write_sample(data / "dstc7", tmp_path)
    for name, digest in SAMPLE_SHA256.items():
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest, name
    assert counts == {"dstc7-task2-context.tsv": 100, "dstc7-task2-system_responses.tsv": 1000,
                      "dstc7-task2-human_evaluation.tsv": 100, "dstc7-task2-human-eval-per-judge.tsv": 3300,
                      "dstc7-task2-gold_responses.tsv": 100}
    assert "Open Use of Data Agreement" in (tmp_path / "LICENSE.txt").read_text(encoding="utf-8")


def test_sample_loads_with_enough_references_for_king(data_home):
    from combo.io import load_testbed

    tb = load_testbed("dstc7-sample").validate()
    assert len(tb.segments) == 100 and len(tb.systems) == 10 and "Human" in tb.systems
    assert all(4 <= len(seg.references) <= 8 for seg in tb.segments)  # KING with QUEEN needs 4
    assert tb.metadata["human_copy_instances"] == 93 and not tb.system_scores  # no Average row over 1,000
    assert {s.aspect for s in tb.scores} == {"relevance", "informativeness", "mean"}


def test_sample_without_the_release_is_one_error_with_the_fix(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from combo.cli import main

    monkeypatch.setenv("COMBO_DATA_HOME", str(tmp_path))
    res = CliRunner().invoke(main, ["search", "--criterion", "king", "--testbed", "dstc7-sample", "-m", "bleu"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "combo data fetch dstc7" in res.output and "COMBO_DATA_HOME" in res.output


def test_first_run_command_explains_its_king_figure(data_home):
    """The README's main command, on two metrics to stay fast: what KING means and what ties add to it."""
    from click.testing import CliRunner

    from combo.cli import main

    res = CliRunner().invoke(main, ["search", "--criterion", "king", "--testbed", "dstc7-sample",
                                    "-m", "rouge-2", "-m", "chrf", "-q"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "criterion: king (scheme queen, strategy greedy) on dstc7-task2, 100 segments"
    quality_line = next(line for line in lines if line.startswith("quality: "))
    quality, share = re.match(r"quality: ([0-9.]+) \(ties (\d+)%\)", quality_line).groups()
    assert any(line.startswith("  meaning: king: ") for line in lines)
    warning = next(line for line in lines if line.startswith("warning: KING is decided by ties"))
    strict = float(warning.rsplit(" ", 1)[1])
    assert 0 <= strict <= float(quality) and int(share) > 50
    res = CliRunner().invoke(main, ["search", "--criterion", "king", "--testbed", "dstc7-sample",
                                    "-m", "rouge-2", "-m", "chrf", "-q", "--format", "json"])
    doc = json.loads(res.output)
    assert doc["king_ties"] == "count" and round(100 * doc["tie_share"]) == int(share)
    assert doc["king_strict"]["selected"] == pytest.approx(strict, abs=5e-5)


def test_king_tie_share_agrees_with_the_evaluator_under_each_rule():
    from combo.evaluate import MetaEvaluator
    from combo.io import read_jsonl
    from combo.scoring import score_with_references

    tb = read_jsonl(PATH)
    table, refs = score_with_references(tb, ["bleu", "rouge-2"])
    q = MetaEvaluator(tb, table, refs).quality([0, 1], "king")
    strict = MetaEvaluator(tb, table, refs, king_ties="strict").quality([0, 1], "king")
    assert q.value_strict == pytest.approx(strict.value, abs=1e-12) and 0 <= q.tie_share <= 1
    # five references in every segment: what ties add to KING is the share of the 120 comparisons that tie
    assert q.value - q.value_strict == pytest.approx(q.tie_share, abs=1e-12)
