"""combo: heterogeneous automatic metrics for MT and NLG, their combination and meta-evaluation."""

from ._version import __version__

from .errors import ComboError, InputError, OptionError, ResourceMissing
from .metrics import Metric, list_metrics, refs_from_streams, register
from .metrics import get_metric as _registered_metric
from .io import load_testbed, read_jsonl, write_jsonl
from .io.fetch import example_path  # the bundled example test bed (also load_testbed("example"))
from .scoring import ScoreTable, score_testbed
from .testbed import Preference, Score, Segment, Testbed
from .parallel import config  # where parallel work runs: config(backend="dask", scheduler="tcp://host:8786")


def load_model(path, features=None):
    """Load a tuned metric from a model file written by ``combo train`` (see :mod:`combo.metrics.tuned`).

    ``features`` binds the model's features to scores you hold or to metrics combo computes:
    ``{"mtme:XCOMET-XL": "scores:xcomet.tsv", "mtme:COMET": "comet:model=Unbabel/wmt22-comet-da"}``
    (:mod:`combo.metrics.binding`).
    """
    from .metrics.tuned import load_model as _load

    return _load(path, features)


def get_metric(spec: str, **options) -> Metric:
    """A metric by name or spec (``"bleu"``, ``"chrf:word_order=2"``, options as keywords), or a tuned metric
    from a model file written by ``combo train`` (``"model.json"``, as ``-m model.json`` on the command line)."""
    from .metrics.registry import is_model_file

    if is_model_file(spec) and not options:
        return load_model(spec)
    return _registered_metric(spec, **options)


#: Subpackages reached as attributes after ``import combo`` (imported on first use: the command line's start
#: does not pay for them).
_LAZY = ("analysis", "combine", "evaluate", "meta", "metrics", "report")


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'combo' has no attribute {name!r}")

__all__ = [
    "ComboError", "InputError", "Metric", "OptionError", "Preference", "ResourceMissing", "Score", "ScoreTable",
    "Segment", "Testbed", "__version__", "get_metric", "list_metrics", "load_model", "load_testbed", "read_jsonl",
    "refs_from_streams", "register", "score_testbed", "write_jsonl",
    "config", "example_path",
]
