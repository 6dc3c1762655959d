"""Analysis throughput of the layers on every distinct text of WMT12 de-en, cold and cached, in one run.

For each layer: the annotator called directly (the peer: Pattern's parser,
NLTK's Snowball stemmer, spaCy's ``nlp.pipe``), then ``combo.analysis.layers``
three times: cold (empty disk cache: annotate and store), cached (memo
cleared, as a new process: read back from the disk cache) and in-process
(memo). Reports sentences per second and the ratios cold / direct (our
overhead) and cold / cached (what the cache saves). The cached values must
equal the cold ones.

    python benchmarks/bench_analysis.py [--data ../shared/data] [--spacy] [--limit N]

``--spacy`` adds the dependency layer (about 80 s cold on the ~40k texts).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from combo.analysis import layers  # noqa: E402
from combo.analysis.layer_definitions import DependencyLayer  # noqa: E402


def distinct_texts(data: Path, limit=None):
    plain = data / "wmt12" / "plain"
    texts = (plain / "references" / "newstest2012-ref.en").read_text(encoding="utf-8").split("\n")[:3003]
    for f in sorted((plain / "system-outputs" / "newstest2012" / "de-en").iterdir()):
        texts += f.read_text(encoding="utf-8").split("\n")[:3003]
    texts = list(dict.fromkeys(texts))
    return texts[:limit] if limit else texts


def direct(layer: str, texts):
    """The annotator without combo's layer machinery (no cache, no encoding)."""
    if layer in ("tokens", "lowercase"):
        from combo.analysis.tokenize import tokenize_13a
        return [tokenize_13a(t).lower().split() if layer == "lowercase" else tokenize_13a(t).split() for t in texts]
    if layer == "stems":
        from nltk.stem.snowball import SnowballStemmer

        from combo.analysis.tokenize import tokenize_13a
        stem = SnowballStemmer("english").stem
        return [[stem(w) for w in tokenize_13a(t).lower().split()] for t in texts]
    if layer == "shallow":
        from textblob.en.parsers import PatternParser
        parse = PatternParser().parse
        return [parse(t) for t in texts]
    import spacy
    nlp = spacy.load(DependencyLayer.model, disable=["ner"])
    return [[(t.head.i, t.dep_) for t in doc] for doc in nlp.pipe(texts, batch_size=256)]


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--spacy", action="store_true", help="also the spaCy dependency layer")
    parser.add_argument("--limit", type=int, default=None, help="first N distinct texts only")
    args = parser.parse_args()

    texts = distinct_texts(args.data, args.limit)
    names = ["tokens", "lowercase", "stems", "shallow"] + (["dependencies"] if args.spacy else [])
    print(f"{len(texts)} distinct texts of WMT12 de-en (reference + 16 systems)")
    print(f"{'layer':<14}{'direct/s':>10}{'cold/s':>10}{'cached/s':>11}{'memo/s':>11}"
          f"{'cold/direct':>13}{'cold/cached':>13}")
    totals = {"cold": 0.0, "cached": 0.0}
    with tempfile.TemporaryDirectory() as folder:
        layers.set_cache_dir(folder)
        for name in names:
            t_direct, _ = timed(lambda: direct(name, texts))
            with layers.analysis_memo():  # one run: the memo column reads what the run holds in memory
                layers.clear_memory()
                t_cold, cold = timed(lambda: layers.annotate(name, texts))
                layers.clear_memory()
                t_cached, cached = timed(lambda: layers.annotate(name, texts))
                t_memo, _ = timed(lambda: layers.annotate(name, texts))
            if cached != cold:
                raise SystemExit(f"{name}: cached analysis differs from the cold one")
            totals["cold"] += t_cold
            totals["cached"] += t_cached
            n = len(texts)
            print(f"{name:<14}{n / t_direct:>10,.0f}{n / t_cold:>10,.0f}{n / t_cached:>11,.0f}{n / t_memo:>11,.0f}"
                  f"{t_cold / t_direct:>13.2f}{t_cold / t_cached:>13.1f}")
    print(f"all layers: cold {totals['cold']:.2f} s, cached {totals['cached']:.2f} s, "
          f"{totals['cold'] / totals['cached']:.1f}x faster cached")


if __name__ == "__main__":
    main()
