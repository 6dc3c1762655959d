"""Which public checkpoint made a release's metric scores: what a model trained on ``mtme:NAME`` computes natively
where the test bed is no release (:attr:`combo.metrics.tuned.TunedModel.native`).

A feature computed natively must come from the checkpoint that made the scores the model was trained on, or its
weights and ranges mean nothing. Each entry says on what evidence the checkpoint stands for the release's name;
names whose public checkpoint is known to differ, or that combo cannot compute, are listed with the reason and
are never computed in their place (bind them to your own scores: :mod:`combo.metrics.binding`).

None of these was checked here against the release's scores (no checkpoint's weights are on this machine): the
evidence is the published record, quoted in each entry. ``combo train`` records the entries of the features it
trains on in the model file.
"""

from __future__ import annotations

from typing import Dict, Sequence

#: mt-metrics-eval test set -> release metric name -> (combo metric spec, evidence).
NATIVE: Dict[str, Dict[str, tuple]] = {
    "wmt23": {
        "COMET": ("comet:model=Unbabel/wmt22-comet-da",
                  "WMT23's baseline COMET is COMET-22 (Freitag et al. 2023, WMT23 metrics findings, baselines), "
                  "published by its authors as Unbabel/wmt22-comet-da"),
        "CometKiwi": ("comet:model=Unbabel/wmt22-cometkiwi-da",
                      "WMT23's baseline CometKiwi is CometKiwi-22 (Rei et al. 2022; Freitag et al. 2023, baselines), "
                      "published as Unbabel/wmt22-cometkiwi-da"),
        "XCOMET-XL": ("comet:model=Unbabel/XCOMET-XL",
                      "Guerreiro et al. 2024 (xCOMET) released their WMT23 submission's XL model as Unbabel/XCOMET-XL"),
        "XCOMET-XXL": ("comet:model=Unbabel/XCOMET-XXL",
                       "Guerreiro et al. 2024 (xCOMET) released their WMT23 submission's XXL model as "
                       "Unbabel/XCOMET-XXL"),
    },
}

#: Release names that are not computed natively, and why.
NOT_NATIVE: Dict[str, Dict[str, str]] = {
    "wmt23": {
        "MetricX-23": "google-research/metricx's README: the public MetricX-23 checkpoints differ from the WMT23 "
                      "submissions (trained on raw MQM scores, with more synthetic data)",
        "MetricX-23-QE": "as MetricX-23: the public QE checkpoints differ from the WMT23 submission",
        "BLEURT-20": "combo does not compute BLEURT",
        "GEMBA-MQM": "GPT-4 prompts: bind it to the scores of the LLM judge you run",
        "XCOMET-Ensemble": "an ensemble of submissions, not one public checkpoint",
    },
}


def native_inputs(specs: Sequence[str], testsets: Sequence[str]) -> Dict[str, Dict[str, str]]:
    """``{feature: {"metric", "evidence"}}`` for the ``mtme:NAME`` features among ``specs`` whose public checkpoint
    is known for every test set trained on (``testsets``: mt-metrics-eval test-set names, e.g. ``wmt23``)."""
    out: Dict[str, Dict[str, str]] = {}
    if not testsets:
        return out
    for spec in specs:
        head, _, name = spec.partition(":")
        if head.strip().lower() != "mtme":
            continue
        found = [NATIVE.get(t, {}).get(name.strip()) for t in testsets]
        if all(found) and len({f[0] for f in found}) == 1:
            out[spec] = {"metric": found[0][0], "evidence": found[0][1]}
    return out
