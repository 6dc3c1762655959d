"""A memory budget, and the chunk sizes that keep work under it.

Large runs (KING on DSTC7 with every reference: up to 1,008 references per
segment, 6.3 million reference pairs) are cut into chunks: pairs of texts
scored per call, segments of QUEEN/KING prepared at once, queries of the
dominance bitsets. Each chunk is sized from one budget (``--memory``, default
2 GB) so peak memory does not grow with the test bed. What must be held at
once (one segment's reference-against-reference scores) is checked against
the budget up front: a budget too small for it is an :class:`OptionError`
naming the segment and the budget it needs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Optional, Union

from .errors import OptionError

DEFAULT_MEMORY = 2 * 1024 ** 3  # 2 GB
_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024 ** 2, "mb": 1024 ** 2, "g": 1024 ** 3, "gb": 1024 ** 3,
          "t": 1024 ** 4, "tb": 1024 ** 4}


def parse_memory(value: Union[None, int, float, str]) -> int:
    """Bytes from ``2G``, ``500M``, ``1.5GB``, ``2147483648`` (``None``: the 2 GB default)."""
    if value is None:
        return DEFAULT_MEMORY
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        size = float(value)
    else:
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(value))
        if not match or match.group(2).lower() not in _UNITS:
            raise OptionError(f"memory budget {value!r} is not a size such as 2G, 500M or 1.5GB")
        size = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if size <= 0:
        raise OptionError(f"memory budget {value!r} must be positive")
    return int(size)


def format_bytes(n: float, up: bool = False) -> str:
    """``1.5 GB``, ``312 MB``, ``4 KB`` (three significant digits); ``up``: rounded up, so that a budget of the
    size written holds ``n`` bytes."""
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if n >= size:
            value = n / size
            if up:
                scale = 10.0 ** (2 - math.floor(math.log10(value)))
                value = math.ceil(value * scale) / scale
                while parse_memory(f"{value:.4g}{unit}") < n:  # float error in the last digit
                    value += 1 / scale
            return f"{value:.4g} {unit}" if up else f"{value:.3g} {unit}"
    return f"{math.ceil(n) if up else int(n)} B"


@dataclass(frozen=True)
class Budget:
    """Bytes a run may hold at once, and the chunk sizes derived from it.

    Shares of the budget (measured on DSTC7, see docs/scale.md): a quarter for
    the chunk of text pairs a metric scores at once (its statistics are up to
    ~40 float64 per pair, plus the sparse n-gram rows a metric gathers: chrF needs ~2.4 KB a pair), a quarter for the
    segments of QUEEN/KING prepared together, an eighth for one chunk of
    dominance bitsets; the rest is left to the analyses and the score arrays.
    """

    bytes: int = DEFAULT_MEMORY

    @classmethod
    def of(cls, value: Union[None, int, float, str, "Budget"]) -> "Budget":
        return value if isinstance(value, Budget) else cls(parse_memory(value))

    def pair_chunk(self, bytes_per_pair: int = 4096) -> int:
        """Text pairs (or rows) one metric scores per call."""
        return max(1024, self.bytes // 4 // bytes_per_pair)

    def segment_bytes(self) -> int:
        """Bytes of prepared QUEEN/KING segments held together."""
        return self.bytes // 4

    def bitset_words(self) -> int:
        """uint64 words of one chunk of dominance bitsets (several such arrays live at once)."""
        return max(1 << 16, self.bytes // 8 // 8 // 6)

    def check_segment(self, n_ref: int, n_metrics: int, segment: Optional[int] = None, what: str = "KING",
                      fewest_refs: int = 2, run_refs: int = 0, run_metrics: int = 0) -> None:
        """Refuse a budget that cannot hold one segment's work (its pairs, sorted per metric, and one bitset row).

        The fix covers the whole run, not only this segment: ``run_refs`` is the most references of any of its
        segments, ``run_metrics`` the largest metric set it scores (a search goes on to sets of every metric).
        It offers ``--max-refs`` only when a cap of at least ``fewest_refs`` references fits.
        """
        need = segment_need(n_ref, n_metrics)
        if need > self.bytes:
            where = "" if segment is None else f" (segment {segment})"
            refs, metrics = max(n_ref, run_refs), max(n_metrics, run_metrics)
            whole = (f" (what the run's largest segment, {refs} references, needs for its largest metric set, "
                     f"{metrics} metrics)" if (refs, metrics) != (n_ref, n_metrics) else "")
            fits = refs - 1
            while fits >= fewest_refs and segment_need(fits, metrics) > self.bytes:
                fits -= 1
            cap = f", or cap references with --max-refs {fits}" if fits >= fewest_refs else ""
            raise OptionError(f"memory budget {format_bytes(self.bytes)} is too small for one segment of {what}: "
                              f"{n_ref} references x {n_metrics} metrics{where} need about {format_bytes(need)}. "
                              f"Fix: raise --memory to at least {format_bytes(segment_need(refs, metrics), up=True)}"
                              f"{whole}{cap}")


def segment_need(n_ref: int, n_metrics: int) -> int:
    """Bytes one segment of QUEEN/KING needs at least: its n^2 reference pairs per metric, prepared and sorted.

    Per metric and pair: the float64 score, a flipped copy, and the sorted
    (value, word, bit) of two layouts (8 + 8 + 2 x 11 bytes); plus one query's
    bitsets of two layouts and their working copies (n^2 / 8 bytes each).
    """
    pairs = n_ref * n_ref
    return pairs * n_metrics * 38 + 6 * (pairs // 8 + 8) * 64
