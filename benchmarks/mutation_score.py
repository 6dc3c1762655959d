"""Mutation score of combo's combination, meta-evaluation and MTME code, measured with mutmut 3.

    pip install mutmut==3.3.1   # not a dependency of combo: this script's alone
    python benchmarks/mutation_score.py --out docs/results/mutation.json

What it does, without touching the repo it is run from:

1. ``git clone``s the current HEAD into a temporary folder and copies the compiled extensions (``*.so``, built
   in place by ``pip install -e .``) into the clone;
2. writes mutmut's configuration there (``setup.cfg``, ``[mutmut]``): every ``.py`` file under ``combo/`` is
   copied into mutmut's ``mutants/`` folder, so that ``import combo`` resolves to the mutated copy, but only
   ``PATHS`` below are mutated (the rest is listed in ``do_not_mutate``); the suite runs as
   ``pytest -x -q -p no:cacheprovider -m "not slow" tests`` (``-x -q`` are mutmut's own; the rest goes
   through ``PYTEST_ADDOPTS``), with the shared data at ``$COMBO_DATA_HOME`` (default ``../shared/data``);
3. runs ``mutmut run --max-children N`` (default 1): one full run of the suite to map tests to functions, one
   clean run, then for each mutant only the tests that call its function, fastest first, stopping at the first
   failure. ``--sample-fraction F`` checks only a fixed random subset: ``ceil(F * n)`` mutants of each path,
   drawn with ``random.Random(seed)`` from its sorted mutant names (``--seed``, default 0), so a rerun checks
   the same mutants. ``--time-limit`` interrupts mutmut after so many minutes; what is unchecked is reported
   as such (mutmut checks the mutants with the fastest covering tests first). mutmut needs the suite green with
   ``-x``: ``--deselect NODEID`` (repeatable) drops a test that fails on the unmutated clone.
4. prints per path: mutants (generated, and checked when sampled), killed, survived, timeout, suspicious,
   no tests (no test calls the function), the score killed / (killed + survived) and killed / checked; writes
   them with the surviving mutants' diffs to ``--out``.

Cost: the mapping run of the suite alone takes about 20 minutes on one shared core, the clean run about as long,
then each mutant a second to a minute; the three paths give about 9,000 mutants, so a full run takes many
hours on one core: see ``--sample-fraction`` (e.g. ``--sample-fraction 0.05 --seed 0``, about 450 mutants).
"""

import argparse
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

PATHS = ["combo/combine/", "combo/meta/", "combo/io/mtme.py"]
PYTEST_ADDOPTS = '-p no:cacheprovider -m "not slow"'
STATUSES = ["killed", "survived", "timeout", "suspicious", "no tests", "not checked"]
# A test's subprocess (python -c ...) that calls a mutated function while mutmut maps tests to functions
# imports a fresh mutmut whose config is unset; give it one so it records nothing instead of crashing.
# mutmut 3.3.1 reads pytest's Item._nodeid, which pytest 9 no longer has: give mutmut's process that name.
SITECUSTOMIZE = """import os
if "MUTANT_UNDER_TEST" not in os.environ:
    import _pytest.nodes
    if not hasattr(_pytest.nodes.Node, "_nodeid"):
        _pytest.nodes.Node._nodeid = property(lambda self: self.nodeid)
elif os.environ.get("MUTANT_UNDER_TEST") == "stats":
    import mutmut, mutmut.__main__ as m
    if mutmut.config is None:
        mutmut.config = m.Config(also_copy=[], do_not_mutate=[], max_stack_depth=-1, debug=False,
                                 paths_to_mutate=[])
"""


def clone(root: Path, work: Path) -> tuple[Path, str]:
    repo = work / "repo"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(root), str(repo)], check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout.strip()
    for so in (root / "combo").rglob("*.so"):
        shutil.copy2(so, repo / so.relative_to(root))
    return repo, commit


def configure(repo: Path, tests: list[str]) -> None:
    """mutmut reads setup.cfg when pyproject.toml has no [tool.mutmut]."""
    keep = [p.rstrip("/") for p in PATHS]
    skip = sorted(str(f.relative_to(repo)) for f in (repo / "combo").rglob("*.py")
                  if not any(str(f.relative_to(repo)) == k or str(f.relative_to(repo)).startswith(k + "/")
                             for k in keep))
    # Tests read README.md, docs/, experiments/, .ci/ ... relative to the tests folder's parent, i.e. mutants/.
    also = sorted(p.name + ("/" if p.is_dir() else "") for p in repo.iterdir()
                  if p.name not in {".git", "combo", "tests", "setup.cfg", "pyproject.toml"})
    lines = ["[mutmut]", "paths_to_mutate=combo/", "tests_dir=", *("    " + t for t in tests),
             "do_not_mutate=", *("    " + s for s in skip), "also_copy=", *("    " + a for a in also)]
    (repo / "setup.cfg").write_text("\n".join(lines) + "\n", encoding="utf-8")


def env_for(repo: Path, work: Path, deselect: list[str]) -> dict:
    site = work / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    data = Path(os.environ.get("COMBO_DATA_HOME") or Path.cwd().parent / "shared" / "data").resolve()
    env = dict(os.environ, COMBO_DATA_HOME=str(data), NLTK_DATA=str(data / "nltk_data"),
               PYTEST_ADDOPTS=" ".join([PYTEST_ADDOPTS, *(f"--deselect {t}" for t in deselect)]),
               PYTHONPATH=f"{site}{os.pathsep}{repo / 'mutants'}",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("MUTANT_UNDER_TEST", None)
    return env


def results(repo: Path) -> dict[str, dict[str, int | None]]:
    """{source path: {mutant name: exit code or None}} from mutmut's .meta files."""
    out = {}
    for meta in sorted((repo / "mutants" / "combo").rglob("*.py.meta")):
        source = str(meta.relative_to(repo / "mutants"))[:-len(".meta")]
        out[source] = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    return out


def path_of(source: str) -> str:
    return next(p for p in PATHS if source == p or source.startswith(p))


def sample(by_file: dict, fraction: float, seed: int) -> list[str] | None:
    if fraction >= 1:
        return None
    chosen = []
    for p in PATHS:
        names = sorted(n for f, codes in by_file.items() if path_of(f) == p for n in codes)
        chosen += random.Random(seed).sample(names, math.ceil(fraction * len(names)))
    return chosen


def diffs(repo: Path, env: dict, names: list[str]) -> dict[str, str]:
    """The changed lines of each mutant, by mutmut's own diff."""
    code = ("import contextlib, io, json, sys, mutmut.__main__ as m\n"
            "m.ensure_config_loaded()\nout = {}\n"
            "for n in json.load(sys.stdin):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        d = m.get_diff_for_mutant(n)\n"
            "    out[n] = '\\n'.join(l for l in d.splitlines() if l[:1] in '+-' and l[:3] not in ('+++', '---'))\n"
            "print(json.dumps(out))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, input=json.dumps(names),
                          capture_output=True, text=True)
    return json.loads(proc.stdout) if proc.returncode == 0 else {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--max-children", type=int, default=1)
    ap.add_argument("--sample-fraction", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=None, help="minutes, then interrupt mutmut")
    ap.add_argument("--deselect", action="append", default=[], metavar="NODEID",
                    help="a test that fails on the unmutated clone (mutmut needs a green suite); repeatable")
    ap.add_argument("--tests", nargs="*", default=None, help="test files or folders (default: tests/)")
    ap.add_argument("--tests-mentioning", nargs="*", default=None, metavar="WORD",
                    help="only the test files whose text contains one of these words (a quick, partial run)")
    ap.add_argument("--workdir", type=Path, default=None, help="keep the clone here (default: a removed temp dir)")
    args = ap.parse_args()
    try:
        from mutmut import __version__ as mutmut_version
        from mutmut.__main__ import status_by_exit_code
    except ImportError:
        raise SystemExit("mutation_score.py needs mutmut 3.3.1: pip install mutmut==3.3.1")

    root = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                               check=True).stdout.strip())
    work = args.workdir or Path(tempfile.mkdtemp(prefix="combo-mutmut-"))
    work.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    try:
        repo, commit = clone(root, work)
        tests = args.tests or ["tests/"]
        if args.tests_mentioning:  # the test files whose text names one of these strings
            tests = sorted(str(f.relative_to(repo)) for f in (repo / "tests").glob("test_*.py")
                           if any(w in f.read_text(encoding="utf-8") for w in args.tests_mentioning))
        configure(repo, tests)
        env = env_for(repo, work, args.deselect)
        log = work / "mutmut.log"
        print(f"clone of {commit[:10]} at {repo}; mutmut's output in {log}", flush=True)
        # Generate the mutants first, to know their names (mutmut run regenerates the same ones).
        gen = ("import os, mutmut.__main__ as m\nos.environ['MUTANT_UNDER_TEST'] = 'mutant_generation'\n"
               "m.ensure_config_loaded()\nos.makedirs('mutants', exist_ok=True)\n"
               "m.copy_src_dir()\nm.create_mutants(1)\nm.copy_also_copy_files()\n")
        subprocess.run([sys.executable, "-c", gen], cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)
        chosen = sample(results(repo), args.sample_fraction, args.seed)
        # Like mutmut's console script, not `python -m mutmut` (the trampolines import mutmut.__main__, which must
        # be the module already loaded) nor `python -c` (combo.parallel would take it for a session that may spawn).
        (work / "mutmut_cli.py").write_text(  # guarded: spawned workers (Dask's) import it again
            "if __name__ == '__main__':\n    from mutmut.__main__ import cli\n    cli()\n", encoding="utf-8")
        cmd = [sys.executable, str(work / "mutmut_cli.py"), "run", "--max-children", str(args.max_children),
               *(chosen or [])]
        with open(log, "w") as f:
            proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=f, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                rc = proc.wait(timeout=args.time_limit * 60 if args.time_limit else None)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    rc = proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    rc = proc.wait()
                print(f"interrupted after {args.time_limit} minutes", flush=True)
        by_file = results(repo)
        selected = set(chosen) if chosen is not None else None
        table, survivors = {p: Counter() for p in PATHS}, []
        for source, codes in by_file.items():
            for name, code in codes.items():
                counts = table[path_of(source)]
                counts["generated"] += 1
                if selected is not None and name not in selected:
                    continue
                counts["selected"] += 1
                status = status_by_exit_code.get(code, f"exit {code}")
                status = "not checked" if status == "check was interrupted by user" else status
                counts[status] += 1
                if status == "survived":
                    survivors.append(name)
        table["total"] = sum(table.values(), Counter())
        rows = {}
        for p, c in table.items():
            checked = c["selected"] - c["not checked"]
            rows[p] = {"generated": c["generated"], "selected": c["selected"],
                       **{s: c[s] for s in sorted(set(c) - {"generated", "selected"} | set(STATUSES))},
                       "score_killed_over_killed_survived": c["killed"] / (c["killed"] + c["survived"])
                       if c["killed"] + c["survived"] else None,
                       "score_killed_over_checked": c["killed"] / checked if checked else None}
        cols = ["generated", "selected", *STATUSES]
        print(f"\n{'path':18}" + "".join(f"{c:>12}" for c in cols) + f"{'k/(k+s)':>9}{'k/all':>7}")
        for p, r in rows.items():
            fmt = lambda x: "-" if x is None else f"{x:.3f}"
            print(f"{p:18}" + "".join(f"{r[c]:>12}" for c in cols)
                  + f"{fmt(r['score_killed_over_killed_survived']):>9}{fmt(r['score_killed_over_checked']):>7}")
        minutes = (time.monotonic() - start) / 60
        print(f"\nmutmut {mutmut_version}, exit code {rc}, {minutes:.1f} min")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({
            "commit": commit, "mutmut": mutmut_version, "paths": PATHS, "pytest": "-x -q " + PYTEST_ADDOPTS,
            "deselected": args.deselect, "tests": tests,
            "max_children": args.max_children, "sample_fraction": args.sample_fraction, "seed": args.seed,
            "time_limit_minutes": args.time_limit, "mutmut_exit_code": rc, "wall_minutes": round(minutes, 1),
            "results": rows, "survived": diffs(repo, env, sorted(survivors)),
        }, indent=1) + "\n", encoding="utf-8")
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
