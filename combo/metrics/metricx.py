"""MetricX-23 and MetricX-23-QE (Juraska et al. 2023, WMT23), by google-research/metricx's published inference
on transformers' MT5 classes (extra ``combo-eval[metricx]``).

The inference, as ``metricx23/predict.py`` and ``models.py`` define it:

1. the input text is ``"candidate: " + hypothesis + " reference: " + reference`` (QE:
   ``"candidate: " + hypothesis + " source: " + source``);
2. it is tokenised with mT5's tokenizer (``google/mt5-xl``), truncated to 1,024 tokens, and its final EOS token
   removed;
3. the MT5 encoder-decoder runs one decoder step from token 0;
4. the score is the logit of token 250089 (``<extra_id_10>``) at that step, clipped to [0, 25].

Lower is better (an error count on MQM's scale). Batches are sorted by length; a batch's padding is masked, so
batch sizes differ by float rounding only (1.4e-6 at most between 8 and 1, measured).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import List, Sequence, Tuple

import numpy as np

from ..options import Option
from .neural import (NeuralMetric, batch_option, content_digest, device_option, local_folder, missing_checkpoint,
                     sorted_batches, torch_device)
from .registry import register

DEFAULT_MODEL = "google/metricx-23-xl-v2p0"
DEFAULT_TOKENIZER = "google/mt5-xl"
#: MetricX-23 reads the logit of this token of mT5's vocabulary (``<extra_id_10>``).
SCORE_TOKEN = 250089
MAX_INPUT_LENGTH = 1024
#: Files of a Hugging Face model folder whose bytes determine the scores.
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_TOKENIZER_FILES = ("spiece.model", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


@lru_cache(maxsize=2)
def _load(folder: str, tokenizer_folder: str, digest: str):
    """transformers' tokenizer and MT5 model (``digest`` keys the memo by content)."""
    from transformers import AutoTokenizer, MT5ForConditionalGeneration
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder, local_files_only=True)
    model = MT5ForConditionalGeneration.from_pretrained(folder, local_files_only=True)
    model.eval()
    return tokenizer, model


def input_text(hyp: str, ref: str, src: str, qe: bool) -> str:
    """MetricX-23's input string (``metricx23/predict.py``, ``_make_input``)."""
    return f"candidate: {hyp} source: {src}" if qe else f"candidate: {hyp} reference: {ref}"


@register("metricx")
class MetricX(NeuralMetric):
    """MetricX-23: the logit of token 250089 after one MT5 decoder step, clipped to [0, 25]; lower is better."""

    higher_is_better = False
    value_range = (0.0, 25.0)
    citation = ("Juraska et al. 2023 (MetricX-23, WMT23); google-research/metricx, metricx23/models.py "
                "MT5ForRegression.forward")
    extra = "metricx"
    modules = ("transformers", "torch", "sentencepiece")
    package = "transformers"
    options = {
        "model": Option(DEFAULT_MODEL, "a MetricX-23 checkpoint: Hugging Face name in the local cache or a folder"),
        "tokenizer": Option(DEFAULT_TOKENIZER, "mT5's tokenizer: a Hugging Face name in the local cache or a "
                                               "folder (a checkpoint folder holding spiece.model is read itself)"),
        "qe": Option(False, "reference-free MetricX-23-QE (reads sources, not references)"),
        "device": device_option(),
        "batch_size": batch_option(8),
    }

    def _folders(self) -> Tuple[Path, Path]:
        folder = local_folder(self.params["model"], "metricx checkpoint")
        if any((folder / f).is_file() for f in ("spiece.model", "tokenizer.json")):
            return folder, folder
        return folder, local_folder(self.params["tokenizer"], "metricx tokenizer")

    def checkpoint_files(self) -> List[Path]:
        folder, tok = self._folders()
        weights = [folder / f for f in _WEIGHT_FILES if (folder / f).is_file()]
        weights += sorted(folder.glob("model-*.safetensors")) + sorted(folder.glob("pytorch_model-*.bin"))
        if not weights or not (folder / "config.json").is_file():
            raise missing_checkpoint("metricx checkpoint", self.params["model"], f"{folder} (config.json and weights)")
        return [folder / "config.json"] + weights + [tok / f for f in _TOKENIZER_FILES if (tok / f).is_file()]

    @property
    def signature(self) -> str:
        sig = super().signature
        return sig.replace("|sha256:", f"|qe:{'yes' if self.params['qe'] else 'no'}|sha256:", 1)

    def reads(self) -> Tuple[bool, bool]:
        qe = bool(self.params["qe"])
        return qe, not qe

    def predict(self, sources: Sequence[str], hyps: Sequence[str], refs: Sequence[str],
                progress: bool = False) -> np.ndarray:
        import torch

        from ..progress import progress

        folder, tok_folder = self._folders()
        tokenizer, model = _load(str(folder), str(tok_folder), content_digest(self.checkpoint_files()))
        device = torch_device(self.params["device"])
        model.to(device)
        qe = bool(self.params["qe"])
        texts = [input_text(h, refs[k] if refs else "", sources[k] if sources else "", qe)
                 for k, h in enumerate(hyps)]
        ids = [tokenizer(t, max_length=MAX_INPUT_LENGTH, truncation=True, padding=False)["input_ids"][:-1]
               for t in texts]  # without the final EOS
        out = np.empty(len(ids), dtype=np.float64)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        batches = sorted_batches([len(x) for x in ids], self.params["batch_size"])
        with torch.inference_mode(), progress(len(ids), self.name, enabled=progress, unit="segment") as bar:
            for batch in batches:
                width = max(len(ids[k]) for k in batch)
                input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, k in enumerate(batch.tolist()):
                    input_ids[row, :len(ids[k])] = torch.tensor(ids[k], dtype=torch.long)
                    mask[row, :len(ids[k])] = 1
                decoder = torch.zeros((len(batch), 1), dtype=torch.long)
                logits = model(input_ids=input_ids.to(device), attention_mask=mask.to(device),
                               decoder_input_ids=decoder.to(device), use_cache=False).logits
                out[batch] = torch.clamp(logits[:, 0, SCORE_TOKEN], 0, 25).float().cpu().numpy()
                bar.update(len(batch))
        return out
