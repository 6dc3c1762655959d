"""The speed and memory goals of the heterogeneous metrics, each a row: the measured figure beside its goal.

Every row runs ``combo`` in fresh processes, cold (an empty analysis and score cache of its own) unless it
says warm, on this machine's 2 cores, and measures the whole process tree: wall seconds, CPU seconds of the
command and its workers, and the peak of the summed proportional set size (shared pages counted once,
sampled every 0.5 s; ``bench_stream.measure``).

* ``slice``: ``combo score -m @heterogeneous --level segment -j 2`` on WMT12 de-en's first 300 segments and
  all 16 systems (4,800 candidates, 4,835 distinct texts): cold, then warm (the analysis cache of the cold
  run, no score cache).
* ``memory``: the same command on the first 150, 300, 600 and 1,200 segments (2,400 to 19,200 candidates),
  each cold: the exponent ``b`` of ``peak ~ rows^b`` (analyses stream when it is near 0).
* ``train`` (``--train``, about 12 minutes): ``combo train`` with its default metrics
  (``@heterogeneous``) on WMT12's four into-English pairs, leaving one pair out, cold
  (``bench_heterogeneous.py``'s first row).
* the lexical rows against sacreBLEU and the command line's start-up (``bench_peers_process.py``).

Run: ``python benchmarks/bench_goals.py [--train] [--json out.json]``; ``run_all.py --goals`` prints the
same table after its own.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import List

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stream import DATA, check_output_path, cold_env, timed  # noqa: E402

PAIRS = ("cs-en", "de-en", "es-en", "fr-en")
SLICE_SEGMENTS = 300
MEMORY_SEGMENTS = (150, 300, 600, 1200)


def write_slice(path: Path, segments: int) -> Path:
    """WMT12 de-en's first ``segments`` segments with every system's candidates, as a JSONL test bed."""
    from combo.io import load_testbed
    from combo.io.jsonl import write_jsonl
    from combo.testbed import Testbed

    tb = load_testbed(DATA / "wmt12", lp="de-en")
    part = Testbed(name=f"wmt12-de-en-{segments}", segments=tb.segments[:segments],
                   candidates={name: {i: t for i, t in rows.items() if i < segments}
                               for name, rows in tb.candidates.items()},
                   metadata=dict(tb.metadata))
    write_jsonl(part, path)
    return path


def score_command(testbed: Path, out: Path) -> List[str]:
    return ["score", "--testbed", str(testbed), "-m", "@heterogeneous", "--level", "segment", "-j", "2", "-q",
            "--out", str(out)]


def goal(name: str, measured: float, target: float, unit: str, command: str, **figures) -> dict:
    return {"goal": name, "measured": measured, "target": target, "unit": unit, "ok": measured <= target,
            "command": command, **figures}


def slice_rows(work: Path) -> List[dict]:
    testbed = write_slice(work / "slice.jsonl", SLICE_SEGMENTS)
    env, _ = cold_env("combo-goals-slice-")
    cold, _ = timed(score_command(testbed, work / "cold.tsv"), env)
    env["COMBO_SCORE_CACHE"] = "off"  # warm: the analyses are cached, every metric is computed again
    warm, _ = timed(score_command(testbed, work / "warm.tsv"), env)
    same = (work / "cold.tsv").read_bytes() == (work / "warm.tsv").read_bytes()
    command = f"combo score --testbed <WMT12 de-en, {SLICE_SEGMENTS} segments x 16 systems> -m @heterogeneous " \
              "--level segment -j 2"
    return [goal("4,800 candidates, cold: wall s", cold["seconds"], 25, "s", command, **cold),
            goal("4,800 candidates, warm (analysis cache): wall s", warm["seconds"], 2, "s", command,
                 same_scores_as_cold=same, **warm)]


def memory_row(work: Path) -> dict:
    rows, peaks = [], []
    for segments in MEMORY_SEGMENTS:
        testbed = write_slice(work / f"memory-{segments}.jsonl", segments)
        env, _ = cold_env("combo-goals-memory-")
        figures, _ = timed(score_command(testbed, work / f"memory-{segments}.tsv"), env)
        rows.append(16 * segments)
        peaks.append(figures["peak_mb"])
        print(json.dumps({"rows": rows[-1], **figures}), flush=True)
    b = float(np.polyfit(np.log(rows), np.log(peaks), 1)[0])
    return goal("peak memory ~ rows^b: b", round(b, 2), 0.1, "", "the slice command on "
                + ", ".join(f"{r:,}" for r in rows) + " candidates, each cold", rows=rows, peak_mb=peaks)


def train_rows(work: Path) -> List[dict]:
    env, cache = cold_env("combo-goals-train-")
    command = ["train", "--testbed", str(DATA / "wmt12"), "--lp", ",".join(PAIRS), "--cv", "testbed",
               "--out", str(cache / "model.json"), "--format", "json", "-j", "2", "-q"]
    figures, out = timed(command, env)
    held_out = json.loads(out)["cross_validation"]["tuned"]
    text = "combo train --testbed wmt12 --lp " + ",".join(PAIRS) + " --cv testbed -j 2 (default -m @heterogeneous)"
    return [goal("train, four WMT12 pairs, cold: wall min", round(figures["seconds"] / 60, 1), 15, "min", text,
                 held_out_tuned=held_out, **figures),
            goal("train, four WMT12 pairs, cold: peak GB", round(figures["peak_mb"] / 1024, 2), 3, "GB", text,
                 **figures)]


def lexical_rows() -> List[dict]:
    try:
        from bench_peers_process import process_rows
    except ImportError as err:  # pragma: no cover - the lexical rows live beside this script
        print(f"lexical rows skipped: {err}")
        return []
    return process_rows(DATA)  # each row has goal, measured, target and ok


def goal_rows(train: bool = False) -> List[dict]:
    work = Path(tempfile.mkdtemp(prefix="combo-goals-"))  # the slices and their scores, removed at the end
    try:
        rows = slice_rows(work)
        rows.append(memory_row(work))
        if train:
            rows.extend(train_rows(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows.extend(lexical_rows())
    return rows


def print_table(rows: List[dict]) -> None:
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| goal | measured | goal | met | cpu s | peak MB |")
    print("|---|---:|---:|---|---:|---:|")
    for r in rows:
        print(f"| {r['goal']} | {r['measured']} | ≤ {r['target']} | "
              f"{'yes' if r['ok'] else 'no'} | {r.get('cpu_seconds', '')} | {r.get('peak_mb', '')} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", action="store_true", help="also the full combo train row (about 12 minutes)")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()
    if args.json:
        check_output_path(ap, "--json", args.json)
    rows = goal_rows(args.train)
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
