"""Confidence intervals and significance tests for meta-evaluation statistics.

Every test takes a *statistic*: a function of numpy arrays whose first axis is
a batch of resamples, returning one value per resample (shape ``(batch,)``),
for instance ``lambda m, h: correlation_values(m, h, "kendall_b", "item")``.
All resamples are drawn at once and evaluated in batches bounded in memory.
An undefined resample (NaN statistic) is left out and counted.

- :func:`bootstrap`: percentile bootstrap interval (Efron & Tibshirani 1993),
  resampling items (an axis) with replacement; with ``groups``, whole groups
  (a cluster bootstrap: all preference pairs or candidates of one segment move
  together, since they are not independent).
- :func:`paired_bootstrap_test`: the same resamples for two metrics; p-value
  of the difference by the shift method (resampled differences moved to mean 0,
  the null; Berg-Kirkpatrick et al. 2012): ``#(d_b - d >= d)``.
- :func:`permutation_test`: PERM-BOTH and its variants (Deutsch, Dror & Roth
  2021, as mt-metrics-eval's ``PermutationSigDiff``): z-score both metrics,
  swap their scores cell by cell (or by item, or by system) with probability
  1/2, and count permuted differences at least the observed one.
- :func:`williams_test`: Williams (1959) t-test for two dependent
  correlations sharing the human variable, as advocated by Graham & Baldwin
  (2014) and used in WMT (the formula of mt-metrics-eval's ``WilliamsTest``).

p-values are ``(1 + count) / (1 + resamples)`` (Davison & Hinkley 1997;
Phipson & Smyth 2010; as sacreBLEU and MultEval), never exactly 0;
mt-metrics-eval reports ``count / resamples``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import InputError, OptionError
from .correlation import correlation_values

ALTERNATIVES = ("greater", "less", "two-sided")
SWAP_UNITS = ("cell", "item", "sys")
_BATCH_ELEMENTS = 8_000_000   # elements of resampled arrays evaluated at once


@dataclass(frozen=True)
class BootstrapResult:
    """A statistic with its percentile bootstrap interval."""

    value: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    n_undefined: int          # resamples whose statistic was undefined (left out)
    samples: np.ndarray       # the defined resampled values

    def __str__(self) -> str:
        """The value and its interval to 3 decimals, or "undefined"."""
        if not np.isfinite(self.value):
            return "undefined"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


@dataclass(frozen=True)
class SignificanceResult:
    """Difference ``statistic(a) - statistic(b)`` and the p-value of a test on it."""

    delta: float
    p_value: float
    test: str
    alternative: str
    n_resamples: int
    n_undefined: int
    low: float = float("nan")    # bootstrap interval of the difference (paired bootstrap only)
    high: float = float("nan")

    def __str__(self) -> str:
        """The observed difference and its p-value, with the test and alternative."""
        return f"delta {self.delta:+.3f}, p = {self.p_value:.4f} ({self.test}, {self.alternative})"


@dataclass(frozen=True)
class WilliamsResult:
    """Williams' t statistic for ``r(h, a) - r(h, b)``, its degrees of freedom and p-value."""

    t: float
    df: int
    p_value: float
    alternative: str
    r_ha: float
    r_hb: float
    r_ab: float

    def __str__(self) -> str:
        """The t statistic, degrees of freedom and p-value."""
        return f"t({self.df}) = {self.t:.3f}, p = {self.p_value:.4f} ({self.alternative})"


# -- bootstrap ------------------------------------------------------------------

def bootstrap(statistic: Callable[..., np.ndarray], *arrays, axis: int = -1, n_resamples: int = 1000,
              confidence: float = 0.95, seed=0, groups=None) -> BootstrapResult:
    """Percentile bootstrap interval of ``statistic(*arrays)``, resampling along ``axis`` (the items).

    ``statistic`` gets each array with a leading resample axis and returns
    shape ``(batch,)``. ``seed``: an int or a ``numpy.random.Generator``.
    ``groups`` (one id per item, e.g. the segment of each preference pair):
    draw groups with replacement and keep all their items (cluster bootstrap).
    """
    arrays, n_items = _check_arrays(arrays, axis)
    _check_common(n_resamples, confidence)
    rng = np.random.default_rng(seed)
    value = float(_call(statistic, [a[None] for a in arrays]))
    fronts = [_front(a, axis) for a in arrays]
    samples = np.concatenate([
        statistic(*[_take(f, idx, axis, a.ndim) for f, a in zip(fronts, arrays)])
        for idx in _draws(rng, n_items, n_resamples, arrays, groups)])
    defined = samples[np.isfinite(samples)]
    low, high = _percentiles(defined, confidence)
    return BootstrapResult(value, low, high, confidence, n_resamples, n_resamples - len(defined), defined)


def paired_bootstrap_test(statistic: Callable[..., np.ndarray], metric_a, metric_b, *shared, axis: int = -1,
                          n_resamples: int = 1000, confidence: float = 0.95, alternative: str = "greater",
                          seed=0, groups=None) -> SignificanceResult:
    """Paired bootstrap of ``d = statistic(metric_a, *shared) - statistic(metric_b, *shared)``.

    Both metrics see the same resampled items (with ``groups``, the same
    resampled groups, as :func:`bootstrap`). ``alternative="greater"``
    tests whether metric a's statistic is higher. Also returns the percentile
    interval of the difference.
    """
    _check_alternative(alternative)
    _check_common(n_resamples, confidence)
    arrays, n_items = _check_arrays((metric_a, metric_b) + shared, axis)
    a, b, rest = arrays[0], arrays[1], arrays[2:]
    rng = np.random.default_rng(seed)
    delta = float(_call(statistic, [a[None]] + [s[None] for s in rest])
                  - _call(statistic, [b[None]] + [s[None] for s in rest]))
    fronts = [_front(x, axis) for x in arrays]
    diffs = []
    for idx in _draws(rng, n_items, n_resamples, arrays, groups):
        ra, rb, *common = (_take(f, idx, axis, x.ndim) for f, x in zip(fronts, arrays))
        diffs.append(statistic(ra, *common) - statistic(rb, *common))
    diffs = np.concatenate(diffs)
    diffs = diffs[np.isfinite(diffs)]
    shifted = diffs - delta                       # the resampled differences moved to the null (mean 0)
    p = _p_value(shifted, delta, alternative)
    low, high = _percentiles(diffs, confidence)
    return SignificanceResult(delta, p, "paired bootstrap", alternative, n_resamples,
                              n_resamples - len(diffs), low, high)


# -- permutation ----------------------------------------------------------------

def permutation_test(statistic: Callable[..., np.ndarray], metric_a, metric_b, *shared, swap: str = "cell",
                     n_permutations: int = 1000, standardize: bool = True, alternative: str = "greater",
                     seed=0) -> SignificanceResult:
    """Permutation test of ``statistic(metric_a, *shared) - statistic(metric_b, *shared)``.

    ``metric_a``, ``metric_b``: score arrays of one shape, ``(systems, items)``
    for matrices. ``swap``: ``"cell"`` swaps each score independently
    (PERM-BOTH, mt-metrics-eval's default), ``"item"`` whole columns
    (PERM-INPUTS), ``"sys"`` whole rows (PERM-SYSTEMS). ``standardize``
    z-scores each metric over the cells where both are finite first, so that
    swapped scores are on one scale. ``shared`` arrays are passed unchanged
    (no batch axis); ``statistic`` must broadcast them.
    """
    _check_alternative(alternative)
    if swap not in SWAP_UNITS:
        raise OptionError(f"unknown swap unit {swap!r}; choose one of {', '.join(SWAP_UNITS)}")
    if n_permutations < 1:
        raise OptionError(f"n_permutations must be >= 1, not {n_permutations}")
    a = np.asarray(metric_a, dtype=np.float64)
    b = np.asarray(metric_b, dtype=np.float64)
    if a.shape != b.shape:
        raise InputError(f"the two metrics' score arrays differ in shape: {a.shape} and {b.shape}")
    if swap != "cell" and a.ndim < 2:
        raise OptionError(f"swap={swap!r} needs (systems, items) matrices, got shape {a.shape}")
    if standardize:
        a, b = _zscore_pair(a, b)
    rng = np.random.default_rng(seed)
    delta = float(_call(statistic, [a[None]] + list(shared)) - _call(statistic, [b[None]] + list(shared)))
    unit_shape = {"cell": a.shape, "item": (1,) * (a.ndim - 1) + a.shape[-1:],
                  "sys": a.shape[:1] + (1,) * (a.ndim - 1)}[swap]
    batch = max(1, _BATCH_ELEMENTS // max(a.size, 1))
    perm = []
    for start in range(0, n_permutations, batch):
        size = min(batch, n_permutations - start)
        flip = rng.random((size,) + unit_shape) < 0.5
        perm.append(statistic(np.where(flip, b, a), *shared) - statistic(np.where(flip, a, b), *shared))
    perm = np.concatenate(perm)
    perm = perm[np.isfinite(perm)]
    return SignificanceResult(delta, _p_value(perm, delta, alternative), f"permutation ({swap})", alternative,
                              n_permutations, n_permutations - len(perm))


# -- Williams -------------------------------------------------------------------

def williams_test(r_ha: float, r_hb: float, r_ab: float, n: int, alternative: str = "greater") -> WilliamsResult:
    """Williams (1959) test of ``r_ha > r_hb``, two correlations sharing the human variable h.

    ``t = (r_ha - r_hb) sqrt((n-1)(1+r_ab)) / sqrt(2K(n-1)/(n-3) + rbar^2 (1-r_ab)^3)``,
    ``K = 1 - r_ha^2 - r_hb^2 - r_ab^2 + 2 r_ha r_hb r_ab``, ``rbar = (r_ha + r_hb)/2``,
    with ``n - 3`` degrees of freedom (Williams 1959; Graham & Baldwin 2014).
    """
    _check_alternative(alternative)
    rs = np.array([r_ha, r_hb, r_ab], dtype=np.float64)
    if not np.all(np.isfinite(rs)) or np.any(np.abs(rs) > 1):
        raise InputError(f"correlations must be finite and within [-1, 1], got {rs.tolist()}")
    if int(n) != n or n <= 3:
        raise InputError(f"the Williams test needs n > 3 paired observations, got {n}")
    k = 1 - r_ha ** 2 - r_hb ** 2 - r_ab ** 2 + 2 * r_ha * r_hb * r_ab
    if k < -1e-12:
        raise InputError("the three correlations are inconsistent (their correlation matrix is not "
                         f"positive semi-definite: K = {k:.3g})")
    rbar = (r_ha + r_hb) / 2
    num = (r_ha - r_hb) * np.sqrt((n - 1) * (1 + r_ab))
    den = np.sqrt(2 * max(k, 0.0) * (n - 1) / (n - 3) + rbar ** 2 * (1 - r_ab) ** 3)
    df = int(n) - 3
    with np.errstate(divide="ignore", invalid="ignore"):
        t = float(num / den) if den > 0 else (0.0 if num == 0 else float(np.sign(num) * np.inf))
    import scipy.stats  # imported where used: 0.9 s that every command line would pay at start

    if alternative == "greater":
        p = scipy.stats.t.sf(t, df)
    elif alternative == "less":
        p = scipy.stats.t.cdf(t, df)
    else:
        p = min(1.0, 2 * scipy.stats.t.sf(abs(t), df))
    return WilliamsResult(t, df, float(p), alternative, float(r_ha), float(r_hb), float(r_ab))


def williams_test_scores(human, metric_a, metric_b, alternative: str = "greater") -> WilliamsResult:
    """Williams test on score arrays: Pearson r of each metric with ``human`` and of the metrics together.

    Uses the cells where ``human`` is judged (not NaN), flattened.
    """
    human = np.asarray(human, dtype=np.float64)
    a = np.asarray(metric_a, dtype=np.float64)
    b = np.asarray(metric_b, dtype=np.float64)
    if not (human.shape == a.shape == b.shape):
        raise InputError(f"shapes differ: human {human.shape}, metric_a {a.shape}, metric_b {b.shape}")
    judged = ~np.isnan(human)
    h, a, b = (x[judged].reshape(1, -1) for x in (human, a, b))
    r = [float(correlation_values(x, y)) for x, y in ((a, h), (b, h), (a, b))]
    if not np.all(np.isfinite(r)):
        raise InputError("a Pearson correlation is undefined (constant scores); the Williams test needs all three")
    return williams_test(r[0], r[1], r[2], int(judged.sum()), alternative)


# -- internals ----------------------------------------------------------------

def _check_alternative(alternative: str) -> None:
    """Check that ``alternative`` is one of :data:`ALTERNATIVES`."""
    if alternative not in ALTERNATIVES:
        raise OptionError(f"unknown alternative {alternative!r}; choose one of {', '.join(ALTERNATIVES)}")


def _check_common(n_resamples: int, confidence: float) -> None:
    """Check the number of resamples (>= 1) and the confidence level (in (0, 1))."""
    if n_resamples < 1:
        raise OptionError(f"n_resamples must be >= 1, not {n_resamples}")
    if not 0 < confidence < 1:
        raise OptionError(f"confidence must be in (0, 1), not {confidence}")


def _check_arrays(arrays, axis):
    """The arrays as numpy arrays, with their common length along ``axis`` (checked)."""
    if not arrays:
        raise InputError("give at least one array to resample")
    arrays = [np.asarray(a) for a in arrays]
    sizes = set()
    for a in arrays:
        if a.ndim == 0 or not -a.ndim <= axis < a.ndim:
            raise InputError(f"cannot resample axis {axis} of an array of shape {a.shape}")
        sizes.add(a.shape[axis])
    if len(sizes) != 1:
        raise InputError(f"arrays differ in length along the resampled axis {axis}: {sorted(sizes)}")
    n = sizes.pop()
    if n == 0:
        raise InputError("nothing to resample: the resampled axis is empty")
    return arrays, n


def _index_batches(rng: np.random.Generator, n_items: int, n_resamples: int, arrays):
    """Yield resampling index rows ``(batch, n_items)``, batches sized to ``_BATCH_ELEMENTS``."""
    per_resample = sum(a.size for a in arrays)
    batch = max(1, _BATCH_ELEMENTS // max(per_resample, 1))
    for start in range(0, n_resamples, batch):
        yield rng.integers(0, n_items, size=(min(batch, n_resamples - start), n_items))


def _draws(rng: np.random.Generator, n_items: int, n_resamples: int, arrays, groups):
    """Index rows of resamples: items drawn with replacement, or (``groups``) whole groups drawn with
    replacement, one resample per row (their lengths differ)."""
    if groups is None:
        yield from _index_batches(rng, n_items, n_resamples, arrays)
        return
    groups = np.asarray(groups)
    if groups.shape != (n_items,):
        raise InputError(f"groups {groups.shape} must give one id per resampled item ({n_items})")
    _, inverse = np.unique(groups, return_inverse=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    sizes = np.bincount(inverse)
    starts = np.cumsum(sizes) - sizes
    n_groups = len(sizes)
    for _ in range(n_resamples):
        g = rng.integers(0, n_groups, size=n_groups)
        lens = sizes[g]
        offsets = np.cumsum(lens) - lens
        yield order[np.repeat(starts[g] - offsets, lens) + np.arange(lens.sum())][None]


def _front(a: np.ndarray, axis: int) -> np.ndarray:
    """A contiguous copy of ``a`` with the resampled axis first (rows gathered as blocks)."""
    return np.ascontiguousarray(np.moveaxis(a, axis, 0))


def _take(front: np.ndarray, idx: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """The array resampled by each row of ``idx``: shape ``(batch,) + original shape``."""
    return np.moveaxis(front[idx], 1, 1 + axis % ndim)


def _call(statistic, arrays) -> float:
    """The statistic of one unbatched draw (arrays with a batch axis of 1), checked to be one value."""
    out = np.asarray(statistic(*arrays), dtype=np.float64).reshape(-1)
    if out.shape != (1,):
        raise InputError(f"the statistic must return one value per resample, got shape {out.shape} for one")
    return out[0]


def _percentiles(samples: np.ndarray, confidence: float):
    """The percentile interval of ``samples`` at ``confidence`` (NaN, NaN without samples)."""
    if len(samples) == 0:
        return float("nan"), float("nan")
    low, high = np.quantile(samples, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def _p_value(null: np.ndarray, observed: float, alternative: str) -> float:
    """The p-value of ``observed`` under the ``null`` draws, ``(count + 1) / (draws + 1)``; NaN if undefined."""
    if not np.isfinite(observed) or len(null) == 0:
        return float("nan")
    if alternative == "greater":
        count = np.count_nonzero(null >= observed)
    elif alternative == "less":
        count = np.count_nonzero(null <= observed)
    else:
        count = np.count_nonzero(np.abs(null) >= abs(observed))
    return (count + 1) / (len(null) + 1)


def _zscore_pair(a: np.ndarray, b: np.ndarray):
    """Both arrays z-scored over the entries where both are finite (only centred when constant there)."""
    both = np.isfinite(a) & np.isfinite(b)
    out = []
    for x in (a, b):
        vals = x[both]
        sd = vals.std() if len(vals) else 0.0
        out.append((x - vals.mean()) / sd if sd > 0 else x - (vals.mean() if len(vals) else 0.0))
    return out
