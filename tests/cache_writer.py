"""The worker of test_trust's concurrent score-cache test, in a module of its own: a spawned worker process
imports this module (combo.scoring, numpy), not the test module with the command line and SciPy, which cost
each worker about 2 CPU seconds of imports."""

import numpy as np

from combo.metrics.registry import get_metric
from combo.scoring.cache import _Cache


def write_entries(args):
    """Twenty writes of the same score-cache entry, every value ``k``, into the folder shared with the others."""
    folder, k = args
    cache = _Cache(folder, "fp", "segment", [(3,), (2,)])
    metric = get_metric("bleu")
    for _ in range(20):
        cache.put(metric, [np.full(3, k, float), np.full(2, k, float)])
    return True
