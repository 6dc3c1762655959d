"""Training a tuned metric on the four WMT12 into-English pairs: combo against scikit-learn, same data and folds.

Both sides solve the same problem (Guzmán et al. 2014, §4): L2 logistic
regression without intercept on the feature differences x(a) - x(b) of every
human preference (label 1) and their negations (label 0), C chosen among
0.001 ... 1000 by 5-fold GroupKFold over segments maximising the held-out WMT
Kendall (ties discordant), then one fit on all pairs.

* combo: ``combo.combine.training.fit_model`` (the whole of ``combo train`` after
  scoring: normalisation, C search, final fit; scikit-learn's newton-cholesky
  on the pairs once, every other difference negated at 2C, since the two
  signs have the same loss; ``bench_pairwise_solver.py`` compares solvers).
* scikit-learn: ``LogisticRegression(C, fit_intercept=False)`` on the doubled
  data with its default solver (lbfgs) and with its Newton solver
  (newton-cholesky), the same folds (``GroupKFold(5)``), the same selection rule.

Metric scores are read from the score cache (``--cache``; scored on the first
run). Reports wall time of each (median of ``--repeats``), their ratio, the C
each chose and the largest weight difference.

    python benchmarks/bench_train.py --data ../shared/data/wmt12 --cache ~/.cache/combo/wmt12
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from wmt12_tuned import CONFIGS  # noqa: E402


def sklearn_pairwise(X, pairs, groups, Cs, solver, folds=5):
    """The same estimator with scikit-learn: C by grouped CV on held-out WMT Kendall, then a final fit."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    diff = X[pairs[:, 0]] - X[pairs[:, 1]]

    def fit(d, C):
        lr = LogisticRegression(C=C, fit_intercept=False, solver=solver, tol=1e-10, max_iter=10000)
        lr.fit(np.vstack([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))])
        return lr.coef_.ravel()

    taus = []
    splits = list(GroupKFold(n_splits=folds).split(diff, groups=groups))
    for C in Cs:
        margins = np.concatenate([diff[test] @ fit(diff[train], C) for train, test in splits])
        taus.append(margin_kendall(margins))
    best = Cs[int(np.argmax(taus))]
    return best, fit(diff, best)


def margin_kendall(margins) -> float:
    """WMT12 Kendall of a ranker's margins ``w . (x_better - x_worse)`` over held-out pairs (ties discordant)."""
    from combo.meta.pairwise import wmt_kendall

    return wmt_kendall(margins, np.zeros_like(margins)).value


def wmt12_arguments(description: str, argv=None) -> argparse.Namespace:
    """The options the training benchmarks share: data, score cache, feature set, repeats."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "wmt12"))
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "combo" / "wmt12"))
    parser.add_argument("--config", default="full", choices=sorted(CONFIGS),
                        help="feature set of experiments/wmt12_tuned.py (full: the 23 lexical metrics)")
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args(argv)


def wmt12_training_data(args: argparse.Namespace):
    """The four WMT12 into-English test beds scored with the chosen feature set, as training data."""
    from combo import score_testbed
    from combo.combine.training import training_data
    from combo.io import WMT12_INTO_ENGLISH, read_wmt12_into_english

    os.environ.setdefault("NLTK_DATA", str(Path(args.data).parent / "nltk_data"))
    specs = CONFIGS[args.config]
    testbeds = read_wmt12_into_english(args.data)
    sources = [(testbeds[lp], score_testbed(testbeds[lp], specs, cache_dir=args.cache)) for lp in WMT12_INTO_ENGLISH]
    return training_data(sources, "testbed")


def main(argv=None):
    args = wmt12_arguments(__doc__.split("\n")[0], argv)

    from threadpoolctl import threadpool_limits

    from combo.combine.training import DEFAULT_CS, TrainOptions, fit_model
    from combo.combine.training.data import _features
    from combo.combine.ulc import fit_minmax

    specs = CONFIGS[args.config]
    data = wmt12_training_data(args)

    combo_times, model = [], None
    for _ in range(args.repeats):
        t = time.perf_counter()
        model = fit_model(data, TrainOptions())
        combo_times.append(time.perf_counter() - t)

    # scikit-learn gets the very features combo trained on (min-max per language pair, error rates flipped)
    norm, _ = fit_minmax(data.scores, data.higher_is_better, data.norm_group)
    per_pair = {g: (norm.lo[:, k], norm.hi[:, k]) for k, g in enumerate(norm.groups)}
    X = _features(data.scores, data.norm_group, per_pair, data.higher_is_better)
    pairs, groups = data.pairs.as_array(), data.pairs.segment
    ours, c_combo = float(np.median(combo_times)), model.training["estimator"]["C"]
    print(f"{args.config} features ({len(specs)}), {len(pairs):,} pairs, {len(np.unique(groups)):,} segments, "
          f"{len(DEFAULT_CS)} values of C x 5 folds + final fit; median of {args.repeats}, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"  {'combo fit_model':<48} {ours:8.2f} s   C = {c_combo:g}")
    for solver in ("lbfgs", "newton-cholesky"):
        times, sk = [], None
        for _ in range(args.repeats):
            t = time.perf_counter()
            with threadpool_limits(limits=1, user_api="blas"):  # as combo: thin matrices, one BLAS thread
                sk = sklearn_pairwise(X, pairs, groups, sorted(DEFAULT_CS), solver)
            times.append(time.perf_counter() - t)
        theirs = float(np.median(times))
        same = "same C" if sk[0] == c_combo else "OTHER C"
        print(f"  {'scikit-learn LogisticRegression ' + solver:<48} {theirs:8.2f} s   C = {sk[0]:g} ({same}); "
              f"ratio {theirs / ours:.1f}x; largest weight difference {np.max(np.abs(model.weights - sk[1])):.1e} "
              f"(largest weight {np.max(np.abs(model.weights)):.2f})")

if __name__ == "__main__":
    main()
