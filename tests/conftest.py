"""Shared test fixtures: the real data in ``../shared/data`` (or ``$COMBO_DATA_DIR``)."""

import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    env = os.environ.get("COMBO_DATA_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "data"


DATA = data_dir()
os.environ.setdefault("NLTK_DATA", str(DATA / "nltk_data"))
# Analysis layers cache on disk; tests use a fresh folder of their own, never ~/.cache.
os.environ["COMBO_CACHE_DIR"] = tempfile.mkdtemp(prefix="combo-test-cache-")


@pytest.fixture(scope="session")
def data() -> Path:
    """The shared data folder; skips the test when it is absent."""
    if not DATA.is_dir():
        pytest.skip(f"real data not found at {DATA} (set COMBO_DATA_DIR)")
    return DATA


@pytest.fixture(scope="session")
def wmt12_de_en(data):
    """WMT12 de-en: (reference lines, {system: output lines}), 3,003 segments."""
    plain = data / "wmt12" / "plain"
    ref = (plain / "references" / "newstest2012-ref.en").read_text(encoding="utf-8").split("\n")[:3003]
    systems = {}
    for f in sorted((plain / "system-outputs" / "newstest2012" / "de-en").iterdir()):
        systems[f.name.split(".", 2)[2]] = f.read_text(encoding="utf-8").split("\n")[:3003]
    return ref, systems


@pytest.fixture(scope="session")
def wmt12_into_english(data):
    """List of (pair, reference lines, {system: lines}) for the four into-English pairs."""
    return list(_wmt12_into_english(data))


def _wmt12_into_english(data: Path):
    plain = data / "wmt12" / "plain"
    ref = (plain / "references" / "newstest2012-ref.en").read_text(encoding="utf-8").split("\n")[:3003]
    for pair in ("cs-en", "de-en", "es-en", "fr-en"):
        systems = {}
        for f in sorted((plain / "system-outputs" / "newstest2012" / pair).iterdir()):
            systems[f.name.split(".", 2)[2]] = f.read_text(encoding="utf-8").split("\n")[:3003]
        yield pair, ref, systems


@pytest.fixture(scope="session")
def wmt12_two_references(wmt12_de_en):
    """(hyps, refs): the first 200 de-en segments of two systems, each with two references,
    the human one and the other system's output."""
    ref, systems = wmt12_de_en
    names = sorted(systems)[:2]
    n = 200
    hyps = [systems[s][i] for s in names for i in range(n)]
    other = {names[0]: names[1], names[1]: names[0]}
    refs = [[ref[i], systems[other[s]][i]] for s in names for i in range(n)]
    return hyps, refs


@pytest.fixture
def supplied_trees():
    """A fresh set of supplied trees, in use for the test (as scoring puts a test bed's trees in use)."""
    from combo.analysis.supplied import using_trees
    from combo.testbed import SuppliedTrees

    trees = SuppliedTrees()
    with using_trees(trees):
        yield trees
