"""Every ``combo ...`` command written in README.md and docs/**/*.md runs as documented.

The commands are read from the pages themselves (fenced code blocks, and inline code that starts with
``combo ``), so a page cannot show a command that does not work. What a page writes as a placeholder
(``PATH``, ``FILE``, ``../shared/data``) or a template (``king|orange``, ``[--scheme ...]``) is made
concrete by the tables below; extend them when a page gains a new placeholder. Each command runs through
click's CliRunner in a folder of its own holding the files the pages name (``model.json``, ``hyps.txt``,
...); it must exit 0, or with the error line the page prints under it (``$ combo ...`` followed by
``combo: error: ...``). A name mentioned in prose (inline ``combo score``) must be a command
(``--help``). Commands that take minutes are listed in ``SLOW`` with the reason and run with
``pytest -m slow``; ``PARSE_ONLY`` commands need what the suite cannot have (a Dask cluster) and are only
parsed. Where a page shows a command's output (the fenced block or table right after the command's block), every
figure of three decimals or more it shows must be in what the command prints now. A failure names the page and
line of the command.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

import pytest
from click.testing import CliRunner

from combo.cli import main
from combo.io.fetch import example_path

from conftest import DATA

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

#: Placeholders as the pages write them, replaced in this order ({data}: the real data folder).
PLACEHOLDERS = [
    ("../shared/data", "{data}"),
    ("/path/to/wmt12", "{data}/wmt12"),
    ("--testbed PATH", "--testbed example"),
    ("--hyps FILE", "--hyps hyps.txt"),
    ("--refs FILE", "--refs ref1.txt"),
    ("--mutt CORRUPTIONS", "--mutt {data}/mutt/corruptions"),
    ("--mutt-flickr8k DIR", "--mutt-flickr8k {data}/flickr8k"),
    ("--cache DIR", "--cache scores-cache"),
    ("-m ...", "-m bleu -m chrf"),
    ("--language LANG", "--language en"),
    ("data fetch NAME", "data fetch wordnet"),
    ("data verify NAME", "data verify wordnet"),
    ("--min-refs N", "--min-refs 4"),
    ("--out combo/data/models/", "--out "),  # the shipped models' commands write in the run's own folder
]

#: Fragments a page writes with ``...`` or ``a/b``, as the command they stand for.
FRAGMENTS = {
    "combo --debug ...": "combo --debug score --testbed example -m bleu",
    "combo --debug score ...": "combo --debug score --testbed example -m bleu",
    "combo evaluate ... --criteria wmt_kendall --bootstrap 0":
        "combo evaluate --testbed example -m bleu -m chrf --criteria wmt_kendall --bootstrap 0",
    "combo score/evaluate --trees dependencies TEXTS FILE.conllu":
        "combo score --testbed my-testbed.jsonl -m dp-hwcm:parser=supplied "
        "--trees dependencies system-A.txt system-A.conllu --trees dependencies reference.txt reference.conllu",
    "combo search --min-refs N": "combo search --testbed example --min-refs 4",
    "combo score --level segment": "combo score --testbed example --level segment",
    "combo score --jobs 2": "combo score --testbed example --jobs 2",
    "combo score -m bleu,chrf": "combo score --testbed example -m bleu,chrf",
    "combo score --format json": "combo score --testbed example --format json",
    "combo evaluate --format json": "combo evaluate --testbed example --bootstrap 10 --format json",
    "combo evaluate --criteria wmt_kendall": "combo evaluate --testbed example --criteria wmt_kendall --bootstrap 10",
    "combo search --criterion king": "combo search --testbed example --criterion king",
    "combo search --criterion mutt":
        "combo search --testbed {data}/mutt/corruptions --testbed-option flickr8k={data}/flickr8k "
        "--criterion mutt -m bleu -m chrf",
    "combo search --format json": "combo search --testbed example --format json",
    "combo apply --language LANG": "combo apply --model model.json --hyps hyps.txt --refs ref1.txt --language en",
}

#: Options the suite adds to a command that is fast apart from them (fewer bootstrap resamples: the
#: intervals take longer to draw, nothing else changes), so that this file stays near a minute.
SUITE_OPTIONS = {
    "combo evaluate --testbed PATH --criteria r_snt,wmt_kendall --combine ulc,queen": ["--bootstrap", "20"],
    "combo evaluate --testbed example -m model.json -m chrf --criteria wmt_kendall": ["--bootstrap", "20"],
    "combo evaluate --testbed example -m ex.json -m chrf --criteria wmt_kendall": ["--bootstrap", "20"],
    "combo report --testbed PATH [-m ...] [--search wmt_kendall] [--mutt CORRUPTIONS --mutt-flickr8k DIR] "
    "--out report.html": ["--bootstrap", "20"],
}

#: Commands that take minutes here (or most of this file's minute), with the reason: run with ``pytest -m slow``.
SLOW = {
    "combo train --testbed ../shared/data/wmt23 --lp en-de,he-en -m mtme:XCOMET-XL mtme:XCOMET-XXL mtme:COMET "
    "mtme:CometKiwi chrf bleu --method direct --objective acc_eq --name combo-wmt23 "
    "--out combo/data/models/combo-wmt23.json": "trains the shipped combo-wmt23 on two WMT23 pairs (15 s)",
    "combo train --testbed ../shared/data/wmt23 --lp en-de,he-en -m mtme:XCOMET-XL mtme:XCOMET-XXL mtme:COMET "
    "mtme:CometKiwi chrf bleu mtme:GEMBA-MQM --method direct --objective seg_kendall --name combo-wmt23-llm "
    "--out combo/data/models/combo-wmt23-llm.json": "trains the shipped combo-wmt23-llm on two WMT23 pairs (15 s)",
    "combo train --testbed ../shared/data/wmt12 --lp cs-en,de-en,es-en,fr-en -m @heterogeneous --cv testbed "
    "--out wmt12-heterogeneous.json":
        "37 metrics (parsers, MiniLM) on four WMT12 pairs: 27 CPU minutes cold (benchmarks/bench_goals.py)",
    "combo train --testbed ../shared/data/wmt12 --lp cs-en,de-en,es-en,fr-en --cv testbed -j 2 --out model.json":
        "the default 37 metrics on four WMT12 pairs: 14 minutes cold (docs/results/heterogeneous-speed.md)",
    "combo train --testbed ../shared/data/wmt12 --lp cs-en,de-en,es-en,fr-en -m @lexical --cv testbed "
    "--out wmt12-lexical.json": "23 metrics on four WMT12 pairs: about 3 CPU minutes (16 min wall when busy)",
    "combo search --criterion king --testbed example --report report.html":
        "the report of a search measures every criterion with 1,000 bootstrap resamples (80 s)",
    "combo evaluate --testbed example --criteria king,r_snt --report report.html":
        "draws the report's figures (10-20 s); README's combo report runs in the fast suite",
    "combo report --testbed example -m bleu -m chrf -m ter -m meteor -m rouge-l --combine ulc,queen "
    "--search king --out report.html": "draws the report's figures (10-20 s); README's combo report runs in the "
                                       "fast suite",
    "combo search --criterion king --testbed ../shared/data/flickr8k --format json":
        "KING over 8,092 Flickr8k images (5 references each): minutes",
    "combo search --criterion king --testbed ../shared/data/dstc7 --max-refs 8 --min-refs 4":
        "DSTC7: 1,000 contexts and every default metric against up to 1,009 references before capping",
    "combo search --criterion r_snt --scheme ulc --testbed ../shared/data/wmt12 --lp de-en":
        "WMT12 de-en: 16 systems x 3,003 segments, the whole lexical set (METEOR, GTM, CIDEr)",
    "combo evaluate --testbed ../shared/data/wmt12 --lp de-en --criteria wmt_kendall,r_snt --combine ulc":
        "WMT12 de-en: the whole lexical set and 1,000 bootstrap resamples",
    "combo evaluate --testbed ../shared/data/wmt12 --lp de-en -m sp-op -m sp-oc -m sp-nist --criteria wmt_kendall":
        "WMT12 de-en: the shallow parser over 51,000 texts",
    "combo evaluate --testbed /path/to/wmt12 --lp de-en -m dp-hwcm -m dp-tk --criteria wmt_kendall":
        "WMT12 de-en: spaCy parses of 51,000 texts",
    "combo train --testbed ../shared/data/wmt12 --lp cs-en,de-en,es-en,fr-en -m bleu -m chrf -m chrf++ -m ter "
    "-m rouge-l -m rouge-1 -m meteor --cv testbed --out wmt12-seven.json":
        "four WMT12 language pairs, seven metrics, leave-one-pair-out cross-validation",
    "combo report --testbed ../shared/data/wmt12 --lp de-en -m bleu -m chrf -m ter -m model.json "
    "--search wmt_kendall --out wmt12-de-en.html": "WMT12 de-en: every criterion with 1,000 bootstrap resamples",
    "combo mutt ../shared/data/mutt/corruptions --flickr8k ../shared/data/flickr8k -m bleu,meteor,cider,ter,chrf "
    "--scheme ulc": "every MUTT trial with its fluency corruptions (30 s alone)",
    "combo search --testbed ../shared/data/mutt/corruptions --testbed-option flickr8k=../shared/data/flickr8k "
    "--criterion mutt -m bleu -m meteor -m chrf -m ter -m cider -m rouge-l": "every MUTT trial, six metrics",
    "combo evaluate --testbed ../shared/data/wmt23 --lp en-de -m mtme:XCOMET-XL -m mtme:MetricX-23 -m chrf "
    "--criteria wmt_kendall,acc_eq --combine ulc": "WMT23 en-de: 1,000 bootstrap resamples of 70,000 pairs",
    "combo score --testbed ../shared/data/wmt12 --lp de-en -m bleu -m chrf++ -m rouge-l --level segment "
    "--format csv --out de-en.csv": "WMT12 de-en, 48,000 rows",
    "combo score --testbed ../shared/data/flickr8k --testbed-option judgments=expert -m cider -m meteor "
    "--format json": "CIDEr-D and METEOR over Flickr8k",
    "combo score --testbed ../shared/data/wmt23 --lp he-en -m @heterogeneous --level segment -j 2":
        "37 metrics over WMT23 he-en's 24,830 candidates: 2 minutes cold (docs/results/wmt23-heterogeneous.md)",
    "combo train --testbed ../shared/data/wmt23 --lp he-en -m mtme:XCOMET-XL mtme:XCOMET-XXL mtme:MetricX-23 "
    "mtme:MetricX-23-QE mtme:COMET mtme:BLEURT-20 mtme:CometKiwi chrf bleu --name wmt23-heterogeneous "
    "--out docs/results/wmt23-heterogeneous-model.json": "a weight search over 9 inputs on WMT23 he-en, 11 fits (20 s)",
    "combo train --testbed ../shared/data/wmt23 --lp he-en -m mtme:XCOMET-XL mtme:XCOMET-XXL mtme:MetricX-23 "
    "mtme:MetricX-23-QE mtme:COMET mtme:BLEURT-20 mtme:CometKiwi chrf bleu --out he-en.json":
        "a weight search over 9 inputs on WMT23 he-en, 11 fits (20 s)",
}

#: Commands whose documented output is not what the suite's run prints, and why (their figures are not compared).
OUTPUT_DIFFERS: dict = {}

#: Commands that need what the suite cannot have: only parsed (the command and every option exist).
PARSE_ONLY = {
    "combo models fetch Unbabel/wmt22-comet-da": "downloads a checkpoint: needs the internet",
    "combo models where NAME": "needs a checkpoint in the Hugging Face cache",
    "combo models fetch NAME": "downloads a checkpoint: needs the internet",
    "combo apply --model M --src S --hyps A B --refs R": "a template of the command (docs/neural.md runs one)",
    "combo score --testbed my-testbed.jsonl -m comet -m metricx:model=google/metricx-23-xl-v2p0 -m chrf "
    "--level segment": "needs the comet extra and the checkpoints' weights (tests/test_comet.py and "
                       "tests/test_metricx.py run both on tiny checkpoints)",
    "combo apply --model combo-wmt23 --src src.txt --hyps sysA.txt sysB.txt --refs ref.txt --level system":
        "computes COMET and XCOMET: needs the comet extra and their weights (tests/test_comet.py runs it with "
        "tiny checkpoints bound)",
    "combo apply --model model.json --src src.txt --hyps sysA.txt sysB.txt --refs ref.txt --feature "
    "mtme:XCOMET-XL=scores:xcomet.tsv --feature mtme:COMET=comet:model=Unbabel/wmt22-comet-da":
        "needs a model trained on WMT23's scores, xcomet.tsv and COMET-22's weights (tests/test_feature_binding.py)",
    "combo score --testbed example -m dr-tk-lex1 -m dr-tk-nolex":
        "needs the discourse extra and Java (tests/test_discourse_parser.py parses with them in .ci/discourse)",
    "combo search --testbed ../shared/data/dstc7 --min-refs 4 -m chrf -m rouge-l --backend dask "
    "--scheduler tcp://10.0.0.5:8786": "needs a Dask cluster at that address",
}


@dataclass(frozen=True)
class DocCommand:
    where: str  # page:line
    text: str  # as the page writes it (continuation lines joined, a trailing comment dropped)
    inline: bool
    shown_error: Optional[str] = None  # the "combo: error: ..." line the page prints under it
    shown_output: Optional[str] = None  # the output block the page prints right after the command's block

    def __str__(self) -> str:
        return f"{self.where}: {self.text}"


_BLOCK = re.compile(r"(?:^\s*(?:\$\s+)?|&&\s*)(?:[A-Z_]+=\S+\s+)*(?:\S*/bin/)?(combo\s.*)$")  # VAR=value prefixes allowed
_INLINE = re.compile(r"`(?:\S*/bin/)?(combo\s[^`]+)`")


def _output_after(lines: List[str], i: int) -> Optional[str]:
    """The fenced block that follows the block holding line ``i`` (only blank lines between), when it holds no
    command: the output a page shows for that block's command."""
    j = i + 1
    while j < len(lines) and not lines[j].lstrip().startswith("```"):
        if _BLOCK.search(lines[j]):
            return None  # a second command in the block: whose output it is would be a guess
        j += 1
    j += 1
    while j < len(lines) and (not lines[j].strip() or lines[j].rstrip().endswith(":")):
        j += 1  # blank lines, and a line introducing the output ("Its last table:")
    if j < len(lines) and lines[j].lstrip().startswith("|"):  # a table of the command's figures
        body = []
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            body.append(lines[j])
            j += 1
        return "\n".join(body)
    if j >= len(lines) or not lines[j].lstrip().startswith("```"):
        return None
    body = []
    j += 1
    while j < len(lines) and not lines[j].lstrip().startswith("```"):
        if _BLOCK.search(lines[j]):
            return None
        body.append(lines[j])
        j += 1
    return "\n".join(body)


def doc_commands() -> List[DocCommand]:
    """Every ``combo`` command of README.md and docs/**/*.md, in page order."""
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").split("\n")
        name = page.relative_to(ROOT).as_posix()
        fenced, i = False, 0
        while i < len(lines):
            line = lines[i]
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif fenced and (m := _BLOCK.search(line)):
                start, text = i, m.group(1)
                while text.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    text = text.rstrip()[:-1].rstrip() + " " + lines[i].strip()
                text = re.sub(r"\s+#\s.*$", "", text).strip()
                follows = lines[i + 1].strip() if i + 1 < len(lines) else ""
                shown = follows if line.lstrip().startswith("$") and follows.startswith("combo: error:") else None
                found.append(DocCommand(f"{name}:{start + 1}", text, False, shown,
                                        None if shown else _output_after(lines, i)))
            elif not fenced:
                found += [DocCommand(f"{name}:{i + 1}", m.group(1).strip(), True) for m in _INLINE.finditer(line)]
            i += 1
    return found


def concrete(text: str) -> str:
    """The command a page's text stands for: fragments resolved, templates expanded, placeholders filled."""
    text = FRAGMENTS.get(text, text)
    text = re.sub(r"\[([^\[\]]*)\]", r"\1", text)  # optional parts: included
    text = re.sub(r"(\S+)", lambda m: _first_alternative(m.group(1)), text)
    return filled(text)


def filled(text: str) -> str:
    """``text`` with the placeholders replaced (also in the error line a page prints)."""
    for placeholder, value in PLACEHOLDERS:
        text = text.replace(placeholder, value)
    return text.replace("{data}", str(DATA))


def _first_alternative(word: str) -> str:
    """``king|orange|r_snt`` -> ``king`` (an option value written as alternatives)."""
    return word.split("|")[0] if "|" in word else word


def _is_name_only(command: DocCommand) -> bool:
    """Inline prose naming a command (``combo score``, ``combo data list``): no options, no values."""
    words = command.text.split()[1:]
    return command.inline and command.text not in FRAGMENTS and all(re.fullmatch(r"[a-z]+", w) for w in words)


COMMANDS = doc_commands()


@dataclass
class Case:
    """One concrete command line and every place the pages write it (each runs once)."""

    args: List[str]
    places: List[DocCommand]
    mode: str  # "run", "name" (--help only) or "parse"

    def __str__(self) -> str:
        return "\n".join(str(c) for c in self.places)


def cases() -> List[Case]:
    out: dict = {}
    for c in COMMANDS:
        if _is_name_only(c):
            key = ("name", tuple(c.text.split()[1:]) + ("--help",), None)
        else:
            args = shlex.split(concrete(c.text))[1:] + SUITE_OPTIONS.get(c.text, [])
            key = ("parse" if c.text in PARSE_ONLY else "run", tuple(args), c.shown_error)
        out.setdefault(key, Case(list(key[1]), [], key[0])).places.append(c)
    return list(out.values())


def _params():
    for case in cases():
        slow = any(c.text in SLOW for c in case.places)
        yield pytest.param(case, id=case.places[0].where, marks=[pytest.mark.slow] if slow else [])


# -- the files the pages name ----------------------------------------------------------------

_TREES = {  # Penn bracketed and CoNLL-U parses of the little test bed below, written by hand
    "system-A": ["the cat sat on the mat .", "a dog barked"],
    "reference": ["the cat is on the mat .", "the dog barked loudly"],
}
_PENN = {
    "the cat sat on the mat .": "(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))",
    "a dog barked": "(S (NP (DT a) (NN dog)) (VP (VBD barked)))",
    "the cat is on the mat .": "(S (NP (DT the) (NN cat)) (VP (VBZ is) (PP (IN on) (NP (DT the) (NN mat)))) (. .))",
    "the dog barked loudly": "(S (NP (DT the) (NN dog)) (VP (VBD barked) (ADVP (RB loudly))))",
}
_CONLLU = {  # (form, upos, head, deprel) per word
    "the cat sat on the mat .": [("the", "DET", 2, "det"), ("cat", "NOUN", 3, "nsubj"), ("sat", "VERB", 0, "root"),
                                 ("on", "ADP", 6, "case"), ("the", "DET", 6, "det"), ("mat", "NOUN", 3, "obl"),
                                 (".", "PUNCT", 3, "punct")],
    "a dog barked": [("a", "DET", 2, "det"), ("dog", "NOUN", 3, "nsubj"), ("barked", "VERB", 0, "root")],
    "the cat is on the mat .": [("the", "DET", 2, "det"), ("cat", "NOUN", 6, "nsubj"), ("is", "AUX", 6, "cop"),
                                ("on", "ADP", 6, "case"), ("the", "DET", 6, "det"), ("mat", "NOUN", 0, "root"),
                                (".", "PUNCT", 6, "punct")],
    "the dog barked loudly": [("the", "DET", 2, "det"), ("dog", "NOUN", 3, "nsubj"), ("barked", "VERB", 0, "root"),
                              ("loudly", "ADV", 3, "advmod")],
}


def _conllu(sentence: str) -> str:
    rows = [f"{k}\t{form}\t{form}\t{upos}\t_\t_\t{head}\t{rel}\t_\t_"
            for k, (form, upos, head, rel) in enumerate(_CONLLU[sentence], 1)]
    return "\n".join(rows) + "\n\n"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, data):
    """A folder holding every file the pages' commands read: models, text files, tree files, test beds."""
    work = tmp_path_factory.mktemp("doc-commands")
    example = [json.loads(line) for line in example_path().read_text(encoding="utf-8").splitlines()]
    segments = [r for r in example if r["type"] == "segment"]
    strong = {r["segment"]: r["text"] for r in example if r["type"] == "candidate" and r["system"] == "strong"}
    (work / "hyps.txt").write_text("".join(strong[s["id"]] + "\n" for s in segments), encoding="utf-8")
    for k in (1, 2):
        (work / f"ref{k}.txt").write_text("".join(s["references"][k - 1] + "\n" for s in segments),
                                          encoding="utf-8")
    # my.jsonl (docs/trust.md): the example with line 41 a preference of a system over itself
    lines = example_path().read_text(encoding="utf-8").replace('"s07"', '"s7"').splitlines()
    lines[40] = json.dumps({"type": "preference", "segment": "s7", "better": "A", "worse": "A", "judge": None,
                            "tie": False, "block": 6})
    (work / "my.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # my-testbed.jsonl with system A, and its parses (docs/analysis.md, docs/metrics/dependency.md)
    records = [{"type": "testbed", "format": 1, "name": "my-testbed", "metadata": {"target_language": "en"}}]
    for k, (hyp, ref) in enumerate(zip(_TREES["system-A"], _TREES["reference"])):
        records.append({"type": "segment", "id": f"s{k + 1}", "source": "", "references": [ref],
                        "weights": None, "ref_ids": None, "group": "en"})
        records.append({"type": "candidate", "system": "A", "segment": f"s{k + 1}", "text": hyp})
    (work / "my-testbed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for name, sentences in _TREES.items():
        (work / f"{name}.txt").write_text("".join(s + "\n" for s in sentences), encoding="utf-8")
        (work / f"{name}.trees").write_text("".join(_PENN[s] + "\n" for s in sentences), encoding="utf-8")
        (work / f"{name}.conllu").write_text("".join(_conllu(s) for s in sentences), encoding="utf-8")
    # scores-cache (docs/scoring.md, the --cache DIR placeholder): the score cache the pages' earlier commands make,
    # for the info and clear commands that follow them (each command runs in a fresh copy of this folder)
    res = CliRunner().invoke(main, ["score", "--testbed", "example", "-m", "bleu", "-q", "--cache",
                                    str(work / "scores-cache")])
    assert res.exit_code == 0, res.output
    # the models the pages apply: trained as the pages train them, here without cross-validation
    for args in (["-m", "bleu", "-m", "chrf", "-m", "ter", "-m", "rouge-l", "--out", str(work / "model.json")],
                 ["-m", "bleu", "-m", "chrf", "--out", str(work / "ex.json")]):
        res = CliRunner().invoke(main, ["train", "--testbed", "example", "--folds", "0", "-q", *args])
        assert res.exit_code == 0, res.output
    return work


@pytest.fixture()
def in_workdir(workdir, tmp_path, monkeypatch, data):
    """A fresh copy of the work folder as the current folder; the data home is the real data."""
    here = tmp_path / "work"
    shutil.copytree(workdir, here)
    monkeypatch.chdir(here)
    monkeypatch.setenv("COMBO_DATA_HOME", str(data))
    from combo.io import fetch

    def no_network(url):
        raise AssertionError(f"a documented command tried to download {url}")

    monkeypatch.setattr(fetch, "_default_urlopen", no_network)
    yield here
    from combo.parallel import reset

    reset()  # supplied trees belong to the test bed a command loads: nothing of them outlives it


def _parse_only(args: List[str]) -> None:
    """Parse ``args`` as the command line would (unknown commands, options and values fail), run nothing."""
    ctx = main.make_context("combo", list(args), resilient_parsing=False)
    name, command, rest = main.resolve_command(ctx, ctx._protected_args + ctx.args)
    command.make_context(name, rest, parent=ctx)


@pytest.mark.parametrize("case", list(_params()))
def test_documented_command_runs(case: Case, in_workdir):
    if case.mode == "parse":
        from combo.parallel import reset

        try:
            _parse_only(case.args)
        finally:
            reset()
        return
    res = CliRunner().invoke(main, case.args, prog_name="combo")
    if case.mode == "name":
        assert res.exit_code == 0, f"{case}\nis not a combo command: {res.output.strip()[-300:]}"
        return
    shown_error = case.places[0].shown_error
    if shown_error is not None:
        shown = filled(shown_error)
        assert res.exit_code == 2, f"{case}\nis documented to fail; it exited {res.exit_code}: {res.output[-400:]}"
        assert res.stderr.strip() == shown, f"{case}\nThe page shows\n  {shown}\nbut the command prints\n  " \
                                            f"{res.stderr.strip()}"
        return
    assert res.exit_code == 0, f"{case}\nexited {res.exit_code}:\n{res.output[-600:]}"
    for place in case.places:
        if place.shown_output is not None and place.text not in SUITE_OPTIONS and place.text not in OUTPUT_DIFFERS:
            missing = sorted(_figures(filled(place.shown_output)) - _figures(res.output))
            assert not missing, (f"{place}\nThe page shows figures the command no longer prints: {missing}\n"
                                 f"it prints:\n{res.output[-1500:]}")


#: A figure as pages and commands print them: three decimals or more ("0.8460" and ".8460" are one figure).
_FIGURE = re.compile(r"(?<![\w.])-?\d*\.\d{3,}(?![\w.])")


def _figures(text: str) -> set:
    return {f.replace("-0.", "-.") if f.startswith("-0.") else f[1:] if f.startswith("0.") else f
            for f in _FIGURE.findall(text)}


def test_every_table_entry_is_still_on_a_page():
    """An entry for a command no page writes any more is dead weight: remove it."""
    texts = {c.text for c in COMMANDS}
    for table in (FRAGMENTS, SLOW, PARSE_ONLY, SUITE_OPTIONS, OUTPUT_DIFFERS):
        stale = [t for t in table if t not in texts]
        assert not stale, f"no page writes these commands any more: {stale}"


def test_the_pages_hold_commands():
    assert len(COMMANDS) > 100
    assert any(c.where.startswith("README.md") for c in COMMANDS)
    assert any("\\" not in c.text and c.text.count("-m") > 3 for c in COMMANDS)  # continuation lines joined
