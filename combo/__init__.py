"""combo: heterogeneous automatic metrics for MT and NLG, their combination and meta-evaluation."""

from ._version import __version__

from .errors import ComboError, InputError, OptionError, ResourceMissing
from .metrics import Metric, get_metric, list_metrics, refs_from_streams, register
from .io import load_testbed, read_jsonl, write_jsonl
from .io.fetch import example_path  # the bundled example test bed (also load_testbed("example"))
from .scoring import ScoreTable, score_testbed
from .testbed import Preference, Score, Segment, Testbed
from .parallel import config  # where parallel work runs: config(backend="dask", scheduler="tcp://host:8786")


def load_model(path):
    """Load a tuned metric from a model file written by ``combo train`` (see :mod:`combo.metrics.tuned`)."""
    from .metrics.tuned import load_model as _load

    return _load(path)

__all__ = [
    "ComboError", "InputError", "Metric", "OptionError", "Preference", "ResourceMissing", "Score", "ScoreTable",
    "Segment", "Testbed", "__version__", "get_metric", "list_metrics", "load_model", "load_testbed", "read_jsonl",
    "refs_from_streams", "register", "score_testbed", "write_jsonl",
    "config", "example_path",
]
