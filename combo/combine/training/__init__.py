"""Training a tuned metric on human judgments (imports scikit-learn).

- :mod:`.data`: judgments joined with metric scores (pairs, targets, normalised features); the one module here
  that reads test beds and score tables.
- :mod:`.estimators`: pairwise logistic ranking (DiscoTK), regression, ULC, with scikit-learn's contract.
- :mod:`.direct`: weights searched for an objective (:mod:`combo.meta.objectives`, the records ``--objective``
  reads).
- :mod:`.fit`: the options, one model (:func:`fit_model`, :func:`train_model`), cross-validation.
- :mod:`.report`: the cross-validated quality ``combo train`` prints.

The model a fit returns, and its file, is :class:`combo.metrics.tuned.TunedModel`.
"""

from .data import (DARR_FRACTION, DARR_POINTS, EXACT_ASPECTS, TrainingData, TrainingPairs, default_min_diff,
                   judged_blocks, pairs_from_testbed, preference_rows, targets_from_testbed, training_data)
from .direct import DirectCombiner, WeightSearch, calibrate, search_weights
from .estimators import (DEFAULT_ALPHAS, DEFAULT_CS, MAX_CANDIDATE_PAIRS, PairwiseLogisticRanker, RegressionCombiner,
                         UniformCombiner, preference_pairs)
from .fit import CrossValidation, TrainOptions, cross_validate, fit_and_cross_validate, fit_model, train_model
from .report import WMT23_STATISTICS, pair_kendall, training_report

__all__ = [
    "DARR_FRACTION", "DARR_POINTS", "DEFAULT_ALPHAS", "DEFAULT_CS", "EXACT_ASPECTS", "MAX_CANDIDATE_PAIRS",
    "WMT23_STATISTICS", "CrossValidation", "DirectCombiner", "PairwiseLogisticRanker", "RegressionCombiner",
    "TrainOptions", "TrainingData", "TrainingPairs", "UniformCombiner", "WeightSearch", "calibrate",
    "cross_validate", "default_min_diff", "fit_and_cross_validate", "fit_model", "judged_blocks", "pair_kendall",
    "pairs_from_testbed", "preference_pairs", "preference_rows", "search_weights", "targets_from_testbed",
    "train_model", "training_data", "training_report",
]
