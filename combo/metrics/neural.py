"""What the neural metrics share (:mod:`combo.metrics.comet`, :mod:`combo.metrics.metricx`): checkpoints found
on disk, never downloaded; the device; one score per distinct (source, hypothesis, reference) triple.

A neural metric scores a candidate from its source, its text and the first reference of its segment (COMET's
and MetricX's inputs; a reference-free checkpoint reads no reference), so it is computed per candidate of a
test bed (locality ``"candidate"``), and through :meth:`NeuralMetric.score_texts` for bare texts. A triple that
several systems output is scored once. The system score is the mean of the system's segment scores, as
``comet-score`` reports it.

Checkpoints come from a local path or from the user's Hugging Face cache, with ``local_files_only``: nothing is
downloaded unless the user asks (``combo models fetch NAME``). The signature names the checkpoint, the SHA-256
of its weights (:func:`content_digest`) and the package's version, so the score cache follows the checkpoint's
content, not its name.
"""

from __future__ import annotations

import hashlib
import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import InputError, OptionError, ResourceMissing
from ..options import Option
from .base import Candidates, Metric

DEVICES = ("auto", "cpu", "cuda")


def device_option() -> Option:
    return Option("auto", "where the model runs: auto (CUDA when torch sees a GPU, else CPU), cpu or cuda",
                  choices=DEVICES)


def batch_option(default: int) -> Option:
    return Option(default, "segments per batch (batches are sorted by length)", check=lambda v: v >= 1)


def torch_device(device: str) -> str:
    """``"cuda"`` or ``"cpu"`` for option ``device`` (``auto``: CUDA when torch sees it)."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise OptionError("device=cuda: torch sees no CUDA device here; use device=cpu or device=auto")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


@lru_cache(maxsize=32)
def _digest_of(paths: Tuple[Tuple[str, int, int], ...]) -> str:
    h = hashlib.sha256()
    for path, _, _ in paths:
        h.update(Path(path).name.encode("utf-8") + b"\0")
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                h.update(block)
    return h.hexdigest()


def content_digest(files: Sequence[Path]) -> str:
    """SHA-256 of the files' names and bytes, in order; computed once per process for files whose size and
    modification time have not changed (hashing a 2 GB checkpoint takes seconds)."""
    stats = []
    for f in files:
        st = os.stat(f)
        stats.append((str(f), st.st_size, st.st_mtime_ns))
    return _digest_of(tuple(stats))


def package_version(package: str) -> str:
    """The installed version of ``package`` (``"?"`` when absent)."""
    from ..analysis.layer_definitions import _package_version

    return _package_version(package) or "?"


def is_hub_name(model: str) -> bool:
    """Whether ``model`` reads as a Hugging Face name (``OWNER/NAME``) rather than a local path."""
    return model.count("/") == 1 and not model.startswith((".", "/", "~")) and not Path(model).expanduser().exists()


def hub_cache() -> Path:
    """The Hugging Face hub cache folder this process reads (``HF_HUB_CACHE``, ``HF_HOME``, the default)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return Path(home) / "hub"


def cached_snapshot(repo_id: str) -> Optional[Path]:
    """The folder of ``repo_id``'s newest snapshot in the Hugging Face cache, read without any network (the
    layout ``models--OWNER--NAME/refs/main`` -> ``snapshots/<commit>``); None when it is not there."""
    root = hub_cache() / ("models--" + repo_id.replace("/", "--"))
    ref = root / "refs" / "main"
    if ref.is_file():
        snap = root / "snapshots" / ref.read_text(encoding="utf-8").strip()
        if snap.is_dir():
            return snap
    snaps = sorted((root / "snapshots").glob("*")) if (root / "snapshots").is_dir() else []
    return snaps[-1] if snaps else None


def local_folder(model: str, what: str) -> Path:
    """The local folder of checkpoint ``model``: the folder itself, or a Hugging Face name's newest snapshot in the
    local cache (never downloaded); :func:`missing_checkpoint` (``what`` names the checkpoint) where neither is."""
    p = Path(model).expanduser()
    if p.is_dir():
        return p
    if is_hub_name(model):
        snap = cached_snapshot(model)
        if snap is not None:
            return snap
        raise missing_checkpoint(what, model, f"the Hugging Face cache {hub_cache()}")
    raise missing_checkpoint(what, model, str(p))


class NeuralMetric(Metric):
    """Base of metrics computed by a neural checkpoint from (source, hypothesis, reference) triples."""

    family = "neural"
    layers = ()
    locality = "candidate"
    computed = True
    value_range = (-math.inf, math.inf)
    #: the extra that installs the package (:data:`combo.extras.EXTRAS`) and the modules it provides
    extra = ""
    modules: Tuple[str, ...] = ()
    package = ""  # whose version the signature records

    def check_resources(self) -> None:
        from ..extras import install_hint, require_modules

        require_modules(self.modules, f"{self.name} (the {self.extra} extra)", install_hint(self.extra))
        self.checkpoint_files()

    # -- what a subclass provides ---------------------------------------------------------------------
    def checkpoint_files(self) -> List[Path]:
        """The files whose bytes determine the scores (weights, configuration, vocabulary); raise
        :class:`ResourceMissing` naming where it looked and the command that fetches the checkpoint."""
        raise NotImplementedError

    def reads(self) -> Tuple[bool, bool]:
        """Whether the checkpoint reads ``(sources, references)``."""
        raise NotImplementedError

    def predict(self, sources: Sequence[str], hyps: Sequence[str], refs: Sequence[str],
                progress: bool = False) -> np.ndarray:
        """One score per triple (``sources`` or ``refs`` empty where the checkpoint reads none)."""
        raise NotImplementedError

    # -- the metric ------------------------------------------------------------------------------------
    @property
    def signature(self) -> str:
        from .._version import __version__

        try:
            digest = content_digest(self.checkpoint_files())[:16]
        except ResourceMissing:
            digest = "absent"  # not here: scoring refuses it (check_resources), naming the fetch command
        return (f"{self.name}|model:{self.params['model']}|sha256:{digest}|{self.package}:"
                f"{package_version(self.package)}|impl:{self.implementation_version}|version:{__version__}")

    def analyse(self, texts: Sequence[str]):
        raise OptionError(f"{self.name} reads sources as well as texts: score a test bed (combo.score_testbed, "
                          f"--testbed), or call {type(self).__name__}.score_texts(hyps, refs, sources)")

    def statistics(self, *args, **kwargs):
        return self.analyse([])

    def pairwise_scores(self, texts, left, right, analysis=None):
        raise OptionError(f"{self.name} scores a candidate from its source, so it has no reference-against-"
                          "reference similarity: leave it out of --criterion king/orange and --scheme queen")

    def score_texts(self, hyps: Sequence[str], refs: Optional[Sequence[Sequence[str]]] = None,
                    sources: Optional[Sequence[str]] = None, progress: bool = False) -> np.ndarray:
        """One score per hypothesis, from ``sources[i]`` and the first of ``refs[i]`` (``refs[i]`` is the list of
        references of ``hyps[i]``, as everywhere in combo)."""
        if isinstance(hyps, str):
            raise OptionError("hyps must be a list of strings, not one string")
        wants_src, wants_ref = self.reads()
        n = len(hyps)
        if wants_src and (sources is None or len(sources) != n):
            raise OptionError(f"{self.name}:model={self.params['model']} reads the source of each hypothesis: give "
                              f"sources= with {n} texts")
        if wants_ref and (refs is None or len(refs) != n or any(not r for r in refs)):
            raise OptionError(f"{self.name}:model={self.params['model']} reads a reference: give refs= with one "
                              f"list of references per hypothesis ({n})")
        src = list(sources) if wants_src else []
        ref = [r[0] for r in refs] if wants_ref else []
        return self._unique_scores(src, list(hyps), ref, progress)

    def _unique_scores(self, src: List[str], hyp: List[str], ref: List[str], progress: bool) -> np.ndarray:
        """Each distinct triple scored once, the scores spread back to every row."""
        keys: Dict[Tuple[str, str, str], int] = {}
        inverse = np.empty(len(hyp), dtype=np.int64)
        for k in range(len(hyp)):
            key = (src[k] if src else "", hyp[k], ref[k] if ref else "")
            inverse[k] = keys.setdefault(key, len(keys))
        if not keys:
            return np.zeros(0)
        distinct = list(keys)
        scores = self.predict([t[0] for t in distinct] if src else [], [t[1] for t in distinct],
                              [t[2] for t in distinct] if ref else [], progress)
        scores = np.asarray(scores, dtype=np.float64).reshape(len(distinct))
        return scores[inverse]

    def candidate_scores(self, cands: Candidates) -> Tuple[np.ndarray, np.ndarray, str]:
        self.check_resources()
        wants_src, wants_ref = self.reads()
        tb = cands.testbed
        rows = cands.rows
        src: List[str] = []
        if wants_src:
            src = [tb.segments[i].source for i in cands.row_segment.tolist()]
            blank = [i for i in sorted(set(cands.row_segment.tolist())) if not tb.segments[i].source.strip()]
            if blank:
                raise InputError(f"{self.name}:model={self.params['model']} reads sources, and {len(blank)} of the "
                                 f"{len(tb.segments)} segments of test bed {tb.name!r} have none (first: segment "
                                 f"{tb.segments[blank[0]].id!r})", tb.metadata.get("source_path"),
                                 fix="give the source file (--src, or source.txt in the test bed's folder)")
        ref: List[str] = []
        if wants_ref:
            ref = [rows.texts[rows.ref_ids[rows.ref_ptr[k]]] if rows.ref_ptr[k + 1] > rows.ref_ptr[k] else ""
                   for k in range(len(rows.hyp_ids))]
        hyp = [rows.texts[i] for i in rows.hyp_ids.tolist()]
        seg = self._unique_scores(src, hyp, ref, progress=cands.progress)
        sysv = np.array([seg[cands.row_system == s].mean() if np.any(cands.row_system == s) else np.nan
                         for s in range(len(cands.systems))])
        return seg, sysv, self.signature


def sorted_batches(lengths: Sequence[int], batch_size: int) -> List[np.ndarray]:
    """Indices in batches of ``batch_size``, longest first, so a batch pads little (and a too-large batch fails
    at once rather than at the end)."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def missing_checkpoint(what: str, model: str, looked: str) -> ResourceMissing:
    """The checkpoint ``model`` is not here: where it looked, and the command that fetches a Hugging Face one."""
    if is_hub_name(model):
        fix = f"combo models fetch {model}  (needs internet once; or give model=PATH to a local checkpoint)"
    else:
        fix = ("give model=PATH, the folder of a downloaded checkpoint (or a Hugging Face name to fetch with "
               "combo models fetch NAME)")
    return ResourceMissing(f"{what} {model!r} (looked in {looked})", fix)
