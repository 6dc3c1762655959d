"""``combo train``: a tuned metric trained on a test bed's human judgments, and its cross-validated quality."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import click
from click.core import ParameterSource

from ..errors import InputError, OptionError
from ..meta.objectives import objective_names, objective_records
from ..metrics.registry import is_model_file
from ..metrics.sets import expand_metric_sets, training_default
from ..metrics.tuned import CV_BY, JUDGMENTS, METHOD_NAMES, NORMALISE, OUTPUT_CHOICES, REGRESSORS
from .meta_evaluation import language_pairs
from .options import (Choice, MetricsOption, RegistryChoice, RegistryHelpOption, jobs_option, load_testbed,
                      metric_list, score_cache_option, testbed_options)
from .output import check_outputs, format_value, json_text


@click.command()
@testbed_options
@click.option("--metrics", "-m", cls=MetricsOption, multiple=True,
              help="Feature metrics or sets (@heterogeneous, @lexical: combo metrics lists them): -m bleu chrf, "
                   "or repeated -m; options as name:key=value (default: @heterogeneous if installed, else @lexical).")
@click.option("--method", type=Choice(METHOD_NAMES), default="auto", show_default=True,
              help="direct: weights searched for --objective (absolute judgments: MQM, DA); pairwise-lr: pairwise "
                   "logistic ranking (DiscoTK); regression on scores; ULC. auto: direct on absolute judgments, "
                   "pairwise-lr on rankings.")
@click.option("--objective", cls=RegistryHelpOption, type=RegistryChoice(objective_names), default="wmt23",
              show_default=True, help_from=lambda: "What --method direct maximises on the training judgments: "
              + "; ".join(f"{o.name}: {o.meaning}" + (f" (also {', '.join(o.aliases)})" if o.aliases else "")
                          for o in objective_records()) + ".")
@click.option("--output", type=Choice(OUTPUT_CHOICES), default="auto", show_default=True,
              help="Segment score: human (w.x + b fitted to the training judgments' scale, clipped to their "
                   "range), linear (w.x + b), or sigmoid (DiscoTK's, saturates). auto: human on absolute "
                   "judgments, linear on rankings. The system score is the mean of the segment scores (of "
                   "w.x + b for sigmoid).")
@click.option("--regressor", type=Choice(REGRESSORS), default="ridge", show_default=True,
              help="Learner of --method regression.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Model file to write (JSON).")
@click.option("--name", default=None, help="Model name recorded in the file (default: the file name stem).")
@click.option("--judgments", type=Choice(JUDGMENTS), default="auto", show_default=True,
              help="Train on relative rankings or absolute scores (auto: rankings when present).")
@click.option("--min-diff", type=click.FloatRange(min=0.0), default=None,
              help="Absolute scores: a pair needs a larger difference (default by judgment type: MQM and ESA 0, "
                   "DA on 0-100 WMT DARR's 25, other scales 25% of the range).")
@click.option("--aspect", default=None, help="Absolute-score aspect (default: the test bed's main one).")
@click.option("--normalise", type=Choice(NORMALISE), default="testbed", show_default=True,
              help="Min-max ranges of the training features: per test bed, per segment group, or over all.")
@click.option("--folds", type=click.IntRange(min=0), default=10, show_default=True,
              help="Cross-validation folds, grouped by segment, for the printed quality (0: none).")
@click.option("--cv", "cv_by", type=Choice(CV_BY), default="segment", show_default=True,
              help="Cross-validate by segment (--folds folds) or leave one test bed (language pair) out.")
@click.option("--inner-folds", type=click.IntRange(min=0), default=5, show_default=True,
              help="Folds (grouped by segment) choosing C or alpha inside each training set (0: none, the "
                   "middle of the grid).")
@jobs_option()
@score_cache_option()
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
@click.option("--quiet", "-q", is_flag=True)
def train(testbed_path, lp, testbed_options, metrics, method, objective, output, regressor, out, name, judgments,
          min_diff, aspect, normalise, folds, cv_by, inner_folds, jobs, cache, fmt, quiet):
    """Train a tuned metric on a test bed's human judgments; print its cross-validated quality.

    Several language pairs of one folder train one model: --lp cs-en,de-en,es-en.
    """
    from ..combine.training import TrainOptions, fit_and_cross_validate, training_data, training_report
    from ..metrics.releases import native_inputs
    from ..metrics.tuned import save_text
    from ..parallel import resolve_execution
    from ..scoring import score_testbed

    check_outputs(out=out)
    _check_folds(folds, inner_folds)
    testbeds = [load_testbed(testbed_path, x, testbed_options) for x in language_pairs(lp, "cs-en,de-en")]
    metric_set, specs, set_notes = _features(metrics, testbeds)
    options = TrainOptions(method=method, regressor=regressor, inner_folds=inner_folds,
                           name=name or Path(out).stem, objective=objective, output=output)
    options.check()
    _check_testbeds(testbeds, testbed_path, cv_by, folds)
    given = _typed({"--min-diff": min_diff, "--objective": objective, "--regressor": regressor,
                    "--inner-folds": inner_folds})
    if method != "auto":  # before scoring, where the method is known already
        _refuse_unread(method, given)
    run = resolve_execution(jobs, progress=not quiet)  # once, for every test bed scored
    sources = [(tb, score_testbed(tb, specs, jobs=run, cache_dir=cache)) for tb in testbeds]
    data = training_data(sources, normalise, judgments, min_diff, aspect, targets=method == "regression")
    options = options.resolved(data.pairs.kind)
    _refuse_unread(options.method, given)
    if options.method == "direct" and data.pairs.kind == "rankings" and all(tb.scores for tb in testbeds):
        raise OptionError("--method direct searches weights over absolute human scores; with --judgments auto it "
                          "reads these test beds' relative rankings (fix: add --judgments scores, since they have "
                          "absolute scores too, or use --method pairwise-lr)")
    model, cv = fit_and_cross_validate(data, options, folds, by=cv_by)
    model.training["metric_set"] = {"sets": metric_set, "default": not metrics, "notes": set_notes}
    if sys.argv and Path(sys.argv[0]).name == "combo":  # the command line that made the model, as typed
        model.training["command"] = shlex.join(["combo", *sys.argv[1:]])
    model.native = native_inputs(model.specs, [str(tb.metadata.get("testset", "")) for tb in testbeds
                                               if tb.metadata.get("format") == "mt-metrics-eval"])
    report = training_report(data, cv, options.method, [table.system for _, table in sources])
    save_text(model.to_json(), out)
    if fmt == "json":
        click.echo(_document(model, cv, report, data, testbeds, out), nl=False)
    else:
        click.echo(_text(model, cv, report, data, testbeds, out, metric_set, set_notes, bool(metrics)), nl=False)


def _typed(values: dict) -> dict:
    """The options among ``values`` (option -> value) that the user typed, not left at their defaults."""
    context = click.get_current_context()
    return {option: value for option, value in values.items()
            if context.get_parameter_source(option[2:].replace("-", "_")) not in (ParameterSource.DEFAULT, None)}


def _check_folds(folds: int, inner_folds: int) -> None:
    """One fold is no cross-validation: refused."""
    if folds == 1:
        raise OptionError("--folds 1: give 0 (no cross-validation) or at least 2")
    if inner_folds == 1:
        raise OptionError("--inner-folds 1: give 0 (no inner cross-validation: the middle C or alpha of the grid) "
                          "or at least 2")


def _features(metrics: Sequence[str], testbeds) -> Tuple[Optional[str], List[str], List[str]]:
    """The feature metrics: the named sets (None: none), the metric specs and the notes on what the sets left
    out. Without ``-m``: @heterogeneous where its extras are installed, else what @lexical can read
    (combo.metrics.sets)."""
    set_notes: List[str] = []
    if metrics:
        given = metric_list(metrics)
        metric_set = ", ".join(m for m in given if m.startswith("@")) or None
        specs = expand_metric_sets(given, set_notes)
    else:
        metric_set, specs, set_notes = training_default([tb.target_language for tb in testbeds])
    if any(is_model_file(spec) for spec in specs):
        raise OptionError("a tuned metric (model file) cannot be a feature of another model")
    return metric_set, specs, set_notes


def _check_testbeds(testbeds, testbed_path: str, cv_by: str, folds: int) -> None:
    """Each test bed has judgments to train on; leaving one test bed out needs two."""
    for tb in testbeds:
        if not tb.preferences and not tb.scores:
            raise InputError(f"test bed {tb.name!r} has no human judgments (relative rankings or absolute scores) "
                             "to train on", testbed_path, fix="give a test bed with judgments")
    if cv_by == "testbed" and folds and len(testbeds) < 2:
        raise OptionError("--cv testbed leaves one test bed out: train on at least two (e.g. --lp cs-en,de-en)")


def _stopped(model, cv) -> dict:
    """Fits stopped at their iteration limit: training the model, and in cross-validation."""
    return {"final": model.training["estimator"].get("not_converged", 0),
            "cross_validation": cv.not_converged if cv is not None else 0}


def _document(model, cv, report, data, testbeds, out: str) -> str:
    """The training as JSON: the model, what it was trained on, its weights and its cross-validated quality."""
    est = model.training["estimator"]
    return json_text({"model": out, "name": model.name, "method": model.method,
                      "testbed": ", ".join(tb.name for tb in testbeds), "testbeds": [tb.name for tb in testbeds],
                      "training": data.sources[0] if len(testbeds) == 1 else data.sources,
                      "chosen": {k: est[k] for k in ("C", "alpha") if k in est},
                      "weights": dict(zip(model.specs, model.weights.tolist())), "bias": model.bias,
                      "metric_set": model.training["metric_set"], "cross_validation": report,
                      "not_converged": _stopped(model, cv)})


def _text(model, cv, report, data, testbeds, out: str, metric_set, set_notes: List[str], given: bool) -> str:
    """The training as printed: what it was trained on, the features, the cross-validated quality, the weights."""
    est = model.training["estimator"]
    stopped = _stopped(model, cv)
    chosen = ", ".join(f"{k} = {est[k]:g}" for k in ("C", "alpha") if k in est)
    lines = [_trained_on(model, tb, described, chosen if len(testbeds) == 1 else "", _judged(data, k))
             for k, (tb, described) in enumerate(zip(testbeds, data.sources))]
    if chosen and len(testbeds) > 1:
        lines.append(f"one model on all {len(testbeds)} test beds; {chosen}")
    if "objective" in est:
        lines.append(f"weights searched for {est['objective']}: {est['objective_value']:.4f} on the training "
                     f"data (uniform weights, ULC: {est['uniform_value']:.4f}); {est['selected']} of "
                     f"{len(model.specs)} metrics kept; {est['evaluations']} evaluations")
    if "calibration" in est:
        lo, hi = model.scale
        lines.append(f"output: human, fitted to the training judgments' scale ({data.sources[0].get('targets')}"
                     f"; segment and system scores on that scale, clipped to its range [{lo:g}, {hi:g}])")
    if metric_set:
        lines.append(f"features: {metric_set}, {len(model.specs)} metrics" + (" (the default)" if not given else ""))
    lines += [f"note: {n}" for n in set_notes]
    lines.append(f"model written to {out}")
    if any(stopped.values()):
        lines.append(f"note: fits stopped at the iteration limit before converging (ConvergenceWarning): "
                     f"{stopped['final']} training the model (parameter search included), "
                     f"{stopped['cross_validation']} in cross-validation")
    lines += _quality_lines(model, cv, report, testbeds)
    lines.append("weights (features min-max normalised; error rates flipped):")
    width = max(len(s) for s in model.specs) + 2
    lines += [f"  {s:<{width}}{w:+.4f}" for s, w in zip(model.specs, model.weights)]
    lines.append(f"  {'bias':<{width}}{model.bias:+.4f}")
    return "\n".join(lines) + "\n"


#: Options that only some methods read: option -> (the methods that read it, what it sets, what the others read
#: none of, the method to use instead).
_READ_BY = {
    "--min-diff": (("pairwise-lr",), "sets the pairs that pairwise-lr learns from", "pairs", "pairwise-lr"),
    "--objective": (("direct",), "is what --method direct maximises", "objective", "direct on absolute scores"),
    "--regressor": (("regression",), "is the learner of --method regression", "regressor", "regression"),
    "--inner-folds": (("pairwise-lr", "regression"), "choose pairwise-lr's C or regression's alpha",
                      "inner folds", "pairwise-lr or regression"),
}


def _refuse_unread(method: str, given: dict) -> None:
    """One error line for an option given that ``method`` does not read (``given``: option -> value, for the
    options the user typed): --min-diff outside pairwise-lr, --objective outside direct, --regressor outside
    regression, --inner-folds under direct and ulc."""
    for option, value in given.items():
        readers, meaning, noun, instead = _READ_BY[option]
        if method in readers:
            continue
        shown = f"{value:g}" if isinstance(value, float) else value
        if option == "--min-diff" and method == "direct":
            raise OptionError(f"--min-diff {shown} sets the pairs that pairwise-lr learns from; --method direct "
                              "searches weights over every judged candidate and reads no pairs (fix: leave "
                              "--min-diff out, or use --method pairwise-lr)")
        raise OptionError(f"{option} {shown} {meaning}; --method {method} reads no {noun} "
                          f"(fix: leave {option} out, or use --method {instead})")


def _judged(data, k: int):
    """Test bed ``k``'s candidates with a human score (human translations left out) and their segments: what
    ``--method direct`` reads."""
    import numpy as np

    rows = (data.source == k) & np.isfinite(data.targets)
    if data.candidate is not None:
        rows &= data.candidate
    return int(rows.sum()), int(len(np.unique(data.segment[rows])))


def _trained_on(model, tb, described: dict, chosen: str, judged) -> str:
    """``trained pairwise-lr on wmt12-de-en: ... segments, ... pairs from ... (what was left out); C = 1``;
    ``--method direct`` reads no pairs: its line counts the judged candidates and their segments."""
    if model.method == "direct":
        candidates, segments = judged
        return (f"trained direct on {tb.name}: {segments} segments, {candidates} candidates with a human score "
                f"(of {described['candidates']}) from {described['judgments']}"
                + (f"; {chosen}" if chosen else ""))
    left = [f"{described['ties_dropped']} human ties left out"] if described["ties_dropped"] else []
    if described.get("below_threshold"):
        left.append(f"{described['below_threshold']} candidate pairs within min_diff "
                    f"{described['min_diff']:g}" + (f" ({described['min_diff_rule']})"
                                                   if described.get("min_diff_rule") else ""))
    if described["few_candidates"]:
        left.append(f"{described['few_candidates']} judged segments with fewer than 2 candidates")
    return (f"trained {model.method} on {tb.name}: {described['segments']} segments, "
            f"{described['candidates']} candidates, {described['pairs']} pairs from "
            f"{described['judgments']}" + (f" ({'; '.join(left)})" if left else "")
            + (f"; {chosen}" if chosen else ""))


def _quality_lines(model, cv, report: dict, testbeds) -> List[str]:
    """The cross-validated quality of the tuned metric, the ULC and the best single metric (training_report):
    WMT23's statistics on absolute judgments, WMT12's Kendall on rankings; none without cross-validation."""
    if cv is None:
        return []
    how = "leaving one test bed out" if cv.by == "testbed" else f"{report['folds']} folds grouped by segment"
    best = report["best_single"]
    entries = ((f"tuned ({model.method}, cv)", report["tuned"]), ("ULC (all metrics)", report["ulc"]),
               (f"best single: {best['metric']}", best))
    if "statistics" in report:
        heads = ("seg Pearson", "acc_eq", "sys Pearson", "sys accuracy", "average")
        labels = [(f"{name}: {label}", row["testbeds"][name]) for name in report["tuned"]["testbeds"]
                  for label, row in entries]
        width = max(len(label) for label, _ in labels) + 2
        return ([f"cross-validated quality ({how}; WMT23 statistics; a metric's system score is its own, "
                 "a combination's the mean of its segment scores):",
                 f"  {'':<{width}}" + "".join(f"{h:>13}" for h in heads)]
                + [f"  {label:<{width}}" + "".join(f"{format_value(values[k]):>13}" for k in report["statistics"])
                   for label, values in labels])
    over = f"mean over {len(testbeds)} test beds of" if len(testbeds) > 1 else "over"
    return ([f"cross-validated quality ({how}; WMT12 Kendall {over} {report['pairs']} pairs):",
             f"  {'':<28}{'ties discordant':>16}{'ties excluded':>16}"]
            + [f"  {label:<28}{format_value(row['ties_discordant']):>16}{format_value(row['ties_excluded']):>16}"
               for label, row in entries])
