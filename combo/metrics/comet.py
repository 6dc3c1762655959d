"""COMET (Rei et al. 2020, 2022; XCOMET: Guerreiro et al. 2024; CometKiwi: Rei et al. 2022), computed by its
authors' package ``unbabel-comet`` (extra ``combo-eval[comet]``).

Any COMET checkpoint: COMET-22 (``Unbabel/wmt22-comet-da``, the default), XCOMET-XL/XXL, CometKiwi. The
checkpoint is loaded by COMET's own ``load_from_checkpoint`` with ``local_files_only`` and scored by its own
``predict`` (length-sorted batches, its progress bar), so a segment score equals ``comet-score``'s on the same
checkpoint; the system score is the mean of the segment scores, as ``comet-score`` prints it. A reference-free
checkpoint (CometKiwi: inputs ``mt, src``) reads sources and no reference; COMET-22 reads all three.

``comet-score`` 2.2 casts every model to half precision (``model.half()``) before ``predict``; combo computes in
full precision, as ``predict`` does on the loaded model, unless ``half=yes``: then its scores are
``comet-score``'s.
"""

from __future__ import annotations

import logging
import sys
import warnings
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np

from ..options import Option
from ..progress import _isatty
from .neural import NeuralMetric, batch_option, device_option, local_folder, missing_checkpoint, torch_device
from .registry import register

DEFAULT_MODEL = "Unbabel/wmt22-comet-da"
#: What each of COMET's model classes reads, when its hparams do not list ``input_segments``.
_READS = {"regression_metric": ("mt", "src", "ref"), "ranking_metric": ("mt", "src", "ref"),
          "referenceless_regression_metric": ("mt", "src"), "unified_metric": ("mt", "src", "ref"),
          "xcomet_metric": ("mt", "src", "ref")}


def checkpoint_path(model: str) -> Path:
    """The ``model.ckpt`` of ``model``: a checkpoint file, a folder holding ``checkpoints/model.ckpt``, or a Hugging
    Face name found in the local cache (never downloaded here)."""
    p = Path(model).expanduser()
    if p.is_file():
        return p
    ckpt = local_folder(model, "comet checkpoint") / "checkpoints" / "model.ckpt"
    if not ckpt.is_file():
        raise missing_checkpoint("comet checkpoint", model, str(ckpt))
    return ckpt


@lru_cache(maxsize=16)
def _hparams(hparams_file: str) -> Dict:
    import yaml

    with open(hparams_file, encoding="utf-8") as f:
        return yaml.load(f.read(), Loader=yaml.FullLoader) or {}


@contextmanager
def _quiet():
    """COMET's and Lightning's informational lines (GPU available, tips, warnings) kept off the terminal."""
    loggers = [logging.getLogger(n) for n in ("pytorch_lightning", "lightning.pytorch", "lightning_fabric",
                                              "lightning", "comet")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


@lru_cache(maxsize=2)
def _load(ckpt: str, digest: str, half: bool = False):
    """COMET's model from ``ckpt`` (``digest`` keys the memo by content), loaded by COMET's own code; ``half``:
    in half precision, as ``comet-score`` runs it (``model.half()``)."""
    with _quiet():
        from comet import load_from_checkpoint

        model = load_from_checkpoint(ckpt, local_files_only=True)
    model.eval()
    if half:
        model.half()
    return model


@register("comet")
class Comet(NeuralMetric):
    """COMET's segment score by the ``unbabel-comet`` package; the system score is their mean (``comet-score``)."""

    citation = ("Rei et al. 2020/2022 (COMET, COMET-22), Guerreiro et al. 2024 (XCOMET), Rei et al. 2022 "
                "(CometKiwi): the checkpoint's predict() in unbabel-comet")
    extra = "comet"
    modules = ("comet", "torch")
    package = "unbabel-comet"
    options = {
        "model": Option(DEFAULT_MODEL, "a COMET checkpoint: Hugging Face name in the local cache, a folder, or a "
                                       "model.ckpt file"),
        "device": device_option(),
        "batch_size": batch_option(16),
        "half": Option(False, "half precision, as comet-score 2.2 runs every model (its scores then differ from "
                              "predict()'s in full precision by float16 rounding, about 1e-3)"),
    }

    def checkpoint_files(self) -> List[Path]:
        ckpt = checkpoint_path(self.params["model"])
        hparams = ckpt.parents[1] / "hparams.yaml"
        if not hparams.is_file():
            raise missing_checkpoint("comet checkpoint", self.params["model"],
                                     f"{hparams} (COMET reads the class from it)")
        return [ckpt, hparams]

    def inputs(self) -> Tuple[str, ...]:
        """The checkpoint's input segments (``mt``, ``src``, ``ref``), from its ``hparams.yaml``."""
        hp = _hparams(str(self.checkpoint_files()[1]))
        segments = hp.get("input_segments") or _READS.get(hp.get("class_identifier"), ("mt", "src", "ref"))
        return tuple(segments)

    def reads(self) -> Tuple[bool, bool]:
        segments = self.inputs()
        return "src" in segments, "ref" in segments

    def model(self):
        """COMET's model object for this checkpoint (loaded once per process)."""
        from .neural import content_digest

        files = self.checkpoint_files()
        return _load(str(files[0]), content_digest(files), bool(self.params["half"]))

    def predict(self, sources: Sequence[str], hyps: Sequence[str], refs: Sequence[str],
                progress: bool = False) -> np.ndarray:
        model = self.model()
        samples = [{"mt": h} for h in hyps]
        for key, column in (("src", sources), ("ref", refs)):
            for sample, text in zip(samples, column):
                sample[key] = text
        device = torch_device(self.params["device"])
        progress = progress and _isatty(sys.stderr)  # Lightning's bar is for a terminal, not a log
        with _quiet():
            out = model.predict(samples, batch_size=self.params["batch_size"], gpus=1 if device == "cuda" else 0,
                                accelerator="gpu" if device == "cuda" else "cpu", progress_bar=progress,
                                length_batching=True)
        return np.asarray(out.scores, dtype=np.float64)
