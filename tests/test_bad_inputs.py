"""The bad-input catalogue: every case in ``tests/bad_inputs/*.case`` gets one clear line and exit code 2.

A case file holds one command and the message it must give (see docs/trust.md)::

    # what the case checks
    category: options
    run: score --testbed example -q -m bleu:lowercase=maybe
    file NAME: CONTENT            (optional, repeatable: a file written first; backslash escapes as in Python)
    append NAME * N: CONTENT      (optional: CONTENT appended N times, for huge inputs)
    error: option lowercase='maybe' is not true or false

``{tmp}`` (in ``run``, files and the error) is the case's own folder, ``{data}`` the shared data folder and
``{model}`` the bundled fixture model. The command must exit with code 2,
print exactly one line on stderr starting ``combo: error:`` that contains the
expected text, print nothing on stdout, and write no ``--out`` file.
"""

import codecs
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from combo.cli import main

CASES = Path(__file__).parent / "bad_inputs"
MODEL = CASES / "fixtures" / "bleu-model.json"


def parse_case(path: Path) -> dict:
    case = {"files": {}, "appends": [], "about": "", "run": None, "error": None, "category": None}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            case["about"] = line[2:]
        elif line.startswith("category: "):
            case["category"] = line[len("category: "):]
        elif line.startswith("run: "):
            case["run"] = line[len("run: "):]
        elif line.startswith("error: ") or line == "error:":
            case["error"] = line[len("error: "):]
        elif line.startswith("file "):
            name, _, content = line[len("file "):].partition(": ")
            case["files"][name.rstrip(":")] = codecs.escape_decode(content.encode("utf-8"))[0]
        elif line.startswith("append "):
            head, _, content = line[len("append "):].partition(": ")
            name, _, times = head.partition(" * ")
            case["appends"].append((name, int(times), codecs.escape_decode(content.encode("utf-8"))[0]))
        elif line.strip():
            raise ValueError(f"{path.name}: cannot read line {line!r}")
    assert case["run"] and case["error"] is not None and case["category"], path.name
    return case


def _fill(text: str, tmp: Path, data: Path) -> str:
    return text.replace("{tmp}", str(tmp)).replace("{data}", str(data)).replace("{model}", str(MODEL))


CASE_FILES = sorted(CASES.glob("*.case"))


def test_catalogue_covers_the_audit_categories():
    categories = {parse_case(p)["category"] for p in CASE_FILES}
    assert {"line counts", "encodings", "NUL bytes", "huge lines", "judgments", "JSONL schema", "ΔBLEU weights",
            "trees", "model files", "caches", "options", "output paths"} <= categories
    assert len(CASE_FILES) >= 173


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_bad_input_gives_one_line_and_exit_2(path, tmp_path, data, monkeypatch):
    case = parse_case(path)
    monkeypatch.setenv("COMBO_CACHE_DIR", str(tmp_path / "analysis-cache"))
    for name, content in case["files"].items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_fill(content.decode("utf-8", "surrogateescape"), tmp_path, data)
                           .encode("utf-8", "surrogateescape"))
    for name, times, content in case["appends"]:
        with open(tmp_path / name, "ab") as handle:
            handle.write(content * times)
    args = _fill(case["run"], tmp_path, data).split()
    before = set(os.listdir(tmp_path))
    result = CliRunner().invoke(main, args)
    stderr = result.stderr.strip("\n")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, f"exit {result.exit_code}; stdout {result.stdout[:200]!r}; stderr {stderr!r}"
    assert result.stdout == ""
    assert "\n" not in stderr and stderr.startswith("combo: error: "), stderr
    assert "Traceback" not in stderr
    assert _fill(case["error"], tmp_path, data) in stderr, stderr
    if "--out" in args:
        out = Path(args[args.index("--out") + 1])
        assert not out.is_file() or out.name in before
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".combo-")]  # no temporary file left behind
