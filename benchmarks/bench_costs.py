"""The cost hints of every text metric, measured on WMT12 de-en: the table ``combo/metrics/costs.json``.

Two figures per registered metric computed from text, which the scoring module reads through
``Metric.relative_cost`` and ``Metric.analysis_bytes_per_char``:

* ``relative_cost``: CPU seconds (this process and its threads, ``time.process_time``) of one call scoring the
  sample rows, over BLEU's on the same rows. Parallel runs start the tasks of the largest weight (rows times
  this) first. The machine may be busy with other work: BLEU and the metric are timed in alternation,
  ``--repeat`` times, and the median of the ratios of each pair is kept.
* ``analysis_bytes_per_char``: ``tracemalloc``'s peak over one analysis of the sample's distinct texts and the
  statistics of its rows (what a chunk of rows does in ``scoring``), over the characters of the rows' texts
  (each row's hypothesis and references, a reference counted once per row, as ``scoring`` sizes chunks).

The sample is the first ``--rows`` rows in scoring's order (system by system in name order, every segment of
one before the next): with 4,000, the first system's 3,003 segments and the first 997 of the next one
(6,977 distinct texts), as a first chunk of 4,000 rows would be. It has more distinct texts per row (1.7)
than a whole test bed (WMT12 de-en: 1.06) or a larger chunk: an analysis grows with the distinct texts, the
characters it is divided by with the rows, so its bytes per character err on the high side (smaller chunks).

A costly metric is measured on fewer of these rows (a prefix, a multiple of 250, at least 250; the table
gives each metric's ``rows``), so the run takes minutes: a probe of the first 250 rows, called twice, gives
its CPU per row first (resources loaded, costly layers annotated) and then warm, and the rows are as many as
keep a first call under ``--cold-budget`` and a timed call under ``--warm-budget`` CPU seconds (the tree edit
distance and MiniLM are the ones cut). BLEU is timed on the same rows.

Each metric is then called once untimed on its rows, which fills a fresh analysis cache (``COMBO_CACHE_DIR``)
with its costly layers: the timed calls read parses and embeddings from that cache, as every metric does in a
run with ``--jobs`` above 1, where those layers are annotated once before any metric starts (``relative_cost``
only orders parallel tasks). The per-string memos (tokenisers, stemmers, synonym sets) are emptied before
every timed or traced call. Metrics that cannot be scored here (the discourse tree kernels without their extra
and Java) are listed as skipped and keep ``combo.metrics.base.DEFAULT_COSTS``; metrics read per
candidate (``mtme:``, ``scores:``) are not text metrics and are left out.

Run (the date, the command, the machine and the run's seconds go into the file)::

    NLTK_DATA=../shared/data/nltk_data python benchmarks/bench_costs.py [--rows 4000] [--repeat 3]

``--metrics bleu,nist --out /tmp/costs.json`` measures a few metrics into another file; ``--metrics dr-tk-lex1
--update`` measures them again into the table combo reads, each such entry with its own date and command.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import gc
import json
import os
import platform
import shlex
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("COMBO_DATA_HOME") or ROOT.parent / "shared" / "data")
PROBE = 250  # rows of the probe that sizes a costly metric's sample, and the step of its size


def load_rows(data: Path, lp: str, n_rows: int):
    """The first ``n_rows`` rows of WMT12 ``lp`` in scoring's order: (hyps, refs, description)."""
    plain = data / "wmt12" / "plain"
    ref = (plain / "references" / "newstest2012-ref.en").read_text(encoding="utf-8").split("\n")[:3003]
    hyps, refs, used = [], [], []
    for f in sorted((plain / "system-outputs" / "newstest2012" / lp).iterdir()):
        lines = f.read_text(encoding="utf-8").split("\n")[:3003]
        take = min(len(lines), n_rows - len(hyps))
        hyps.extend(lines[:take])
        refs.extend([r] for r in ref[:take])
        used.append(f"{f.name.split('.', 2)[2]} {take}")
        if len(hyps) >= n_rows:
            break
    return hyps, refs, f"WMT12 {lp} newstest2012, the first {len(hyps)} rows in scoring's order ({', '.join(used)})"


def clear_string_memos() -> None:
    """Empty combo's bounded per-string memos (tokenisers, stemmers, synonym sets), not its resource loaders."""
    for obj in gc.get_objects():
        if type(obj) is functools._lru_cache_wrapper and str(getattr(obj, "__module__", "")).startswith("combo"):
            maxsize = obj.cache_parameters()["maxsize"]
            if maxsize is not None and maxsize >= 1024:
                obj.cache_clear()


def score(metric, rows) -> None:
    """One call: an analysis of the distinct texts and the statistics of every row, as a chunk of rows."""
    from combo.metrics.base import analysis_scope

    with analysis_scope():
        analysis = metric.analyse(rows.texts)
        stats = metric.statistics(analysis, rows.hyp_ids, rows.ref_ptr, rows.ref_ids, rows.ref_weights)
        metric.score(stats, segment_level=True)
        del analysis, stats


def cpu_seconds(metric, rows) -> float:
    clear_string_memos()
    gc.collect()
    start = time.process_time()
    score(metric, rows)
    return time.process_time() - start


def peak_bytes(metric, rows) -> int:
    clear_string_memos()
    gc.collect()
    tracemalloc.start()
    try:
        score(metric, rows)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def machine() -> dict:
    cpu = ""
    mem = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numpy

    return {"platform": platform.platform(), "cpu": cpu or platform.processor(), "cores": os.cpu_count(),
            "memory": mem, "python": platform.python_version(), "numpy": numpy.__version__}


def _at_least(low: int):
    """An argparse type: an integer of at least ``low``."""
    def parse(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        return value
    parse.__name__ = "int"  # argparse names the type in its message: "invalid int value: 'x'"
    return parse


def _updated(run: dict) -> dict:
    """The cost table of :data:`COSTS_FILE` with the metrics of ``run`` measured again (``--update``): each such
    entry records its own date, command and load, and leaves the skipped list."""
    from combo.metrics.base import COSTS_FILE

    table = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
    for name, entry in run["metrics"].items():
        table["metrics"][name] = {**entry, "date": run["date"], "command": run["command"],
                                  "load_average_before": run["machine"]["load_average_before"]}
        table["skipped"].pop(name, None)
    return table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA,
                    help="the shared data folder, holding wmt12/ (default: %(default)s)")
    ap.add_argument("--lp", default="de-en", help="a WMT12 into-English pair (default: %(default)s)")
    ap.add_argument("--rows", type=_at_least(PROBE), default=4000,
                    help=f"rows of the sample, at least {PROBE} (default: %(default)s)")
    ap.add_argument("--repeat", type=_at_least(1), default=3,
                    help="BLEU and each metric timed in alternation, this often")
    ap.add_argument("--cold-budget", type=float, default=60.0, help="CPU seconds of a metric's first call, at most")
    ap.add_argument("--warm-budget", type=float, default=3.0, help="CPU seconds of a timed call, at most")
    ap.add_argument("--metrics", default=None,
                    help="comma-separated names (default: every registered text metric); needs --out")
    ap.add_argument("--out", type=Path, default=None,
                    help="default: combo.metrics.base.COSTS_FILE, the table combo reads (only a run of every metric "
                         "writes it)")
    ap.add_argument("--update", action="store_true",
                    help="with --metrics: replace those metrics' entries in combo.metrics.base.COSTS_FILE, each "
                         "entry carrying its own date, command and load (the file's own date is the full run's)")
    args = ap.parse_args()
    command = " ".join(["python benchmarks/bench_costs.py"] + [shlex.quote(a) for a in sys.argv[1:]])
    check_paths(ap, args)
    cache = tempfile.mkdtemp(prefix="combo-bench-costs-")  # cold: filled by the warm-ups, removed at the end
    os.environ["COMBO_CACHE_DIR"] = cache
    try:
        measure(ap, args, command)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def check_paths(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, before anything is measured, data that is not there and an output that cannot be written."""
    plain = args.data / "wmt12" / "plain"
    outputs = plain / "system-outputs" / "newstest2012"
    if not (plain / "references" / "newstest2012-ref.en").is_file() or not outputs.is_dir():
        ap.error(f"--data {args.data}: no WMT12 newstest2012 under wmt12/plain (fix: give the shared data folder, "
                 f"as in --data ../shared/data)")
    if not (outputs / args.lp).is_dir():
        pairs = sorted(p.name for p in outputs.iterdir() if p.is_dir() and p.name.endswith("-en"))
        ap.error(f"--lp {args.lp}: not a WMT12 into-English pair here (fix: one of {', '.join(pairs)})")
    if args.update and (not args.metrics or args.out is not None):
        ap.error("--update replaces the entries of the --metrics it measures in the table combo reads "
                 "(fix: give --metrics, and no --out)")
    if args.metrics and args.out is None and not args.update:
        ap.error("--metrics measures some metrics only, and the table combo reads holds every metric "
                 "(fix: add --out FILE, or --update to replace those metrics' entries)")
    if args.out is not None:
        from bench_stream import check_output_path

        check_output_path(ap, "--out", args.out)


def measure(ap: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> None:
    """Measure the metrics and write the table (see the module's docstring)."""
    os.environ.setdefault("NLTK_DATA", str(args.data / "nltk_data"))
    sys.path.insert(0, str(ROOT))
    from combo.metrics.base import COSTS_FILE, Rows
    from combo.errors import OptionError
    from combo.metrics.registry import get_metric, list_metrics, metric_class

    names = args.metrics.split(",") if args.metrics else [n for n in list_metrics()
                                                          if metric_class(n).locality != "candidate"]
    try:
        for name in names:
            metric_class(name)
    except OptionError as err:
        ap.error(str(err))
    began = time.perf_counter()
    load_before = os.getloadavg()
    hyps, refs, sample = load_rows(args.data, args.lp, args.rows)
    samples = {}

    def rows_of(n: int):
        """The first ``n`` rows of the sample and the characters of their texts (a reference once per row)."""
        if n not in samples:
            chars = sum(len(h) + sum(len(r) for r in rs) for h, rs in zip(hyps[:n], refs[:n]))
            samples[n] = (Rows.build(hyps[:n], refs[:n]), chars)
        return samples[n]

    bleu = get_metric("bleu")
    score(bleu, rows_of(len(hyps))[0])  # BLEU's own warm-up
    table, skipped = {}, {}
    for name in names:
        metric = get_metric(name)
        t = time.perf_counter()
        try:
            metric.check_resources()
            probe = rows_of(min(PROBE, len(hyps)))[0]
            cold = cpu_seconds(metric, probe) / len(probe.hyp_ids)
            warm = cpu_seconds(metric, probe) / len(probe.hyp_ids)
            fits = min(args.cold_budget / max(cold, 1e-9), args.warm_budget / max(warm, 1e-9))
            n = min(len(hyps), max(PROBE, int(fits) // PROBE * PROBE))
            rows, chars = rows_of(n)
            score(metric, rows)  # the rest of its costly layers into the cache
        except Exception as exc:  # noqa: BLE001 - reported in the table: the metric keeps the defaults
            skipped[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            print(f"{name:14} skipped: {skipped[name]}", flush=True)
            continue
        first = time.perf_counter() - t
        pairs = [(cpu_seconds(bleu, rows), cpu_seconds(metric, rows)) for _ in range(args.repeat)]
        ratio = statistics.median(m / b for b, m in pairs)
        peak = peak_bytes(metric, rows)
        table[name] = {"relative_cost": round(ratio, 2), "analysis_bytes_per_char": round(peak / chars, 1),
                       "rows": n, "characters": chars, "peak_bytes": peak,
                       "cpu_seconds": [round(m, 3) for _, m in pairs],
                       "bleu_cpu_seconds": [round(b, 3) for b, _ in pairs],
                       "ratios": [round(m / b, 3) for b, m in pairs],
                       "warm_up_seconds": round(first, 1)}
        print(f"{name:14} relative_cost {ratio:7.2f}  bytes/char {peak / chars:6.1f}  rows {n:5}  "
              f"cpu {statistics.median(m for _, m in pairs):.3f} s  warm-up {first:.1f} s", flush=True)
    out = {
        "about": "Cost hints of combo's metrics, read by combo.metrics.base (Metric.relative_cost, "
                 "Metric.analysis_bytes_per_char); written by benchmarks/bench_costs.py, whose docstring says "
                 "how they are measured. A metric absent from 'metrics' has combo.metrics.base.DEFAULT_COSTS.",
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "machine": {**machine(), "load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in os.getloadavg()]},
        "sample": {"rows": len(hyps), "distinct_texts": len(rows_of(len(hyps))[0].texts),
                   "characters": rows_of(len(hyps))[1], "what": sample},
        "repeat": args.repeat,
        "run_seconds": round(time.perf_counter() - began, 1),
        "metrics": table,
        "skipped": skipped,
    }
    if args.update:
        out = _updated(out)
    args.out = args.out or COSTS_FILE
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {out['run_seconds']} s", flush=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("bench_costs.py: interrupted; nothing was written")
