"""Shared test fixtures: the real data in ``$COMBO_DATA_HOME`` (the users' data home, which
``combo data list`` reads too), else ``../shared/data``. ``$COMBO_DATA_DIR`` is its older name."""

import gc
import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    env = os.environ.get("COMBO_DATA_HOME") or os.environ.get("COMBO_DATA_DIR")
    return Path(env).expanduser() if env else ROOT.parent / "shared" / "data"


DATA = data_dir()
os.environ.setdefault("NLTK_DATA", str(DATA / "nltk_data"))
# Analysis layers cache on disk; tests use a fresh folder of their own, never ~/.cache.
os.environ["COMBO_CACHE_DIR"] = tempfile.mkdtemp(prefix="combo-test-cache-")
# Commands keep no score cache unless a test asks (--cache, or tests/test_trust.py's default-cache tests): a
# command run twice must compute twice, or comparisons such as --jobs 1 against --jobs 2 would compare a cache.
os.environ["COMBO_SCORE_CACHE"] = "off"
# The test process comes to hold every model and data set the suite loads, so each full collection walks them all:
# at the default third threshold (10) a run made 74 full collections, 24 s of its 351; at 1000, 12 and 3 s
# (peak memory of the run's largest process 2.3 GB). Garbage is still collected; only the full passes are rarer.
gc.set_threshold(gc.get_threshold()[0], gc.get_threshold()[1], 1000)


@pytest.fixture(scope="session")
def data() -> Path:
    """The shared data folder; skips the test when it is absent."""
    if not DATA.is_dir():
        pytest.skip(f"real data not found at {DATA} (set COMBO_DATA_HOME)")
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
def wmt12_de_en_parses(wmt12_de_en):
    """``parses(segments, n_systems)``: the dependency and shallow parses (spaCy, Pattern) of WMT12 de-en's first
    ``segments`` references and outputs of its first ``n_systems`` systems by name, each distinct text once."""
    from combo.analysis.layers import annotate

    def parses(segments: int, n_systems: int):
        ref, systems = wmt12_de_en
        texts = list(dict.fromkeys(ref[:segments] + [line for name in sorted(systems)[:n_systems]
                                                     for line in systems[name][:segments]]))
        return annotate("dependencies", texts), annotate("shallow", texts)

    return parses


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


#: The rows a default run compares against a peer, segment by segment: three WMT12 de-en systems (a strong
#: online system, a phrase-based and a hierarchical one), the first 300 segments. Every system and every
#: segment: the ``slow`` variant (``pytest -m slow``, docs/benchmarks.md).
PEER_SYSTEMS = ("onlineB", "uedin-wmt12", "jhu-hiero")
PEER_ROWS = 300


@pytest.fixture(scope="session", params=[
    pytest.param("sample", id="3-systems-300-segments"),
    pytest.param("full", id="every-system-every-segment", marks=pytest.mark.slow)])
def wmt12_de_en_peer_rows(request, wmt12_de_en):
    """(reference lines, {system: lines}) of WMT12 de-en for the checks against a peer: the three
    :data:`PEER_SYSTEMS` on the first :data:`PEER_ROWS` segments by default, all 16 systems on all
    3,003 segments in the slow variant."""
    ref, systems = wmt12_de_en
    if request.param == "full":
        return ref, systems
    return ref[:PEER_ROWS], {name: systems[name][:PEER_ROWS] for name in PEER_SYSTEMS}


@pytest.fixture
def supplied_trees():
    """A fresh set of supplied trees, in use for the test (as scoring puts a test bed's trees in use)."""
    from combo.analysis.supplied import using_trees
    from combo.testbed import SuppliedTrees

    trees = SuppliedTrees()
    with using_trees(trees):
        yield trees
