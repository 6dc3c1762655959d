"""The metric registry: ``@register`` on a Metric subclass is all it takes to add a metric.

Metric modules under ``combo.metrics`` are found on first use, so adding a metric is one new module and one
decorator, nothing else edited. Looking up one metric imports only the module that registers it: the
package's sources are read once for their ``@register("name")`` lines (:func:`module_index`), so
``combo score -m ter`` imports neither the other metric modules nor ``scipy.sparse``. Listing the names
imports nothing; asking for every metric's class, or for a name the sources do not show, imports them all.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Type

from ..errors import OptionError
from ..options import split_key_values
from .base import Metric

_REGISTRY: Dict[str, Type[Metric]] = {}
_DISCOVERED = False

#: a registration at the start of a line: ``@register("name")`` on a class, or ``register("name")(cls)``
_DECORATOR = re.compile(r"""^@?register\(\s*["']([^"']+)["']\s*\)""", re.M)


@lru_cache(maxsize=1)
def module_index() -> Dict[str, Tuple[str, str]]:
    """``{name in lower case: (name, module under combo.metrics)}`` of every registration line of the
    package's sources, read without importing them (about 1 ms)."""
    root = Path(__file__).parent
    index: Dict[str, Tuple[str, str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        if module in ("base", "registry"):
            continue
        for name in _DECORATOR.findall(path.read_text(encoding="utf-8")):
            index[name.lower()] = (name, module)
    return index


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
    """The registered class called ``name`` (case-insensitive): the module that registers it
    (:func:`module_index`) is imported, or every metric module when the sources do not show the name."""
    key = name.lower()
    cls = _REGISTRY.get(key)
    if cls is None and key in module_index():
        importlib.import_module(f"{__package__}.{module_index()[key][1]}")
        cls = _REGISTRY.get(key)
    if cls is None:
        _discover()
        cls = _REGISTRY.get(key)
    if cls is None:
        from ..options import did_you_mean

        hint = did_you_mean(name, list_metrics() + shipped_models())  # -m takes a shipped model's name too
        raise OptionError(f"unknown metric {name!r}; " + (f"{hint} " if hint else "")
                          + "`combo metrics` lists them all")
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


#: The tuned models that ship with combo (``-m combo-wmt23``): ``<name>.json`` files of this folder.
SHIPPED_MODELS = Path(__file__).resolve().parents[1] / "data" / "models"


def shipped_model(spec: str) -> Optional[Path]:
    """The model file of a shipped tuned model named ``spec`` (``combo-wmt23``), or None."""
    name = spec.strip()
    if not name or "/" in name or "\\" in name or ":" in name or name.startswith("."):
        return None
    path = SHIPPED_MODELS / f"{name}.json"
    return path if path.is_file() else None


def shipped_models() -> List[str]:
    """The names of the tuned models that ship with combo."""
    return sorted(p.stem for p in SHIPPED_MODELS.glob("*.json")) if SHIPPED_MODELS.is_dir() else []


def is_model_file(spec: str) -> bool:
    """Whether ``spec`` names a tuned-metric model file (``*.json``; not ``scores:FILE.json``) or a shipped tuned
    model (:func:`shipped_model`)."""
    spec = spec.strip()
    return (spec.lower().endswith(".json") and spec.split(":", 1)[0].strip().lower() not in SHORTHAND
            or shipped_model(spec) is not None)


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
    """Names of all registered metrics, sorted: those the package's sources register (:func:`module_index`,
    not imported for this) and any other registered so far."""
    names = {key: name for key, (name, _) in module_index().items()}
    names.update((key, cls.name) for key, cls in _REGISTRY.items())
    return sorted(names.values())
