"""One progress helper for every long step: a bar on a terminal, rate-limited lines in a log, nothing when quiet."""

import io
import re

from click.testing import CliRunner

from combo.cli import main
from combo.progress import _Lines, _Silent, progress


def test_a_log_gets_rate_limited_lines_and_a_last_line(tmp_path):
    with open(tmp_path / "run.log", "w") as log:
        bar = progress(4, "KING", stream=log, interval=0.0, unit="segment")
        assert isinstance(bar, _Lines)
        for _ in range(4):
            bar.update(1)
        bar.close()
    lines = (tmp_path / "run.log").read_text().splitlines()
    assert len(lines) == 5
    assert re.fullmatch(r"KING: 1/4 segments \(25%\) in \d+ s, about \d+ s left", lines[0])
    assert re.fullmatch(r"KING: done, 4/4 segments \(100%\) in \d+ s", lines[-1])


def test_a_short_step_writes_nothing_to_a_log(tmp_path):
    with open(tmp_path / "run.log", "w") as log:
        with progress(None, "search", stream=log, unit="set") as bar:  # default interval: 10 s
            bar.update(3)
    assert (tmp_path / "run.log").read_text() == ""


def test_quiet_and_in_memory_streams_are_silent(tmp_path):
    assert isinstance(progress(10, "x", enabled=False), _Silent)
    assert isinstance(progress(10, "x", stream=io.StringIO()), _Silent)  # e.g. a test runner's capture


def test_a_terminal_gets_a_bar():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    bar = progress(3, "metrics", stream=term, unit="task")
    bar.update(3)
    bar.close()
    assert "metrics" in term.getvalue()


def test_search_and_evaluate_report_their_steps(monkeypatch):
    """The search's metric sets and evaluate's entries go through the helper (steps counted as they run)."""
    import combo.progress as P

    seen = []

    class Recorder(_Silent):
        def __init__(self, total, desc):
            self.total, self.desc, self.done = total, desc, 0
            seen.append(self)

        def update(self, n=1):
            self.done += n

    monkeypatch.setattr(P, "progress", lambda total, desc, enabled=True, **kw: Recorder(total, desc)
                        if enabled else _Silent())
    res = CliRunner().invoke(main, ["search", "--testbed", "example", "-m", "bleu", "chrf", "ter",
                                    "--criterion", "kendall"])
    assert res.exit_code == 0, res.output
    search = next(r for r in seen if r.desc.startswith("search"))
    assert search.total == 5 and search.done == 5  # greedy over 3 metrics: 3 singles, 2 additions
    seen.clear()
    res = CliRunner().invoke(main, ["evaluate", "--testbed", "example", "-m", "bleu", "chrf", "--criteria",
                                    "kendall,r_snt", "--bootstrap", "10"])
    assert res.exit_code == 0, res.output
    entries = next(r for r in seen if r.desc.startswith("evaluate"))
    assert entries.total == entries.done == 3 * 2  # bleu, chrf, ULC(all) x two criteria
    seen.clear()
    CliRunner().invoke(main, ["evaluate", "--testbed", "example", "-m", "bleu", "-q", "--bootstrap", "0"])
    assert not seen


def test_units_are_counted_in_english(tmp_path):
    from combo.progress import plural

    with open(tmp_path / "run.log", "w") as log:
        bar = progress(124, "evaluate", stream=log, interval=0.0, unit="entry")
        bar.update(124)
        bar.close()
        one = progress(1, "search", stream=log, interval=0.0, unit="set")
        one.update(1)
        one.close()
    text = (tmp_path / "run.log").read_text()
    assert "124/124 entries" in text and "1/1 set " in text and "entrys" not in text
    assert [plural(w) for w in ("entry", "pass", "day", "task")] == ["entries", "passes", "days", "tasks"]
