"""The pairwise logistic solver: scikit-learn's LogisticRegression against combo's former Newton method.

The problem is the one ``combo train`` solves on the four WMT12 into-English
pairs (Guzmán et al. 2014, §4): L2 logistic regression without intercept on
the feature differences x(a) - x(b) of every human preference, for each C of
the default grid on each of the 5 inner GroupKFold folds over segments, then
on all pairs at the chosen C (7 x 5 + 1 = 36 fits), features min-max
normalised per language pair exactly as training does.

Solvers, each on one BLAS thread (as training runs), tol 1e-10:

* the hand-written Newton method combo used before (kept below, verbatim,
  for this comparison): Newton steps on the P pairs once (both signs of a
  pair have the same loss), backtracking, stopped when half the Newton
  decrement falls below tol times the objective; also with tol 1e-16;
* combo now (``combo.combine.learn._fit_logistic``): scikit-learn's
  ``newton-cholesky`` on the P pairs, every other difference negated and
  labelled 0, at 2C: the same objective with half the rows;
* scikit-learn ``LogisticRegression(C, fit_intercept=False)`` with
  ``newton-cholesky`` and ``lbfgs`` on the doubled data (2P rows: each
  difference labelled 1, its negation labelled 0: the documented objective),
  and ``lbfgs`` on half the rows at 2C.

The solvers take turns in each of ``--repeats`` rounds (the same machine load
for all) and the fastest round of each is reported (``timeit``'s rule on a
shared machine), with its ratio to the former Newton method, the C it would
choose, the largest weight difference from the former Newton method's
weights over all 36 fits (within 1e-6 or not) and the largest gradient of the
objective at its weights (zero at the optimum: how close each one stops).

    python benchmarks/bench_pairwise_solver.py --data ../shared/data/wmt12 --cache ~/.cache/combo/wmt12
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from wmt12_tuned import CONFIGS  # noqa: E402


def features(data):
    """(rows, metrics) features min-max normalised per training test bed, as ``fit_model`` normalises them."""
    from combo.combine.model import minmax_features

    out = np.zeros(data.scores.shape)
    for k in range(len(data.sources)):
        cols = data.source == k
        s = data.scores[:, cols]
        out[:, cols] = minmax_features(s, s.min(axis=1), s.max(axis=1), data.higher_is_better)
    return out.T


def former_newton(diff, C, max_iter=100, tol=1e-10):
    """combo's hand-written solver until the scikit-learn estimator contract (verbatim, for comparison)."""
    from scipy.special import expit

    n, m = diff.shape
    w = np.zeros(m)
    if n == 0 or not np.any(diff):
        return w, True

    def objective(v):
        return float(2.0 * C * np.logaddexp(0.0, -(diff @ v)).sum() + 0.5 * v @ v)

    value = objective(w)
    for _ in range(max_iter):
        z = diff @ w
        p = expit(-z)
        grad = w - 2.0 * C * (diff.T @ p)
        scaled = diff * np.sqrt(2.0 * C * p * (1.0 - p))[:, None]
        hess = scaled.T @ scaled + np.eye(m)
        step = np.linalg.solve(hess, grad)
        decrement = float(grad @ step)
        if decrement / 2.0 <= tol * max(1.0, abs(value)):
            return w, True
        t = 1.0
        while True:
            trial = objective(w - t * step)
            if trial <= value - 1e-4 * t * decrement or t < 1e-12:
                break
            t /= 2.0
        w = w - t * step
        value = trial
    return w, False


def newton_solver(tol):
    return lambda d, C: former_newton(d, C, tol=tol)


def combo_solver(d, C):
    from combo.combine.learn import _fit_logistic

    w, _, converged = _fit_logistic(d, C)
    return w, converged


def gradient(d, C, w):
    """Gradient of the objective 2C sum_p log(1 + exp(-w . d_p)) + ||w||^2 / 2: zero at the optimum."""
    from scipy.special import expit

    return w - 2.0 * C * (d.T @ expit(-(d @ w)))


def sklearn_solver(solver, halved):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    def fit(d, C):
        if halved:  # every other difference negated, labelled 0: the same objective at 2C on half the rows
            sign = np.where(np.arange(len(d)) % 2 == 0, 1.0, -1.0)
            X, y, c = d * sign[:, None], (sign > 0).astype(float), 2.0 * C
        else:
            X, y, c = np.vstack([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))], C
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            lr = LogisticRegression(C=c, fit_intercept=False, solver=solver, tol=1e-10, max_iter=10000).fit(X, y)
        return lr.coef_.ravel(), not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return fit


def run(fit, diff, splits, Cs):
    """The 36 fits of training: every C on every inner fold (held-out WMT Kendall), then the chosen C on all."""
    weights, grads, taus, converged = [], [], [], True
    for C in Cs:
        c = d = t = 0
        for train, test in splits:
            w, ok = fit(diff[train], C)
            converged &= ok
            weights.append(w)
            grads.append(np.abs(gradient(diff[train], C, w)).max())
            m = diff[test] @ w
            c, d, t = c + (m > 0).sum(), d + (m < 0).sum(), t + (m == 0).sum()
        taus.append((c - d - t) / (c + d + t))
    best = Cs[int(np.argmax(taus))]
    w, ok = fit(diff, best)
    weights.append(w)
    grads.append(np.abs(gradient(diff, best, w)).max())
    return best, np.array(weights), max(grads), converged and ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "wmt12"))
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "combo" / "wmt12"))
    parser.add_argument("--config", default="full", choices=sorted(CONFIGS),
                        help="feature set of experiments/wmt12_tuned.py (full: the 23 lexical metrics)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    from sklearn.model_selection import GroupKFold
    from threadpoolctl import threadpool_limits

    from combo import score_testbed
    from combo.combine.learn import DEFAULT_CS, training_data
    from combo.io import WMT12_INTO_ENGLISH, read_wmt12_into_english

    os.environ.setdefault("NLTK_DATA", str(Path(args.data).parent / "nltk_data"))
    specs = CONFIGS[args.config]
    testbeds = read_wmt12_into_english(args.data)
    sources = [(testbeds[lp], score_testbed(testbeds[lp], specs, cache_dir=args.cache)) for lp in WMT12_INTO_ENGLISH]
    data = training_data(sources, "testbed")
    X = features(data)
    diff = X[data.pairs.better] - X[data.pairs.worse]
    splits = list(GroupKFold(n_splits=5).split(diff, groups=data.pairs.segment))
    Cs = sorted(DEFAULT_CS)
    print(f"{args.config} features ({len(specs)}), {len(diff):,} pairs, {len(np.unique(data.pairs.segment)):,} "
          f"segments; {len(Cs)} values of C x 5 folds + final fit = {len(Cs) * 5 + 1} fits; load average "
          f"{os.getloadavg()[0]:.1f}")
    solvers = [("former combo Newton, tol 1e-10", newton_solver(1e-10)),
               ("former combo Newton, tol 1e-16", newton_solver(1e-16)),
               ("combo now: newton-cholesky, half the rows at 2C", combo_solver),
               ("sklearn newton-cholesky, doubled data", sklearn_solver("newton-cholesky", False)),
               ("sklearn lbfgs, doubled data", sklearn_solver("lbfgs", False)),
               ("sklearn lbfgs, half the rows at 2C", sklearn_solver("lbfgs", True))]
    times = {name: [] for name, _ in solvers}
    results = {}
    for _ in range(args.repeats):
        for name, fit in solvers:  # in turns, so that every solver sees the same load
            t = time.perf_counter()
            with threadpool_limits(limits=1, user_api="blas"):
                results[name] = run(fit, diff, splits, Cs)
            times[name].append(time.perf_counter() - t)
    ref_name = solvers[0][0]
    ref_seconds, ref_best, ref_weights = min(times[ref_name]), results[ref_name][0], results[ref_name][1]
    for name, _ in solvers:
        best, weights, grad, converged = results[name]
        seconds = min(times[name])
        gap = float(np.max(np.abs(weights - ref_weights)))
        print(f"  {name:<48} {seconds:7.2f} s {seconds / ref_seconds:5.1f}x   C = {best:g} "
              f"({'same' if best == ref_best else 'OTHER'})   max |w - w_Newton| {gap:.1e} "
              f"({'within' if gap <= 1e-6 else 'NOT within'} 1e-6)   max |gradient| {grad:.1e}"
              f"{'' if converged else '  (ConvergenceWarning)'}")
    print(f"  largest weight {np.max(np.abs(ref_weights)):.2f}; ratios to the first row; each solver's fastest of "
          f"{args.repeats} rounds; load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
