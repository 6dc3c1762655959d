"""Tiny neural checkpoints built offline, in the layout of the published ones, for the COMET and MetricX tests.

Nothing here downloads: the sentencepiece vocabulary is trained on lines of WMT23 en-de from the shared data
(``num_threads=1``, which makes it deterministic), the encoders are random (seed 0) and small, and the
checkpoints are saved by the packages' own classes (COMET's ``RegressionMetric`` / ``UnifiedMetric`` and
Lightning's checkpoint; transformers' ``MT5ForConditionalGeneration``), so the code that loads them is the code
that loads a published checkpoint.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import List

#: MetricX-23 reads the logit of token 250089 (``<extra_id_10>`` in mT5's vocabulary of 250,112).
MT5_VOCAB = 250112


def training_lines(data: Path, n: int = 600) -> List[str]:
    """The first ``n`` // 2 English sources and German references of WMT23 en-de (both languages COMET reads)."""
    src = (data / "wmt23" / "sources" / "en-de.txt").read_text(encoding="utf-8").splitlines()
    ref = (data / "wmt23" / "references" / "en-de.refA.txt").read_text(encoding="utf-8").splitlines()
    return [line for pair in zip(src[:n // 2], ref[:n // 2]) for line in pair if line.strip()]


def sentencepiece_model(lines: List[str], vocab_size: int = 1000, t5_ids: bool = False) -> bytes:
    """A unigram sentencepiece model trained on ``lines`` with one thread (deterministic); ``t5_ids``: T5's and
    mT5's special ids (pad 0, eos 1, unk 2, no bos) instead of sentencepiece's (unk 0, bos 1, eos 2)."""
    import sentencepiece as spm

    out = io.BytesIO()
    ids = dict(pad_id=0, eos_id=1, unk_id=2, bos_id=-1) if t5_ids else {}
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, vocab_size=vocab_size,
                                   model_type="unigram", num_threads=1, character_coverage=1.0,
                                   minloglevel=2, **ids)
    return out.getvalue()


def xlmr_encoder(folder: Path, lines: List[str], hidden: int = 32, layers: int = 2) -> Path:
    """A random XLM-R encoder with a tokenizer of ``lines``, saved as a Hugging Face folder."""
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    spm_file = folder / "sentencepiece.bpe.model"
    spm_file.write_bytes(sentencepiece_model(lines))
    tokenizer = XLMRobertaTokenizer(vocab_file=str(spm_file))
    tokenizer.save_pretrained(str(folder))
    torch.manual_seed(0)
    config = XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=layers,
                              num_attention_heads=2, intermediate_size=2 * hidden, max_position_embeddings=514,
                              pad_token_id=tokenizer.pad_token_id, bos_token_id=0, eos_token_id=2)
    XLMRobertaModel(config).save_pretrained(str(folder))
    return folder


def comet_checkpoint(folder: Path, data: Path, kind: str = "regression") -> Path:
    """A COMET checkpoint (``checkpoints/model.ckpt`` with ``hparams.yaml`` beside ``checkpoints/``) of class
    ``kind``: ``regression`` (COMET-22's estimator), ``unified`` (XCOMET's and CometKiwi's), or ``kiwi``
    (a reference-free unified metric, CometKiwi's inputs). Returns the ``model.ckpt`` path."""
    import pytorch_lightning as pl
    import torch
    import yaml
    from comet.models import RegressionMetric, UnifiedMetric

    encoder = xlmr_encoder(folder / "encoder", training_lines(data))
    torch.manual_seed(0)
    common = dict(pretrained_model=str(encoder), encoder_model="XLM-RoBERTa", load_pretrained_weights=True,
                  local_files_only=True, hidden_sizes=[16], layerwise_decay=1.0, dropout=0.0, keep_embeddings_frozen=True)
    if kind == "regression":
        model = RegressionMetric(**common)
    elif kind in ("unified", "kiwi"):
        segments = ["mt", "src", "ref"] if kind == "unified" else ["mt", "src"]
        model = UnifiedMetric(**common, input_segments=segments, word_level_training=False)
    else:
        raise ValueError(kind)
    model.eval()
    trainer = pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False)
    trainer.strategy.connect(model)
    ckpt = folder / "checkpoints" / "model.ckpt"
    ckpt.parent.mkdir(parents=True, exist_ok=True)
    trainer.save_checkpoint(str(ckpt), weights_only=True)
    hparams = dict(model.hparams)
    hparams["class_identifier"] = "regression_metric" if kind == "regression" else "unified_metric"
    (folder / "hparams.yaml").write_text(yaml.safe_dump(_plain(hparams)), encoding="utf-8")
    return ckpt


def _plain(obj):
    """hparams as YAML-safe values (tuples and other sequences as lists)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def metricx_checkpoint(folder: Path, data: Path, d_model: int = 8) -> Path:
    """A random MT5 with mT5's vocabulary size and a tokenizer of WMT23 lines, saved as a Hugging Face folder:
    the shape of ``google/metricx-23-*`` (whose tokenizer is ``google/mt5-xl``'s) in 31 MB."""
    import torch
    from transformers import AutoTokenizer, MT5Config, MT5ForConditionalGeneration

    folder.mkdir(parents=True, exist_ok=True)
    # google/mt5-xl's tokenizer files: the sentencepiece model and its configuration, which transformers converts
    (folder / "spiece.model").write_bytes(sentencepiece_model(training_lines(data), t5_ids=True))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "T5Tokenizer", "extra_ids": 0, "eos_token": "</s>", "unk_token": "<unk>",
        "pad_token": "<pad>", "legacy": True}), encoding="utf-8")
    (folder / "special_tokens_map.json").write_text(json.dumps({
        "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}), encoding="utf-8")
    torch.manual_seed(0)
    config = MT5Config(vocab_size=MT5_VOCAB, d_model=d_model, d_kv=4, d_ff=16, num_layers=2, num_decoder_layers=1,
                       num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
                       tie_word_embeddings=False)
    model = MT5ForConditionalGeneration(config).eval()
    # A random head gives logits around 0, which MetricX's clip to [0, 25] would turn into ties: the score
    # token's row is set so that the mean decoder state of some inputs scores 10, spreading scores around it.
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    batch = tokenizer([f"candidate: {t} reference: {t}" for t in training_lines(data, 40)], padding=True,
                      return_tensors="pt")
    with torch.no_grad():
        states = model(**batch, decoder_input_ids=torch.zeros((len(batch["input_ids"]), 1), dtype=torch.long),
                       output_hidden_states=True).decoder_hidden_states[-1][:, 0]
        mean = states.mean(dim=0)
        centred = states - mean
        spread = centred[0] / centred[0].norm() ** 2
        model.lm_head.weight[MT5_VOCAB - 23] = 10 * mean / mean.norm() ** 2 + 8 * spread
    model.save_pretrained(str(folder))
    return folder
