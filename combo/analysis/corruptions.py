"""Fluency corruptions of sentences from their shallow parse (Boag et al. 2016, SICK+).

MUTT's SICK+ set adds three fluency-disrupting corruptions to the SICK pairs,
each made from a sentence's chunks and prepositional noun phrases (PNPs):

- ``dup_pp``: every prepositional phrase is duplicated, the copy right after
  it ("a girl is riding in a toy car" -> "... in a toy car in a toy car"), as
  the authors' released generator (``double_PP``) does;
- ``rm_pp_head``: the head noun (last noun) of one prepositional phrase is
  removed ("... riding in a toy car" -> "... riding in a toy"), the paper's
  description; the authors' released generator (``remove_prep``) drops the
  preposition of every PNP instead;
- ``reorder_chunks``: the chunks (and the words outside any chunk) are put in
  another order, sentence-final punctuation staying last ("a girl | is riding |
  in | a toy car" -> "in | a toy car | a girl | is riding"), as ``swap_chunks``.

The parse is Pattern's tagger and chunker as TextBlob ships it (the
``shallow`` analysis layer, cached like every layer); the choice of phrase and
of order is drawn from a generator seeded per sentence, so a run is repeatable.
A sentence without a PNP gives no ``dup_pp``/``rm_pp_head`` corruption, and
one with fewer than two chunks no ``reorder_chunks``; these are counted.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .layers import ShallowParse, annotate

FLUENCY_CORRUPTIONS = ("dup_pp", "rm_pp_head", "reorder_chunks")


def _spans(tags: Sequence[str]) -> List[Tuple[int, int]]:
    """``[start, end)`` token spans of a BIO tag sequence; a token tagged ``O`` is a span of its own."""
    spans: List[Tuple[int, int]] = []
    for i, tag in enumerate(tags):
        if tag.startswith("I-") and spans and i > 0 and tags[i - 1] != "O" \
                and tags[i - 1][2:] == tag[2:]:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return spans


def pnp_spans(parse: ShallowParse) -> List[Tuple[int, int]]:
    """Token spans of the prepositional noun phrases (Pattern's PNP tags)."""
    return [(a, b) for a, b in _spans(parse.pnp) if parse.pnp[a] != "O"]


def duplicate_pp(parse: ShallowParse, rng: np.random.Generator) -> Optional[str]:
    """The sentence with each of its PNPs repeated right after itself; None without a PNP."""
    spans = pnp_spans(parse)
    if not spans:
        return None
    words, out, at = list(parse.words), [], 0
    for a, b in spans:
        out += words[at:b] + words[a:b]
        at = b
    return " ".join(out + words[at:])


def remove_pp_head(parse: ShallowParse, rng: np.random.Generator) -> Optional[str]:
    """The sentence without the head noun (last noun) of one of its PNPs; None when no PNP has a noun."""
    heads = []
    for a, b in pnp_spans(parse):
        nouns = [i for i in range(a, b) if parse.pos[i].startswith("NN")]
        if nouns:
            heads.append(nouns[-1])
    if not heads:
        return None
    drop = heads[int(rng.integers(len(heads)))]
    return " ".join(w for i, w in enumerate(parse.words) if i != drop)


def reorder_chunks(parse: ShallowParse, rng: np.random.Generator) -> Optional[str]:
    """The sentence with its chunks in a random order other than the original; None with < 2 distinct chunks."""
    words, tags = list(parse.words), list(parse.chunks)
    final = ""
    if words and words[-1] in (".", "?", "!"):
        final, words, tags = " " + words[-1], words[:-1], tags[:-1]
    chunks = [" ".join(words[a:b]) for a, b in _spans(tags)]
    if len(set(chunks)) < 2:
        return None
    original = " ".join(chunks)
    while True:  # ends: some permutation of >= 2 distinct chunks differs from the original
        order = rng.permutation(len(chunks))
        text = " ".join(chunks[k] for k in order)
        if text != original:
            return text + final


_MAKERS = {"dup_pp": duplicate_pp, "rm_pp_head": remove_pp_head, "reorder_chunks": reorder_chunks}


def _sentence_seed(seed: int, corruption: str, sentence: str) -> int:
    """A per-(sentence, corruption) seed, independent of the sentence's position in the set."""
    digest = hashlib.sha256(f"{seed}\t{corruption}\t{sentence}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass
class FluencyCorruptions:
    """Corruptions of one sentence set.

    ``pairs[type]`` lists ``(sentence index, original, corrupted)``: the original
    as the parser's tokens joined by spaces (as the corruption is), so that the
    two differ only by the corruption.
    """

    pairs: Dict[str, List[Tuple[int, str, str]]]
    skipped: Dict[str, int] = field(default_factory=dict)  # sentences the type does not apply to


def fluency_corruptions(sentences: Sequence[str], corruptions: Sequence[str] = FLUENCY_CORRUPTIONS,
                        seed: int = 0) -> FluencyCorruptions:
    """SICK+ fluency corruptions (Boag et al. 2016) of each sentence, seeded.

    Needs the ``shallow`` layer (TextBlob); raises ResourceMissing without it.
    """
    from ..errors import OptionError

    unknown = [c for c in corruptions if c not in _MAKERS]
    if unknown:
        raise OptionError(f"unknown fluency corruption(s) {unknown}; choose from {list(FLUENCY_CORRUPTIONS)}")
    parses = annotate("shallow", list(sentences))
    out = FluencyCorruptions({c: [] for c in corruptions}, {c: 0 for c in corruptions})
    for c in corruptions:
        for i, (sentence, parse) in enumerate(zip(sentences, parses)):
            text = _MAKERS[c](parse, np.random.default_rng(_sentence_seed(seed, c, sentence)))
            original = " ".join(parse.words)
            if text is None or text == original:
                out.skipped[c] += 1
            else:
                out.pairs[c].append((i, original, text))
    return out
