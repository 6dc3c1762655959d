"""General plots as PNG bytes: the figures of ``combo report`` and of the documentation pages.

One module draws every figure so that a figure in the docs and in a report
look alike. Each function takes plain arrays and labels (no combo objects),
returns the PNG bytes, and draws with matplotlib's object API on its own
:class:`~matplotlib.figure.Figure` (no pyplot state, no display needed).

matplotlib is optional (``pip install 'combo-eval[report]'``); without it every
function raises :class:`~combo.errors.ResourceMissing` naming that command.
"""

from __future__ import annotations

import io
from typing import Optional, Sequence

import numpy as np

from ..errors import ResourceMissing
from ..extras import install_hint

INSTALL = install_hint("report")
DPI = 96
#: Colours: a blue for metrics, an orange for combinations, a red/blue pair for signs.
METRIC_COLOUR, COMBINATION_COLOUR = "#4477aa", "#ee7733"
POSITIVE_COLOUR, NEGATIVE_COLOUR = "#4477aa", "#cc3311"


def require_matplotlib():
    """The ``matplotlib`` module, or :class:`ResourceMissing` naming the install command."""
    try:
        import matplotlib
    except ImportError:
        raise ResourceMissing("matplotlib (needed for the HTML report and its plots)", INSTALL) from None
    return matplotlib


def _figure(width: float, height: float):
    require_matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def bar_intervals(labels: Sequence[str], values: Sequence[float], low: Optional[Sequence[float]] = None,
                  high: Optional[Sequence[float]] = None, highlight: Optional[Sequence[bool]] = None,
                  title: str = "", xlabel: str = "", sort: bool = True) -> bytes:
    """Horizontal bars of ``values`` with interval whiskers ``[low, high]`` (NaN: none).

    ``highlight`` marks bars drawn in the second colour (combinations). Undefined
    (NaN) values are left out of the bars and listed under the axis.
    """
    values = np.asarray(values, dtype=float)
    low = np.full_like(values, np.nan) if low is None else np.asarray(low, dtype=float)
    high = np.full_like(values, np.nan) if high is None else np.asarray(high, dtype=float)
    highlight = np.zeros(len(values), bool) if highlight is None else np.asarray(highlight, dtype=bool)
    ok = np.flatnonzero(np.isfinite(values))
    if sort:
        ok = ok[np.argsort(-values[ok], kind="stable")]
    n = max(len(ok), 1)
    fig = _figure(5.6, 0.9 + 0.28 * n)
    ax = fig.add_subplot()
    y = np.arange(len(ok))[::-1]
    colours = [COMBINATION_COLOUR if highlight[k] else METRIC_COLOUR for k in ok]
    ax.barh(y, values[ok], color=colours, height=0.7)
    has = np.isfinite(low[ok]) & np.isfinite(high[ok])
    if has.any():
        v, lo, hi = values[ok][has], low[ok][has], high[ok][has]
        ax.errorbar(v, y[has], xerr=[np.maximum(v - lo, 0), np.maximum(hi - v, 0)], fmt="none",
                    ecolor="black", elinewidth=1, capsize=2.5)
    ax.set_yticks(y, [labels[k] for k in ok], fontsize=8)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    missing = [labels[k] for k in range(len(values)) if not np.isfinite(values[k])]
    if missing:
        fig.text(0.01, -0.02, "undefined: " + ", ".join(missing), fontsize=7, va="top", wrap=True)
    return _png(fig)


def heatmap(matrix, row_labels: Sequence[str], col_labels: Sequence[str], title: str = "",
            vmin: Optional[float] = None, vmax: Optional[float] = None, cmap: str = "RdBu_r",
            annotate: bool = True, colorbar_label: str = "", fmt: str = "{:.2f}") -> bytes:
    """A matrix as coloured cells (NaN cells grey, labelled ``n/a``), values written in the cells."""
    m = np.asarray(matrix, dtype=float)
    rows, cols = m.shape
    fig = _figure(max(3.5, 1.6 + 0.42 * cols), max(2.6, 1.2 + 0.34 * rows))
    ax = fig.add_subplot()
    masked = np.ma.masked_invalid(m)
    import matplotlib

    colourmap = matplotlib.colormaps[cmap].with_extremes(bad="#dddddd")
    image = ax.imshow(masked, cmap=colourmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(cols), col_labels, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(rows), row_labels, fontsize=7)
    if annotate and rows * cols <= 900:
        lo, hi = (vmin if vmin is not None else np.nanmin(m) if np.isfinite(m).any() else 0,
                  vmax if vmax is not None else np.nanmax(m) if np.isfinite(m).any() else 1)
        for i in range(rows):
            for j in range(cols):
                v = m[i, j]
                if np.isfinite(v):
                    dark = hi > lo and abs((v - lo) / (hi - lo) - 0.5) > 0.3
                    ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=6,
                            color="white" if dark else "black")
                else:
                    ax.text(j, i, "n/a", ha="center", va="center", fontsize=6, color="#666666")
    cbar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03)
    cbar.ax.tick_params(labelsize=7)
    if colorbar_label:
        cbar.set_label(colorbar_label, fontsize=8)
    ax.set_title(title, fontsize=10)
    return _png(fig)


def scatter(x, y, title: str = "", xlabel: str = "", ylabel: str = "", point_labels: Optional[Sequence[str]] = None,
            density_above: int = 1500, width: float = 3.4, height: float = 3.0) -> bytes:
    """``y`` against ``x``: points (with ``point_labels`` written beside them), or a hexbin
    density when there are more than ``density_above`` points. NaN pairs are left out."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    fig = _figure(width, height)
    ax = fig.add_subplot()
    if ok.sum() > density_above and np.ptp(x[ok]) > 0 and np.ptp(y[ok]) > 0:
        hb = ax.hexbin(x[ok], y[ok], gridsize=30, bins="log", cmap="Blues", mincnt=1)
        cbar = fig.colorbar(hb, ax=ax, fraction=0.046, pad=0.03)
        cbar.ax.tick_params(labelsize=6)
        cbar.set_label("candidates (log)", fontsize=7)
    else:
        ax.scatter(x[ok], y[ok], s=14 if point_labels is not None else 8, alpha=0.8 if point_labels else 0.4,
                   color=METRIC_COLOUR, edgecolors="none")
        if point_labels is not None:
            for k in np.flatnonzero(ok):
                ax.annotate(point_labels[k], (x[k], y[k]), fontsize=6, xytext=(3, 2), textcoords="offset points")
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    return _png(fig)


def line_trace(labels: Sequence[str], values: Sequence[float], marks: Optional[Sequence[bool]] = None,
               title: str = "", ylabel: str = "", reference: Optional[float] = None,
               reference_label: str = "") -> bytes:
    """Values step by step (a search trace): filled markers where ``marks`` is true (kept),
    hollow where false (dropped); the running best as a line; an optional horizontal reference."""
    v = np.asarray(values, dtype=float)
    marks = np.ones(len(v), bool) if marks is None else np.asarray(marks, dtype=bool)
    fig = _figure(max(5.0, 1.5 + 0.38 * len(v)), 3.4)
    ax = fig.add_subplot()
    steps = np.arange(len(v))
    finite = np.where(np.isfinite(v), v, -np.inf)
    best = np.maximum.accumulate(np.where(marks, finite, -np.inf)) if len(v) else finite
    shown = np.isfinite(best)
    ax.step(steps[shown], best[shown], where="post", color="grey", linewidth=1, label="kept set")
    ax.scatter(steps[marks], v[marks], color=METRIC_COLOUR, zorder=3, s=24, label="kept")
    ax.scatter(steps[~marks], v[~marks], facecolors="white", edgecolors=NEGATIVE_COLOUR, zorder=3, s=24,
               label="dropped")
    if reference is not None and np.isfinite(reference):
        ax.axhline(reference, color=COMBINATION_COLOUR, linestyle="--", linewidth=1, label=reference_label)
    ax.set_xticks(steps, labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return _png(fig)


def signed_bars(labels: Sequence[str], values: Sequence[float], title: str = "", xlabel: str = "") -> bytes:
    """Horizontal bars coloured by sign (weights of a tuned model), largest magnitude first."""
    v = np.asarray(values, dtype=float)
    order = np.argsort(-np.abs(v), kind="stable")
    fig = _figure(6.0, 0.9 + 0.28 * max(len(v), 1))
    ax = fig.add_subplot()
    y = np.arange(len(v))[::-1]
    ax.barh(y, v[order], color=[POSITIVE_COLOUR if x >= 0 else NEGATIVE_COLOUR for x in v[order]], height=0.7)
    ax.set_yticks(y, [labels[k] for k in order], fontsize=8)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def cluster_order(matrix) -> np.ndarray:
    """Leaf order of an average-linkage clustering of a similarity (correlation) matrix.

    Distance ``1 - similarity`` (undefined cells: distance 1, as uncorrelated);
    fewer than three rows keep their order.
    """
    m = np.asarray(matrix, dtype=float)
    n = len(m)
    if n < 3:
        return np.arange(n)
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    d = 1.0 - np.where(np.isfinite(m), m, 0.0)
    d = np.clip((d + d.T) / 2, 0.0, 2.0)
    np.fill_diagonal(d, 0.0)
    return leaves_list(linkage(squareform(d, checks=False), method="average"))
