"""combo.io.fetch: catalogue pins, checksum logic, unpacking and atomic placement, all offline.

Downloads are served from local files: ``file://`` URLs or an injected
``urlopen``. The real catalogue is exercised by serving archives rebuilt from
the shared data copies (the pinned upstream files).
"""

import hashlib
import io
import re
import tarfile
import urllib.error
import zipfile
from pathlib import Path

import pytest

from combo.errors import ChecksumError, ComboError, OptionError, ResourceMissing
from combo.io import fetch as F
from combo.io.datasets import DataFile, Dataset, Source


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_tar(path: Path, members: dict) -> Path:
    with tarfile.open(path, "w:gz", compresslevel=1) as tf:
        for name, payload in members.items():
            if isinstance(payload, Path):
                tf.add(payload, arcname=name)
            else:
                info = tarfile.TarInfo(name)
                info.size = len(payload)
                tf.addfile(info, io.BytesIO(payload))
    return path


def make_zip(path: Path, members: dict) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, payload in members.items():
            if isinstance(payload, Path):
                zf.write(payload, arcname=name)
            else:
                zf.writestr(name, payload)
    return path


def leftovers(root: Path):
    """Hidden staging folders or scratch files left in a data home."""
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".")) if root.exists() else []


def placed(root: Path):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


A, B, C = b"alpha line\n", b"bravo line\n", b"charlie\n"
INNER = {"inner/one.txt": b"first member\n", "inner/two.txt": b"second member\n"}


@pytest.fixture
def upstream(tmp_path):
    """A fake upstream: a tar.gz, a zip, a plain file and a packed zip, with a dataset describing them."""
    up = tmp_path / "upstream"
    up.mkdir()
    make_tar(up / "pack.tar.gz", {
        "stale/docs/a.txt": b"an older copy\n",  # matches the suffix 'docs/a.txt' but not the pin
        "pack-1.0/docs/a.txt": A,
        "pack-1.0/other/docs/a.txt.bak": b"not this one\n",
        "decoy/a.txt": b"same basename, wrong content\n",  # suffix 'a.txt' would match; 'docs/a.txt' does not
        "pack-1.0/b.txt": B,
    })
    make_zip(up / "single.zip", {"__MACOSX/._c.txt": b"resource fork", "folder/c.txt": C})
    (up / "plain.txt").write_bytes(A + B)
    make_zip(up / "packed.zip", INNER)
    ds = Dataset(
        name="toy", title="toy", folder="toy", homepage="", licence="", citation="",
        sources=(
            Source(urls=((up / "plain.txt").as_uri(),), sha256=sha(A + B),
                   files=(DataFile("toy/plain.txt", sha(A + B)),)),
            Source(urls=((up / "pack.tar.gz").as_uri(),), archive="tar", files=(
                DataFile("toy/docs/a.txt", sha(A)), DataFile("toy/b.txt", sha(B)))),
            Source(urls=((up / "single.zip").as_uri(),), archive="zip",
                   files=(DataFile("toy/c.txt", sha(C)),)),
            Source(urls=((up / "packed.zip").as_uri(),), files=(
                DataFile("toy/packed.zip", members={k: sha(v) for k, v in INNER.items()}),)),
        ))
    return up, ds


# -- catalogue -----------------------------------------------------------------------------------


def test_catalogue_is_well_formed():
    hexdigest = re.compile(r"^[0-9a-f]{64}$")
    seen = set()
    assert set(F.DATASETS) == {"wmt12", "flickr8k", "dstc7", "sick", "mutt", "wordnet"}
    for name, ds in F.DATASETS.items():
        assert ds.name == name and ds.homepage.startswith("http") and ds.licence and ds.citation
        for src in ds.sources:
            assert src.urls and all(u.startswith(("https://", "http://")) for u in src.urls)
            assert src.archive in (None, "zip", "tar")
            if src.archive is None:
                assert len(src.files) == 1
        for f in ds.files:
            parts = Path(f.path).parts
            assert parts[0] == ds.folder and ".." not in parts and not Path(f.path).is_absolute()
            assert f.path not in seen
            seen.add(f.path)
            assert (f.sha256 and hexdigest.match(f.sha256)) or (
                f.members and all(hexdigest.match(h) for h in f.members.values()))
    # sizes the README of the shared data promises
    assert len(F.DATASETS["wmt12"].files) == 1 + 1 + 5 + 5 + 103
    assert len(F.DATASETS["mutt"].files) == 7


def test_unknown_dataset_is_an_option_error(tmp_path):
    with pytest.raises(OptionError, match="unknown data set 'nope'; known: wmt12"):
        F.fetch("nope", tmp_path)


def test_pins_match_the_shared_upstream_copies(data):
    statuses = {s.name: s for s in F.list_datasets(data)}
    for name, status in statuses.items():
        assert status.verified, (name, [(str(f.path), f.state, f.actual) for f in status.files if not f.ok])
        assert F.verify(name, data).verified
    assert sum(len(s.files) for s in statuses.values()) == 115 + 7 + 7 + 2 + 7 + 1


def test_list_datasets_on_an_empty_home(tmp_path):
    statuses = F.list_datasets(tmp_path / "nothing-here")
    assert [s.name for s in statuses] == list(F.DATASETS)
    assert all(s.state == "absent" and not s.present and not s.verified for s in statuses)


def test_data_home_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("COMBO_DATA_HOME", str(tmp_path / "mine"))
    assert F.data_home() == tmp_path / "mine"
    monkeypatch.delenv("COMBO_DATA_HOME")
    if F.sys.platform.startswith(("win", "darwin")):
        pytest.skip("XDG fallback is for Linux and other Unix systems")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert F.data_home() == tmp_path / "xdg" / "combo" / "data"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert F.data_home() == tmp_path / "home" / ".cache" / "combo" / "data"
    assert F.dataset_dir("wordnet", tmp_path) == tmp_path / "nltk_data"


# -- fetching synthetic upstreams ------------------------------------------------------------------


def test_fetch_unpacks_verifies_and_places_everything(upstream, tmp_path):
    _, ds = upstream
    home = tmp_path / "home"
    messages = []
    status = F.fetch(ds, home, log=messages.append)
    assert status.verified and len(status.files) == 5
    assert (home / "toy/docs/a.txt").read_bytes() == A  # the pinned one of two 'docs/a.txt' members
    assert (home / "toy/b.txt").read_bytes() == B
    assert (home / "toy/c.txt").read_bytes() == C  # the __MACOSX fork was skipped
    assert (home / "toy/plain.txt").read_bytes() == A + B
    with zipfile.ZipFile(home / "toy/packed.zip") as zf:
        assert zf.read("inner/two.txt") == INNER["inner/two.txt"]
    assert placed(home) == ["toy/b.txt", "toy/c.txt", "toy/docs/a.txt", "toy/packed.zip", "toy/plain.txt"]
    assert leftovers(home) == []
    assert sum(m.startswith("downloading ") for m in messages) == 4


def test_corrupted_plain_download_raises_and_leaves_nothing(upstream, tmp_path):
    up, ds = upstream
    (up / "plain.txt").write_bytes(A + b"bravo lime\n")  # one flipped byte in transit
    home = tmp_path / "home"
    with pytest.raises(ChecksumError) as info:
        F.fetch(ds, home)
    message = str(info.value)
    assert (up / "plain.txt").as_uri() in message
    assert sha(A + B) in message and sha(A + b"bravo lime\n") in message  # expected and actual
    assert "fix:" in message and "combo data fetch toy" in message
    assert info.value.expected == sha(A + B) and info.value.actual == sha(A + b"bravo lime\n")
    assert placed(home) == [] and leftovers(home) == []


def test_corrupted_archive_member_keeps_the_whole_dataset_out(upstream, tmp_path):
    up, ds = upstream
    make_tar(up / "pack.tar.gz", {"pack-1.0/docs/a.txt": A, "pack-1.0/b.txt": B[:-2] + b"X\n"})
    home = tmp_path / "home"
    with pytest.raises(ChecksumError, match=r"toy/b\.txt \(member pack-1\.0/b\.txt of file://") as info:
        F.fetch(ds, home)
    assert sha(B) in str(info.value) and sha(B[:-2] + b"X\n") in str(info.value)
    # the plain source before it had verified, but nothing of the data set was moved into place
    assert placed(home) == [] and leftovers(home) == []


def test_archive_without_a_pinned_member(upstream, tmp_path):
    up, ds = upstream
    make_tar(up / "pack.tar.gz", {"pack-1.0/docs/a.txt": A})
    with pytest.raises(ChecksumError, match="toy/b.txt .*no such member in the archive"):
        F.fetch(ds, tmp_path / "home")
    assert placed(tmp_path / "home") == []


def test_a_page_instead_of_an_archive_is_reported(upstream, tmp_path):
    up, ds = upstream
    (up / "single.zip").write_bytes(b"<html>please fill in the form</html>")
    with pytest.raises(ChecksumError, match="is not a readable zip archive") as info:
        F.fetch(ds, tmp_path / "home")
    assert sha(b"<html>please fill in the form</html>") in str(info.value)
    assert placed(tmp_path / "home") == [] and leftovers(tmp_path / "home") == []


def test_packed_zip_with_a_changed_member_is_rejected(upstream, tmp_path):
    up, ds = upstream
    make_zip(up / "packed.zip", {"inner/one.txt": INNER["inner/one.txt"], "inner/two.txt": b"edited\n"})
    with pytest.raises(ChecksumError, match=r"member inner/two\.txt"):
        F.fetch(ds, tmp_path / "home")
    assert placed(tmp_path / "home") == []


def test_repacked_zip_with_the_same_members_is_accepted(upstream, tmp_path):
    up, ds = upstream
    make_zip(up / "packed.zip", {"README": b"new file upstream\n", **INNER})  # different zip bytes
    assert F.fetch(ds, tmp_path / "home").verified


def test_mirrors_are_tried_in_order(upstream, tmp_path):
    up, ds = upstream
    bad = (up / "corrupt.txt")
    bad.write_bytes(b"garbage\n")
    mirrored = Dataset(name="m", title="", folder="toy", homepage="", licence="", citation="", sources=(
        Source(urls=((up / "missing.txt").as_uri(), bad.as_uri(), (up / "plain.txt").as_uri()),
               sha256=sha(A + B), files=(DataFile("toy/plain.txt", sha(A + B)),)),))
    messages = []
    assert F.fetch(mirrored, tmp_path / "home", log=messages.append).verified
    assert [m.split()[0] for m in messages].count("downloading") == 3
    assert leftovers(tmp_path / "home") == []


def test_no_mirror_reachable_is_a_download_error(upstream, tmp_path):
    up, ds = upstream
    gone = Dataset(name="gone", title="", folder="toy", homepage="", licence="", citation="", sources=(
        Source(urls=((up / "missing-1.txt").as_uri(), (up / "missing-2.txt").as_uri()),
               sha256=sha(A), files=(DataFile("toy/x.txt", sha(A)),)),))
    with pytest.raises(F.DownloadError, match="missing-1.txt.*missing-2.txt.*fix:") as info:
        F.fetch(gone, tmp_path / "home")
    assert isinstance(info.value, ComboError)
    assert placed(tmp_path / "home") == [] and leftovers(tmp_path / "home") == []


def test_all_mirrors_corrupt_reports_the_checksum(upstream, tmp_path):
    up, _ = upstream
    (up / "x1.txt").write_bytes(b"one\n")
    (up / "x2.txt").write_bytes(b"two\n")
    ds = Dataset(name="bad", title="", folder="toy", homepage="", licence="", citation="", sources=(
        Source(urls=((up / "x1.txt").as_uri(), (up / "x2.txt").as_uri()), sha256=sha(A),
               files=(DataFile("toy/x.txt", sha(A)),)),))
    with pytest.raises(ChecksumError, match="x1.txt.*other mirrors: .*x2.txt") as info:
        F.fetch(ds, tmp_path / "home")
    assert sha(b"one\n") in str(info.value) and sha(b"two\n") in str(info.value)


def test_verified_data_is_not_downloaded_again_unless_forced(upstream, tmp_path):
    _, ds = upstream
    home = tmp_path / "home"
    F.fetch(ds, home)
    calls = []

    def no_network(url):
        calls.append(url)
        raise AssertionError("no download expected")

    assert F.fetch(ds, home, urlopen=no_network).verified and calls == []

    def counting(url):
        calls.append(url)
        return open(url[len("file://"):], "rb")

    assert F.fetch(ds, home, urlopen=counting, force=True).verified
    assert len(calls) == 4


def test_only_the_source_of_a_broken_file_is_fetched_again(upstream, tmp_path):
    _, ds = upstream
    home = tmp_path / "home"
    F.fetch(ds, home)
    (home / "toy/b.txt").write_bytes(b"damaged on disk\n")
    calls = []

    def counting(url):
        calls.append(url)
        return open(url[len("file://"):], "rb")

    status = F.fetch(ds, home, urlopen=counting)
    assert status.verified and (home / "toy/b.txt").read_bytes() == B
    assert [Path(u).name for u in calls] == ["pack.tar.gz"]


def test_verify_names_file_hashes_and_fix(upstream, tmp_path):
    _, ds = upstream
    home = tmp_path / "home"
    with pytest.raises(ResourceMissing, match="combo data fetch toy"):
        F.verify(ds, home)
    F.fetch(ds, home)
    (home / "toy/c.txt").write_bytes(b"charlie\r\n")
    with pytest.raises(ChecksumError) as info:
        F.verify(ds, home)
    message = str(info.value)
    assert str(home / "toy/c.txt") in message and sha(C) in message and sha(b"charlie\r\n") in message
    assert "fix: run `combo data fetch toy`" in message
    status = F.check(ds, home)
    assert status.state == "corrupt" and [f.path.name for f in status.corrupt] == ["c.txt"]
    (home / "toy/c.txt").unlink()
    assert F.check(ds, home).state == "partial"


def test_packed_zip_corruption_on_disk_names_the_member(upstream, tmp_path):
    _, ds = upstream
    home = tmp_path / "home"
    F.fetch(ds, home)
    make_zip(home / "toy/packed.zip", {"inner/one.txt": b"changed\n", "inner/two.txt": INNER["inner/two.txt"]})
    with pytest.raises(ChecksumError, match=r"packed\.zip \(member inner/one\.txt\)"):
        F.verify(ds, home)
    (home / "toy/packed.zip").write_bytes(b"not a zip")
    assert "unreadable zip" in F.check(ds, home).corrupt[0].actual


def test_member_names_never_choose_where_files_are_written(tmp_path):
    evil = make_tar(tmp_path / "evil.tar.gz", {"../../outside/docs/a.txt": A, "/abs/b.txt": B})
    ds = Dataset(name="evil", title="", folder="toy", homepage="", licence="", citation="", sources=(
        Source(urls=(evil.as_uri(),), archive="tar",
               files=(DataFile("toy/docs/a.txt", sha(A)), DataFile("toy/b.txt", sha(B)))),))
    home = tmp_path / "deep" / "home"
    assert F.fetch(ds, home).verified
    assert placed(home) == ["toy/b.txt", "toy/docs/a.txt"]
    assert not (tmp_path / "outside").exists() and not (tmp_path / "deep" / "outside").exists()


def test_injected_urlopen_errors_are_download_errors(tmp_path):
    ds = Dataset(name="x", title="", folder="toy", homepage="", licence="", citation="", sources=(
        Source(urls=("https://example.invalid/x.txt",), sha256=sha(A), files=(DataFile("toy/x.txt", sha(A)),)),))

    def offline(url):
        raise urllib.error.URLError("network is unreachable")

    with pytest.raises(F.DownloadError, match="network is unreachable"):
        F.fetch(ds, tmp_path, urlopen=offline)
    assert placed(tmp_path) == [] and leftovers(tmp_path) == []


# -- the real catalogue, served from the shared copies ----------------------------------------------


def serve(mapping):
    """An urlopen serving ``{url: local path}``; every other URL is unreachable."""
    def opener(url):
        if url not in mapping:
            raise urllib.error.URLError(f"offline test: {url} not served")
        return open(mapping[url], "rb")
    return opener


def test_real_catalogue_fetches_from_upstream_layouts(data, tmp_path):
    """Rebuild each upstream download from the shared copies, in the upstream layout, and fetch it."""
    up = tmp_path / "upstream"
    up.mkdir()
    cat = F.DATASETS
    served = {}
    # MUTT and the DSTC7 licence: plain files from GitHub (first mirror)
    for src in cat["mutt"].sources:
        served[src.urls[0]] = data / src.files[0].path
    served[cat["dstc7"].sources[1].urls[0]] = data / "dstc7/LICENSE.txt"
    # DSTC7 human evaluation tarball (second mirror only: the first is 'unreachable')
    dstc = cat["dstc7"].sources[0]
    served[dstc.urls[1]] = make_tar(up / "dstc7.tgz", {
        "dstc7-task2-human_eval/" + Path(f.path).name: data / f.path for f in dstc.files})
    # Flickr8k text zip, with the macOS noise the GitHub mirror has (mirror only)
    flickr = cat["flickr8k"].sources[0]
    members = {"__MACOSX/._Flickr8k.token.txt": b"fork"}
    members.update({Path(f.path).name: data / f.path for f in flickr.files})
    served[flickr.urls[1]] = make_zip(up / "Flickr8k_text.zip", members)
    # SICK zip (Zenodo)
    sick = cat["sick"].sources[0]
    served[sick.urls[0]] = make_zip(up / "SICK.zip", {Path(f.path).name: data / f.path for f in sick.files})
    # NLTK's wordnet.zip as is
    served[cat["wordnet"].sources[0].urls[0]] = data / "nltk_data/corpora/wordnet.zip"
    # WMT12: the manual evaluation and the test-set archive
    manual, plain = cat["wmt12"].sources
    served[manual.urls[0]] = make_tar(up / "manual.tgz", {
        "manual-eval-judgments-2012/" + Path(f.path).name: data / f.path for f in manual.files})
    served[plain.urls[0]] = make_tar(up / "wmt12-data.tar.gz", {
        "wmt12-data/" + f.path[len("wmt12/"):]: data / f.path for f in plain.files})

    home = tmp_path / "home"
    opener = serve(served)
    for name in cat:
        assert F.fetch(name, home, urlopen=opener).verified, name
    assert all(s.verified for s in F.list_datasets(home))
    assert leftovers(home) == []
    assert (home / "wmt12/plain/sources/newstest2012-src.de").read_bytes() == \
        (data / "wmt12/plain/sources/newstest2012-src.de").read_bytes()
