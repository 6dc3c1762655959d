"""combo report declares its meta-evaluation options with evaluate's and search's (combo.cli.options.meta_options): it has
each of them, and its --jobs reaches the MetaEvaluator (the bootstrap and KING), not only the scoring."""

import json
from dataclasses import fields
import re

import pytest
from click.testing import CliRunner

import combo.evaluate
from combo.cli import main
from combo.cli.options import META_OPTIONS, MetaOptions

pytest.importorskip("matplotlib")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_report_help_lists_the_meta_evaluation_options():
    res = run("report", "--help")
    assert res.exit_code == 0, res.output
    for option in ("--kendall-variant", "--kendall-ties", "--king-ties", "--king-sample", "--include-human",
                   "--memory", "--backend", "--scheduler", "--jobs", "--triples", "--seed", "--aspect"):
        assert option in res.output, option


def test_evaluate_search_and_report_declare_the_same_meta_options():
    def declared(command):
        return {p.name: (p.opts, p.default, p.help) for p in main.commands[command].params}

    wanted = [f.name for f in fields(MetaOptions) if f.init and f.name != "progress"]  # not the resolved Execution
    assert set(META_OPTIONS) | {"memory"} == set(wanted)
    evaluate, search, report = declared("evaluate"), declared("search"), declared("report")
    for name in wanted + ["backend", "scheduler"]:
        assert evaluate[name] == search[name] == report[name], name


def _tables(page: str):
    """The page's evaluation numbers: its embedded evaluation's rows and every HTML table (no timestamps)."""
    found = re.search(r'<script type="application/json" id="combo-evaluation">(.*?)</script>', page, re.S)
    doc = json.loads(found.group(1).replace("<\\/", "</"))
    return doc["criteria"], doc["rows"], re.findall(r"<table\b.*?</table>", page, re.S)


@pytest.fixture()
def built(monkeypatch):
    """Every MetaEvaluator the commands build, in order."""
    made = []

    class Recorded(combo.evaluate.MetaEvaluator):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(combo.evaluate, "MetaEvaluator", Recorded)
    return made


def test_report_jobs_reach_the_evaluator_and_change_no_number(tmp_path, built):
    pages = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}.html"
        res = run("report", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-m", "ter",
                  "--combine", "ulc,queen", "--bootstrap", "30", "--jobs", jobs, "-q", "--out", out)
        assert res.exit_code == 0, res.output
        assert built[-1].jobs.asked == jobs  # resolved once, by the evaluator
        assert built[-1].king_ties == "count" and built[-1].kendall_variant == "wmt12"
        pages[jobs] = out.read_text(encoding="utf-8")
    criteria, rows, tables = _tables(pages[1])
    assert "king" in criteria and rows and tables
    assert _tables(pages[2]) == (criteria, rows, tables)


def test_report_passes_the_kendall_and_king_options(tmp_path, built):
    out = tmp_path / "page.html"
    res = run("report", "--testbed", "example", "-m", "bleu", "-m", "chrf", "--criteria", "king,wmt_kendall",
              "--bootstrap", "0", "--kendall-variant", "wmt14", "--king-ties", "strict", "--memory", "500M", "-q",
              "--out", out)
    assert res.exit_code == 0, res.output
    ev = built[-1]
    assert (ev.kendall_variant, ev.king_ties, ev.budget.bytes) == ("wmt14", "strict", 500 * 2 ** 20)


#: where the recording stand-in of combo.evaluate.entries._entry_quality writes, and the real one (read in the workers,
#: which are forked after the test sets them)
_ENTRIES = {}


def _recorded_entry(evaluator, subset, criterion, scheme, n_resamples, seed):
    """combo.evaluate.entries._entry_quality, writing the process that runs it: one entry's quality and its bootstrap."""
    import os
    import time

    with open(_ENTRIES["file"], "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()} {criterion} {n_resamples}\n")
    time.sleep(0.05)  # a worker busy with one entry leaves the next to the other
    return _ENTRIES["real"](evaluator, subset, criterion, scheme, n_resamples, seed)


def test_report_jobs_2_runs_the_bootstrap_and_king_in_two_worker_processes(tmp_path, monkeypatch):
    import os

    record = tmp_path / "entries.txt"
    monkeypatch.setitem(_ENTRIES, "file", str(record))
    monkeypatch.setitem(_ENTRIES, "real", combo.evaluate.entries._entry_quality)
    monkeypatch.setattr(combo.evaluate.entries, "_entry_quality", _recorded_entry)
    res = run("report", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-m", "ter", "--combine", "ulc,queen",
              "--bootstrap", "30", "--jobs", "2", "-q", "--out", tmp_path / "page.html")
    assert res.exit_code == 0, res.output
    entries = [line.split() for line in record.read_text(encoding="utf-8").splitlines()]
    assert {n for _, _, n in entries} == {"30"}  # each entry with its bootstrap
    assert "king" in {c for _, c, _ in entries}
    processes = {int(pid) for pid, _, _ in entries}
    kings = {int(pid) for pid, c, _ in entries if c == "king"}
    assert len(processes) == 2 and os.getpid() not in processes, entries
    assert kings <= processes
