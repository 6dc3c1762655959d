"""combo's COMET against COMET's own command line on the same checkpoint: whole process, 2,000 segments.

Four WMT23 en-de systems x 500 segments (sources, refA) are scored by ``comet-score`` (each system in its own
``predict`` call, as comet-score runs them) and by ``combo score -m comet:model=CKPT`` (one ``predict`` over
every distinct triple), each as a fresh process, alternated ``--repeats`` times; the segment scores must agree
within float16 rounding. comet-score 2.2 runs every model in half precision, so combo runs with ``half=yes`` here
(its default is full precision, as ``predict`` computes on the loaded model); in half precision a score moves with
the batch it is padded in, and the two tools batch differently, so the largest difference is reported. The checkpoint is a tiny one built offline (tests/neural_checkpoints.py), so the figures measure
what each tool adds around the model, not a real model's arithmetic; ``--checkpoint`` names a real one.
Needs the comet extra (run it in .ci/comet's venv: ``.venv-comet/bin/python benchmarks/bench_comet.py``).
On a GPU both run there as well (``--gpus 1``, ``device=cuda``).

    .venv-comet/bin/python benchmarks/bench_comet.py --data ../shared/data
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ("ONLINE-A", "ONLINE-B", "GPT4-5shot", "NLLB_Greedy")
#: In half precision a segment's score depends on the batch it is padded in (float16 rounding): comet-score
#: batches each system alone, combo every distinct triple together. Full precision agrees to 1e-6
#: (tests/test_comet.py, against predict()).
HALF_TOLERANCE = 2e-3


def lay_out(data: Path, folder: Path, n: int) -> None:
    """A plain test-bed folder (source.txt, references/, systems/) of the first ``n`` WMT23 en-de segments."""
    root = data / "wmt23"
    read = lambda p: p.read_text(encoding="utf-8-sig").split("\n")[:n]  # noqa: E731
    (folder / "references").mkdir(parents=True)
    (folder / "systems").mkdir()
    (folder / "source.txt").write_text("\n".join(read(root / "sources" / "en-de.txt")) + "\n", encoding="utf-8")
    (folder / "references" / "refA.txt").write_text(
        "\n".join(read(root / "references" / "en-de.refA.txt")) + "\n", encoding="utf-8")
    for name in SYSTEMS:
        (folder / "systems" / f"{name}.txt").write_text(
            "\n".join(read(root / "system-outputs" / "en-de" / f"{name}.txt")) + "\n", encoding="utf-8")


def timed(cmd, env) -> tuple:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"{cmd[0]} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started, done.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--segments", type=int, default=500, help="per system (four systems)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--checkpoint", default=None, help="a COMET model.ckpt (default: a tiny one built offline)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    import torch

    gpu = torch.cuda.is_available()
    work = Path(tempfile.mkdtemp(prefix="bench-comet-"))
    try:
        lay_out(args.data, work / "tb", args.segments)
        ckpt = args.checkpoint
        if ckpt is None:
            sys.path.insert(0, str(ROOT / "tests"))
            from neural_checkpoints import comet_checkpoint

            ckpt = str(comet_checkpoint(work / "tiny", args.data, "regression"))
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COMBO_SCORE_CACHE": "off"}  # every run computes
        bindir = Path(sys.executable).parent
        comet_cmd = [str(bindir / "comet-score"), "-s", str(work / "tb" / "source.txt"), "-r",
                     str(work / "tb" / "references" / "refA.txt"), "-t",
                     *[str(work / "tb" / "systems" / f"{n}.txt") for n in SYSTEMS], "--model", ckpt,
                     "--batch_size", "16", "--gpus", "1" if gpu else "0", "--quiet", "--to_json",
                     str(work / "comet.json")]
        combo_cmd = [sys.executable, "-m", "combo.cli", "score", "--testbed", str(work / "tb"), "-m",
                     f"comet:model={ckpt},device={'cuda' if gpu else 'cpu'},half=yes", "--level", "segment", "-q"]
        times = {"comet-score": [], "combo": []}
        for _ in range(args.repeats):
            times["comet-score"].append(timed(comet_cmd, env)[0])
            seconds, out = timed(combo_cmd, env)
            times["combo"].append(seconds)
        cache = work / "score-cache"
        timed(combo_cmd + ["--cache", str(cache)], env)
        warm = timed(combo_cmd + ["--cache", str(cache)], env)[0]  # what a second run of the same data costs
        ours = {}
        for line in out.strip().split("\n")[1:]:
            system, seg, score = line.split("\t")
            ours[(system, int(seg) - 1)] = float(score)

        def difference() -> float:
            theirs = json.loads((work / "comet.json").read_text(encoding="utf-8"))
            return max(abs(ours[(Path(f).stem, i)] - e["COMET"]) for f, rows in theirs.items()
                       for i, e in enumerate(rows))

        diff = difference()
        if diff > HALF_TOLERANCE:
            raise SystemExit(f"segment scores differ from comet-score's by {diff:.2e}")
        med = {k: statistics.median(v) for k, v in times.items()}
        doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "device": "cuda" if gpu else "cpu",
               "segments": args.segments * len(SYSTEMS), "checkpoint": "tiny (built offline)" if args.checkpoint is None
               else args.checkpoint, "seconds": times, "median": med, "ratio": med["combo"] / med["comet-score"],
               "max_segment_difference": diff, "torch_threads": torch.get_num_threads(),
               "combo_warm_score_cache": warm}
        print(f"{doc['segments']} segments on {doc['device']}, {args.repeats} alternated runs, whole process:")
        for k, v in times.items():
            print(f"  {k:12} median {med[k]:.2f} s  ({', '.join(f'{x:.2f}' for x in v)})")
        print(f"  combo / comet-score: {doc['ratio']:.2f}x; segment scores agree to {diff:.1e}")
        print(f"  combo again with --cache (the scores stored): {warm:.2f} s")
        if args.json:
            args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
