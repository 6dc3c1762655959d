"""The metric registry: ``@register`` on a Metric subclass is all it takes to add a metric.

Metric modules under ``combo.metrics`` are discovered on first use, so adding
a metric is one new module and one decorator (and its line in :data:`MODULE_OF`,
which ``tests/test_registry_index.py`` asks for by name when it is missing).

Looking up one metric imports only the module that registers it (:data:`MODULE_OF`):
``combo score -m ter`` no longer imports the other metric modules and
``scipy.sparse`` (a one-segment run: 0.35 CPU s before, 0.24 after, 0.12 of
them Python and numpy). Listing the names imports nothing; asking for every
metric's class, or for a name the index does not know, imports them all.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any, Dict, List, Type

from ..errors import OptionError
from ..options import split_key_values
from .base import Metric

_REGISTRY: Dict[str, Type[Metric]] = {}
_DISCOVERED = False

#: Each built-in metric's name -> the module under ``combo.metrics`` that registers it, so that a lookup
#: imports that module alone. Kept by hand beside the decorators; ``tests/test_registry_index.py`` fails when
#: a module registers a name missing here (or a name here is registered elsewhere or nowhere). A name missing
#: from it is still found, by importing every metric module.
MODULE_OF: Dict[str, str] = {
    "bleu": "lexical.bleu",
    "chrf": "lexical.chrf",
    "chrf++": "lexical.chrf",
    "cider": "lexical.cider",
    "cp-stm": "constituent",
    "cp-tk": "constituent",
    "cp-tk-ptk": "constituent",
    "cp-tk-sst": "constituent",
    "cp-tk-st": "constituent",
    "dp-hwcm": "dependency",
    "dp-or": "dependency",
    "dp-tk": "dependency",
    "dr-tk": "discourse",
    "dr-tk-lex1": "discourse",
    "dr-tk-lex1.1": "discourse",
    "dr-tk-lex2": "discourse",
    "dr-tk-lex2.1": "discourse",
    "dr-tk-nolex": "discourse",
    "emb-avg": "embedding",
    "emb-extrema": "embedding",
    "emb-greedy": "embedding",
    "gtm": "lexical.gtm",
    "meteor": "lexical.meteor",
    "mtme": "external",
    "nist": "lexical.nist",
    "per": "lexical.wer",
    "rouge-1": "lexical.rouge",
    "rouge-2": "lexical.rouge",
    "rouge-l": "lexical.rouge",
    "rouge-n": "lexical.rouge",
    "rouge-s": "lexical.rouge",
    "rouge-su": "lexical.rouge",
    "rouge-w": "lexical.rouge",
    "scores": "external",
    "sent-emb": "embedding",
    "sp-nist": "shallow",
    "sp-oc": "shallow",
    "sp-op": "shallow",
    "ted": "dependency",
    "ter": "lexical.ter",
    "wer": "lexical.wer",
}


def register(name: str):
    """Class decorator: register a :class:`Metric` subclass under ``name``."""

    def deco(cls: Type[Metric]) -> Type[Metric]:
        key = name.lower()
        if key in _REGISTRY and _REGISTRY[key] is not cls:
            raise RuntimeError(f"metric name {name!r} registered twice")
        cls.name = name
        _REGISTRY[key] = cls
        return cls

    return deco


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    for info in pkgutil.walk_packages([str(Path(__file__).parent)], prefix=f"{__package__}."):
        if info.name.rsplit(".", 1)[-1] in ("base", "registry"):
            continue
        importlib.import_module(info.name)


def metric_class(name: str) -> Type[Metric]:
    """The registered class called ``name`` (case-insensitive): the module :data:`MODULE_OF` names is
    imported, or every metric module when the name is not there."""
    key = name.lower()
    cls = _REGISTRY.get(key)
    if cls is None and key in MODULE_OF:
        importlib.import_module(f"{__package__}.{MODULE_OF[key]}")
        cls = _REGISTRY.get(key)
    if cls is None:
        _discover()
        cls = _REGISTRY.get(key)
    if cls is None:
        from ..options import did_you_mean

        hint = did_you_mean(name, list_metrics())
        raise OptionError(f"unknown metric {name!r}; " + (f"{hint} " if hint else "")
                          + "(`combo metrics` lists them all)")
    return cls


def get_metric(name: str, **options: Any) -> Metric:
    """A metric instance: ``get_metric("bleu", max_order=2)``.

    ``name`` may carry options in the command-line form ``"bleu:max_order=2,smooth=floor"``.
    A name ending in ``.json`` is a tuned-metric model file (``combo train``), which the registry does not
    read (models are built above it): :func:`combo.load_model` reads one, and :func:`combo.scoring.resolve_metric`,
    ``score_testbed`` and ``-m`` accept either.
    """
    if is_model_file(name):
        raise OptionError(f"{name.strip()} is a model file, not a registered metric: load it with "
                          "combo.load_model(path) (score_testbed and -m accept model files as they are)")
    name, parsed = parse_metric_spec(name)
    parsed.update(options)
    return metric_class(name)(**parsed)


def is_model_file(spec: str) -> bool:
    """Whether ``spec`` names a tuned-metric model file (``*.json``; not ``scores:FILE.json``)."""
    spec = spec.strip()
    return spec.lower().endswith(".json") and spec.split(":", 1)[0].strip().lower() not in SHORTHAND


#: Metrics whose one main option may be given bare: ``mtme:XCOMET-XL``, ``scores:comet.tsv``.
SHORTHAND = {"mtme": "metric", "scores": "file"}


def parse_metric_spec(spec: str):
    """Split ``"name:key=value,key=value"`` into the name and an options dict (values as strings; a key given
    twice is an error).

    ``mtme:NAME`` and ``scores:FILE`` (no ``=``) stand for ``mtme:metric=NAME`` and ``scores:file=FILE``.
    """
    name, _, rest = spec.partition(":")
    opts: Dict[str, Any] = {}
    key = SHORTHAND.get(name.strip().lower())
    if key is not None and rest and "=" not in rest:
        return name.strip(), {key: rest.strip()}
    if rest:
        opts = split_key_values(f"metric spec {spec!r}", rest.split(","))
    return name.strip(), opts


def list_metrics() -> List[str]:
    """Names of all registered metrics, sorted: the built-in ones of :data:`MODULE_OF` (not imported for
    this) and any other registered so far."""
    names = {key: key for key in MODULE_OF}
    names.update((key, cls.name) for key, cls in _REGISTRY.items())
    return sorted(names.values())
