"""The command line: real runs, and bad input giving one clear error, exit code 2, no partial output."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from combo.cli import main


def run(*args):
    return CliRunner().invoke(main, list(args))


def _plain(tmp_path: Path, systems=None, refs=None) -> Path:
    root = tmp_path / "tb"
    (root / "systems").mkdir(parents=True)
    (root / "references").mkdir()
    for name, text in (refs or {"r1": "the cat sat\nthe dog ran\n"}).items():
        (root / "references" / f"{name}.txt").write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    for name, text in (systems or {"A": "the cat sat\na dog ran\n", "B": "cat\ndog\n"}).items():
        (root / "systems" / f"{name}.txt").write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return root


def test_score_example_system_level():
    res = run("score", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-q")
    assert res.exit_code == 0, res.output
    lines = res.output.strip().split("\n")
    assert lines[0] == "system\tbleu\tchrf"
    assert len(lines) == 1 + 4
    for line in lines[1:]:
        values = [float(v) for v in line.split("\t")[1:]]
        assert all(0.0 <= v <= 1.0 for v in values)


def test_score_json_out_file_has_both_levels(tmp_path):
    out = tmp_path / "scores.json"
    res = run("score", "--testbed", "example", "-m", "bleu:max_order=2", "--format", "json", "--out", str(out), "-q")
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["metrics"][0]["signature"].startswith("bleu|n:2")
    assert len(doc["system"]) == 4 and len(doc["segment"]) == 96


def test_score_plain_folder_segment_level_csv(tmp_path):
    root = _plain(tmp_path)
    res = run("score", "--testbed", str(root), "-m", "bleu", "--level", "segment", "--format", "csv", "-q")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "system,segment,bleu"
    assert len(res.output.splitlines()) == 1 + 4


BAD_SYSTEM_B = {
    "mismatched": "only one line\n",
    "empty": "",
    "utf8": b"fine\nbad \xff byte\n",
    "bom": b"\xef\xbb\xbfcat\ndog\n",
    "crlf": "cat\r\ndog\r\n",
}


def _assert_one_error_no_output(tmp_path, stderr, expect):
    assert "Traceback" not in stderr
    err = [line for line in stderr.splitlines() if line.strip()]
    assert len(err) == 1, stderr
    assert expect.lower() in err[0].lower()
    assert "B.txt" in err[0]
    assert not (tmp_path / "out.tsv").exists()
    assert not list(tmp_path.glob(".combo-*"))


def _separate_streams_runner() -> CliRunner:
    """A CliRunner whose stdout holds stdout alone: click before 8.2 (the lower bound is 8.0) mixes stderr in
    unless told not to, and 8.2 dropped the option along with the mixing."""
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


@pytest.mark.parametrize("case,expect", [
    ("mismatched", "lines"),
    ("empty", "empty"),
    ("utf8", "UTF-8"),
    ("crlf", "CRLF"),
])
def test_bad_input_one_error_exit_2_no_partial_output(tmp_path, case, expect):
    root = _plain(tmp_path, systems={"A": "the cat sat\na dog ran\n", "B": BAD_SYSTEM_B[case]})
    res = _separate_streams_runner().invoke(main, ["score", "--testbed", str(root), "-m", "bleu", "--out",
                                                   str(tmp_path / "out.tsv")])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)  # handled: no exception escaped
    assert res.stdout == ""
    _assert_one_error_no_output(tmp_path, res.stderr, expect)


def test_bad_input_in_a_real_process_is_one_line_on_stderr_and_exit_2(tmp_path):
    """The same as a user's shell sees it: the process's own exit status and stderr (the cases above run in-process)."""
    root = _plain(tmp_path, systems={"A": "the cat sat\na dog ran\n", "B": BAD_SYSTEM_B["utf8"]})
    proc = subprocess.run([sys.executable, "-m", "combo.cli", "score", "--testbed", str(root), "-m", "bleu",
                           "--out", str(tmp_path / "out.tsv")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    _assert_one_error_no_output(tmp_path, proc.stderr, "UTF-8")


def test_bad_input_in_judgments_names_file_and_line(tmp_path):
    root = _plain(tmp_path)
    (root / "scores.tsv").write_text("A\t1\t0.5\nA\t2\tnan\n")
    res = run("score", "--testbed", str(root), "-m", "bleu")
    assert res.exit_code == 2
    assert "scores.tsv:2" in res.output
    (root / "scores.tsv").write_text("A\t1\t0.5\nZ\t1\t0.5\n")
    res = run("score", "--testbed", str(root), "-m", "bleu")
    assert res.exit_code == 2 and "scores.tsv:2" in res.output and "Z" in res.output


def test_unknown_metric_and_option_exit_2():
    res = run("score", "--testbed", "example", "-m", "blue")
    assert res.exit_code == 2 and "unknown metric 'blue'" in res.output
    res = run("score", "--testbed", "example", "-m", "bleu:smooth=magic")
    assert res.exit_code == 2 and "smooth" in res.output


def test_metrics_command_lists_the_registry():
    res = run("metrics")
    assert res.exit_code == 0
    assert res.output.splitlines()[0].startswith("metric")
    assert any(line.startswith("bleu ") for line in res.output.splitlines())


def test_jobs_takes_a_number_of_workers_or_minus_one_for_every_core():
    """-1 is one worker per core (scikit-learn's n_jobs), with one job's output; 0, -2 and words are one line."""
    one = run("score", "--testbed", "example", "-m", "bleu,chrf", "--level", "segment", "-q", "-j", "1")
    every = run("score", "--testbed", "example", "-m", "bleu,chrf", "--level", "segment", "-q", "-j", "-1")
    assert one.exit_code == every.exit_code == 0 and every.output == one.output
    for bad in ("0", "-2", "two", "1.5"):
        res = run("search", "--testbed", "example", "-m", "bleu", "-q", "--jobs", bad)
        assert res.exit_code == 2 and "--jobs" in res.output and "-1 for one per core" in res.output, bad
        assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["score", "search", "train"])
def test_an_empty_metric_name_is_one_line_and_exit_2_not_a_metric_left_out(command, tmp_path):
    for empty in ("", " ", "bleu,", "bleu,,chrf"):
        res = run(command, "--testbed", "example", "-m", "bleu", "-m", empty, "-q", "--out", str(tmp_path / "out"))
        assert res.exit_code == 2 and f"-m {empty!r} names an empty metric" in res.output, (command, empty)
        assert len(res.output.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
    res = run("score", "--testbed", "example", "-m", "bleu, chrf", "-q")
    assert res.exit_code == 0 and res.output.splitlines()[0] == "system\tbleu\tchrf"
