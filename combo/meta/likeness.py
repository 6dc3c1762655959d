"""Human likeness of a metric set: KING (Amigó et al. 2005, 2006) and ORANGE (Lin & Och 2004).

KING (QARLA, Amigó, Gonzalo, Peñas & Verdejo, ACL 2005; for MT Amigó,
Giménez, Gonzalo & Màrquez, COLING/ACL 2006, and Giménez & Màrquez, IJCNLP
2008): for one segment, the probability over references r that the held-out
reference looks at least as human as every automatic candidate, each judged
by QUEEN against the other references::

    KING_X = P_r [ for all a in A: QUEEN_{X,R-{r}}(r) >= QUEEN_{X,R-{r}}(a) ]

averaged over segments. It needs one reference more than QUEEN (4 with the
default ``triples="distinct"``). Ties count as human-like (``>=``): a metric
that cannot tell anything apart (constant) gets KING 1, so every result
reports how many references won only by a tie (``ties``).

ORANGE (Lin & Och, COLING 2004, §2 "ORANGE"): the average rank of the
references among the candidates divided by the length of the list they are
ranked in, averaged over segments (lower is better). Each reference r is
ranked against the N candidates with both scored by the other references
``R - {r}`` (the scores KING uses), so the list has N + 1 entries; it applies
to single metrics and to combinations (QUEEN, ULC). How ties are ranked is a
choice: ``ties="average"`` (mid-rank, default), ``"optimistic"`` (reference
first) or ``"pessimistic"``.

Everything works on arrays: ``segments`` is a list of ``(cand_ref, ref_ref)``
per segment as in :mod:`combo.meta.queen`; ragged sizes are fine; segments
that cannot be scored are counted in ``skipped`` with the reason. KING over
many segments is three pure steps, :func:`king_plan` (every random draw, in
segment order), :func:`king_chunk` (one chunk of segments) and :func:`king_merge`;
:func:`king` runs them here, and :mod:`combo.meta_run` runs the chunks under a
memory budget, on workers or Dask, with progress.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .queen import (
    BITSET_CHUNK_WORDS,
    SEGMENT_CHUNK_BYTES,
    Seed,
    SkippedSegments,
    _use_broadcast,
    check_max_refs,
    check_triples,
    leave_one_out_counts,
    leave_one_out_counts_many,
    min_references,
    prepare_segment,
    queen_naive,
    restrict_references,
    sample_references,
    segment_chunks,
    triple_count,
)
from ..errors import InputError, OptionError

ORANGE_TIES = ("average", "optimistic", "pessimistic")
KING_TIES = ("count", "half", "strict")  # a reference tied with the best candidate counts 1, 1/2 or 0


def check_king_ties(ties: str) -> str:
    """``ties`` itself, after checking that it is one of :data:`KING_TIES`."""
    if ties not in KING_TIES:
        raise OptionError(f"ties={ties!r} must be one of {list(KING_TIES)}")
    return ties


@dataclass
class KingSegment:
    """KING of one segment with what it is made of (leave-one-out QUEEN of references and candidates)."""

    king: float  # fraction of references r with QUEEN_{R-r}(r) >= max_a QUEEN_{R-r}(a)
    ref_queen: np.ndarray  # (n_ref,) QUEEN_{X,R-{r}}(r)
    cand_queen: np.ndarray  # (n_ref, n_cand) QUEEN_{X,R-{r}}(a)
    human_like: np.ndarray  # (n_ref,) bool, the event KING counts
    ties: int  # references counted human-like only through a tie with the best candidate
    references: Optional[np.ndarray] = None  # indices of the references used when sub-sampled
    held_out: Optional[np.ndarray] = None  # with a held-out sample: the references r the arrays above are for
    credit: Optional[np.ndarray] = None  # (n_ref,) or (sample,) what each held-out reference adds (1, 1/2, 0)
    population: int = 0  # references that could have been held out (n_ref)
    tied: Optional[np.ndarray] = None  # (n_ref,) or (sample,) bool: the reference's QUEEN equals the best candidate's


@dataclass
class KingResult(SkippedSegments):
    """KING over segments: ``value`` is the mean of ``per_segment`` over the segments not skipped."""

    value: float
    per_segment: np.ndarray  # NaN where skipped
    segments: List[Optional[KingSegment]]
    skipped: Dict[int, str] = field(default_factory=dict)
    sampled: List[int] = field(default_factory=list)
    triples: str = "distinct"
    per_segment_field = "segments"

    held_out: Optional[int] = None  # references held out per segment when estimated (None: exact)
    estimated: List[int] = field(default_factory=list)  # segments whose KING is a held-out-sample estimate
    stderr: float = 0.0  # standard error of ``value`` from the held-out and segment samples (0 when exact)
    segment_population: Optional[int] = None  # the segments are a simple random sample of this many (None: all)

    @property
    def ties(self) -> int:
        """References counted human-like only through a tie with the best candidate, over all segments."""
        return sum(s.ties for s in self.segments if s is not None)

    @property
    def comparisons(self) -> int:
        """Reference-against-best-candidate comparisons KING counted (one per held-out reference and segment)."""
        return sum(len(s.credit) for s in self.segments if s is not None and s.credit is not None)

    @property
    def tie_share(self) -> float:
        """Share of the comparisons that are ties (the reference's QUEEN equals the best candidate's); NaN if none.

        Under the default ``ties="count"`` every tie counts as human-like, so a metric set that cannot
        tell references from candidates (all QUEEN values equal) gets KING 1 from ties alone.
        """
        n = self.comparisons
        return self.ties / n if n else float("nan")

    def value_with_ties(self, ties: str) -> float:
        """KING of the same counts under another tie rule (``count``, ``half``, ``strict``), without recounting."""
        check_king_ties(ties)
        weight = {"count": 0.0, "half": 0.5, "strict": 1.0}[ties]
        credits = [s.human_like.astype(float) - weight * s.tied
                   for s in self.segments if s is not None and s.tied is not None]
        return exact_mean_of_means(credits)

    @property
    def segment_sample(self) -> bool:
        """The segments are a sample of a larger test bed's (``segment_population``)."""
        return self.segment_population is not None and self.segment_population > len(self.per_segment)

    @property
    def exact(self) -> bool:
        """Whether ``value`` is exact: no held-out estimate and no sample of segments."""
        return not self.estimated and not self.segment_sample

    def interval(self, confidence: float = 0.95) -> Tuple[float, float]:
        """Normal interval for the exact KING of the whole test bed, from the samples (a point when exact)."""
        from scipy.stats import norm

        half = float(norm.ppf(0.5 + confidence / 2)) * self.stderr
        return self.value - half, self.value + half


def exact_mean_of_means(credits: Sequence[np.ndarray]) -> float:
    """The mean over segments of each segment's mean credit, summed in exact fractions and rounded once.

    A credit is 0, 1/2 or 1 (exact in binary), so a KING of 7/40 is 0.175,
    where summing the rounded segment shares in float64 gives
    0.17500000000000002. Segments with no credit (NaN) are left out; NaN when
    none is left.
    """
    shares = [Fraction(float(c.sum())) / len(c) for c in credits if len(c) and np.isfinite(c).all()]
    return float(sum(shares, Fraction(0)) / len(shares)) if shares else float("nan")


def king_segment(cand_ref, ref_ref, triples: str = "distinct",
                 higher_is_better: Optional[Sequence[bool]] = None,
                 metric_names: Optional[Sequence[str]] = None,
                 segment: Optional[int] = None, ties: str = "count") -> KingSegment:
    """KING of one segment (Amigó et al. 2006): needs ``min_references(triples) + 1`` references, >= 1 candidate.

    ``ties``: a reference whose QUEEN equals the best candidate's counts 1
    (``"count"``, the paper's ``>=``), 1/2 (``"half"``) or 0 (``"strict"``).
    """
    check_king_ties(ties)
    cand, refs = prepare_segment(cand_ref, ref_ref, triples, higher_is_better, metric_names, segment)
    _, n_cand, n = cand.shape
    where = "" if segment is None else f"segment {segment}: "
    need = min_references(triples) + 1
    if n < need:
        raise InputError(f"{where}KING with triples={triples!r} needs at least {need} references, got {n}")
    if n_cand == 0:
        raise InputError(f"{where}KING needs at least one automatic candidate")
    return _king_from_counts(*leave_one_out_counts(cand, refs, triples), triples, ties)


def _king_from_counts(cand_counts: np.ndarray, ref_counts: np.ndarray, triples: str,
                      ties: str = "count", held_out: Optional[np.ndarray] = None) -> KingSegment:
    """KING of one segment from its leave-one-out counts (integers: ties are exact).

    ``held_out``: only these references' events are counted (a uniform sample
    of them gives an unbiased estimate of the segment's KING).
    """
    n = len(ref_counts)
    total = triple_count(n - 1, triples)
    if held_out is not None:
        cand_counts, ref_counts = cand_counts[held_out], ref_counts[held_out]
    best = cand_counts.max(axis=1)
    human_like = ref_counts >= best
    tied = ref_counts == best
    credit = human_like.astype(float) - {"count": 0.0, "half": 0.5, "strict": 1.0}[ties] * tied
    return KingSegment(king=float(credit.mean()), ref_queen=ref_counts / total,
                       cand_queen=cand_counts / total, human_like=human_like,
                       ties=int(tied.sum()), held_out=held_out, credit=credit, population=n, tied=tied)


def king_segment_naive(cand_ref, ref_ref, triples: str = "distinct",
                       higher_is_better: Optional[Sequence[bool]] = None) -> float:
    """KING of one segment straight from the definition with :func:`queen_naive` (slow; for tests)."""
    cand, refs = prepare_segment(cand_ref, ref_ref, triples, higher_is_better)
    n = cand.shape[2]
    wins = 0
    for r in range(n):
        rest = [i for i in range(n) if i != r]
        others = refs[:, rest][:, :, rest]
        q_ref = queen_naive(refs[:, r:r + 1, rest], others, triples)[0]
        q_cand = queen_naive(cand[:, :, rest], others, triples)
        wins += bool(q_ref >= q_cand.max())
    return wins / n


def check_held_out(held_out: Optional[int]) -> None:
    """Check ``held_out``: None (exact KING) or an integer >= 2 of references held out per segment."""
    if held_out is None:
        return
    if isinstance(held_out, bool) or not isinstance(held_out, (int, np.integer)) or held_out < 2:
        raise OptionError(f"held_out={held_out!r} must be an integer >= 2 (references held out per segment)")


def check_king_options(triples: str, ties: str, max_refs: Optional[int], held_out: Optional[int]) -> None:
    """Refuse KING options that cannot work (an :class:`OptionError`), in the order :func:`king` checks them."""
    check_triples(triples)
    check_king_ties(ties)
    check_max_refs(max_refs, triples, extra=1)
    check_held_out(held_out)


Draws = Dict[int, Tuple[Optional[np.ndarray], Optional[np.ndarray]]]


@dataclass
class KingPlan:
    """What KING decides before it counts anything: the segments it skips, and every random draw.

    ``draws[i] = (kept, sample)`` for each segment ``i`` that is counted, in
    segment order: the references kept under ``max_refs`` (None: all) and the
    held-out references whose event is evaluated (None: every reference).
    Drawing all of them first, in segment order, makes the result the same
    however the segments are then cut into chunks and wherever the chunks are
    counted (:func:`king_chunk`, merged by :func:`king_merge`).
    """

    result: KingResult  # skipped, sampled and estimated filled in; king_merge fills in the values
    draws: Draws
    options: Tuple  # (triples, higher_is_better, metric_names, ties): king_chunk's options but the bitset words

    def kept_references(self, segments, i: int) -> int:
        """References segment ``i`` is counted with (after ``max_refs``)."""
        kept = self.draws[i][0]
        return segment_shape(segments, i)[2] if kept is None else len(kept)

    def chunks(self, segments, max_bytes: int) -> List[List[int]]:
        """The counted segments in consecutive chunks of at most ``max_bytes`` of scores (at least one each)."""
        chunks = [[i for i in chunk if i in self.draws] for chunk in segment_chunks(segments, max_bytes)]
        return [c for c in chunks if c]


def king_plan(segments: Sequence[Tuple[np.ndarray, np.ndarray]], triples: str = "distinct",
              higher_is_better: Optional[Sequence[bool]] = None,
              metric_names: Optional[Sequence[str]] = None,
              max_refs: Optional[int] = None, seed: Seed = None, ties: str = "count",
              held_out: Optional[int] = None, segment_population: Optional[int] = None) -> KingPlan:
    """KING's :class:`KingPlan` for ``segments``, with the options of :func:`king` (checked here)."""
    check_king_options(triples, ties, max_refs, held_out)
    rng = np.random.default_rng(seed)
    held_rng = np.random.default_rng(_held_out_seed(seed))
    need = min_references(triples) + 1
    if segment_population is not None and (isinstance(segment_population, bool)
                                           or not isinstance(segment_population, (int, np.integer))
                                           or segment_population < len(segments)):
        raise OptionError(f"segment_population={segment_population!r} must be a whole number of segments, not "
                          f"smaller than the {len(segments)} sampled from it")
    out = KingResult(value=float("nan"), per_segment=np.full(len(segments), np.nan), segments=[None] * len(segments),
                     triples=triples, held_out=held_out, segment_population=segment_population)
    draws: Draws = {}
    for i in range(len(segments)):
        m, n_cand, n = segment_shape(segments, i)
        if n < need:
            out.skipped[i] = f"{n} references; KING with triples={triples!r} needs >= {need}"
            continue
        if n_cand == 0:
            out.skipped[i] = "no candidates"
            continue
        keep = sample_references(n, max_refs, rng)
        if keep is not None:
            out.sampled.append(i)
            n = len(keep)
        sample = None
        if held_out is not None and n > held_out and not _use_broadcast(n, "auto"):
            sample = np.sort(held_rng.choice(n, size=held_out, replace=False))
            out.estimated.append(i)
        draws[i] = (keep, sample)
    return KingPlan(out, draws, (triples, higher_is_better, metric_names, ties))


def king_merge(plan: KingPlan, results: Sequence[List[Tuple[int, KingSegment]]]) -> KingResult:
    """The :class:`KingResult` of ``plan`` from the results of :func:`king_chunk` on its chunks (any order)."""
    out = plan.result
    for chunk_result in results:
        for i, seg_result in chunk_result:
            out.segments[i] = seg_result
            out.per_segment[i] = seg_result.king
    if out.n_used:
        out.value = exact_mean_of_means([s.credit if s.credit is not None else np.array([s.king])
                                         for s in out.segments if s is not None])
        out.stderr = _held_out_stderr(out)
    return out


def king(segments: Sequence[Tuple[np.ndarray, np.ndarray]], triples: str = "distinct",
         higher_is_better: Optional[Sequence[bool]] = None,
         metric_names: Optional[Sequence[str]] = None,
         max_refs: Optional[int] = None, seed: Seed = None, ties: str = "count",
         held_out: Optional[int] = None, *, segment_population: Optional[int] = None,
         chunk_bytes: int = SEGMENT_CHUNK_BYTES, max_words: int = BITSET_CHUNK_WORDS) -> KingResult:
    """KING over segments ``(cand_ref, ref_ref)``, averaged over the segments that can be scored.

    ``ties`` as in :func:`king_segment` (default: the paper's ``>=``).

    Skipped (listed in ``skipped``): fewer than ``min_references(triples) + 1``
    references, or no candidate. ``value`` is NaN when every segment is
    skipped. With ``max_refs=K`` a segment with more references uses K drawn
    uniformly without replacement from ``np.random.default_rng(seed)``: an
    estimate, listed in ``sampled`` (see docs/queen-king.md for its error).

    ``held_out=S`` (every reference kept): in a segment with more than S
    references (counted by prefix bitsets, i.e. more than 16), KING's event is
    evaluated for S held-out references drawn uniformly without replacement,
    each exactly (its QUEEN and every candidate's against all the other
    references). The segment's share is then an unbiased estimate of its
    exact KING, and so is the mean (``estimated`` lists those segments;
    ``stderr`` and :meth:`KingResult.interval` give its sampling error). The
    cost of a segment falls from ``(n_cand + n) n^3`` to ``(n_cand + S) n^3``
    bit operations; see docs/scale.md.

    ``segment_population=N``: ``segments`` are a simple random sample of the N
    segments of a larger test bed (:meth:`combo.testbed.Testbed.sample_segments`,
    drawn before any scoring so that only their reference pairs are scored).
    The mean is then an unbiased estimate of the whole test bed's KING, and
    ``stderr`` is that of two-stage sampling (:func:`two_stage_stderr`).

    Here, in this process: :func:`king_plan` (every random draw first, in
    segment order), :func:`king_chunk` on chunks of at most ``chunk_bytes`` of
    scores (``max_words`` per array of dominance bitsets), :func:`king_merge`.
    The sizes change memory, never the result. Under a memory budget, in
    parallel and with progress (``memory=``, ``jobs=``, ``progress=``):
    :func:`combo.meta_run.king`, which gives the same result.
    """
    plan = king_plan(segments, triples, higher_is_better, metric_names, max_refs, seed, ties, held_out,
                     segment_population)
    options = plan.options + (max_words,)
    return king_merge(plan, [king_chunk(segments, chunk, plan.draws, options)
                             for chunk in plan.chunks(segments, chunk_bytes)])


def king_chunk(segments, chunk: Sequence[int], draws: Draws, options) -> List[Tuple[int, KingSegment]]:
    """KING of the segments ``chunk`` (one task: prepared together, small ones stacked).

    ``draws``: the plan's draws for (at least) these segments; ``options``:
    ``KingPlan.options`` and the uint64 words of one chunk of bitsets.
    """
    triples, higher_is_better, metric_names, ties, max_words = options
    prepared = []
    for i in chunk:
        keep = draws[i][0]
        c, r = restrict_references(*segments[i], keep)
        prepared.append(prepare_segment(c, r, triples, higher_is_better, metric_names, segment=i))
    counts = leave_one_out_counts_many(prepared, triples, held_out=[draws[i][1] for i in chunk], max_words=max_words)
    out = []
    for i, c in zip(chunk, counts):
        seg_result = _king_from_counts(*c, triples, ties, held_out=draws[i][1])
        seg_result.references = draws[i][0]
        out.append((i, seg_result))
    return out


def segment_score_bytes(segments, i: int) -> int:
    """Bytes of segment ``i``'s scores as float64, from its shape."""
    m, n_cand, n = segment_shape(segments, i)
    return 8 * m * (n_cand * n + n * n)


def segment_shape(segments, i: int) -> Tuple[int, int, int]:
    """(metrics, candidates, references) of segment ``i``, without making its arrays when the sequence can tell."""
    shape = segments.shape_of(i) if hasattr(segments, "shape_of") else np.shape(segments[i][0])
    return (1,) * (3 - len(shape)) + tuple(int(x) for x in shape)


def _held_out_seed(seed: Seed):
    """The held-out draws' own stream, so that they leave the ``max_refs`` draws of ``seed`` unchanged."""
    if isinstance(seed, np.random.Generator):
        return seed
    return None if seed is None else [int(seed), 0x4B494E47]  # "KING"


def _held_out_stderr(out: KingResult) -> float:
    """Standard error of the test bed's KING estimate from the held-out references and the sampled segments.

    A segment estimated from ``s`` of its ``n`` references drawn without
    replacement has the within-segment variance ``(1 - s/n) S^2 / s`` (``S^2``:
    sample variance of the held-out credits, the unbiased estimate of the
    finite-population variance; Cochran 1977, eq. 2.22); exact segments have 0.
    """
    used = [i for i, seg in enumerate(out.segments) if seg is not None]
    within = np.zeros(len(used))
    estimated = set(out.estimated)
    for k, i in enumerate(used):
        if i in estimated:
            credit, n = out.segments[i].credit, out.segments[i].population
            within[k] = (1.0 - len(credit) / n) * float(np.var(credit, ddof=1)) / len(credit)
    population = out.segment_population if out.segment_sample else out.n_used
    return two_stage_stderr(out.per_segment[used], within, population)


def two_stage_stderr(values: np.ndarray, within: np.ndarray, population: int) -> float:
    """Standard error of the mean of ``values`` over ``n`` segments drawn without replacement from
    ``population``, each value itself estimated with variance ``within[i]`` from a sample inside its segment.

    The unbiased variance estimator of two-stage sampling with units of equal
    weight (Cochran 1977, Sampling Techniques, ch. 10, with each unit's own
    second-stage sampling fraction and variance): ``(1 - f) s_b^2 / n + f sum(within) / n^2``
    with ``f = n / population`` and ``s_b^2`` the sample variance of ``values``.
    With every segment (``f = 1``) it is ``sqrt(sum(within)) / n``; with one
    segment of a larger population it is undefined (NaN).
    """
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        return float("nan")
    f = n / population
    if f >= 1.0:
        return float(np.sqrt(np.sum(within)) / n)
    if n < 2:
        return float("nan")
    between = (1.0 - f) * float(np.var(values, ddof=1)) / n
    return float(np.sqrt(between + f * float(np.sum(within)) / n ** 2))


def king_operations(segments, i: int, held_out: Optional[int]) -> float:
    """Bit operations of segment ``i``'s leave-one-out counts (a runner's progress units and task order), from its
    shape: ``m (n_cand + queried) n max(n^2 / 64, 1)``."""
    m, n_cand, n = segment_shape(segments, i)
    return king_segment_operations(m, n_cand, n, held_out)


def king_segment_operations(n_metrics: int, n_cand: int, n_ref: int, held_out: Optional[int] = None) -> float:
    """Bit operations of KING's leave-one-out counts for one segment of this shape (see :func:`king_operations`)."""
    queried = n_ref if held_out is None else min(n_ref, held_out)
    return float(n_metrics) * (n_cand + queried) * n_ref * max(n_ref * n_ref / 64.0, 1.0)


# -- ORANGE -------------------------------------------------------------------------------------

@dataclass
class OrangeResult(SkippedSegments):
    """ORANGE over segments (lower is better): mean of the per-segment normalised reference ranks."""

    value: float
    per_segment: np.ndarray  # NaN where skipped
    ranks: List[Optional[np.ndarray]]  # per segment, the rank of each reference (1 = above every candidate)
    skipped: Dict[int, str] = field(default_factory=dict)
    ties: str = "average"
    per_segment_field = "ranks"


def reference_ranks(ref_scores, cand_scores, ties: str = "average") -> np.ndarray:
    """Rank of each reference among the candidates (1 = best), both scored without that reference.

    ``ref_scores`` (n_ref,) = s_{R-{r}}(r); ``cand_scores`` (n_ref, n_cand) =
    s_{R-{r}}(a). Higher scores rank first; candidates tied with the reference
    add 1/2 each (``"average"``), 0 (``"optimistic"``) or 1 (``"pessimistic"``).
    """
    if ties not in ORANGE_TIES:
        raise OptionError(f"ties={ties!r} must be one of {list(ORANGE_TIES)}")
    ref = np.asarray(ref_scores, dtype=np.float64).reshape(-1)
    cand = np.asarray(cand_scores, dtype=np.float64)
    if cand.ndim != 2 or cand.shape[0] != ref.shape[0]:
        raise InputError(f"cand_scores must have shape (n_ref, n_cand) = ({ref.shape[0]}, n_cand); got {cand.shape}")
    if np.isnan(ref).any() or np.isnan(cand).any():
        raise InputError("ORANGE scores contain NaN")
    above = (cand > ref[:, None]).sum(axis=1)
    tied = (cand == ref[:, None]).sum(axis=1)
    weight = {"average": 0.5, "optimistic": 0.0, "pessimistic": 1.0}[ties]
    return 1.0 + above + weight * tied


def orange(ref_scores: Sequence[np.ndarray], cand_scores: Sequence[np.ndarray],
           ties: str = "average") -> OrangeResult:
    """ORANGE (Lin & Och 2004, §2) from leave-one-out scores, one entry per segment.

    Per segment: ``mean_r rank(r) / (n_cand + 1)``, with :func:`reference_ranks`;
    the value is the mean over segments (Lin & Och's
    ``sum_i Rank(Oracle_i) / (S (N + 1))`` when every segment has N
    candidates). Segments with no reference or no candidate are skipped.
    For QUEEN use :attr:`KingSegment.ref_queen` / :attr:`KingSegment.cand_queen`;
    for one metric from pairwise scores, :func:`leave_one_out_scores`.
    """
    if len(ref_scores) != len(cand_scores):
        raise InputError(f"{len(ref_scores)} segments of reference scores but {len(cand_scores)} of candidate scores")
    if ties not in ORANGE_TIES:
        raise OptionError(f"ties={ties!r} must be one of {list(ORANGE_TIES)}")
    per_segment = np.full(len(ref_scores), np.nan)
    out = OrangeResult(value=float("nan"), per_segment=per_segment, ranks=[], ties=ties)
    for i, (ref, cand) in enumerate(zip(ref_scores, cand_scores)):
        ref = np.asarray(ref, dtype=np.float64).reshape(-1)
        cand = np.asarray(cand, dtype=np.float64)
        if cand.ndim != 2 or cand.shape[0] != ref.size:
            raise InputError(f"segment {i}: cand_scores must have shape ({ref.size}, n_cand), got {cand.shape}")
        if ref.size == 0 or cand.shape[1] == 0:
            out.ranks.append(None)
            out.skipped[i] = "no references" if ref.size == 0 else "no candidates"
            continue
        try:
            ranks = reference_ranks(ref, cand, ties)
        except InputError as err:
            raise InputError(f"segment {i}: {err}") from None
        out.ranks.append(ranks)
        per_segment[i] = ranks.mean() / (cand.shape[1] + 1)
    if out.n_used:
        out.value = float(np.nanmean(per_segment))
    return out


def leave_one_out_scores(cand_ref, ref_ref, reduce: str = "max") -> Tuple[np.ndarray, np.ndarray]:
    """One metric's scores against ``R - {r}`` from pairwise similarities: ``(ref (n_ref,), cand (n_ref, n_cand))``.

    ``cand_ref`` (n_cand, n_ref) = x(a, r); ``ref_ref`` (n_ref, n_ref) = x(r_i, r_j).
    The score against a reference set is the ``max`` (best-matching
    reference) or ``mean`` of the pairwise scores; the diagonal is never read.
    Metrics with their own multi-reference statistics (e.g. corpus-style BLEU)
    should be scored against ``R - {r}`` directly instead.
    """
    if reduce not in ("max", "mean"):
        raise OptionError(f"reduce={reduce!r} must be 'max' or 'mean'")
    c = np.asarray(cand_ref, dtype=np.float64)
    r = np.asarray(ref_ref, dtype=np.float64)
    if c.ndim != 2 or r.ndim != 2 or r.shape != (c.shape[1], c.shape[1]):
        raise InputError(f"cand_ref must be (n_cand, n_ref) and ref_ref (n_ref, n_ref); got {c.shape}, {r.shape}")
    n = c.shape[1]
    if n < 2:
        raise InputError(f"leave-one-out scores need at least 2 references, got {n}")
    off = ~np.eye(n, dtype=bool)
    if np.isnan(c).any() or np.isnan(r[off]).any():
        raise InputError("leave_one_out_scores: NaN scores")
    if reduce == "max":
        cand = np.where(off[:, None, :], c[None, :, :], -np.inf).max(axis=2)  # (n_ref, n_cand)
        ref = np.where(off, r, -np.inf).max(axis=1)
    else:
        cand = (c.sum(axis=1)[None, :] - c.T) / (n - 1)
        ref = np.where(off, r, 0.0).sum(axis=1) / (n - 1)
    return ref, cand
