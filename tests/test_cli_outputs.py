"""Output paths are checked before any work: --out and --report naming one file, a missing or read-only folder,
on every command that writes them (evaluate, search, report); a failed run leaves no --out file behind."""

import pytest
from click.testing import CliRunner

import combo.cli.output
import combo.scoring
from combo.cli import main

pytest.importorskip("matplotlib")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def no_scoring(monkeypatch):
    """Scoring fails the test: the refusals below must come before any metric is computed."""
    def refuse(*args, **kwargs):
        raise AssertionError("scored before the output paths were checked")

    monkeypatch.setattr(combo.scoring, "score_testbed", refuse)
    monkeypatch.setattr(combo.scoring, "score_with_references", refuse)


def _one_error(res, expect):
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("combo: error: ") and "Traceback" not in res.output
    assert expect in lines[0], lines[0]
    return lines[0]


COMMANDS = {
    "search": ["search", "--testbed", "example", "-q", "-m", "bleu", "chrf", "--criterion", "r_snt"],
    "evaluate": ["evaluate", "--testbed", "example", "-q", "-m", "bleu", "--criteria", "r_snt", "--bootstrap", "20"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_out_and_report_naming_one_file_is_refused_at_once_and_the_fix_works(command, tmp_path, no_scoring,
                                                                              monkeypatch):
    same = tmp_path / "x.html"
    line = _one_error(run(*COMMANDS[command], "--out", same, "--report", same), "--out and --report both name")
    assert not same.exists() and list(tmp_path.iterdir()) == []
    fix = line.split("(fix: give --report another file, e.g. --report ")[1].rstrip(")")
    monkeypatch.undo()  # scoring allowed again: follow the fix
    res = run(*COMMANDS[command], "--out", same, "--report", fix)
    assert res.exit_code == 0, res.output
    assert same.read_text(encoding="utf-8").strip() and "<html" in open(fix, encoding="utf-8").read()[:200].lower()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_report_into_a_missing_folder_is_refused_before_scoring_and_no_out_is_written(command, tmp_path,
                                                                                          no_scoring):
    out = tmp_path / "result.txt"
    _one_error(run(*COMMANDS[command], "--out", out, "--report", tmp_path / "no" / "r.html"),
               "output folder does not exist (fix: create it first)")
    assert not out.exists()
    _one_error(run(*COMMANDS[command], "--out", tmp_path / "no" / "t.txt", "--report", tmp_path / "r.html"),
               "output folder does not exist")
    _one_error(run(*COMMANDS[command], "--out", out, "--report", "/proc/combo-r.html"),
               "cannot write into this folder")
    assert list(tmp_path.iterdir()) == []


def test_the_report_commands_out_is_checked_before_scoring(tmp_path, no_scoring):
    _one_error(run("report", "--testbed", "example", "-q", "-m", "bleu", "--out", tmp_path / "no" / "r.html"),
               "output folder does not exist")
    _one_error(run("report", "--testbed", "example", "-q", "-m", "bleu", "--out", "/proc/combo-r.html"),
               "cannot write into this folder")


@pytest.mark.parametrize("args", [COMMANDS["search"], COMMANDS["evaluate"], ["report", "--testbed", "example",
                                                                             "-q", "-m", "bleu"]])
def test_no_scoring_stops_a_command_that_scores(args, tmp_path, no_scoring):
    """The fixture's patch reaches the commands (they look the scoring functions up in combo.scoring when they
    run), so the refusals above are indeed checked before any scoring."""
    res = run(*args, "--out", tmp_path / "out.html")
    assert res.exit_code != 0 and "scored before the output paths were checked" in res.output, res.output


def test_the_followed_fix_of_a_missing_folder_works(tmp_path):
    report = tmp_path / "new" / "r.html"
    _one_error(run(*COMMANDS["evaluate"], "--report", report), "output folder does not exist (fix: create it first)")
    report.parent.mkdir()
    assert run(*COMMANDS["evaluate"], "--report", report).exit_code == 0 and report.is_file()


def test_a_report_that_fails_to_write_leaves_no_out_and_an_out_that_fails_leaves_no_report(tmp_path, monkeypatch):
    from combo.errors import InputError

    real = combo.cli.output.write_text_atomic
    out, report = tmp_path / "t.txt", tmp_path / "r.html"

    def fail_on(name):
        def write(text, path):
            if str(path).endswith(name):
                raise InputError("cannot write the file (No space left on device)", str(path),
                                 fix="choose a writable place for the output")
            return real(text, path)
        return write

    monkeypatch.setattr(combo.cli.output, "write_text_atomic", fail_on("r.html"))
    _one_error(run(*COMMANDS["search"], "--out", out, "--report", report), "No space left on device")
    assert not out.exists() and not report.exists()
    monkeypatch.setattr(combo.cli.output, "write_text_atomic", fail_on("t.txt"))
    _one_error(run(*COMMANDS["search"], "--out", out, "--report", report), "No space left on device")
    assert not out.exists() and not report.exists()
