"""General plots as PNG bytes: the figures of ``combo report`` and of the documentation pages.

One module draws every figure so that a figure in the docs and in a report
look alike. Each function takes plain arrays and labels (no combo objects),
returns the PNG bytes (SVG with ``image_format="svg"``, its text kept as text), and
draws with matplotlib's object API on its own :class:`~matplotlib.figure.Figure`
(no pyplot state, no display needed).

matplotlib is optional (``pip install 'combo-eval[report]'``); without it every
function raises :class:`~combo.errors.ResourceMissing` naming that command.
"""

from __future__ import annotations

import io
import math
from typing import Mapping, NamedTuple, Optional, Sequence

import numpy as np

from ..errors import ResourceMissing
from ..extras import install_hint

INSTALL = install_hint("report")
DPI = 96
#: Colours: a blue for metrics, an orange for combinations, a red/blue pair for signs.
METRIC_COLOUR, COMBINATION_COLOUR = "#4477aa", "#ee7733"
POSITIVE_COLOUR, NEGATIVE_COLOUR = "#4477aa", "#cc3311"
#: Colours of named groups and series, in order of first appearance (Paul Tol's "bright" scheme,
#: opening with the metric and combination colours).
PALETTE = (METRIC_COLOUR, COMBINATION_COLOUR, "#228833", "#aa3377", "#66ccee", "#ccbb44", "#ee6677",
           "#bbbbbb", "#000000", "#994455")


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


def _png(fig, image_format: str = "png") -> bytes:
    """The figure as PNG bytes, or as SVG (``image_format="svg"``) whose labels stay ``<text>`` elements."""
    buf = io.BytesIO()
    if image_format == "svg":
        import matplotlib

        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "combo"}):
            fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    else:
        fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def group_colours(groups: Sequence[str]) -> dict:
    """A colour for each distinct group name, in order of first appearance (cycling through :data:`PALETTE`)."""
    colours: dict = {}
    for g in groups:
        if g not in colours:
            colours[g] = PALETTE[len(colours) % len(PALETTE)]
    return colours


def bar_order(values: Sequence[float], higher_is_better: bool = True) -> np.ndarray:
    """Indices of the defined ``values``, best first (drawn top down): highest first, or lowest for a criterion
    where lower is better (ORANGE); ties keep their order."""
    values = np.asarray(values, dtype=float)
    ok = np.flatnonzero(np.isfinite(values))
    return ok[np.argsort(-values[ok] if higher_is_better else values[ok], kind="stable")]


def bar_intervals(labels: Sequence[str], values: Sequence[float], low: Optional[Sequence[float]] = None,
                  high: Optional[Sequence[float]] = None, highlight: Optional[Sequence[bool]] = None,
                  title: str = "", xlabel: str = "", sort: bool = True,
                  groups: Optional[Sequence[str]] = None, xlim: Optional[Sequence[float]] = None,
                  image_format: str = "png", higher_is_better: bool = True) -> bytes:
    """Horizontal bars of ``values`` with interval whiskers ``[low, high]`` (NaN: none), the best on top
    (``higher_is_better=False``: the lowest, as for ORANGE).

    ``highlight`` marks bars drawn in the second colour (combinations); ``groups``
    instead names each bar's group, a colour per group (:func:`group_colours`)
    with a legend; ``xlim`` narrows the axis to where the bars differ. Undefined
    (NaN) values are left out of the bars and listed under the axis.
    """
    values = np.asarray(values, dtype=float)
    low = np.full_like(values, np.nan) if low is None else np.asarray(low, dtype=float)
    high = np.full_like(values, np.nan) if high is None else np.asarray(high, dtype=float)
    highlight = np.zeros(len(values), bool) if highlight is None else np.asarray(highlight, dtype=bool)
    ok = bar_order(values, higher_is_better) if sort else np.flatnonzero(np.isfinite(values))
    n = max(len(ok), 1)
    fig = _figure(5.6, 0.9 + 0.28 * n)
    ax = fig.add_subplot()
    y = np.arange(len(ok))[::-1]
    if groups is None:
        ax.barh(y, values[ok], color=[COMBINATION_COLOUR if highlight[k] else METRIC_COLOUR for k in ok], height=0.7)
    else:
        palette = group_colours(groups)
        for name, colour in palette.items():
            mine = np.array([groups[k] == name for k in ok], dtype=bool)
            ax.barh(y[mine], values[ok][mine], color=colour, height=0.7, label=name)
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
    if xlim is not None:
        ax.set_xlim(*xlim)
    if groups is not None:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    missing = [labels[k] for k in range(len(values)) if not np.isfinite(values[k])]
    if missing:
        fig.text(0.01, -0.02, "undefined: " + ", ".join(missing), fontsize=7, va="top", wrap=True)
    return _png(fig, image_format)


def heatmap(matrix, row_labels: Sequence[str], col_labels: Sequence[str], title: str = "",
            vmin: Optional[float] = None, vmax: Optional[float] = None, cmap: str = "RdBu_r",
            annotate: bool = True, colorbar_label: str = "", fmt: str = "{:.2f}",
            cell_text: Optional[Sequence[Sequence[str]]] = None, xlabel: str = "", ylabel: str = "",
            image_format: str = "png") -> bytes:
    """A matrix as coloured cells (NaN cells grey, labelled ``n/a``), values written in the cells.

    ``cell_text`` writes other text in the cells than the coloured values (the
    raw figure when the colour is a share of something, say).
    """
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
        for i in range(rows):
            for j in range(cols):
                v = m[i, j]
                if np.isfinite(v):
                    r, g, b, _ = colourmap(image.norm(v))
                    dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5  # white text on a dark cell
                    text = fmt.format(v) if cell_text is None else cell_text[i][j]
                    ax.text(j, i, text, ha="center", va="center", fontsize=6,
                            color="white" if dark else "black")
                else:
                    ax.text(j, i, "n/a", ha="center", va="center", fontsize=6, color="#666666")
    cbar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03)
    cbar.ax.tick_params(labelsize=7)
    if colorbar_label:
        cbar.set_label(colorbar_label, fontsize=8)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_title(title, fontsize=10)
    return _png(fig, image_format)


def scatter(x, y, title: str = "", xlabel: str = "", ylabel: str = "", point_labels: Optional[Sequence[str]] = None,
            density_above: int = 1500, width: float = 3.4, height: float = 3.0,
            groups: Optional[Sequence[str]] = None, image_format: str = "png") -> bytes:
    """``y`` against ``x``: points (with ``point_labels`` written beside them), or a hexbin
    density when there are more than ``density_above`` points. NaN pairs are left out.

    ``groups`` names each point's group: a colour per group (:func:`group_colours`) and a legend.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    fig = _figure(width, height)
    ax = fig.add_subplot()
    dense = bool(ok.sum() > density_above and np.ptp(x[ok]) > 0 and np.ptp(y[ok]) > 0)
    if dense:
        hb = ax.hexbin(x[ok], y[ok], gridsize=30, bins="log", cmap="Blues", mincnt=1)
        cbar = fig.colorbar(hb, ax=ax, fraction=0.046, pad=0.03)
        cbar.ax.tick_params(labelsize=6)
        cbar.set_label("candidates (log)", fontsize=7)
    else:
        size, alpha = (14, 0.8) if point_labels is not None else (8, 0.4)
        if groups is None:
            ax.scatter(x[ok], y[ok], s=size, alpha=alpha, color=METRIC_COLOUR, edgecolors="none")
        else:
            for name, colour in group_colours([groups[k] for k in np.flatnonzero(ok)]).items():
                mine = ok & np.array([g == name for g in groups], dtype=bool)
                ax.scatter(x[mine], y[mine], s=size, alpha=alpha, color=colour, edgecolors="none", label=name)
            ax.legend(fontsize=6, loc="best")
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    if point_labels is not None and not dense:
        fig.tight_layout()  # the final axes box, which the labels must stay inside
        notes = [ax.annotate(point_labels[k], (x[k], y[k]), fontsize=6, xytext=(3, 2), textcoords="offset points")
                 for k in np.flatnonzero(ok)]
        place_labels(fig, ax, notes)
    return _png(fig, image_format)


#: Where a point's label may go, in points from the point: (dx, dy, horizontal and vertical alignment), in the
#: order tried: right above, right below, left above, left below, then further up and down.
LABEL_PLACES = [(3, 2, "left", "bottom"), (3, -2, "left", "top"), (-3, 2, "right", "bottom"),
                (-3, -2, "right", "top")] + [(dx, dy, ha, "center") for step in (1, 2, 3, 4)
                                             for dy in (7 * step, -7 * step)
                                             for dx, ha in ((3, "left"), (-3, "right"))]


def place_labels(fig, ax, notes) -> None:
    """Move each point label (an ``annotate`` text) to the first of :data:`LABEL_PLACES` where it overlaps no
    label placed before it and stays inside the axes; with no such place, to where it overlaps least. Labels
    are placed from the top of the plot down, where a good metric's systems crowd."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # text extents as the PNG draws them
    frame = ax.get_window_extent(renderer)
    placed = []

    def cost(box) -> float:
        outside = (max(0.0, frame.x0 - box.x0) + max(0.0, box.x1 - frame.x1) + max(0.0, frame.y0 - box.y0)
                   + max(0.0, box.y1 - frame.y1)) * box.height
        return outside + sum(max(0.0, min(box.x1, o.x1) - max(box.x0, o.x0))
                             * max(0.0, min(box.y1, o.y1) - max(box.y0, o.y0)) for o in placed)

    for note in sorted(notes, key=lambda n: -n.xy[1]):
        best = None
        for dx, dy, ha, va in LABEL_PLACES:
            note.set_position((dx, dy))
            note.set_ha(ha)
            note.set_va(va)
            c = cost(note.get_window_extent(renderer))
            if best is None or c < best[0]:
                best = (c, dx, dy, ha, va)
            if c == 0:
                break
        _, dx, dy, ha, va = best
        note.set_position((dx, dy))
        note.set_ha(ha)
        note.set_va(va)
        placed.append(note.get_window_extent(renderer))


def line_trace(labels: Sequence[str], values: Sequence[float], marks: Optional[Sequence[bool]] = None,
               title: str = "", ylabel: str = "", reference: Optional[float] = None,
               reference_label: str = "", image_format: str = "png") -> bytes:
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
    return _png(fig, image_format)


def signed_bars(labels: Sequence[str], values: Sequence[float], title: str = "", xlabel: str = "",
                image_format: str = "png") -> bytes:
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
    return _png(fig, image_format)


class Series(NamedTuple):
    """One line of :func:`line_panels`: ``y`` against ``x``, an optional band ``[low, high]``.

    Series of one ``colour_key`` (default: the label) share a colour in every
    panel; ``dashed`` draws a dashed line with crosses (a peer beside combo, say).
    """

    label: str
    x: Sequence[float]
    y: Sequence[float]
    low: Optional[Sequence[float]] = None
    high: Optional[Sequence[float]] = None
    colour_key: Optional[str] = None
    dashed: bool = False


def line_panels(panels: Mapping[str, Sequence[Series]], title: str = "", xlabel: str = "", ylabel: str = "",
                log_x: bool = False, log_y: bool = False, ylim: Optional[Sequence[float]] = None,
                share_y: bool = False, columns: Optional[int] = None, panel_width: float = 3.6,
                panel_height: float = 2.9, image_format: str = "png") -> bytes:
    """Small multiples of line plots: one panel per entry of ``panels`` (its title), each
    with its :class:`Series` (markers at the points, a shaded band where ``low``/``high``
    are given; NaN points are left out).

    Colours follow each series' ``colour_key`` across panels. When every panel
    shows the same series one legend (in the first panel) names them; otherwise
    each panel has its own.
    """
    n = max(len(panels), 1)
    require_matplotlib()
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    columns = min(n, 5) if columns is None else max(1, min(columns, n))
    rows = math.ceil(n / columns)
    fig = _figure(panel_width * columns, panel_height * rows + (0.4 if title else 0))
    axes = fig.subplots(rows, columns, squeeze=False, sharey=share_y)
    colours = group_colours([s.colour_key or s.label for series in panels.values() for s in series])
    same_series = len({tuple(s.label for s in series) for series in panels.values()}) <= 1
    for k, (ax, (name, series)) in enumerate(zip(axes.ravel(), panels.items())):
        for j, s in enumerate(series):
            x, y = np.asarray(s.x, dtype=float), np.asarray(s.y, dtype=float)
            ok = np.isfinite(x) & np.isfinite(y)
            colour = colours[s.colour_key or s.label]
            ax.plot(x[ok], y[ok], "x--" if s.dashed else "o-", color=colour, markersize=3.5, linewidth=1.2,
                    label=s.label, gid=f"series-{k}-{j}")  # the SVG id of the line
            if s.low is not None and s.high is not None:
                lo, hi = np.asarray(s.low, dtype=float), np.asarray(s.high, dtype=float)
                band = ok & np.isfinite(lo) & np.isfinite(hi)
                ax.fill_between(x[band], lo[band], hi[band], color=colour, alpha=0.1, linewidth=0)
        xs = sorted({float(v) for s in series for v in s.x if np.isfinite(v)})
        if log_x:
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())
            if 0 < len(xs) <= 8:  # label the sizes measured, not powers of ten
                ax.set_xticks(xs, [f"{v:g}" for v in xs])
        elif xs and all(v.is_integer() for v in xs):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if log_y:
            ax.set_yscale("log")  # ticks at 1, 2 and 5 times a power of ten, written plainly
            ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_title(name, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, which="both" if (log_x or log_y) else "major")
        if k % columns == 0 or not share_y:
            ax.set_ylabel(ylabel, fontsize=8)
        if k >= n - columns:
            ax.set_xlabel(xlabel, fontsize=8)
        if series and same_series and k == 0:
            ax.legend(fontsize=6, loc="best")
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    if not same_series:  # each panel's own legend below it (after the layout, so the panels keep their size)
        for ax, series in zip(axes.ravel(), panels.values()):
            if series:
                ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.16 - 0.1 / panel_height),
                          frameon=False)
    return _png(fig, image_format)


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
