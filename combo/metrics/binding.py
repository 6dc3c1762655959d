"""Features bound at scoring time: a tuned model's input, named as it was trained (``mtme:XCOMET-XL``), taken
from a user's scores file or from a metric combo computes.

``--feature mtme:XCOMET-XL=scores:xcomet.tsv`` binds the feature to scores the user holds (a bare existing
file stands for ``scores:FILE``); ``--feature mtme:COMET=comet:model=Unbabel/wmt22-comet-da`` binds it to a
metric computed here. A model's features that are read from an mt-metrics-eval release (``mtme:NAME``) need a
binding anywhere else: scoring refuses them in one line that lists every unbound name and both ways to bind
it. A binding is recorded in the tuned metric's signature (``|bound:NAME=SPEC;...``).

The command line sets the bindings of a run with :func:`bound_features`; the Python API passes them to
:func:`combo.load_model` (``features={"mtme:XCOMET-XL": "scores:x.tsv"}``).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Sequence, Tuple

from ..errors import OptionError

_BOUND: ContextVar[Dict[str, str]] = ContextVar("combo_bound_features", default={})


def _split(item: str, names: set) -> Tuple[str, str]:
    """``(feature, metric spec)`` of one ``NAME=SPEC``: cut at the first ``=`` after which a registered metric's
    name, an existing file (read as ``scores:FILE``) or a model file begins."""
    text = item.strip()
    for i in (k for k, c in enumerate(text) if c == "="):
        name, spec = text[:i].strip(), text[i + 1:].strip()
        is_metric = spec.split(":", 1)[0].strip().lower() in names
        if not name:
            continue
        if is_metric:
            return name, spec
        if spec.lower().endswith(".json") and ":" not in spec:
            raise OptionError(f"--feature {item!r}: a tuned model cannot be a feature of another model; bind the "
                              "feature to a metric or to scores:FILE")
        if Path(spec).is_file():
            return name, f"scores:{spec}"
    raise OptionError(f"--feature {item!r}: give NAME=SPEC, a model's feature and what it is bound to, e.g. "
                      "--feature mtme:XCOMET-XL=scores:xcomet.tsv or "
                      "--feature mtme:COMET=comet:model=Unbabel/wmt22-comet-da")


def parse_bindings(items: Sequence[str]) -> Dict[str, str]:
    """``{feature: metric spec}`` from ``NAME=SPEC`` items.

    ``NAME`` may hold ``=`` itself (``bleu:max_order=2``): the item is split at the first ``=`` after which a
    registered metric's name begins (``scores:``, ``comet:``), or an existing file (read as ``scores:FILE``).
    """
    from .registry import list_metrics

    names = {n.lower() for n in list_metrics()}
    out: Dict[str, str] = {}
    for item in items:
        name, spec = _split(item, names)
        if name in out and out[name] != spec:
            raise OptionError(f"--feature binds {name!r} twice ({out[name]!r} and {spec!r}): give it once")
        out[name] = spec
    return out


@contextmanager
def bound_features(features: Mapping[str, str]) -> Iterator[None]:
    """The bindings that the model files loaded inside this block apply (:func:`current_bindings`)."""
    token = _BOUND.set(dict(features))
    try:
        yield
    finally:
        _BOUND.reset(token)


def current_bindings() -> Dict[str, str]:
    return dict(_BOUND.get())


def check_all_used(features: Mapping[str, str], model_features: Mapping[str, Sequence[str]]) -> None:
    """Refuse a binding whose name is a feature of none of the models (``{model: its feature specs}``)."""
    known = {spec for specs in model_features.values() for spec in specs}
    unused = [name for name in features if name not in known]
    if not unused:
        return
    if not model_features:
        raise OptionError(f"--feature {unused[0]}=...: no tuned model is scored here, so nothing reads a binding; "
                          "give -m MODEL.json (or --model)")
    listed = "; ".join(f"{m}: {', '.join(specs)}" for m, specs in model_features.items())
    raise OptionError(f"--feature {', '.join(unused)}: not a feature of the model(s) scored ({listed}); bind one "
                      "of those names")


def unbound_error(names: List[str], testbed_name: str) -> OptionError:
    """One line naming every feature read from an mt-metrics-eval release that has no binding here."""
    first = names[0]
    return OptionError(
        f"the model's feature(s) {', '.join(names)} are scores shipped in an mt-metrics-eval release, and test bed "
        f"{testbed_name!r} is not one: bind each to scores you hold (--feature {first}=scores:FILE.tsv) or to a "
        f"metric combo computes (--feature {first}=comet:model=NAME); in Python: "
        f"combo.load_model(path, features={{{first!r}: 'scores:FILE.tsv'}})")
