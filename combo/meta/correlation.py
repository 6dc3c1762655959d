"""Pearson, Spearman and Kendall (tau-b, tau-c) between metric and human scores.

Scores are matrices of shape ``(systems, items)`` with NaN in the human matrix
where a candidate was not judged (the metric matrix may be NaN there too). One
function covers every grouping of mt-metrics-eval's ``stats.py``
(``average_by``):

- ``"none"``: flatten the judged cells into two long vectors, one correlation
  (segment level, no grouping; with 1-D ``(systems,)`` inputs: system level);
- ``"item"``: one correlation per item (column, across systems), then the mean;
- ``"sys"``: one correlation per system (row, across items), then the mean.

A group's correlation is *undefined* when it has fewer than 2 judged entries
or when either variable is constant over them. Averaged groupings skip such
groups (or count constant ones as 0 with ``undefined="zero"``,
mt-metrics-eval's ``replace_nans_with_zeros``; groups with one entry are
always skipped) and say how many; a single undefined correlation
gives ``value = nan`` with ``reason`` set, printed ``undefined (constant)``.
Never a silent NaN.

Definitions: Pearson (1896) product-moment r; Spearman (1904) rho = Pearson r
of average ranks; Kendall (1945) tau-b ``(C - D) / sqrt((n0 - n1)(n0 - n2))``
and Stuart (1953) tau-c ``2 (C - D) / (n^2 (m - 1) / m)``, with
``m = min(#distinct x, #distinct y)``: the definitions of ``scipy.stats``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from ..errors import InputError, OptionError

METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")
AVERAGE_BY = ("none", "item", "sys")
UNDEFINED = ("skip", "zero")
_ALIASES = {"kendall": "kendall_b", "tau_b": "kendall_b", "tau_c": "kendall_c", "kendalltau": "kendall_b"}

# group status codes
OK, CONSTANT, TOO_FEW, EMPTY = 0, 1, 2, 3

_PAIRWISE_MAX_MEMBERS = 96        # Kendall by explicit pairs up to this group size, scipy's O(n log n) above
_CHUNK_ELEMENTS = 4_000_000       # bound on temporary array sizes


class ValueResult:
    """Shared by the result types: ``defined`` (a finite value) and ``float(result)``."""

    value: float

    @property
    def defined(self) -> bool:
        """Whether the value is finite."""
        return bool(np.isfinite(self.value))

    def __float__(self) -> float:
        """The value as a float."""
        return float(self.value)


@dataclass(frozen=True)
class CorrelationResult(ValueResult):
    """A correlation with its accounting: what was used, what was skipped and why."""

    value: float
    method: str
    average_by: str
    n_groups: int            # groups whose correlation entered the value
    n_entries: int           # judged cells in those groups
    n_constant: int = 0      # groups skipped (or zeroed) because a variable was constant
    n_too_few: int = 0       # groups skipped with a single judged entry
    n_empty: int = 0         # groups with no judged entry (not counted as skipped)
    n_zeroed: int = 0        # constant groups counted as 0 (undefined="zero")

    @property
    def n_skipped(self) -> int:
        """Groups left out of the average: undefined (constant) groups not zeroed, and groups with too few entries."""
        return self.n_constant - self.n_zeroed + self.n_too_few

    @property
    def reason(self) -> Optional[str]:
        """Why the value is undefined (None when it is defined)."""
        if self.defined:
            return None
        if self.n_constant and not self.n_too_few:
            return "constant"
        if self.n_too_few and not self.n_constant:
            return "fewer than 2 judged entries"
        if self.n_constant or self.n_too_few:
            return f"every group undefined: {self.n_constant} constant, {self.n_too_few} with < 2 entries"
        return "no judged entries"

    def __str__(self) -> str:
        """The value to 3 decimals (or why it is undefined), with the groups skipped when grouped."""
        text = f"{self.value:.3f}" if self.defined else f"undefined ({self.reason})"
        if self.average_by != "none" and self.n_skipped:
            text += f" ({self.n_skipped} of {self.n_groups + self.n_skipped} {self.average_by} groups skipped)"
        return text


def correlate(metric, human, method: str = "pearson", average_by: str = "none",
              undefined: str = "skip") -> CorrelationResult:
    """Correlation of ``metric`` with ``human`` scores, grouped as mt-metrics-eval's ``average_by``.

    ``metric``, ``human``: arrays of shape ``(systems, items)``, or ``(systems,)``
    for system level (then only ``average_by="none"``). NaN in ``human`` marks
    an unjudged candidate; ``metric`` must be finite wherever ``human`` is.
    """
    method, average_by = _check_options(method, average_by, undefined)
    metric = np.asarray(metric, dtype=np.float64)
    human = np.asarray(human, dtype=np.float64)
    if human.ndim not in (1, 2):
        raise InputError(f"human scores must be (systems,) or (systems, items), not shape {human.shape}")
    if human.ndim == 1:
        if average_by != "none":
            raise OptionError(f"system-level vectors only take average_by='none', not {average_by!r}")
        metric, human = metric[:, None] if metric.ndim == 1 else metric, human[:, None]
    if average_by == "none":
        undefined = "skip"   # one correlation: never turn an undefined value into 0
    values, status, counts = _grouped(metric, human, method, average_by)
    return _summarise(values, status, counts, method, average_by, undefined)


def correlation_values(metric, human, method: str = "pearson", average_by: str = "none",
                       undefined: str = "skip", per_group: bool = False) -> np.ndarray:
    """Vectorised form: arrays ``(..., systems, items)``, leading axes are a batch; returns shape ``(...)``.

    Same definitions as :func:`correlate`; an undefined value is NaN here
    (for bootstrap and permutation tests, which count them). ``per_group``:
    the ``(..., groups)`` correlations before averaging, NaN where undefined
    (resampling items for ``average_by="item"`` only re-weights these, so a
    bootstrap of their ``nanmean`` equals recomputing, much faster).
    """
    method, average_by = _check_options(method, average_by, undefined)
    metric = np.asarray(metric, dtype=np.float64)
    human = np.asarray(human, dtype=np.float64)
    if metric.ndim < 2 or human.ndim < 2:
        raise InputError("correlation_values needs arrays of shape (..., systems, items)")
    if average_by == "none":
        undefined = "skip"
    values, status, _ = _grouped(metric, human, method, average_by)
    if per_group:
        return np.where(status == CONSTANT, 0.0, values) if undefined == "zero" else values
    return _average(values, status, undefined)[0]


def pearson(metric, human, average_by: str = "none", undefined: str = "skip") -> CorrelationResult:
    """Pearson r (see :func:`correlate`)."""
    return correlate(metric, human, "pearson", average_by, undefined)


def spearman(metric, human, average_by: str = "none", undefined: str = "skip") -> CorrelationResult:
    """Spearman rho, Pearson r of average ranks (see :func:`correlate`)."""
    return correlate(metric, human, "spearman", average_by, undefined)


def kendall_tau(metric, human, average_by: str = "none", variant: str = "b", undefined: str = "skip"
                ) -> CorrelationResult:
    """Kendall tau-b (``variant="b"``) or Stuart's tau-c (``"c"``) (see :func:`correlate`); WMT's Kendall-like tau over
    human preferences is :func:`combo.meta.pairwise.wmt_kendall`."""
    if variant not in ("b", "c"):
        raise OptionError(f"unknown Kendall variant {variant!r}; choose 'b' or 'c'")
    return correlate(metric, human, "kendall_" + variant, average_by, undefined)


# -- internals ----------------------------------------------------------------

def _check_options(method: str, average_by: str, undefined: str) -> Tuple[str, str]:
    """The canonical method name (aliases resolved) and ``average_by``, after checking all three options."""
    method = _ALIASES.get(method, method)
    if method not in METHODS:
        raise OptionError(f"unknown correlation {method!r}; choose one of {', '.join(METHODS)}")
    if average_by not in AVERAGE_BY:
        raise OptionError(f"unknown average_by {average_by!r}; choose one of {', '.join(AVERAGE_BY)}")
    if undefined not in UNDEFINED:
        raise OptionError(f"unknown undefined={undefined!r}; choose 'skip' or 'zero'")
    return method, average_by


def _grouped(metric: np.ndarray, human: np.ndarray, method: str, average_by: str):
    """Per-group values, status codes and judged-entry counts, shape ``(..., groups)``.

    Masks are applied by arithmetic, not selection (``np.where`` on scattered
    masks is several times slower): ``zeroed`` arrays hold 0 on unjudged cells.
    """
    try:
        metric, human = np.broadcast_arrays(metric, human)
    except ValueError:
        raise InputError(f"metric scores {metric.shape} and human scores {human.shape} differ in shape") from None
    x, y = (_group_view(a, average_by, metric) for a in (metric, human))
    invalid = np.isnan(y)
    valid = ~invalid
    weight = valid.astype(np.float64)
    if np.isinf(y).any():
        raise InputError("human scores contain infinities; use NaN for an unjudged candidate")
    n = np.count_nonzero(valid, axis=-1)
    missing = int(n.sum()) - np.count_nonzero(np.isfinite(x) & valid)
    if missing:
        raise InputError(f"{missing} judged {'candidate has' if missing == 1 else 'candidates have'} no finite metric "
                         "score",
                         fix="score every candidate that has a human judgment")
    x0 = _zeroed(x, weight)
    y0 = _zeroed(y, weight)
    status = np.full(n.shape, OK, dtype=np.int8)
    nan_off = y - y                                              # 0 where judged, NaN elsewhere
    status[_is_constant(x0 + nan_off) | _is_constant(y)] = CONSTANT
    status[n == 1] = TOO_FEW
    status[n == 0] = EMPTY
    if method == "pearson":
        values = _pearson(x0, y0, weight, n)
    elif method == "spearman":
        values = _pearson(_average_ranks(x0 + nan_off) * weight, _average_ranks(y) * weight, weight, n)
    else:
        values = _kendall(x0 + nan_off, y, valid, method[-1])
    values = np.where(status == OK, values, np.nan)
    return values, status, n


def _group_view(a: np.ndarray, average_by: str, layout: np.ndarray) -> np.ndarray:
    """``(..., groups, members)`` view; for "none" the entry order follows ``layout``'s memory order."""
    if average_by == "none":
        if a.ndim >= 2 and layout.strides[-1] > layout.strides[-2]:
            a = np.swapaxes(a, -1, -2)             # flatten in memory order: entry order is irrelevant
        return a.reshape(a.shape[:-2] + (1, a.shape[-2] * a.shape[-1]))
    if average_by == "item":
        return np.swapaxes(a, -1, -2)
    return a


_BIG = np.finfo(np.float64).max


def _zeroed(a: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``a`` on judged cells, 0 elsewhere (NaN and infinities there included), without a selection."""
    out = np.fmax(a, -_BIG)
    np.fmin(out, _BIG, out=out)
    out *= weight
    return out


def _is_constant(nan_off: np.ndarray) -> np.ndarray:
    """Whether the non-NaN entries of each row are all equal (``fmin``/``fmax`` skip NaN)."""
    with np.errstate(invalid="ignore"):
        return np.fmin.reduce(nan_off, axis=-1) == np.fmax.reduce(nan_off, axis=-1)


def _unit_scale(x: np.ndarray) -> np.ndarray:
    """Each row divided by its largest absolute value (rows of zeros unchanged)."""
    top = np.max(np.abs(x), axis=-1, keepdims=True) if x.shape[-1] else np.ones(x.shape[:-1] + (1,))
    return np.divide(x, top, out=np.zeros_like(x, dtype=np.float64), where=top > 0)


def _pearson(x0, y0, weight, n) -> np.ndarray:
    """Two-pass Pearson r over the judged entries (``x0``, ``y0`` zero elsewhere).

    r is scale-invariant, so each row is divided by its largest magnitude before
    and after centring (as scipy does): huge finite values (1e300) cannot overflow.
    """
    k = np.maximum(n, 1)[..., None]
    x0, y0 = _unit_scale(x0), _unit_scale(y0)
    dx = x0 - x0.sum(-1, keepdims=True) / k
    dx *= weight
    dx = _unit_scale(dx)
    dy = y0 - y0.sum(-1, keepdims=True) / k
    dy *= weight
    dy = _unit_scale(dy)
    sxy = np.einsum("...i,...i->...", dx, dy)
    sxx = np.einsum("...i,...i->...", dx, dx)
    syy = np.einsum("...i,...i->...", dy, dy)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(sxy / np.sqrt(sxx * syy), -1.0, 1.0)


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks along the last axis, ties sharing their mean rank; NaN entries rank last (finite junk)."""
    m = x.shape[-1]
    order = np.argsort(x, axis=-1)
    xs = np.take_along_axis(x, order, -1).reshape(-1, m)
    start = np.empty(xs.shape, dtype=bool)
    start[:, 0] = True
    np.not_equal(xs[:, 1:], xs[:, :-1], out=start[:, 1:])
    flat = start.ravel()
    run = np.cumsum(flat) - 1
    first = np.flatnonzero(flat) % m
    size = np.diff(np.append(np.flatnonzero(flat), flat.size))
    mean_rank = first + (size - 1) / 2.0 + 1.0
    ranks = np.empty(x.shape)
    np.put_along_axis(ranks, order, mean_rank[run].reshape(x.shape), -1)
    return ranks


def _n_distinct(x: np.ndarray) -> np.ndarray:
    """The number of distinct non-NaN values along the last axis."""
    xs = np.sort(x, axis=-1)                                  # NaN (unjudged) sort last
    new = np.ones(xs.shape, dtype=bool)
    new[..., 1:] = xs[..., 1:] != xs[..., :-1]
    return (new & ~np.isnan(xs)).sum(-1)


def _kendall(x: np.ndarray, y: np.ndarray, valid: np.ndarray, variant: str) -> np.ndarray:
    """Kendall tau-b or tau-c per row; ``x`` and ``y`` are NaN exactly on the unjudged entries."""
    m = x.shape[-1]
    lead = x.shape[:-1]
    xf, yf, vf = (a.reshape(-1, m) for a in (x, y, valid))
    out = np.full(xf.shape[0], np.nan)
    if m <= _PAIRWISE_MAX_MEMBERS:
        step = max(1, _CHUNK_ELEMENTS // m)
        for s in range(0, xf.shape[0], step):
            out[s:s + step] = _kendall_pairs(xf[s:s + step], yf[s:s + step], vf[s:s + step], variant)
    else:
        import scipy.stats  # imported where used: 0.9 s that every command line would pay at start

        for r in range(xf.shape[0]):
            keep = vf[r]
            if keep.sum() >= 2:
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[r] = scipy.stats.kendalltau(xf[r, keep], yf[r, keep], variant=variant).statistic
    return out.reshape(lead)


def _kendall_pairs(x, y, valid, variant):
    """tau-b / tau-c of each row from all its pairs (p, q > p); NaN compares False, so unjudged pairs drop out."""
    xt, yt = np.ascontiguousarray(x.T), np.ascontiguousarray(y.T)     # (members, rows)
    rows = x.shape[0]
    s = np.zeros(rows, dtype=np.int64)          # concordant - discordant
    untied_x = np.zeros(rows, dtype=np.int64)   # valid pairs with x_p != x_q
    untied_y = np.zeros(rows, dtype=np.int64)
    for p in range(xt.shape[0] - 1):
        gx, lx = xt[p + 1:] > xt[p], xt[p + 1:] < xt[p]
        gy, ly = yt[p + 1:] > yt[p], yt[p + 1:] < yt[p]
        s += np.count_nonzero((gx & gy) | (lx & ly), axis=0)
        s -= np.count_nonzero((gx & ly) | (lx & gy), axis=0)
        untied_x += np.count_nonzero(gx | lx, axis=0)
        untied_y += np.count_nonzero(gy | ly, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            return s / np.sqrt(untied_x.astype(float) * untied_y)
        n = np.count_nonzero(valid, axis=-1).astype(float)
        classes = np.minimum(_n_distinct(x), _n_distinct(y)).astype(float)
        return 2.0 * s / (n ** 2 * (classes - 1) / classes)


def _average(values: np.ndarray, status: np.ndarray, undefined: str):
    """Mean over groups of ``values``; constant groups skipped or counted as 0."""
    use = status == OK
    vals = np.where(use, values, 0.0)
    if undefined == "zero":
        use = use | (status == CONSTANT)
    k = use.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(k > 0, vals.sum(-1) / np.maximum(k, 1), np.nan)
    return mean, use


def _summarise(values, status, counts, method, average_by, undefined) -> CorrelationResult:
    """The :class:`CorrelationResult` of group values and statuses: their average and what was left out."""
    mean, use = _average(values, status, undefined)
    n_constant = int((status == CONSTANT).sum())
    return CorrelationResult(
        value=float(mean), method=method, average_by=average_by,
        n_groups=int(use.sum()), n_entries=int(counts[use].sum()),
        n_constant=n_constant, n_too_few=int((status == TOO_FEW).sum()),
        n_empty=int((status == EMPTY).sum()),
        n_zeroed=n_constant if undefined == "zero" else 0,
    )
