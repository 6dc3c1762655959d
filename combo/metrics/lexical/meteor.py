"""METEOR (Banerjee & Lavie 2005) as ``nltk.translate.meteor_score`` defines it.

Unigrams of a hypothesis and a reference are aligned in stages, each on the
words the earlier stages left unmatched: ``exact`` (same word), ``stem``
(same Porter stem), ``synonym`` (the reference word is a one-word lemma of a
WordNet synset of the hypothesis word). Within a stage, hypothesis words are
taken from last to first and each takes the last still-free reference word
it can match (NLTK's greedy order). With m matches (Banerjee & Lavie 2005, §2)::

    P = m / |h|,  R = m / |r|,  Fmean = P R / (alpha P + (1 - alpha) R)
    Pen = gamma (chunks / m) ** beta,  METEOR = (1 - Pen) Fmean

(alpha 0.9: Fmean = 10PR / (R + 9P)). Several references: the best one. No
match, or an empty side: 0. Statistics per row ``[score, 1]``: the corpus
score is the mean of the segment scores.

As NLTK (and unlike Banerjee & Lavie), the synonym stage after the stem stage
compares *stems*: WordNet is queried with the hypothesis word's stem and the
lemmas are compared with the reference words' stems (``synonyms_of="word"``
queries and compares the words instead).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import OptionError
from ...analysis.ngrams import Vocabulary
from ...analysis.porter import porter_stem
from ...analysis.tokenize import TOKENIZERS, get_tokenizer
from ...analysis.layers import annotate
from ...analysis.wordnet import find_wordnet
from ..base import Metric, Option
from ..registry import register

MODULES = ("exact", "stem", "synonym")  # always applied in this order, as METEOR and NLTK do


def parse_modules(value) -> Tuple[str, ...]:
    """``"exact,stem"`` (or ``"exact+stem"``, for command-line specs) -> ``("exact", "stem")``, canonical order."""
    names = re.split(r"[,+]", value) if isinstance(value, str) else list(value)
    names = [str(n).strip().lower() for n in names if str(n).strip()]
    unknown = sorted(set(names) - set(MODULES))
    if unknown or not names or len(set(names)) != len(names):
        raise OptionError(f"meteor: option modules={value!r} must list distinct modules among "
                          f"{list(MODULES)}, e.g. 'exact,stem,synonym'")
    return tuple(m for m in MODULES if m in names)


@dataclass
class MeteorAnalysis:
    """Tokens of the distinct texts as ids: words (``word``), stems (``stem``), CSR offsets ``ptr``."""

    ptr: np.ndarray
    word: np.ndarray
    words: List[str]
    word_rank: np.ndarray  # rank of each token from the end of its text among equal words
    stem: Optional[np.ndarray] = None
    stems: Optional[List[str]] = None

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.ptr)


def joint_key(*columns: np.ndarray) -> np.ndarray:
    """One int64 key per row of equal-length integer columns, without collisions."""
    key = np.asarray(columns[0], dtype=np.int64)
    for col in columns[1:]:
        col = np.asarray(col, dtype=np.int64)
        width = int(col.max()) + 1 if len(col) else 1
        if len(key) and int(key.max()) >= (2 ** 62) // width:
            key = np.unique(key, return_inverse=True)[1].astype(np.int64).ravel()
        key = key * width + col
    return key


def expand_tokens(ptr: np.ndarray, texts: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens of ``texts[k]`` for every k: (k, flat token index, position in its text)."""
    lens = ptr[texts + 1] - ptr[texts]
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), lens)
    offsets = np.cumsum(lens) - lens
    position = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(offsets, lens)
    return owner, np.repeat(ptr[texts], lens) + position, position


def rank_from_end(owner: np.ndarray, form: np.ndarray) -> np.ndarray:
    """0 for the last token of each (owner, form), 1 for the one before, ...

    Tokens must come in (owner, position) order, as :func:`expand_tokens` gives them.
    """
    key = joint_key(owner, form)[::-1]  # reversed: positions descend within an owner
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    start = np.ones(len(order), dtype=bool)
    start[1:] = sorted_key[1:] != sorted_key[:-1]
    starts = np.flatnonzero(start)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - np.repeat(starts, np.diff(np.append(starts, len(order))))
    return rank[::-1]


def match_same_form(h_owner, h_form, r_owner, r_form, h_rank=None, r_rank=None) -> Tuple[np.ndarray, np.ndarray]:
    """Indices of the matched hypothesis and reference tokens of one exact or stem stage.

    NLTK's greedy (each hypothesis token, last first, takes the last free
    reference token of its form) pairs the k-th last hypothesis token of a
    form with the k-th last reference token of that form. Tokens come in
    (owner, position) order; ``h_rank``/``r_rank`` are their ranks from the
    end among equal forms when already known.
    """
    nh = len(h_owner)
    h_rank = rank_from_end(h_owner, h_form) if h_rank is None else h_rank
    r_rank = rank_from_end(r_owner, r_form) if r_rank is None else r_rank
    keys = joint_key(np.concatenate([h_owner, r_owner]), np.concatenate([h_form, r_form]),
                     np.concatenate([h_rank, r_rank]))
    _, ih, ir = np.intersect1d(keys[:nh], keys[nh:], assume_unique=True, return_indices=True)
    return ih, ir


def synonym_candidates(strings: List[str], h_forms: np.ndarray, r_forms: np.ndarray,
                       keep_self: bool) -> Dict[int, np.ndarray]:
    """For each hypothesis form with any, the reference forms among its WordNet synonyms (the
    ``wordnet-synonyms`` analysis layer: looked up once per word and kept in the analysis cache).

    ``keep_self=False`` leaves out the form itself: after an exact or stem
    stage no free reference token of a pair shares a free hypothesis token's form.
    """
    present = {strings[f]: f for f in np.unique(r_forms).tolist()}
    present_names = present.keys()
    out: Dict[int, np.ndarray] = {}
    forms = np.unique(h_forms).tolist()
    for f, synonyms in zip(forms, annotate("wordnet-synonyms", [strings[f] for f in forms])):
        names = synonyms & present_names
        if not keep_self:
            names = names - {strings[f]}
        if names:
            out[f] = np.fromiter((present[n] for n in names), dtype=np.int64, count=len(names))
    return out


def match_synonyms(h_owner, h_form, r_owner, r_form, synonyms: Dict[int, np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """Indices of the matched tokens of the synonym stage (NLTK's sequential greedy).

    Hypothesis tokens, last first, each take the last free reference token
    whose form is among ``synonyms[form]``. Tokens come in (owner, position)
    order. Candidate pairs are found vectorised; only the greedy choice among
    them is a Python loop.
    """
    empty = np.zeros(0, dtype=np.int64)
    if not synonyms or len(r_owner) == 0:
        return empty, empty
    forms = np.fromiter(synonyms, dtype=np.int64, count=len(synonyms))
    order = np.argsort(forms)
    forms = forms[order]
    syn_lists = [synonyms[f] for f in forms.tolist()]
    syn_len = np.array([len(x) for x in syn_lists], dtype=np.int64)
    syn_flat = np.concatenate(syn_lists)
    local = np.minimum(np.searchsorted(forms, h_form), len(forms) - 1)
    has = forms[local] == h_form
    tok = np.flatnonzero(has)  # hypothesis tokens with at least one candidate form
    local = local[tok]
    counts = syn_len[local]
    cand_tok = np.repeat(tok, counts)
    within = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    cand_form = syn_flat[np.repeat((np.cumsum(syn_len) - syn_len)[local], counts) + within]
    targets = np.zeros(int(max(r_form.max(), syn_flat.max())) + 1, dtype=bool)
    targets[syn_flat] = True
    ref_tok = np.flatnonzero(targets[r_form])  # reference tokens some candidate could match
    keys = joint_key(np.concatenate([h_owner[cand_tok], r_owner[ref_tok]]),
                     np.concatenate([cand_form, r_form[ref_tok]]))
    cand_key, ref_key = keys[:len(cand_tok)], keys[len(cand_tok):]
    by_key = np.argsort(ref_key, kind="stable")
    ref_order, sorted_ref = ref_tok[by_key], ref_key[by_key]
    lo = np.searchsorted(sorted_ref, cand_key, side="left")
    n_edges = np.searchsorted(sorted_ref, cand_key, side="right") - lo
    edge_cand = np.repeat(np.arange(len(cand_tok)), n_edges)
    if len(edge_cand) == 0:
        return empty, empty
    edge_h = cand_tok[edge_cand]
    edge_r = ref_order[lo[edge_cand] + np.arange(len(edge_cand)) - np.repeat(np.cumsum(n_edges) - n_edges, n_edges)]
    order = np.lexsort((-edge_r, -edge_h))  # owners are independent; within one, last tokens first
    matched_h: List[int] = []
    matched_r: List[int] = []
    used_r = set()
    last_h = -1
    for h, r in zip(edge_h[order].tolist(), edge_r[order].tolist()):
        if h == last_h or r in used_r:
            continue
        last_h = h
        used_r.add(r)
        matched_h.append(h)
        matched_r.append(r)
    return np.asarray(matched_h, dtype=np.int64), np.asarray(matched_r, dtype=np.int64)


def count_chunks(owner: np.ndarray, h_pos: np.ndarray, r_pos: np.ndarray, n_owners: int) -> np.ndarray:
    """Fewest chunks of each alignment: runs adjacent in both the hypothesis and the reference.

    Matches must come sorted by (owner, hypothesis position).
    """
    o, h, r = owner, h_pos, r_pos
    joined = (o[1:] == o[:-1]) & (h[1:] == h[:-1] + 1) & (r[1:] == r[:-1] + 1)
    matches = np.bincount(o, minlength=n_owners)
    return matches - np.bincount(o[1:][joined], minlength=n_owners)


def meteor_from_counts(matches, chunks, hyp_len, ref_len, alpha: float, beta: float, gamma: float) -> np.ndarray:
    """Banerjee & Lavie 2005, §2 (NLTK's ``single_meteor_score``); 0 without a match or with an empty side."""
    m = np.asarray(matches, dtype=np.float64)
    ok = (m > 0) & (np.asarray(hyp_len) > 0) & (np.asarray(ref_len) > 0)
    m_ok = np.where(ok, m, 1.0)
    precision = m_ok / np.where(ok, hyp_len, 1)
    recall = m_ok / np.where(ok, ref_len, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
        penalty = gamma * (np.asarray(chunks, dtype=np.float64) / m_ok) ** beta
    return np.where(ok, (1 - penalty) * fmean, 0.0)


@register("meteor")
class METEOR(Metric):
    """METEOR (Banerjee & Lavie 2005) matching NLTK's ``meteor_score``; modules exact, stem, synonym.

    Only the ``synonym`` module needs WordNet, read by :mod:`combo.analysis.wordnet` as NLTK 3.9+ reads it;
    the stems are :mod:`combo.analysis.porter`'s, NLTK's Porter stems. NLTK itself is not imported.
    Each distinct text is tokenised once, each distinct word stemmed and
    looked up in WordNet once; exact and stem stages are vectorised over all
    (hypothesis, reference) pairs. Reference weights are ignored.
    """

    implementation_version = "2"  # 2: combo's own WordNet reader and Porter stemmer (NLTK 3.9+'s synonyms)
    locality = "row"  # chunked scoring gives the same statistics (tests/test_scale.py)

    family = "lexical"
    higher_is_better = True
    resources = ("wordnet",)  # only with the synonym module
    citation = "Banerjee & Lavie 2005, §2 (Fmean, fragmentation penalty); as nltk.translate.meteor_score"
    options = {
        "alpha": Option(0.9, "weight of precision vs recall in Fmean", check=lambda v: 0.0 <= v <= 1.0),
        "beta": Option(3.0, "exponent of the fragmentation penalty", check=lambda v: v >= 0.0),
        "gamma": Option(0.5, "weight of the fragmentation penalty", check=lambda v: 0.0 <= v <= 1.0),
        "modules": Option("exact,stem,synonym", "matching stages among exact, stem, synonym (comma- or +-separated)",
                          type="list", choices=MODULES, short="mod"),
        "synonyms_of": Option("stem", "after the stem stage, WordNet looks up the stem (NLTK) or the word",
                              choices=("stem", "word"), short="syn"),
        "tokenize": Option("none", "tokenizer (none: split on white space, NLTK's pre-tokenised input)",
                           choices=tuple(TOKENIZERS), short="tok"),
        "lowercase": Option(True, "lowercase every token (NLTK's preprocess=str.lower)", short="lc"),
    }

    def _post_init(self) -> None:
        self._modules = parse_modules(self.params["modules"])
        self.params["modules"] = ",".join(self._modules)
        self._tokenizer = get_tokenizer(self.params["tokenize"])

    def language_support(self) -> Tuple[Tuple[str, ...], str]:
        if self._modules == ("exact",):
            return (), ""
        return ("en",), "Porter stems and WordNet synonyms are English (modules=exact reads any language)"

    def check_resources(self) -> None:
        if "synonym" in self._modules:
            find_wordnet()

    # -- analysis ---------------------------------------------------------------
    def analyse(self, texts: Sequence[str]) -> MeteorAnalysis:
        tok = self._tokenizer
        raw = Vocabulary()
        raw_ids, ptr = raw.encode([tok(t).split() for t in texts])
        raw_words = list(raw.index)
        if self.params["lowercase"]:
            forms = Vocabulary()
            to_form, _ = forms.encode([[w.lower() for w in raw_words]])
            word, words = to_form[raw_ids], list(forms.index)
        else:
            word, words = raw_ids, raw_words
        text_of = np.repeat(np.arange(len(texts), dtype=np.int64), np.diff(ptr))
        analysis = MeteorAnalysis(ptr=ptr, word=word, words=words, word_rank=rank_from_end(text_of, word))
        if "stem" in self._modules:
            stems = Vocabulary()
            to_stem, _ = stems.encode([[porter_stem(w) for w in words]])
            analysis.stem = to_stem[word]
            analysis.stems = list(stems.index)
        return analysis

    # -- statistics -------------------------------------------------------------
    def pair_scores(self, analysis: MeteorAnalysis, hyp_texts: np.ndarray, ref_texts: np.ndarray) -> np.ndarray:
        """METEOR of each (hypothesis text, reference text) pair."""
        n_pairs = len(hyp_texts)
        h_owner, h_tok, h_pos = expand_tokens(analysis.ptr, hyp_texts)
        r_owner, r_tok, r_pos = expand_tokens(analysis.ptr, ref_texts)
        h_free = np.ones(len(h_tok), dtype=bool)
        r_free = np.ones(len(r_tok), dtype=bool)
        found: List[Tuple[np.ndarray, np.ndarray]] = []  # (hyp token, ref token) indices per stage
        for module in self._modules:
            hf, rf = np.flatnonzero(h_free), np.flatnonzero(r_free)
            if module == "synonym":
                use_stem = analysis.stem is not None and self.params["synonyms_of"] == "stem"
                flat = analysis.stem if use_stem else analysis.word
                strings = analysis.stems if use_stem else analysis.words
                h_form, r_form = flat[h_tok[hf]], flat[r_tok[rf]]
                synonyms = synonym_candidates(strings, h_form, r_form, keep_self=len(found) == 0)
                ih, ir = match_synonyms(h_owner[hf], h_form, r_owner[rf], r_form, synonyms)
            elif module == "exact":  # first stage: every token is free, ranks are per text
                ih, ir = match_same_form(h_owner, analysis.word[h_tok], r_owner, analysis.word[r_tok],
                                         analysis.word_rank[h_tok], analysis.word_rank[r_tok])
            else:
                ih, ir = match_same_form(h_owner[hf], analysis.stem[h_tok[hf]], r_owner[rf], analysis.stem[r_tok[rf]])
            h_free[hf[ih]] = False
            r_free[rf[ir]] = False
            found.append((hf[ih], rf[ir]))
        mh = np.concatenate([h for h, _ in found])
        mr = np.concatenate([r for _, r in found])
        order = np.argsort(mh)  # token indices run in (pair, position) order
        mh, mr = mh[order], mr[order]
        owner = h_owner[mh]
        chunks = count_chunks(owner, h_pos[mh], r_pos[mr], n_pairs)
        matches = np.bincount(owner, minlength=n_pairs)
        lengths = analysis.lengths
        p = self.params
        return meteor_from_counts(matches, chunks, lengths[hyp_texts], lengths[ref_texts],
                                  p["alpha"], p["beta"], p["gamma"])

    def statistics(self, analysis: MeteorAnalysis, hyp_ids, ref_ptr, ref_ids, ref_weights=None) -> np.ndarray:
        hyp_ids = np.asarray(hyp_ids, dtype=np.int64)
        ref_ids = np.asarray(ref_ids, dtype=np.int64)
        n_rows = len(hyp_ids)
        pair_row = np.repeat(np.arange(n_rows), np.diff(ref_ptr))
        n_texts = len(analysis.ptr) - 1
        uniq, inverse = np.unique(hyp_ids[pair_row] * n_texts + ref_ids, return_inverse=True)
        scores = self.pair_scores(analysis, uniq // n_texts, uniq % n_texts)[inverse.ravel()]
        best = np.zeros(n_rows)  # a row without references scores 0
        np.maximum.at(best, pair_row, scores)
        return np.column_stack([best, np.ones(n_rows)])

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        stats = np.asarray(stats, dtype=np.float64)
        total = stats[..., 1]
        return np.divide(stats[..., 0], total, out=np.zeros(np.shape(total)), where=total > 0)
