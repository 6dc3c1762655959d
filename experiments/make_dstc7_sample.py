"""Build ``combo/data/dstc7-sample/``, the slice of DSTC7 Task 2 bundled for the first run.

The selection rule was fixed and committed before any metric score on the
slice was computed (see ``combo/data/README.md``, "The DSTC7 sample"):

* instances: the first 100 InstanceIDs, in the order of
  ``dstc7-task2-context.tsv`` (the release sorts them by their hexadecimal
  hash, so this is an arbitrary, score-blind sample), among those with at
  least 5 non-empty gold references (so that at least 4 remain once the
  reader removes the reference the ``Human`` response copies; KING with
  QUEEN needs 4);
* references: the first 8 non-empty gold references of each chosen
  instance, in the file's column order (``Reference1`` ...);
* everything else about the chosen instances, unchanged and in file order:
  the context line, every system's response (all 10 systems, ``Human``
  included), every per-judge rating, the per-instance mean ratings;
* left out: the ``Average`` row of ``dstc7-task2-human_evaluation.tsv`` (a
  mean over all 1,000 instances, not over the slice).

Lines are copied byte for byte (the per-judge file keeps its upstream
byte-order mark), except the gold-reference lines, which are cut after the
eighth reference. ``LICENSE.txt`` (Open Use of Data Agreement v1.0) and the
release's ``README.txt`` are copied unchanged.

Usage::

    python experiments/make_dstc7_sample.py --data ../shared/data/dstc7 --out combo/data/dstc7-sample
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

INSTANCES = 100
MIN_REFERENCES = 5
KEEP_REFERENCES = 8
CONTEXT = "dstc7-task2-context.tsv"
GOLD = "dstc7-task2-gold_responses.tsv"
SYSTEMS = "dstc7-task2-system_responses.tsv"
PER_JUDGE = "dstc7-task2-human-eval-per-judge.tsv"
MEANS = "dstc7-task2-human_evaluation.tsv"


def _lines(path: Path) -> list:
    return path.read_bytes().split(b"\n")[:-1]  # the files end with a newline


def choose(data: Path) -> list:
    """The chosen InstanceIDs, in context-file order (the rule above)."""
    gold = {}
    for line in _lines(data / GOLD)[1:]:
        iid, _, rest = line.partition(b"\t")
        gold[iid] = [r for r in rest.split(b"\t") if r] if rest else []
    order = [line.split(b"\t", 1)[0] for line in _lines(data / CONTEXT)[1:]]
    return [iid for iid in order if len(gold[iid]) >= MIN_REFERENCES][:INSTANCES]


def build(data: Path, out: Path) -> dict:
    chosen = choose(data)
    keep = set(chosen)
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    # the column holding the InstanceID: first, except after SystemID or JudgeID
    for name, column in ((CONTEXT, 0), (SYSTEMS, 1), (MEANS, 0), (PER_JUDGE, 1)):
        lines = _lines(data / name)
        rows = [line for line in lines[1:] if line.split(b"\t")[column] in keep]
        (out / name).write_bytes(b"\n".join([lines[0], *rows]) + b"\n")
        counts[name] = len(rows)
    lines = _lines(data / GOLD)
    rows = []
    for line in lines[1:]:
        iid, _, rest = line.partition(b"\t")
        if iid in keep:
            refs = [r for r in rest.split(b"\t") if r][:KEEP_REFERENCES]
            rows.append(b"\t".join([iid, *refs]))
    (out / GOLD).write_bytes(b"\n".join([lines[0], *rows]) + b"\n")
    counts[GOLD] = len(rows)
    for name in ("LICENSE.txt", "README.txt"):
        shutil.copyfile(data / name, out / name)
    return counts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "dstc7")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parents[1] / "combo" / "data" / "dstc7-sample")
    args = parser.parse_args(argv)
    for name, n in build(args.data, args.out).items():
        print(f"{name}\t{n} rows")


if __name__ == "__main__":
    main()
