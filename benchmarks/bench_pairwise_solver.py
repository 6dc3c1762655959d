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
* combo now (``combo.combine.training.estimators._fit_logistic``): scikit-learn's
  ``newton-cholesky`` on the P pairs, every other difference negated and
  labelled 0, at 2C: the same objective with half the rows;
* scikit-learn ``LogisticRegression(C, fit_intercept=False)`` with
  ``newton-cholesky`` and ``lbfgs`` on the doubled data (2P rows: each
  difference labelled 1, its negation labelled 0: the documented objective),
  and ``lbfgs`` on half the rows at 2C.

The solvers take turns fit by fit (the same machine load for all); each
solver's fastest of ``--repeats`` rounds is reported (``timeit``'s rule on a
shared machine), with its ratio to the former Newton method, the C it would
choose, the largest weight difference from the former Newton method's
weights over all 36 fits (within 1e-6 or not) and the largest gradient of the
objective at its weights (zero at the optimum: how close each one stops).

    python benchmarks/bench_pairwise_solver.py --data ../shared/data/wmt12 --cache ~/.cache/combo/wmt12
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from bench_train import margin_kendall, wmt12_arguments, wmt12_training_data  # noqa: E402  (run from benchmarks/)
from wmt12_tuned import CONFIGS  # noqa: E402


def features(data):
    """(rows, metrics) features min-max normalised per training test bed, as ``fit_model`` normalises them."""
    from combo.normalise import minmax_normalise

    out = np.zeros(data.scores.shape)
    for k in range(len(data.sources)):
        cols = data.source == k
        s = data.scores[:, cols]
        out[:, cols] = minmax_normalise(s, s.min(axis=1), s.max(axis=1), data.higher_is_better)
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
    from combo.combine.training.estimators import _fit_logistic

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


def run(solvers, diff, splits, Cs):
    """The 36 fits of one training with every solver: each C on each inner fold (held-out WMT Kendall),
    then each solver's chosen C on all pairs. The solvers take turns fit by fit, so that every one of
    them meets the same machine load. Per solver: seconds, chosen C, weights, largest gradient, converged."""
    out = {name: {"seconds": 0.0, "weights": [], "grads": [], "taus": [], "converged": True} for name, _ in solvers}

    def timed(name, fit, d, C):
        t = time.perf_counter()
        w, ok = fit(d, C)
        r = out[name]
        r["seconds"] += time.perf_counter() - t
        r["converged"] &= ok
        r["weights"].append(w)
        r["grads"].append(np.abs(gradient(d, C, w)).max())
        return w

    for C in Cs:
        margins = {name: [] for name, _ in solvers}  # held-out margins of every fold, pooled
        for train, test in splits:
            for name, fit in solvers:
                margins[name].append(diff[test] @ timed(name, fit, diff[train], C))
        for name, _ in solvers:
            out[name]["taus"].append(margin_kendall(np.concatenate(margins[name])))
    for name, fit in solvers:
        out[name]["C"] = Cs[int(np.argmax(out[name]["taus"]))]
        timed(name, fit, diff, out[name]["C"])
    return out


def main(argv=None):
    args = wmt12_arguments(__doc__.split("\n")[0], argv)

    from sklearn.model_selection import GroupKFold
    from threadpoolctl import threadpool_limits

    from combo.combine.training import DEFAULT_CS

    specs = CONFIGS[args.config]
    data = wmt12_training_data(args)
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
    rounds = []
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(args.repeats):
            rounds.append(run(solvers, diff, splits, Cs))
    ref = rounds[0][solvers[0][0]]
    ref_seconds = min(r[solvers[0][0]]["seconds"] for r in rounds)
    for name, _ in solvers:
        res = rounds[0][name]
        seconds = min(r[name]["seconds"] for r in rounds)
        gap = float(np.max(np.abs(np.array(res["weights"]) - np.array(ref["weights"]))))
        print(f"  {name:<48} {seconds:7.2f} s {seconds / ref_seconds:5.1f}x   C = {res['C']:g} "
              f"({'same' if res['C'] == ref['C'] else 'OTHER'})   max |w - w_Newton| {gap:.1e} "
              f"({'within' if gap <= 1e-6 else 'NOT within'} 1e-6)   max |gradient| {max(res['grads']):.1e}"
              f"{'' if res['converged'] else '  (ConvergenceWarning)'}")
    print(f"  largest weight {np.max(np.abs(ref['weights'])):.2f}; ratios to the first row; each solver's fastest of "
          f"{args.repeats} rounds; load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
