"""The parts of ``combo report``: each computed with the API of ``combo evaluate`` and ``combo search``.

:func:`build_report` takes a scored test bed and its
:class:`~combo.evaluate.MetaEvaluator` and returns one HTML page (see
:mod:`.html`) with: the test bed's summary and every metric's signature; the
meta-evaluation table (every supported criterion, bootstrap intervals and
significance clusters); bars of each entry's quality with its interval; the
clustered metric-to-metric correlation heatmap; metric against human scatter
plots (segment and system level); the search trace; a tuned model's weights;
the MUTT accuracy heatmap; and each metric's worst-scored segments. A part
that does not apply says why in one sentence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .._version import __version__
from ..errors import InputError
from ..evaluate import (criterion_sign, get_criterion, MetaEvaluator, Quality, SetSearch, evaluate_entries,
                        evaluation_rows, left_out_notes, significance_clusters, supported_criteria)
from . import plots
from .html import Cell, Section, esc, figure, json_block, number_cell, page, sentence, table, text_cell



@dataclass
class ReportInputs:
    """What a report shows besides the scored test bed: all optional."""

    criteria: Optional[Sequence[str]] = None  # None: every criterion the test bed supports
    schemes: Sequence[str] = ("ulc",)
    n_resamples: int = 1000
    seed: int = 0
    evaluation: Optional[Tuple[List[str], Dict[str, List[Optional[Quality]]]]] = None  # already computed
    search: Optional[SetSearch] = None
    tuned: Dict[str, Tuple[Dict[str, float], float]] = field(default_factory=dict)  # name -> (weights, bias)
    mutt: Optional[Mapping[str, Mapping[str, float]]] = None  # metric -> corruption type -> accuracy
    mutt_note: str = "MUTT unit tests were not run (combo report --mutt)."
    notes: Sequence[str] = ()
    command: str = ""
    worst: int = 5  # worst-scored segments shown per metric


def build_report(evaluator: MetaEvaluator, inputs: Optional[ReportInputs] = None, title: str = "") -> str:
    """The report of ``evaluator``'s scored test bed as one self-contained HTML page."""
    plots.require_matplotlib()
    inputs = inputs or ReportInputs()
    ev, table_ = evaluator, evaluator.table
    supported, why_not = supported_criteria(ev)
    if inputs.criteria is not None:
        criteria = list(inputs.criteria)
    elif ev.testbed.metadata.get("format") == "mt-metrics-eval":  # WMT-style MQM/DA data: WMT23's statistics too
        criteria = supported
    else:
        criteria = [c for c in supported if get_criterion(c).family != "wmt23"]
    if inputs.evaluation is not None:  # computed by combo evaluate: shown as is
        names, qualities = inputs.evaluation
    elif criteria:
        names, qualities = evaluate_entries(ev, criteria, inputs.schemes, inputs.n_resamples, inputs.seed)
    else:
        names, qualities = list(table_.metrics), {}
    n_metrics = len(table_.metrics)
    sections = [
        _meta_section(ev, names, qualities, why_not, inputs, n_metrics),
        _bars_section(names, qualities, n_metrics),
        _correlation_section(table_),
        _scatter_section(ev),
        _search_section(inputs.search),
        _tuned_section(inputs.tuned),
        _mutt_section(inputs.mutt, inputs.mutt_note),
        _worst_section(ev, inputs.worst),
    ]
    doc = {"testbed": ev.testbed.name, "segments": len(ev.testbed.segments), "aspect": ev.aspect,
           "criteria": list(qualities), "rows": evaluation_rows(names, qualities),
           "notes": list(inputs.notes) + left_out_notes(names, qualities),
           "signatures": dict(zip(table_.metrics, table_.signatures)), "seed": inputs.seed,
           "bootstrap": inputs.n_resamples, "combo_version": __version__}
    if inputs.mutt:
        doc["mutt"] = inputs.mutt
    intro = _header(ev, inputs) + json_block("combo-evaluation", _json_safe(doc))
    return page(title or f"combo report: {ev.testbed.name}", intro, sections)


# -- header -----------------------------------------------------------------------------------------

def _header(ev: MetaEvaluator, inputs: ReportInputs) -> str:
    s = ev.testbed.summary()
    tb = ev.testbed
    refs = (f"{s['references_min']}" if s["references_min"] == s["references_max"]
            else f"{s['references_min']}-{s['references_max']}")
    judgments = []
    if s["scores"]:
        judgments.append(f"{s['scores']:,} absolute scores")
    if s["preferences"]:
        judgments.append(f"{s['preferences']:,} pairwise preferences")
    if s["system_scores"]:
        judgments.append("system scores (" + ", ".join(s["system_scores"]) + ")")
    facts = [("test bed", s["name"]), ("segments", f"{s['segments']:,}"), ("systems", str(s["systems"])),
             ("candidates", f"{s['candidates']:,}"), ("references per segment", refs),
             ("human judgments", ", ".join(judgments) or "none"),
             ("judgment aspect used", ev.aspect or "none"),
             ("target language", tb.target_language or "unknown"),
             ("seed", str(inputs.seed)),
             ("bootstrap resamples", f"{inputs.n_resamples} (95% percentile intervals)" if inputs.n_resamples
              else "none"),
             ("combo version", __version__)]
    if inputs.command:
        facts.append(("command", inputs.command))
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts)
    sigs = table(["metric", "higher is better", "signature"],
                 [[text_cell(m), text_cell("yes" if h else "no"), Cell(f"<code>{esc(sig)}</code>")]
                  for m, h, sig in zip(ev.table.metrics, ev.table.higher_is_better, ev.table.signatures)],
                 sortable=False, name="signatures")
    notes = "".join(f'<p class="muted">note: {esc(n)}</p>' for n in inputs.notes)
    return f'<table class="facts">{rows}</table><h3>Metrics</h3>{sigs}{notes}'


# -- meta-evaluation table and bars ------------------------------------------------------------------

def _meta_section(ev, names, qualities, why_not, inputs, n_metrics) -> Section:
    title = "Meta-evaluation"
    if not qualities:
        reasons = "; ".join(f"{c}: {r}" for c, r in why_not.items())
        return Section("meta", title, sentence("No meta-evaluation criterion applies to this test bed "
                                               f"({reasons})."))
    clusters, cluster_notes = {}, []
    for c, qs in qualities.items():
        clusters[c], reason = significance_clusters(ev, qs, inputs.n_resamples or 1000, seed=inputs.seed)
        if reason:
            cluster_notes.append(f"{c}: no significance clusters ({reason})")
    headers = ["metric", "kind"] + [f"{c} ({get_criterion(c).level})" for c in qualities]
    rows, classes = [], []
    for k, name in enumerate(names):
        kind = "metric" if k < n_metrics else "combination"
        row = [text_cell(name), text_cell(kind)]
        for c, qs in qualities.items():
            q = qs[k]
            if q is None:
                only = get_criterion(c).only_scheme or "other"
                row.append(Cell('<span class="na">n/a</span>', float("nan"), True,
                                f"{c} measures {only.upper()} combinations only"))
                continue
            interval = (f'<span class="muted interval">[{q.low:.4f}, {q.high:.4f}]</span>'
                        if np.isfinite(q.low) and np.isfinite(q.high) else "")
            cl = clusters[c][k]
            badge = (f'<span class="cluster" title="significance cluster (1 = best)">{cl}</span>'
                     if cl is not None else "")
            cell = number_cell(q.value, 4, badge + interval, title=(q.note or f"n = {q.n}"))
            cell.html = cell.html.replace('<span class="na">undefined</span>',
                                          f'<span class="na">undefined ({esc(q.note or "no usable data")})</span>')
            row.append(cell)
        rows.append(row)
        classes.append("combination" if kind == "combination" else "")
    body = [f"<p>Every criterion this test bed supports, for each metric alone and for the combination of all "
            f"of them ({', '.join(s.upper() for s in inputs.schemes) or 'none'}). Brackets: 95% bootstrap interval "
            f"over {inputs.n_resamples} resamples of the criterion's units (segments, candidates, pairs or "
            "systems). Badge: significance cluster, 1 = best; an entry starts a new cluster when the best entry "
            "of the cluster above beats it in a paired bootstrap test at p &lt; 0.05. Click a header to sort.</p>",
            table(headers, rows, name="meta-evaluation", row_classes=classes)]
    body += [f'<p class="muted">note: {esc(n)}</p>' for n in left_out_notes(names, qualities)]
    body += [sentence(f"{c} is not shown: {r}.") for c, r in why_not.items()
             if c not in qualities]
    body += [f'<p class="muted">{esc(n)}</p>' for n in cluster_notes]
    return Section("meta", title, "".join(body))


def _bars_section(names, qualities, n_metrics) -> Section:
    title = "Quality with intervals"
    if not qualities:
        return Section("bars", title, sentence("No criterion applies, so there is no quality to chart."))
    figs = []
    for c, qs in qualities.items():
        keep = [k for k, q in enumerate(qs) if q is not None]
        if not keep:
            continue
        vals = [qs[k].value for k in keep]
        if not any(np.isfinite(v) for v in vals):
            figs.append(sentence(f"{c}: undefined for every entry ({qs[keep[0]].note or 'no usable data'})."))
            continue
        png = plots.bar_intervals([short_name(names[k]) for k in keep], vals, [qs[k].low for k in keep],
                                  [qs[k].high for k in keep], [k >= n_metrics for k in keep],
                                  title=get_criterion(c).title, xlabel=c, higher_is_better=criterion_sign(c) > 0)
        whiskers = any(np.isfinite(qs[k].low) and np.isfinite(qs[k].high) for k in keep)
        figs.append(figure(png, f"{c} of each metric and combination", f"{get_criterion(c).title}: blue metrics, "
                           "orange combinations, " + ("whiskers the 95% bootstrap interval." if whiskers else
                                                      f"no whiskers: {c} has no bootstrap interval."),
                           name=f"bars-{c}"))
    return Section("bars", title, '<div class="figures">' + "".join(figs) + "</div>")


# -- metric-to-metric correlation -----------------------------------------------------------------------

def metric_correlations(table_) -> np.ndarray:
    """Pearson correlation between metrics over the candidates every metric scored, error rates negated
    (so that agreeing metrics correlate positively); NaN for a constant metric."""
    scores = np.asarray(table_.segment, dtype=float)
    oriented = np.where(np.asarray(table_.higher_is_better, bool)[:, None], scores, -scores)
    ok = np.isfinite(oriented).all(axis=0)
    x = oriented[:, ok]
    n = len(x)
    out = np.full((n, n), np.nan)
    if x.shape[1] < 2:
        return out
    centred = x - x.mean(axis=1, keepdims=True)
    norm = np.sqrt((centred ** 2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (centred @ centred.T) / np.outer(norm, norm)
    out[~np.isfinite(out)] = np.nan
    return np.clip(out, -1.0, 1.0)


def _correlation_section(table_) -> Section:
    title = "Metric-to-metric correlation"
    if len(table_.metrics) < 2:
        return Section("correlation", title, sentence("One metric only: there is no metric pair to correlate."))
    corr = metric_correlations(table_)
    order = plots.cluster_order(corr)
    labels = [short_name(table_.metrics[k]) for k in order]
    png = plots.heatmap(corr[np.ix_(order, order)], labels, labels, title="segment-level Pearson between metrics",
                        vmin=-1, vmax=1, colorbar_label="Pearson r")
    constant = [table_.metrics[k] for k in range(len(corr)) if not np.isfinite(corr[k]).any()]
    text = ("<p>Pearson correlation of the metrics' segment scores over all candidates (error rates negated, so "
            "agreement is positive), rows and columns ordered by average-linkage clustering on 1 - r: blocks on "
            "the diagonal are metrics that carry the same information.</p>")
    if constant:
        text += sentence(f"Undefined (n/a) for {', '.join(constant)}: the metric gives every candidate the same "
                         "score.")
    return Section("correlation", title, text + figure(png, "metric correlation heatmap", name="correlation"))


# -- metric against human ---------------------------------------------------------------------------------

def _scatter_section(ev: MetaEvaluator) -> Section:
    title = "Metrics against human judgments"
    table_ = ev.table
    human_rows = ev.human[table_.row_system, table_.row_segment]
    parts = []
    if np.isfinite(human_rows).any():
        figs = []
        for m, name in enumerate(table_.metrics):
            png = plots.scatter(table_.segment[m], human_rows, title=short_name(name),
                                xlabel=f"{short_name(name)} (segment)",
                                ylabel=f"human ({ev.aspect})")
            figs.append(figure(png, f"{name} against human, segment level", name=f"segment-{name}"))
        n = int((np.isfinite(human_rows)).sum())
        parts.append(f"<h3>Segment level</h3><p>Each judged candidate ({n:,}): the metric's score against the human "
                     f"score ({esc(ev.aspect)}); hexagonal bins with a log count where points are many.</p>"
                     f'<div class="figures">{"".join(figs)}</div>')
    else:
        parts.append("<h3>Segment level</h3>" + sentence("No segment-level human judgments: nothing to plot."))
    human_sys = _system_human(ev)
    if human_sys is None:
        parts.append("<h3>System level</h3>" + sentence("No human judgments: there are no system-level human "
                                                       "scores to plot."))
    elif ev.n_sys < 2:
        parts.append("<h3>System level</h3>" + sentence(f"One system only ({table_.systems[0]}): a system-level "
                                                       "plot needs at least two."))
    else:
        figs = []
        for m, name in enumerate(table_.metrics):
            png = plots.scatter(table_.system[m], human_sys, title=short_name(name),
                                xlabel=f"{short_name(name)} (corpus)",
                                ylabel="human (system)", point_labels=table_.systems)
            figs.append(figure(png, f"{name} against human, system level", name=f"system-{name}"))
        parts.append(f"<h3>System level</h3><p>Each system's corpus score against its human score.</p>"
                     f'<div class="figures">{"".join(figs)}</div>')
    return Section("scatter", title, "".join(parts))


def _system_human(ev: MetaEvaluator) -> Optional[np.ndarray]:
    if not (np.isfinite(ev.human).any() or ev.testbed.preferences or ev.testbed.system_scores):
        return None
    try:
        return ev.human_system_scores()
    except InputError:  # no judgments of any kind
        return None


# -- search, tuned model, MUTT -----------------------------------------------------------------------------

def _search_section(search: Optional[SetSearch]) -> Section:
    title = "Metric-set search"
    if search is None:
        return Section("search", title, sentence("No metric-set search was run (combo report --search CRITERION, "
                                                 "or combo search --report FILE)."))
    labels = [f"{step.get('step')}: {short_name(step.get('metric') or '')}" for step in search.trace]
    values = [float("nan") if step.get("quality") is None else float(step["quality"]) for step in search.trace]
    kept = [bool(step.get("kept", True)) for step in search.trace]
    sign = criterion_sign(search.criterion)
    png = plots.line_trace(labels, [sign * v for v in values], kept,
                           title=f"{search.strategy} search, {search.criterion} ({search.scheme})",
                           ylabel=search.criterion + (" (negated: higher is better)" if sign < 0 else ""),
                           reference=sign * search.best_single[1],
                           reference_label=f"best single: {short_name(search.best_single[0])}")
    rows = [[text_cell(step.get("step")), text_cell(step.get("metric") or ""), number_cell(v),
             text_cell("kept" if k else "dropped"), text_cell(", ".join(step.get("set", [])))]
            for step, v, k in zip(search.trace, values, kept)]
    text = (f"<p>Criterion {esc(search.criterion)} with {esc(search.scheme)}, strategy {esc(search.strategy)}, "
            f"{search.evaluations} sets evaluated. Selected: <b>{esc(', '.join(search.selected))}</b>, quality "
            f"{_fmt(search.quality)}; best single metric {esc(search.best_single[0])} {_fmt(search.best_single[1])}"
            f" ({_beats_text(search)}).</p>")
    return Section("search", title, text + figure(png, "search trace", "Quality of each set tried: filled markers "
                   "were kept, hollow ones dropped; the line is the kept set's quality.", name="search-trace")
                   + table(["step", "metric", search.criterion, "", "set"], rows, name="search-trace"))


def _beats_text(search: SetSearch) -> str:
    """Whether the selected set beats the best single metric: in-sample, with the paired test's p-value."""
    if not search.beats_best_single:
        return "the set does not beat it"
    text = "the set beats it in-sample: it was selected on these segments, so the gain is optimistic"
    test = search.gain_test_text()
    return text + (f"; {test}" if test else "")


def _tuned_section(tuned: Mapping[str, Tuple[Dict[str, float], float]]) -> Section:
    title = "Tuned model"
    if not tuned:
        return Section("tuned", title, sentence("No tuned metric (a model file from combo train given as -m "
                                                "model.json) is among the metrics."))
    parts = []
    for name, (weights, bias) in tuned.items():
        png = plots.signed_bars(list(weights), list(weights.values()), title=f"weights of {short_name(name)}",
                                xlabel="weight (features min-max normalised, error rates flipped)")
        rows = [[text_cell(k), number_cell(v, 4)] for k, v in weights.items()]
        parts.append(f"<h3>{esc(name)}</h3>" + figure(png, f"weights of {name}", "Blue positive, red negative; "
                     "largest magnitude first.", name=f"tuned-{name}")
                     + table(["feature", "weight"], rows, name=f"tuned-{name}")
                     + f'<p class="muted">bias {bias:+.4f}</p>')
    return Section("tuned", title, "".join(parts))


def _mutt_section(mutt: Optional[Mapping[str, Mapping[str, float]]], note: str) -> Section:
    title = "MUTT unit tests"
    if not mutt:
        return Section("mutt", title, sentence(note))
    metrics = list(mutt)
    kinds = sorted({k for acc in mutt.values() for k in acc})
    matrix = np.array([[float(mutt[m].get(k, float("nan"))) for k in kinds] for m in metrics])
    png = plots.heatmap(matrix, metrics, kinds, title="MUTT accuracy", vmin=0, vmax=1, cmap="viridis",
                        colorbar_label="accuracy")
    return Section("mutt", title, "<p>Share of unit tests (Boag et al. 2016) each metric passes, by corruption "
                   "type.</p>" + (sentence(note) if note and "not run" not in note else "")
                   + figure(png, "MUTT accuracy heatmap", name="mutt"))


# -- worst-scored segments --------------------------------------------------------------------------------

def worst_segments(ev: MetaEvaluator, metric: int, k: int = 5) -> List[Dict[str, object]]:
    """The ``k`` judged candidates where metric and humans disagree most.

    Both scores become percentile ranks over the judged candidates (average
    ranks for ties; error rates negated); the disagreement is the metric's
    percentile minus the human's: positive when the metric over-rates the
    candidate, negative when it under-rates it. Empty for a constant metric.
    """
    from scipy.stats import rankdata

    table_ = ev.table
    human = ev.human[table_.row_system, table_.row_segment]
    score = np.asarray(table_.segment[metric], dtype=float)
    oriented = score if table_.higher_is_better[metric] else -score
    ok = np.flatnonzero(np.isfinite(human) & np.isfinite(oriented))
    if len(ok) < 2 or np.ptp(oriented[ok]) == 0:
        return []
    pm = (rankdata(oriented[ok]) - 0.5) / len(ok)
    ph = (rankdata(human[ok]) - 0.5) / len(ok)
    diff = pm - ph
    out = []
    for j in np.argsort(-np.abs(diff), kind="stable")[:k]:
        row = ok[j]
        seg = ev.testbed.segments[table_.row_segment[row]]
        system = table_.systems[table_.row_system[row]]
        out.append({"system": system, "segment": seg.id, "metric_score": float(score[row]),
                    "metric_percentile": float(pm[j]), "human": float(human[row]), "human_percentile": float(ph[j]),
                    "disagreement": float(diff[j]),
                    "candidate": ev.testbed.candidates[system][table_.row_segment[row]],
                    "references": list(seg.references), "source": seg.source or ""})
    return out


def _worst_section(ev: MetaEvaluator, k: int) -> Section:
    title = "Worst-scored segments"
    table_ = ev.table
    human = ev.human[table_.row_system, table_.row_segment]
    if not np.isfinite(human).any():
        return Section("worst", title, sentence("No segment-level human judgments: a metric's worst-scored "
                                                "segments need a human score to disagree with."))
    parts = [f"<p>For each metric, the {k} judged candidates where its rank and the humans' rank disagree most "
             f"(percentiles over all judged candidates; human aspect {esc(ev.aspect)}). Over-rated: the metric "
             "ranks the candidate far above the humans; under-rated: far below.</p>"]
    for m, name in enumerate(table_.metrics):
        worst = worst_segments(ev, m, k)
        if not worst:
            parts.append(f"<details><summary>{esc(name)}</summary>"
                         + sentence("The metric gives every judged candidate the same score: it ranks nothing.")
                         + "</details>")
            continue
        rows = []
        for w in worst:
            refs = w["references"]
            shown = "\n".join(f"[{i + 1}] {r}" for i, r in enumerate(refs[:5]))
            if len(refs) > 5:
                shown += f"\n... and {len(refs) - 5} more"
            rows.append([text_cell(f"{w['segment']} / {w['system']}"),
                         text_cell("over-rated" if w["disagreement"] > 0 else "under-rated"),
                         number_cell(w["metric_score"], 4, f' <span class="muted">({w["metric_percentile"]:.0%})'
                                                           "</span>"),
                         number_cell(w["human"], 3, f' <span class="muted">({w["human_percentile"]:.0%})</span>'),
                         Cell(f'<div class="text">{esc(w["candidate"])}</div>'),
                         Cell(f'<div class="text">{esc(shown)}</div>'),
                         Cell(f'<div class="text muted">{esc(w["source"])}</div>')])
        parts.append(f"<details><summary>{esc(name)}</summary>"
                     + table(["segment / system", "", name, "human", "candidate", "references", "source"], rows,
                             name=f"worst-{name}") + "</details>")
    return Section("worst", title, "".join(parts))


# -- helpers ------------------------------------------------------------------------------------------------

def short_name(name: str) -> str:
    """A metric's label in figures: a model file by its file name, not its whole path."""
    return name.replace("\\", "/").rsplit("/", 1)[-1] if name.lower().endswith(".json") else name


def _fmt(v) -> str:
    return "undefined" if v is None or not math.isfinite(v) else f"{v:.4f}"


def _json_safe(obj):
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    return obj
