"""``combo cache clear`` removes only what combo wrote, refuses a folder combo did not make and clears only the
cache it is given; a score-cache entry records its key, so a file copied over another entry's name is not
read as that entry (docs/trust.md, Caches)."""

import json
import shutil
import sqlite3

import numpy as np
import pytest
from click.testing import CliRunner

from combo.analysis import layers
from combo.cli import main
from combo.errors import InputError
from combo.metrics.registry import get_metric
from combo.scoring import SCORE_CACHE_MARKER, cache_clear, cache_info, score_testbed
from combo.scoring.cache import _Cache

ENTRY_NAME = "bleu-0123456789abcdef0123456789abcdef.npz"  # named as combo names an entry
FOREIGN = {"mine.npz": b"my own arrays", ".draft.tmp": b"half a thought", "notes.txt": b"notes"}


def _write(folder, files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_bytes(content)


def _contents(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def _clear(*args):
    return CliRunner().invoke(main, ["cache", "clear", *args])


@pytest.fixture
def home(tmp_path, monkeypatch):
    """$COMBO_CACHE_DIR in a folder of the test's own, holding an analysis cache."""
    folder = tmp_path / "home"
    folder.mkdir()
    con = sqlite3.connect(folder / "analysis.sqlite")
    with con:
        con.execute("CREATE TABLE t (k BLOB PRIMARY KEY, v TEXT)")
        con.execute("INSERT INTO t VALUES (x'00', 'v')")
    con.close()
    monkeypatch.setenv("COMBO_CACHE_DIR", str(folder))
    monkeypatch.delenv("COMBO_SCORE_CACHE", raising=False)
    layers.clear_memory()
    yield folder
    layers.clear_memory()


def _score(folder, *metrics):
    args = ["score", "--testbed", "example", "-q", "--cache", str(folder)]
    for m in metrics:
        args += ["-m", m]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return res.stdout


# -- refusing a folder combo did not make ---------------------------------------------------------------------

def test_a_folder_without_the_marker_is_refused_and_nothing_is_removed(tmp_path, home):
    folder = tmp_path / "mine"
    _write(folder, {**FOREIGN, ENTRY_NAME: b"not combo's although named so"})
    before = _contents(folder)
    res = _clear("--cache", str(folder))
    assert res.exit_code == 2 and res.stdout == ""
    err = res.stderr.strip("\n")
    assert "\n" not in err and err.startswith("combo: error: ") and str(folder) in err
    assert f"not a combo score cache (no {SCORE_CACHE_MARKER} marker): nothing was removed" in err
    assert _contents(folder) == before
    assert (home / "analysis.sqlite").is_file()


def test_a_marker_of_another_format_is_not_combos(tmp_path):
    folder = tmp_path / "mine"
    _write(folder, {SCORE_CACHE_MARKER: b'{"format": "something-else"}', ENTRY_NAME: b"x"})
    with pytest.raises(InputError, match="not a combo score cache"):
        cache_clear(folder)
    assert (folder / ENTRY_NAME).is_file()


def test_a_missing_folder_is_refused_not_read_as_an_empty_cache(tmp_path, home):
    # a mistyped --cache folder: one line and exit 2, not "0 entries removed" with exit 0
    res = _clear("--cache", str(tmp_path / "none"))
    assert res.exit_code == 2 and res.stdout == "" and "no such folder" in res.stderr
    assert not (tmp_path / "none").exists()


def test_info_counts_no_entries_in_a_foreign_folder(tmp_path, home):
    folder = tmp_path / "mine"
    _write(folder, {**FOREIGN, ENTRY_NAME: b"x"})
    res = CliRunner().invoke(main, ["cache", "info", "--cache", str(folder)])
    assert res.exit_code == 0
    assert f"scores\t{folder}\t0 entries\t0 bytes\tnot a combo score cache" in res.stdout


# -- clearing a real cache: combo's files only -----------------------------------------------------------------

def test_clear_removes_only_combos_entries_and_temporary_files(tmp_path, home):
    folder = tmp_path / "c"
    _score(folder, "bleu", "chrf")
    entries = sorted(p.name for p in folder.glob("*.npz"))
    assert len(entries) == 2 and (folder / SCORE_CACHE_MARKER).is_file()
    assert json.loads((folder / SCORE_CACHE_MARKER).read_text()) == {"format": "combo-score-cache", "version": 1}
    leftovers = {f".{entries[0][:-4]}-ab_c1234.tmp": b"killed mid-write", f"{SCORE_CACHE_MARKER}-x9y8z7w6.tmp": b"{"}
    _write(folder, {**FOREIGN, **leftovers, "notes-0123456789abcdef0123456789abcdef.npz.bak": b"bak",
                    "bleu-0123456789ABCDEF0123456789ABCDEF.npz": b"upper-case key: not combo's"})
    info = CliRunner().invoke(main, ["cache", "info", "--cache", str(folder)])
    assert f"scores\t{folder}\t2 entries\t" in info.stdout and "not a combo" not in info.stdout
    kept = {name: content for name, content in _contents(folder).items()
            if name not in entries and name not in leftovers}
    res = _clear("--cache", str(folder))
    assert res.exit_code == 0, res.output
    assert res.stdout == f"scores\t{folder}\t4 entries removed\n"  # two entries, two leftover temporary files
    assert _contents(folder) == kept  # the marker and every foreign file, unchanged
    assert (folder / SCORE_CACHE_MARKER).is_file()
    assert cache_info(folder)["score_entries"] == 0
    assert _clear("--cache", str(folder)).stdout == f"scores\t{folder}\t0 entries removed\n"  # still a cache


def test_cache_option_clears_only_that_cache(tmp_path, home):
    _score(home / "scores", "bleu")  # the default score cache, beside the analysis cache
    default_before = _contents(home / "scores")
    _score(tmp_path / "c", "bleu")
    res = _clear("--cache", str(tmp_path / "c"))
    assert res.exit_code == 0 and "analyses" not in res.stdout
    assert not list((tmp_path / "c").glob("*.npz"))
    assert (home / "analysis.sqlite").is_file()
    assert _contents(home / "scores") == default_before


def test_without_cache_option_both_default_caches_are_cleared(tmp_path, home):
    _score(home / "scores", "bleu")
    _write(home / "scores", FOREIGN)
    res = _clear()
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [f"scores\t{home / 'scores'}\t1 entry removed",
                                       f"analyses\t{home}\tremoved"]
    assert not (home / "analysis.sqlite").exists()
    assert sorted(p.name for p in (home / "scores").iterdir()) == sorted([SCORE_CACHE_MARKER, *FOREIGN])


def test_the_default_folder_of_an_older_combo_is_cleared_without_a_marker(home):
    # scores/ in $COMBO_CACHE_DIR is combo's own path: entries written before the marker existed go too
    _write(home / "scores", {**FOREIGN, ENTRY_NAME: b"an entry of an older combo"})
    res = _clear()
    assert res.exit_code == 0 and f"scores\t{home / 'scores'}\t1 entry removed" in res.stdout
    assert sorted(p.name for p in (home / "scores").iterdir()) == sorted(FOREIGN)


# -- each entry records its key ---------------------------------------------------------------------------------

def test_an_entry_records_its_key_and_returns_the_arrays_it_was_given(tmp_path):
    cache = _Cache(tmp_path, "fp", "segment", [(3,), (2,)])
    metric = get_metric("bleu")
    arrays = [np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0])]
    cache.put(metric, arrays)
    (entry,) = tmp_path.glob("*.npz")
    with np.load(entry, allow_pickle=False) as z:
        assert sorted(z.files) == ["a0", "a1", "key"]
        key = str(z["key"])
    assert len(key) == 64 and entry.name == f"bleu-{key[:32]}.npz"
    got = cache.get(metric)
    assert len(got) == 2 and all(np.array_equal(g, a) for g, a in zip(got, arrays))
    assert _Cache(tmp_path, "other fingerprint", "segment").get(metric) is None  # another key, another file


@pytest.fixture
def small_testbed():
    from combo import example_path, load_testbed

    return load_testbed(example_path()).subset(range(3))


def test_an_entry_copied_over_another_is_recomputed_with_one_warning(tmp_path, capsys, small_testbed):
    first = score_testbed(small_testbed, ["bleu", "chrf"], cache_dir=tmp_path)
    (bleu,) = tmp_path.glob("bleu-*.npz")
    (chrf,) = tmp_path.glob("chrf-*.npz")
    shutil.copyfile(bleu, chrf)  # the same shapes: only the recorded key tells them apart
    capsys.readouterr()
    again = score_testbed(small_testbed, ["bleu", "chrf"], cache_dir=tmp_path)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"damaged score-cache entry {chrf}" in err and "another entry" in err
    assert "recomputing it" in err
    np.testing.assert_array_equal(again.segment, first.segment)
    np.testing.assert_array_equal(again.system, first.system)
    assert not np.array_equal(first.segment[0], first.segment[1])  # bleu's scores would have changed chrf's
    score_testbed(small_testbed, ["bleu", "chrf"], cache_dir=tmp_path)  # chrf's entry was rewritten
    assert capsys.readouterr().err == ""
    assert chrf.read_bytes() != bleu.read_bytes()


def test_an_entry_without_a_key_is_recomputed_with_one_warning(tmp_path, capsys, small_testbed):
    # the arrays and shapes an older combo wrote, but no key: it cannot say whose scores it holds
    first = score_testbed(small_testbed, ["bleu"], cache_dir=tmp_path)
    (entry,) = tmp_path.glob("*.npz")
    with np.load(entry, allow_pickle=False) as z:
        arrays = {name: z[name] for name in z.files if name != "key"}
    np.savez(entry, **arrays)
    capsys.readouterr()
    again = score_testbed(small_testbed, ["bleu"], cache_dir=tmp_path)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "damaged score-cache entry" in err and "records no key" in err
    np.testing.assert_array_equal(again.segment, first.segment)
