"""Tuned-metric model files (JSON, never pickle) and :class:`TunedMetric`, a learned combination used as a metric.

A tuned metric analyses text through its component metrics, so it lives with the metrics (the combinations in
:mod:`combo.combine` work on score arrays only); :mod:`combo.combine.training` writes the files,
:func:`combo.scoring.resolve_metric` and :func:`load_model` read them.

A model is a linear combination of metric segment scores, each min-max
normalised with ranges stored in the file (lower-is-better metrics flipped):

    raw(a) = bias + sum_m weights[m] * norm_m(x_m(a))
    output "linear":  segment score = raw(a);                 system score = mean of the segment scores
    output "human":   segment score = clip(raw(a), lo, hi);  system score = mean of the segment scores
    output "sigmoid": segment score = sigmoid(raw(a));        system score = mean of raw over the system's segments

"linear" keeps segment and system scores on one scale. "human" is what a
model trained on absolute judgments gives: its weights and bias are fitted to
the training judgments' scale (MQM points, say) by least squares, and its
scores are clipped to the range of those judgments (``scale``: MQM cannot be
above 0), so that they read as human scores do. "sigmoid" is DiscoTK's form (Guzmán et
al. 2014, "Using Discourse Structure Improves Machine Translation
Evaluation", §4; Joty et al. 2014, WMT14), which saturates; model files
written before the field existed have it. At scoring time every feature is
normalised with the ranges stored in the file (the union of the training
ranges), never with ranges taken from the data being scored, so a segment
gets the same score alone or within any call; values outside the stored
range are extrapolated linearly (not clipped: clipping would turn distinct
scores into ties). The normalisation is :func:`combo.normalise.minmax_normalise`,
the one ULC uses, so a ``ulc`` model scores new data as ULC with the
training ranges does.

:func:`load_model` validates the file strictly and refuses, with one
:class:`~combo.errors.InputError` naming the file: invalid or truncated JSON,
a file that is not a combo model, an incompatible ``format_version``, missing
or unknown fields, wrong types or lengths, non-finite numbers, a metric not
registered in this installation, and a metric whose signature (options and
implementation version) differs from the one the model was trained with.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import InputError, OptionError
from ..io.text import write_text_atomic
from ..normalise import minmax_normalise
from .base import Metric, analyser_versions, safe_divide

FORMAT = "combo-tuned-metric"
FORMAT_VERSION = 1
#: What ``combo train`` fits (:mod:`combo.combine.training`), kept here so that the command line reads them
#: without importing scikit-learn: methods, regressors of ``regression``, the judgments trained on, how the
#: features are normalised and how training is cross-validated.
METHOD_NAMES = ("auto", "pairwise-lr", "direct", "regression", "ulc")
REGRESSORS = ("ridge", "svr")
JUDGMENTS = ("auto", "rankings", "scores")
NORMALISE = ("testbed", "group", "all")
CV_BY = ("segment", "testbed")
#: The ``method`` recorded in a model file: a training method, the regressor spelled out.
METHODS = ("pairwise-lr", "direct") + tuple(f"regression-{r}" for r in REGRESSORS) + ("ulc",)
#: How a model turns its interpolated score into a segment score (see the module doc).
OUTPUTS = ("linear", "human", "sigmoid")
#: What ``combo train --output`` takes: a model output, or "auto" (human on absolute judgments, linear on
#: rankings).
OUTPUT_CHOICES = ("auto", "human", "linear", "sigmoid")

_TOP_KEYS = ("format", "format_version", "combo_version", "name", "method", "metrics", "normalisation",
             "weights", "bias", "training", "output", "native", "scale")
#: Fields a file written by an earlier combo may lack, with the value it meant.
_OPTIONAL_KEYS = {"output": "sigmoid", "native": {}, "scale": None}
_METRIC_KEYS = ("spec", "name", "options", "signature", "higher_is_better")
_NORM_KEYS = ("per", "lo", "hi", "groups")
_RANGE_KEYS = ("lo", "hi")


@dataclass
class MetricEntry:
    """One feature of a model: the metric as given (``spec``), its name, every option and its signature."""

    spec: str
    name: str
    options: Dict[str, Any]
    signature: str
    higher_is_better: bool

    @classmethod
    def of(cls, spec: str, metric: Metric) -> "MetricEntry":
        return cls(spec, metric.name, dict(metric.params), metric.signature, bool(metric.higher_is_better))

    def to_dict(self) -> Dict[str, Any]:
        return {"spec": self.spec, "name": self.name, "options": dict(self.options), "signature": self.signature,
                "higher_is_better": self.higher_is_better}


@dataclass
class TunedModel:
    """The content of a model file: features, normalisation ranges, weights, bias and provenance."""

    metrics: List[MetricEntry]
    lo: np.ndarray
    hi: np.ndarray
    weights: np.ndarray
    bias: float
    method: str
    name: str = "tuned"
    per: str = "testbed"  # how the training features were normalised
    group_ranges: Dict[str, Dict[str, List[float]]] = field(default_factory=dict)
    training: Dict[str, Any] = field(default_factory=dict)
    combo_version: str = ""
    format_version: int = FORMAT_VERSION
    output: str = "linear"  # OUTPUTS: the segment score is raw, clipped to ``scale`` (human), or its sigmoid
    #: a release feature (``mtme:NAME``) -> {"metric": the spec combo computes it with, "evidence": why that
    #: public checkpoint made the release's scores}: used where the test bed is no release and nothing is bound
    native: Dict[str, Dict[str, str]] = field(default_factory=dict)
    #: output "human": the range of the training judgments, ``(lo, hi)``, that scores are clipped to
    scale: Optional[Tuple[float, float]] = None

    def __post_init__(self) -> None:
        if not self.combo_version:
            from .._version import __version__

            self.combo_version = __version__
        self.lo = np.asarray(self.lo, dtype=np.float64)
        self.hi = np.asarray(self.hi, dtype=np.float64)
        self.weights = np.asarray(self.weights, dtype=np.float64)
        self.bias = float(self.bias)

    @property
    def higher_is_better(self) -> np.ndarray:
        return np.array([m.higher_is_better for m in self.metrics], dtype=bool)

    @property
    def specs(self) -> List[str]:
        return [m.spec for m in self.metrics]

    def features(self, scores: np.ndarray) -> np.ndarray:
        """Normalised features (metrics, rows) of metric segment scores (metrics, rows), with the stored ranges."""
        return minmax_normalise(scores, self.lo, self.hi, self.higher_is_better)

    def raw_scores(self, scores: np.ndarray) -> np.ndarray:
        """The interpolated score ``w . x + b`` of each row of metric segment scores (metrics, rows)."""
        return self.weights @ self.features(scores) + self.bias

    @property
    def output_meaning(self) -> str:
        """What the model's segment and system scores are, in one line (``combo apply --format json``'s note)."""
        if self.output == "sigmoid":
            return "segment: sigmoid(w.x + b) (DiscoTK's output); system: mean of w.x + b over segments"
        clipped = f" clipped to the training judgments' range {list(self.scale)}" if self.output == "human" else ""
        return f"segment: w.x + b{clipped}; system: the mean of the segment scores (one scale)"

    def bounded(self, raw: np.ndarray) -> np.ndarray:
        """Interpolated scores as the model's system scores average them: clipped to ``scale`` for output
        "human", else themselves (see the module doc)."""
        return np.clip(raw, *self.scale) if self.output == "human" else raw

    def to_dict(self) -> Dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": self.format_version,
            "combo_version": self.combo_version,
            "name": self.name,
            "method": self.method,
            "metrics": [m.to_dict() for m in self.metrics],
            "normalisation": {"per": self.per, "lo": self.lo.tolist(), "hi": self.hi.tolist(),
                              "groups": {g: {"lo": list(r["lo"]), "hi": list(r["hi"])}
                                         for g, r in self.group_ranges.items()}},
            "weights": self.weights.tolist(),
            "bias": self.bias,
            "output": self.output,
            **({"scale": list(self.scale)} if self.scale is not None else {}),
            "training": self.training,
            **({"native": self.native} if self.native else {}),
        }

    def to_json(self) -> str:
        return json.dumps(_json_safe(self.to_dict()), indent=1, ensure_ascii=False, allow_nan=False) + "\n"

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical JSON of everything that determines the scores."""
        d = self.to_dict()
        core = {k: d[k] for k in ("format_version", "method", "weights", "bias")}
        if self.output != "sigmoid":  # the digest of a file written before outputs existed stays the same
            core["output"] = self.output
        if self.scale is not None:
            core["scale"] = list(self.scale)
        core["metrics"] = [{"name": m.name, "options": m.options, "higher_is_better": m.higher_is_better}
                           for m in self.metrics]
        core["ranges"] = [d["normalisation"]["lo"], d["normalisation"]["hi"]]
        text = json.dumps(_json_safe(core), sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def save(self, path) -> None:
        """Write the model as JSON, atomically (a temporary file renamed into place)."""
        save_text(self.to_json(), path)

    @classmethod
    def from_dict(cls, doc: Any, path: Optional[str] = None) -> "TunedModel":
        """Validate a parsed model file strictly (see the module doc) and build the model."""
        return _Validator(path).model(doc)


def _logistic(raw: np.ndarray) -> np.ndarray:
    """The logistic function (scipy's ``expit``), imported where used: importing ``scipy.special`` took 0.23 s
    of the start of every command."""
    from scipy.special import expit

    return expit(raw)


class TunedMetric(Metric):
    """A learned linear combination of metrics (a :class:`TunedModel`), used like any other metric.

    Statistics per row are ``[raw, 1]``: the segment score is ``raw`` (output
    "linear") or ``sigmoid(raw)`` (output "sigmoid", DiscoTK; Guzmán et al.
    2014, §4); the corpus score is ``sum(raw) / count``, the mean of the raw
    interpolated segment scores, so with "linear" it is the mean of the
    segment scores.
    """

    name = "tuned"
    family = "learned"
    higher_is_better = True
    citation = "pairwise learning to rank over metric scores, DiscoTK (Guzmán et al. 2014, §4)"
    value_range = (float("-inf"), float("inf"))  # output "sigmoid": (0, 1) at segment level

    def __init__(self, model: TunedModel, components: Sequence[Metric], path: Optional[str] = None,
                 bound: Optional[Dict[str, str]] = None):
        self.params = {}
        self.model = model
        self.components = list(components)
        self.path = path
        self.bound = dict(bound or {})  # feature spec -> the metric spec it is bound to (combo.metrics.binding)
        # read per candidate when a component is; otherwise scored in one piece, as tuned metrics always were
        self.locality = "candidate" if any(c.locality == "candidate" for c in self.components) else "whole"
        self.layers = tuple(sorted({layer for c in self.components for layer in c.layers}))
        self.resources = tuple(sorted({r for c in self.components for r in c.resources}))
        self._digest = model.digest
        if model.output == "sigmoid":
            self.value_range = (0.0, 1.0)  # segment level; the system level is the raw mean, unbounded

    def __repr__(self) -> str:
        return f"TunedMetric({self.model.name!r}, {self.model.method}, {len(self.components)} metrics)"

    @property
    def signature(self) -> str:
        from .._version import __version__

        bound = f"|bound:{';'.join(f'{k}={v}' for k, v in self.bound.items())}" if self.bound else ""
        return (f"tuned|model:{self.model.name}|method:{self.model.method}|metrics:{len(self.components)}"
                f"|sha256:{self._digest[:16]}|format:{self.model.format_version}|version:{__version__}{bound}")

    @property
    def weights(self) -> Dict[str, float]:
        """Weight of each metric (by its spec)."""
        return {m.spec: float(w) for m, w in zip(self.model.metrics, self.model.weights)}

    def trained_on(self, testbed) -> Optional[str]:
        """Whether ``testbed`` was training data of this model: a phrase saying how, or ``None``.

        The same texts (the test bed's :meth:`~combo.testbed.Testbed.digest`, recorded
        at training time) or, failing that, the same test-bed name (a subset of a
        training test bed keeps its name). Model files written before digests
        were recorded are matched by name only.
        """
        described = self.model.training.get("testbeds") or []
        digest = testbed.digest()
        for d in described:
            if isinstance(d, dict) and d.get("digest") == digest:
                return f"this test bed ({d.get('name')!r}, the same texts)"
        for d in described:
            if isinstance(d, dict) and str(d.get("name", "")).split("#")[0] == testbed.name:
                return f"a test bed of the same name ({d.get('name')!r}; other texts, e.g. a subset)"
        return None

    def language_support(self) -> Tuple[Tuple[str, ...], str]:
        """The languages every component reads (``()``: any), naming the components that limit them."""
        allowed: Optional[set] = None
        by_reason: Dict[str, List[str]] = {}  # one reason, however many components give it
        for spec, c in zip(self.model.specs, self.components):
            langs, note = c.language_support()
            if langs:
                allowed = set(langs) if allowed is None else allowed & set(langs)
                by_reason.setdefault(note, []).append(spec)
        if allowed is None:
            return (), ""
        notes = [f"{', '.join(specs)}: {note}" for note, specs in by_reason.items()]
        return tuple(sorted(allowed)) or ("none",), "; ".join(notes)  # "none": components disagree

    def check_resources(self) -> None:
        for c in self.components:
            c.check_resources()

    def check_reference_weights(self, testbed) -> None:
        for c in self.components:
            c.check_reference_weights(testbed)

    def analyse(self, texts: Sequence[str]) -> List[Any]:
        return [c.analyse(texts) for c in self.components]

    def statistics(self, analysis: Any, hyp_ids: np.ndarray, ref_ptr: np.ndarray, ref_ids: np.ndarray,
                   ref_weights: Optional[np.ndarray] = None) -> np.ndarray:
        n = len(hyp_ids)
        scores = np.zeros((len(self.components), n))
        for k, (metric, an) in enumerate(zip(self.components, analysis)):
            stats = metric.statistics(an, hyp_ids, ref_ptr, ref_ids, ref_weights)
            scores[k] = np.asarray(metric.score(stats, segment_level=True), dtype=np.float64).reshape(n)
        return np.column_stack([self.model.bounded(self.model.raw_scores(scores)), np.ones(n)])

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        stats = np.asarray(stats, dtype=np.float64)
        mean_raw = safe_divide(stats[..., 0], stats[..., 1])
        return self.segment_output(mean_raw) if segment_level else mean_raw

    def segment_output(self, raw: np.ndarray) -> np.ndarray:
        """The segment score of interpolated scores ``raw``: themselves, clipped to the human scale, or their
        sigmoid (DiscoTK's output)."""
        return _logistic(raw) if self.model.output == "sigmoid" else self.model.bounded(raw)

    def candidate_scores(self, cands) -> Tuple[np.ndarray, np.ndarray, str]:
        """Scores of a test bed's candidates when some components are read per candidate (``mtme:``, ``scores:``).

        A candidate missing a component's score gets NaN; a system's score is
        the mean raw score of its candidates that have every score.
        """
        if self.locality != "candidate":
            return super().candidate_scores(cands)
        components, natives = self.components_for(cands.testbed)
        scores = np.zeros((len(self.components), len(cands.row_system)))
        inputs = list(natives)
        for k, c in enumerate(components):
            seg, _, signature = c.candidate_scores(cands)
            scores[k] = seg
            if c.locality == "candidate":
                inputs.append(signature)
        raw = self.model.bounded(self.model.raw_scores(scores))
        sysv = np.full(len(cands.systems), np.nan)
        for s in range(len(cands.systems)):
            vals = raw[(cands.row_system == s) & np.isfinite(raw)]
            if len(vals):
                sysv[s] = vals.mean()
        digest = hashlib.sha256("\n".join(inputs).encode("utf-8")).hexdigest()[:16]
        native = f"|native:{';'.join(natives)}" if natives else ""
        return self.segment_output(raw), sysv, f"{self.signature}{native}|inputs:{digest}"

    def unbound(self, testbed) -> List[str]:
        """The features read from an mt-metrics-eval release (``mtme:NAME``) that ``testbed`` cannot give
        (it is not such a release) and that no binding replaced."""
        from .external import MtmeScores

        if testbed.metadata.get("format") == "mt-metrics-eval":
            return []
        return [spec for spec, c in zip(self.model.specs, self.components) if isinstance(c, MtmeScores)]

    def components_for(self, testbed) -> Tuple[List[Metric], List[str]]:
        """The components that score ``testbed``: a release feature the test bed cannot give is computed by the
        metric the model names for it (``native``), else refused with the ways to bind it; and each substitution
        as ``FEATURE=METRIC`` (the signature's ``|native:`` field)."""
        from .binding import unbound_error
        from .registry import get_metric

        missing = self.unbound(testbed)
        refused = [spec for spec in missing if spec not in self.model.native]
        if refused:
            raise unbound_error(refused, testbed.name)
        components, natives = list(self.components), []
        for k, spec in enumerate(self.model.specs):
            if spec in missing:
                components[k] = get_metric(self.model.native[spec]["metric"])
                natives.append(f"{spec}={self.model.native[spec]['metric']}")
        return components, natives

    def raw_segment_scores(self, hyps: Sequence[str], refs: Sequence[Sequence[str]],
                           weights: Optional[Sequence[Sequence[float]]] = None) -> np.ndarray:
        """The raw interpolated score ``w . x + b`` of each segment (before any sigmoid)."""
        return self.segment_statistics(hyps, refs, weights)[:, 0].copy()


def load_model(path, features: Optional[Dict[str, str]] = None) -> TunedMetric:
    """Read and validate a model file; return the tuned metric (never executes code from the file).

    ``features`` binds features to other metrics (``{"mtme:XCOMET-XL": "scores:xcomet.tsv"}``,
    :mod:`combo.metrics.binding`); by default, the bindings of the run (:func:`~combo.metrics.binding.bound_features`).
    Names that are not features of this model are ignored here (the command line refuses a binding no model
    reads).
    """
    from ..io.jsonl import unique_keys
    from .binding import current_bindings
    from .registry import shipped_model

    from ..io.text import read_bytes
    from .registry import get_metric, is_model_file, shipped_models

    path = shipped_model(str(path)) or path
    p = str(path)
    if not os.path.exists(p) and not p.lower().endswith(".json"):  # a name: a shipped model's, mistyped
        from ..options import did_you_mean

        shipped = ", ".join(shipped_models())
        raise InputError("no such model file, and no shipped model of that name", p,
                         fix=did_you_mean(p, shipped_models())
                         or f"give a model file written by `combo train`, or a shipped model: {shipped}")
    data = read_bytes(p)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"model file is not UTF-8 text (byte {exc.start})", p,
                         fix="give a JSON model written by `combo train`") from None
    try:
        doc = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(f"model file is not valid JSON, truncated or damaged ({exc.msg}, column {exc.colno})",
                         p, exc.lineno,
                         fix="write the model again with `combo train --out`") from None
    except ValueError as exc:
        raise InputError(str(exc), p, fix="numbers in a model file must be finite") from None
    except RecursionError:
        raise InputError("model file is nested too deeply to be a combo model", p,
                         fix="give a JSON model written by `combo train`") from None
    model = TunedModel.from_dict(doc, p)
    features = current_bindings() if features is None else dict(features)
    components: List[Metric] = []
    bound: Dict[str, str] = {}
    for k, entry in enumerate(model.metrics):
        if entry.spec in features:
            components.append(_bound_metric(entry, features[entry.spec], p))
            bound[entry.spec] = features[entry.spec]
            continue
        if is_model_file(entry.name) or is_model_file(entry.spec) or entry.name.lower() == TunedMetric.name:
            raise InputError(f"metric {k} ({entry.spec!r}) is itself a model: a tuned metric cannot be a feature "
                             "of another model", p, fix="train the model on metrics, not on model files")
        try:
            metric = get_metric(entry.name, **entry.options)
        except OptionError as exc:
            raise InputError(f"metric {k} ({entry.spec!r}) cannot be built in this installation: {exc}", p,
                             fix="install the combo version that wrote the model "
                                 f"({model.combo_version}) or train the model again") from None
        if _without_version(metric.signature) != _without_version(entry.signature):
            metric.check_resources()  # a checkpoint or extra not here: where to get it, not "train again"
            raise InputError(f"metric {entry.spec!r} has changed since the model was trained: the model has "
                             f"signature {entry.signature!r}, this installation {metric.signature!r}", p,
                             fix="train the model again with this installation")
        recorded = model.training.get("analysers", {}).get(entry.spec) if isinstance(
            model.training.get("analysers"), dict) else None
        if recorded is not None:
            now = analyser_versions(metric)
            if now != recorded:
                metric.check_resources()  # an extra not installed: its install command, not "train again"
                raise InputError(f"metric {entry.spec!r} was trained on analyses by {recorded!r}, this installation "
                                 f"has {now!r}: its scores may have shifted", p,
                                 fix="train the model again with this installation (or install the recorded "
                                     "versions)")
        if bool(metric.higher_is_better) != entry.higher_is_better:
            raise InputError(f"metric {entry.spec!r}: higher_is_better is {entry.higher_is_better} in the model "
                             f"but {metric.higher_is_better} here", p, fix="train the model again")
        components.append(metric)
    return TunedMetric(model, components, p, bound)


def _bound_metric(entry: MetricEntry, spec: str, path: str) -> Metric:
    """The metric ``spec`` that stands for feature ``entry``: built, not a model, and of the same direction."""
    from .registry import get_metric, is_model_file

    if is_model_file(spec):
        raise OptionError(f"--feature {entry.spec}={spec}: a tuned model cannot be a feature of another model")
    metric = get_metric(spec)
    if bool(metric.higher_is_better) != entry.higher_is_better:
        said = "higher" if entry.higher_is_better else "lower"
        fix = ("declare it: scores:file=...,higher_is_better=" + ("yes" if entry.higher_is_better else "no")
               if metric.name == "scores" else "bind it to a metric of the same direction")
        raise InputError(f"feature {entry.spec!r} is {said}-is-better in the model, but {spec!r} is not", path,
                         fix=fix)
    return metric


def save_text(text: str, path) -> None:
    """Write ``text`` to ``path`` whole or not at all."""
    write_text_atomic(text, path)


# -- validation -----------------------------------------------------------------------------------

def _without_version(signature: str) -> str:
    """A metric signature without its ``version:`` (combo release) field: options and ``impl`` remain."""
    return "|".join(part for part in signature.split("|") if not part.startswith("version:"))


def _reject_constant(name: str):
    raise ValueError(f"model file holds the non-finite number {name}")


def _json_safe(obj):
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return _json_safe(obj.tolist())
    return obj


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


class _Validator:
    """Strict schema checks of a parsed model file; every failure is one InputError naming the file and field."""

    def __init__(self, path: Optional[str]):
        self.path = path

    def fail(self, message: str, fix: str = "write the model again with `combo train --out`"):
        raise InputError(message, self.path, fix=fix)

    def keys(self, obj: Any, where: str, expected: Sequence[str]) -> Dict[str, Any]:
        if not isinstance(obj, dict):
            self.fail(f"{where} must be a JSON object, not {type(obj).__name__}")
        unknown = sorted(set(obj) - set(expected))
        if unknown:
            self.fail(f"{where} has unknown field(s) {unknown}; known: {list(expected)}",
                      fix="remove them, or use the combo version that wrote the file")
        missing = [k for k in expected if k not in obj]
        if missing:
            self.fail(f"{where} lacks field(s) {missing} (truncated or edited?)")
        return obj

    def string(self, v: Any, where: str) -> str:
        if not isinstance(v, str):
            self.fail(f"{where} must be a string, not {json.dumps(v)[:40]}")
        return v

    def vector(self, v: Any, where: str, n: int) -> np.ndarray:
        if not isinstance(v, list) or not all(_is_number(x) for x in v):
            self.fail(f"{where} must be a list of finite numbers")
        if len(v) != n:
            self.fail(f"{where} has {len(v)} values for {n} metrics")
        return np.asarray(v, dtype=np.float64)

    def ranges(self, obj: Any, where: str, n: int):
        self.keys(obj, where, _RANGE_KEYS)
        lo = self.vector(obj["lo"], where + ".lo", n)
        hi = self.vector(obj["hi"], where + ".hi", n)
        bad = np.flatnonzero(hi < lo)
        if len(bad):
            self.fail(f"{where}: metric {int(bad[0])} has hi < lo")
        return lo, hi

    def model(self, doc: Any) -> TunedModel:
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            self.fail(f"not a combo model file (expected \"format\": \"{FORMAT}\")",
                      fix="give a JSON model written by `combo train`")
        version = doc.get("format_version")
        if not isinstance(version, int) or isinstance(version, bool):
            self.fail("format_version must be an integer")
        if version != FORMAT_VERSION:
            self.fail(f"model format_version {version} (written by combo {doc.get('combo_version', '?')}) is "
                      f"incompatible with this combo, which reads format_version {FORMAT_VERSION}",
                      fix="use the combo version that wrote the model, or train it again")
        doc = {**_OPTIONAL_KEYS, **doc}
        self.keys(doc, "model file", _TOP_KEYS)
        combo_version = self.string(doc["combo_version"], "combo_version")
        name = self.string(doc["name"], "name")
        method = self.string(doc["method"], "method")
        if method not in METHODS:
            self.fail(f"unknown method {method!r}; known: {list(METHODS)}")
        output = self.string(doc["output"], "output")
        if output not in OUTPUTS:
            self.fail(f"unknown output {output!r}; known: {list(OUTPUTS)}")
        scale = self.scale(doc["scale"], output)
        if not isinstance(doc["metrics"], list) or not doc["metrics"]:
            self.fail("metrics must be a non-empty list")
        entries = []
        for k, m in enumerate(doc["metrics"]):
            where = f"metrics[{k}]"
            self.keys(m, where, _METRIC_KEYS)
            if not isinstance(m["options"], dict):
                self.fail(f"{where}.options must be an object")
            for key, value in m["options"].items():
                if not (value is None or isinstance(value, (str, bool)) or _is_number(value)):
                    self.fail(f"{where}.options.{key} must be a string, number, boolean or null")
            if not isinstance(m["higher_is_better"], bool):
                self.fail(f"{where}.higher_is_better must be true or false")
            entries.append(MetricEntry(self.string(m["spec"], where + ".spec"), self.string(m["name"], where + ".name"),
                                       dict(m["options"]), self.string(m["signature"], where + ".signature"),
                                       m["higher_is_better"]))
        n = len(entries)
        norm = self.keys(doc["normalisation"], "normalisation", _NORM_KEYS)
        per = self.string(norm["per"], "normalisation.per")
        if per not in NORMALISE:
            self.fail(f"normalisation.per {per!r} is not one of {list(NORMALISE)}")
        lo, hi = self.ranges({"lo": norm["lo"], "hi": norm["hi"]}, "normalisation", n)
        if not isinstance(norm["groups"], dict):
            self.fail("normalisation.groups must be an object")
        groups = {}
        for g, r in norm["groups"].items():
            glo, ghi = self.ranges(r, f"normalisation.groups[{g!r}]", n)
            groups[g] = {"lo": glo.tolist(), "hi": ghi.tolist()}
        weights = self.vector(doc["weights"], "weights", n)
        if not _is_number(doc["bias"]):
            self.fail("bias must be a finite number")
        if not isinstance(doc["training"], dict):
            self.fail("training must be an object (the description of the training data)")
        return TunedModel(entries, lo, hi, weights, float(doc["bias"]), method, name, per, groups,
                          doc["training"], combo_version, version, output, self.native(doc["native"], entries),
                          scale)

    def scale(self, scale: Any, output: str) -> Optional[Tuple[float, float]]:
        if output != "human":
            if scale is not None:
                self.fail(f"scale is given, but output {output!r} is not clipped to one", fix='remove "scale"')
            return None
        if not (isinstance(scale, list) and len(scale) == 2 and all(_is_number(v) for v in scale)
                and scale[0] <= scale[1]):
            self.fail('output "human" needs "scale": [lo, hi], two finite numbers with lo <= hi (the range of '
                      'the training judgments)')
        return float(scale[0]), float(scale[1])

    def native(self, native: Any, entries: List[MetricEntry]) -> Dict[str, Dict[str, str]]:
        if not isinstance(native, dict):
            self.fail("native must be an object: {feature: {\"metric\": spec, \"evidence\": text}}")
        specs = {e.spec for e in entries}
        for feature, how in native.items():
            if feature not in specs:
                self.fail(f"native names {feature!r}, which is no feature of the model")
            self.keys(how, f"native[{feature!r}]", ("metric", "evidence"))
            self.string(how["metric"], f"native[{feature!r}].metric")
            self.string(how["evidence"], f"native[{feature!r}].evidence")
        return {k: dict(v) for k, v in native.items()}
