"""TER's shift search on one long pair, compiled against numpy: seconds and edits at 1,000 to 10,000 words.

The pair is a random reference (a vocabulary of 300 word ids) and a hypothesis made from it by block moves
(one per 20 words) and substitutions (one per 10); both searches must give the same edits. Texts over
10,000 words are refused by TER whatever the build (``combo.metrics.lexical.ter.MAX_WORDS``).

    python benchmarks/bench_ter_long.py
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from combo.metrics.lexical.ter_alignment import _compiled, shift_edit_counts  # noqa: E402


def long_pair(words: int, rng: random.Random):
    ref = [rng.randrange(300) for _ in range(words)]
    hyp = list(ref)
    for _ in range(words // 20):
        start = rng.randrange(len(hyp))
        block = hyp[start:start + rng.randint(1, 8)]
        del hyp[start:start + len(block)]
        at = rng.randrange(len(hyp) + 1)
        hyp[at:at] = block
    for _ in range(words // 10):
        hyp[rng.randrange(len(hyp))] = rng.randrange(320)
    return [np.array(hyp)], [np.array(ref)]


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    if _compiled is None:
        raise SystemExit("the compiled search is not built (pip install -e .)")
    rng = random.Random(3)
    print("| words | edits | compiled s | numpy s |")
    print("|---:|---:|---:|---:|")
    for words in (1000, 4000, 10000):
        hyps, refs = long_pair(words, rng)
        seconds, edits = {}, {}
        for engine in ("c", "numpy"):
            start = time.perf_counter()
            edits[engine] = int(shift_edit_counts(hyps, refs, engine=engine)[0])
            seconds[engine] = time.perf_counter() - start
        if edits["c"] != edits["numpy"]:
            raise SystemExit(f"{words} words: compiled {edits['c']} edits, numpy {edits['numpy']}")
        print(f"| {words:,} | {edits['c']:,} | {seconds['c']:.3f} | {seconds['numpy']:.2f} |")


if __name__ == "__main__":
    main()
