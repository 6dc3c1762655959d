"""combo's command line against sacreBLEU's, as whole processes: start-up included, peak memory of each process.

The goals of issue #30 for the lexical metrics, each measured in one run on this machine, the two commands
taking turns (``--repeat`` rounds, the best time of each side kept, the largest peak):

* BLEU + chrF on WMT12 de-en (16 systems x 3,003 segments, one reference):
  ``combo score --testbed WMT12 --lp de-en -m bleu chrf --level system -q`` against
  ``sacrebleu REF -i SYS1 ... SYS16 -m bleu chrf -w 4``: combo's time at most 0.2x sacreBLEU's, combo's
  peak memory at most sacreBLEU's;
* TER on one system (``--ter-system``, onlineB by default): ``combo score`` of a test-bed folder holding that
  system and the reference (links to the data, in a temporary folder) against ``sacrebleu REF -i SYS -m ter``:
  at most 0.03x sacreBLEU's time;
* ``import combo.cli`` (timed inside a fresh interpreter): under 0.3 s.

Both sides print their scores and the rows check that they agree: combo's six decimals (0-1 scale) against
sacreBLEU's four (0-100 scale), the same digits. Each process is cold: no combo analysis or score cache
(``COMBO_CACHE_DIR=""``, ``COMBO_SCORE_CACHE=off``). Byte code is compiled once, as an installed package
has it, into a temporary ``PYTHONPYCACHEPREFIX`` (nothing written into the repository), and each command runs
once untimed first (byte code, files in the OS cache). Time is wall-clock seconds of the process (also CPU
seconds in the details); peak memory is the process's maximum resident set size (``wait4``, as
``/usr/bin/time -v`` reports it).

Run: ``python benchmarks/bench_peers_process.py [--data ../shared/data] [--repeat 3] [--json out.json]``;
``benchmarks/run_all.py`` can import :func:`process_rows`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

TIME_RATIO_GOAL = 0.2  # BLEU + chrF, combo / sacreBLEU
TER_RATIO_GOAL = 0.03  # TER on one system, combo / sacreBLEU
IMPORT_GOAL_S = 0.3  # import combo.cli
SCORE_DIGITS = 4  # sacreBLEU's -w: 4 decimals on its 0-100 scale, combo's 6 on 0-1


def _executable(name: str) -> Optional[str]:
    """The console script ``name`` beside this interpreter (the virtualenv's), else on the PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def run_process(cmd: Sequence[str], env: Dict[str, str]) -> Dict[str, object]:
    """Run ``cmd`` to its end: wall seconds, CPU seconds (user + system), peak resident MB and standard output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(list(cmd), stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode("utf-8"), err.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}: {errors[-2000:]}")
    return {"seconds": wall, "cpu_seconds": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
            "stdout": text}


def paired(commands: Dict[str, Sequence[str]], env: Dict[str, str], repeat: int) -> Dict[str, Dict[str, object]]:
    """Each command once untimed, then ``repeat`` rounds in turn: per command the best wall and CPU seconds,
    the largest peak and the last output."""
    for cmd in commands.values():
        run_process(cmd, env)
    best: Dict[str, Dict[str, object]] = {}
    for _ in range(repeat):
        for name, cmd in commands.items():
            r = run_process(cmd, env)
            b = best.setdefault(name, dict(r))
            b["seconds"] = min(b["seconds"], r["seconds"])
            b["cpu_seconds"] = min(b["cpu_seconds"], r["cpu_seconds"])
            b["peak_mb"] = max(b["peak_mb"], r["peak_mb"])
            b["stdout"] = r["stdout"]
    return best


def combo_scores(tsv: str) -> Dict[str, Dict[str, float]]:
    """``{system: {metric: score on sacreBLEU's 0-100 scale}}`` from ``combo score``'s system-level TSV."""
    lines = [line.split("\t") for line in tsv.strip().splitlines()]
    header = lines[0]
    return {row[0]: {m: 100 * float(v) for m, v in zip(header[1:], row[1:])} for row in lines[1:]}


def sacrebleu_scores(text: str, names: Sequence[str]) -> Dict[str, Dict[str, float]]:
    """``{system: {metric: score}}`` from sacreBLEU's JSON (a list for several systems, one object for one);
    ``names`` are the systems in the order given with ``-i``."""
    doc = json.loads(text)
    if isinstance(doc, dict):  # one system, one metric
        return {names[0]: {doc["name"].lower(): float(doc["score"])}}
    out = {}
    for name, entry in zip(names, doc):
        out[name] = {("chrf" if k.startswith("chrF") else k.lower()): float(v)
                     for k, v in entry.items() if k != "system"}
    return out


def largest_difference(ours: Dict[str, Dict[str, float]], peer: Dict[str, Dict[str, float]]) -> float:
    """Largest |combo - sacreBLEU| over every system and metric (0-100 scale, combo rounded as sacreBLEU
    prints); infinity when the two do not score the same systems and metrics."""
    if set(ours) != set(peer) or any(set(ours[s]) != set(peer[s]) for s in peer):
        return float("inf")
    return max(abs(round(ours[s][m], SCORE_DIGITS) - peer[s][m]) for s in peer for m in peer[s])


def import_seconds(env: Dict[str, str], repeat: int) -> float:
    """Best time of ``import combo.cli`` in a fresh interpreter (the import alone, interpreter start-up not
    included), over ``repeat`` processes after one untimed one."""
    code = "import time; t = time.perf_counter(); import combo.cli; print(time.perf_counter() - t)"
    cmd = [sys.executable, "-c", code]
    run_process(cmd, env)
    return min(float(run_process(cmd, env)["stdout"]) for _ in range(max(repeat, 3)))


def _environment(pycache: Path) -> Dict[str, str]:
    env = dict(os.environ, COMBO_CACHE_DIR="", COMBO_SCORE_CACHE="off", PYTHONPYCACHEPREFIX=str(pycache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _ter_testbed(folder: Path, reference: Path, system: Path, name: str) -> Path:
    """A ``read_plain_dir`` test bed of one system and the reference: links to the data files."""
    (folder / "references").mkdir(parents=True)
    (folder / "systems").mkdir()
    (folder / "references" / "ref.txt").symlink_to(reference)
    (folder / "systems" / f"{name}.txt").symlink_to(system)
    return folder


def _ratio_row(goal: str, ours: Dict[str, object], peer: Dict[str, object], target: float,
               cmd_ours: Sequence[str], cmd_peer: Sequence[str], diff: float) -> dict:
    ratio = ours["seconds"] / peer["seconds"]
    return {"goal": goal, "measured": round(ratio, 3), "target": target, "ok": bool(ratio <= target and diff < 2e-4),
            "combo_s": round(ours["seconds"], 2), "sacrebleu_s": round(peer["seconds"], 2),
            "combo_cpu_s": round(ours["cpu_seconds"], 2), "sacrebleu_cpu_s": round(peer["cpu_seconds"], 2),
            "cpu_ratio": round(ours["cpu_seconds"] / peer["cpu_seconds"], 3),
            "combo_peak_mb": round(ours["peak_mb"]), "sacrebleu_peak_mb": round(peer["peak_mb"]),
            "max_score_diff": diff, "combo_command": " ".join(cmd_ours), "sacrebleu_command": " ".join(cmd_peer)}


def process_rows(data_dir=DATA, repeat: int = 3, ter_system: str = "onlineB",
                 goals: Sequence[str] = ("bleu-chrf", "ter", "import"), combo: Optional[str] = None) -> List[dict]:
    """The issue's whole-process goals, each as ``{"goal", "measured", "target", "ok", ...}`` (the details:
    seconds, CPU seconds and peak MB of both sides, the largest score difference, the commands).

    ``data_dir`` holds ``wmt12/`` (the shared data folder). Rows: BLEU + chrF time ratio and peak memory
    (combo's MB against sacreBLEU's), TER time ratio, import seconds. A row whose scores disagree is not ok.
    ``combo``: the command to time (default: the ``combo`` script beside this interpreter), e.g. a script
    running another checkout's ``combo.cli.main``.
    """
    data_dir = Path(data_dir)
    wmt12 = data_dir / "wmt12"
    plain = wmt12 / "plain"
    reference = plain / "references" / "newstest2012-ref.en"
    outputs = sorted((plain / "system-outputs" / "newstest2012" / "de-en").iterdir())
    names = [f.name.split(".", 2)[2] for f in outputs]
    combo, sacrebleu = combo or _executable("combo"), _executable("sacrebleu")
    if combo is None or sacrebleu is None:
        raise RuntimeError("the combo and sacrebleu commands are needed (pip install -e '.[test]')")
    rows: List[dict] = []
    with tempfile.TemporaryDirectory(prefix="combo-peers-") as tmp:
        env = _environment(Path(tmp) / "pycache")
        if "bleu-chrf" in goals:
            ours_cmd = [combo, "score", "--testbed", str(wmt12), "--lp", "de-en", "-m", "bleu", "chrf",
                        "--level", "system", "-q"]
            peer_cmd = [sacrebleu, str(reference), "-i", *map(str, outputs), "-m", "bleu", "chrf",
                        "-w", str(SCORE_DIGITS)]
            r = paired({"combo": ours_cmd, "sacrebleu": peer_cmd}, env, repeat)
            diff = largest_difference(combo_scores(r["combo"]["stdout"]),
                                      sacrebleu_scores(r["sacrebleu"]["stdout"], names))
            row = _ratio_row("BLEU+chrF WMT12 de-en 16 systems: time combo / sacreBLEU", r["combo"], r["sacrebleu"],
                             TIME_RATIO_GOAL, ours_cmd, peer_cmd, diff)
            rows.append(row)
            rows.append({"goal": "BLEU+chrF WMT12 de-en 16 systems: peak MB combo (target: sacreBLEU's)",
                         "measured": row["combo_peak_mb"], "target": row["sacrebleu_peak_mb"],
                         "ok": row["combo_peak_mb"] <= row["sacrebleu_peak_mb"]})
        if "ter" in goals:
            system = outputs[names.index(ter_system)]
            folder = _ter_testbed(Path(tmp) / "ter-testbed", reference, system, ter_system)
            ours_cmd = [combo, "score", "--testbed", str(folder), "-m", "ter", "--level", "system", "-q"]
            peer_cmd = [sacrebleu, str(reference), "-i", str(system), "-m", "ter", "-w", str(SCORE_DIGITS)]
            r = paired({"combo": ours_cmd, "sacrebleu": peer_cmd}, env, repeat)
            diff = largest_difference(combo_scores(r["combo"]["stdout"]),
                                      sacrebleu_scores(r["sacrebleu"]["stdout"], [ter_system]))
            rows.append(_ratio_row(f"TER WMT12 de-en {ter_system}: time combo / sacreBLEU", r["combo"],
                                   r["sacrebleu"], TER_RATIO_GOAL, ours_cmd, peer_cmd, diff))
        if "import" in goals:
            seconds = import_seconds(env, repeat)
            rows.append({"goal": "import combo.cli: seconds", "measured": round(seconds, 3), "target": IMPORT_GOAL_S,
                         "ok": seconds < IMPORT_GOAL_S})
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA), help="the shared data folder (holding wmt12/)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of each pair of commands (best time kept)")
    ap.add_argument("--ter-system", default="onlineB")
    ap.add_argument("--goals", nargs="+", default=["bleu-chrf", "ter", "import"],
                    choices=["bleu-chrf", "ter", "import"])
    ap.add_argument("--combo", default=None, help="the combo command to time (default: the virtualenv's)")
    ap.add_argument("--json", default=None, help="also write the rows here")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    rows = process_rows(args.data, args.repeat, args.ter_system, args.goals, args.combo)
    print(f"load average at start {load:.1f}, at end {os.getloadavg()[0]:.1f}")
    print(f"{'goal':<68}{'measured':>10}{'target':>9}  ok")
    for r in rows:
        print(f"{r['goal']:<68}{r['measured']:>10}{r['target']:>9}  {'yes' if r['ok'] else 'NO'}")
    for r in rows:
        if "combo_command" in r:
            print(json.dumps({k: v for k, v in r.items() if k not in ("goal", "measured", "target", "ok")}))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
