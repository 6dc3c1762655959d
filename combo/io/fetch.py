"""Download, verify and list the public data sets with human judgments (``combo data fetch NAME``).

Every file a data set needs is pinned by its SHA-256, computed from the copies
the project tests against. :func:`fetch` downloads each upstream file to a
staging folder inside the data home, checks its hash (for an archive: unpacks
the pinned members and checks each one), and only when every file of the data
set has passed moves them into place with atomic renames, so a failed or
corrupted download never leaves a partial or unverified file behind.

Layout under the data home (:func:`data_home`) is the one of the project's
shared data folder: ``wmt12/``, ``flickr8k/``, ``dstc7/``, ``sick/``,
``mutt/corruptions/`` and ``nltk_data/corpora/wordnet.zip`` (combo's WordNet
reader looks in ``<home>/nltk_data`` too). See ``docs/data.md``.

The data sets' records and their pinned catalogue (:data:`DATASETS`) are in :mod:`combo.io.datasets`;
this module gives their names too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from ..errors import ChecksumError, ComboError, ResourceMissing
from .datasets import DATASETS, DataFile, Dataset, DatasetStatus, FileStatus, Source, get_dataset

__all__ = [
    "DATASETS", "DataFile", "Dataset", "DatasetStatus", "DownloadError", "FileStatus", "Source",
    "check", "data_home", "data_home_origin", "dataset_dir", "example_path", "fetch", "get_dataset",
    "list_datasets",
    "sha256_file", "verify",
]

_CHUNK = 1 << 20
_TIMEOUT = 60.0  # seconds per connection attempt


class DownloadError(ComboError):
    """No URL of a data set's file could be downloaded (network or server failure)."""


# -- locations -------------------------------------------------------------------


#: The environment variable naming the data home; ``COMBO_DATA_DIR``, its older name, is still read.
DATA_HOME_VARIABLES = ("COMBO_DATA_HOME", "COMBO_DATA_DIR")


def data_home() -> Path:
    """Where data sets live: ``$COMBO_DATA_HOME``, else the platform's per-user cache folder.

    Linux and others: ``$XDG_CACHE_HOME/combo/data`` (default ``~/.cache/combo/data``);
    macOS: ``~/Library/Caches/combo/data``; Windows: ``%LOCALAPPDATA%\\combo\\data``.
    ``$COMBO_DATA_DIR``, the older name the test suite used, is read when ``COMBO_DATA_HOME`` is unset.
    """
    for variable in DATA_HOME_VARIABLES:
        env = os.environ.get(variable)
        if env:
            return Path(env).expanduser()
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA") or os.environ.get("APPDATA")
        if base:
            return Path(base) / "combo" / "data"
    elif sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "combo" / "data"
    cache = os.environ.get("XDG_CACHE_HOME")
    return (Path(cache).expanduser() if cache else Path.home() / ".cache") / "combo" / "data"


def data_home_origin(home: Union[str, Path, None] = None) -> str:
    """Why the data home is where it is: ``--home``, the variable that set it, or the default."""
    if home is not None:
        return "--home"
    variable = next((v for v in DATA_HOME_VARIABLES if os.environ.get(v)), None)
    if variable == "COMBO_DATA_DIR":
        return "$COMBO_DATA_DIR, the older name of $COMBO_DATA_HOME"
    return f"${variable}" if variable else "the default; $COMBO_DATA_HOME is unset"



def dataset_dir(name: Union[str, Dataset], home: Union[str, Path, None] = None) -> Path:
    """The folder of a data set under the data home (``<home>/nltk_data`` for wordnet)."""
    return _home(home) / get_dataset(name).folder


def example_path() -> Path:
    """The small multi-reference example test bed bundled with combo (JSONL)."""
    return Path(__file__).resolve().parents[1] / "data" / "example.jsonl"


def _home(home: Union[str, Path, None]) -> Path:
    return data_home() if home is None else Path(home).expanduser()


# -- hashing and verification ----------------------------------------------------------


def sha256_file(path: Union[str, Path]) -> str:
    """SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _sha256_stream(stream: BinaryIO) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: stream.read(_CHUNK), b""):
        digest.update(block)
    return digest.hexdigest()


def _check_file(path: Path, f: DataFile) -> FileStatus:
    """Compare one file on disk with its pins."""
    if not path.is_file():
        return FileStatus(path, "missing", f.sha256)
    if f.sha256 is not None:
        actual = sha256_file(path)
        if actual != f.sha256:
            return FileStatus(path, "mismatch", f.sha256, actual)
    for member, expected in (f.members or {}).items():
        try:
            with zipfile.ZipFile(path) as zf, zf.open(member) as fh:
                actual = _sha256_stream(fh)
        except KeyError:
            actual = "absent from the zip"
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
            actual = f"unreadable zip ({exc})"
        if actual != expected:
            return FileStatus(path, "mismatch", expected, actual, member)
    return FileStatus(path, "ok", f.sha256)


def check(name: Union[str, Dataset], home: Union[str, Path, None] = None) -> DatasetStatus:
    """Hash every file of a data set under ``home``; never raises for missing or bad files."""
    ds = get_dataset(name)
    root = _home(home)
    return DatasetStatus(ds.name, root, [_check_file(root / f.path, f) for f in ds.files])


def _mismatch_error(what: str, expected: Optional[str], actual: str, fix: str) -> ChecksumError:
    err = ChecksumError(f"{what}: SHA-256 mismatch: expected {expected}, got {actual} (fix: {fix})")
    err.path, err.expected, err.actual, err.fix = what, expected, actual, fix
    return err


def verify(name: Union[str, Dataset], home: Union[str, Path, None] = None) -> DatasetStatus:
    """Check every file of a data set against its pinned SHA-256.

    Returns the status when all files verify. Raises :class:`ChecksumError` for
    the first file whose content differs (naming the file, both hashes and the
    fix), else :class:`ResourceMissing` when files are absent.
    """
    status = check(name, home)
    for fs in status.corrupt:
        what = str(fs.path) + (f" (member {fs.member})" if fs.member else "")
        raise _mismatch_error(what, fs.expected, fs.actual or "?",
                              f"run `combo data fetch {status.name}` to download it again "
                              "(files that fail verification are replaced)")
    if status.missing:
        first = status.missing[0].path
        raise ResourceMissing(
            f"data set {status.name!r} under {status.root} ({len(status.missing)} of {len(status.files)} "
            f"files missing, e.g. {first})", f"combo data fetch {status.name}")
    return status


def list_datasets(home: Union[str, Path, None] = None) -> List[DatasetStatus]:
    """Status of every catalogued data set under ``home``; ``.verified`` tells which are usable."""
    return [check(ds, home) for ds in DATASETS.values()]


# -- downloading ------------------------------------------------------------------------

Opener = Callable[[str], BinaryIO]


def _default_urlopen(url: str) -> BinaryIO:
    import urllib.request  # here, not at the top: http and email cost every command 35 ms to import

    from .._version import __version__
    request = urllib.request.Request(url, headers={"User-Agent": f"combo-eval/{__version__}"})
    return urllib.request.urlopen(request, timeout=_TIMEOUT)  # noqa: S310 (URLs are from the catalogue)


def _download(url: str, dest: Path, opener: Opener) -> str:
    """Stream ``url`` into ``dest``; return the SHA-256 of what arrived."""
    digest = hashlib.sha256()
    response = opener(url)
    try:
        with open(dest, "wb") as out:
            for block in iter(lambda: response.read(_CHUNK), b""):
                digest.update(block)
                out.write(block)
    finally:
        close = getattr(response, "close", None)
        if close is not None:
            close()
    return digest.hexdigest()


def _normalise_member(name: str) -> Optional[str]:
    """POSIX member name without ``./``; None for macOS resource forks and the like."""
    name = name.replace("\\", "/")
    while name.startswith("./"):
        name = name[2:]
    parts = name.split("/")
    if "__MACOSX" in parts or parts[-1].startswith("._"):
        return None
    return name


def _archive_entries(path: Path, kind: str) -> Iterator[Tuple[str, Callable[[], BinaryIO]]]:
    """(member name, opener) for every regular file of a zip or tar archive, in archive order."""
    if kind == "zip":
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if not info.is_dir():
                    yield info.filename, (lambda info=info: zf.open(info))
    elif kind == "tar":
        with tarfile.open(path, "r:*") as tf:
            for member in tf:
                if member.isfile():
                    yield member.name, (lambda member=member: tf.extractfile(member))
    else:
        raise ValueError(f"unknown archive kind {kind!r}")


def _copy_hashing(stream: BinaryIO, dest: Path) -> str:
    digest = hashlib.sha256()
    with stream, open(dest, "wb") as out:
        for block in iter(lambda: stream.read(_CHUNK), b""):
            digest.update(block)
            out.write(block)
    return digest.hexdigest()


def _unpack(ds: Dataset, src: Source, files: Sequence[DataFile], archive: Path, url: str,
            staging: Path) -> None:
    """Extract the pinned members of ``archive`` into ``staging``, checking each hash.

    Members are found by path suffix; when several match, the one with the
    pinned content wins. Nothing outside ``staging`` is written, whatever the
    member names say.
    """
    pending = {f.path: f for f in files}
    seen: Dict[str, Tuple[str, str]] = {}  # file path -> (member, actual hash) of a wrong candidate
    scratch = staging / ".member"
    try:
        with contextlib.closing(_archive_entries(archive, src.archive or "")) as entries:
            for raw_name, open_member in entries:
                name = _normalise_member(raw_name)
                if name is None:
                    continue
                targets = [f for f in pending.values()
                           if name == ds.member_suffix(f) or name.endswith("/" + ds.member_suffix(f))]
                if not targets:
                    continue
                actual = _copy_hashing(open_member(), scratch)
                for f in targets:
                    if actual != f.sha256:
                        seen.setdefault(f.path, (name, actual))
                        continue
                    dest = staging / f.path
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(scratch, dest)
                    del pending[f.path]
                if not pending:
                    break
    except (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError, OSError) as exc:
        actual = sha256_file(archive)
        fix = _retry_fix(ds)
        err = ChecksumError(f"download of {url} (sha256 {actual}) is not a readable {src.archive} archive: "
                            f"{exc} (fix: {fix})")
        err.path, err.expected, err.actual, err.fix = url, None, actual, fix
        raise err from None
    finally:
        if scratch.exists():
            scratch.unlink()
    if pending:
        f = next(iter(pending.values()))
        member, actual = seen.get(f.path, (None, "no such member in the archive"))
        where = f"{f.path} (member {member} of {url})" if member else f"{f.path} (from {url})"
        raise _mismatch_error(where, f.sha256, actual, _retry_fix(ds))


def _retry_fix(ds: Dataset) -> str:
    return (f"the download was corrupted or the upstream file changed: run `combo data fetch {ds.name}` "
            "again; if it fails the same way, the upstream copy differs from the one combo pins, "
            "so please report it")


def _obtain(ds: Dataset, src: Source, files: Sequence[DataFile], staging: Path, opener: Opener,
            log: Callable[[str], None]) -> None:
    """Download one source (mirrors in order) and leave its verified files under ``staging``."""
    import http.client

    failures: List[Tuple[str, Exception]] = []
    download = staging / ".download"
    for url in src.urls:
        attempt = staging / ".attempt"
        shutil.rmtree(attempt, ignore_errors=True)
        attempt.mkdir()
        log(f"downloading {url}")
        try:
            try:
                actual = _download(url, download, opener)
            except (OSError, ValueError, http.client.HTTPException) as exc:  # URLError, timeouts: OSError
                failures.append((url, exc))
                continue
            what = f"download of {url}" if src.archive else f"{files[0].path} (download of {url})"
            if src.sha256 is not None and actual != src.sha256:
                raise _mismatch_error(what, src.sha256, actual, _retry_fix(ds))
            if src.archive is None:
                f = files[0]
                status = _check_file(download, f)
                if not status.ok:
                    if status.member:
                        what = f"{f.path} (member {status.member} of the download of {url})"
                    raise _mismatch_error(what, status.expected, status.actual or "?", _retry_fix(ds))
                dest = attempt / f.path
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(download, dest)
            else:
                log(f"unpacking {url} (sha256 {actual})")
                _unpack(ds, src, files, download, url, attempt)
        except ChecksumError as exc:
            failures.append((url, exc))
            continue
        finally:
            if download.exists():
                download.unlink()
        for f in files:  # this mirror delivered every file: merge into the staging tree
            dest = staging / f.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(attempt / f.path, dest)
        shutil.rmtree(attempt, ignore_errors=True)
        return
    shutil.rmtree(staging / ".attempt", ignore_errors=True)
    checksum_errors = [exc for _, exc in failures if isinstance(exc, ChecksumError)]
    if checksum_errors:
        err = checksum_errors[0]
        others = [f"{url}: {exc}" for url, exc in failures if exc is not err]
        if others:
            err.args = (err.args[0] + "; other mirrors: " + " | ".join(others),)
        raise err
    raise DownloadError(
        f"could not download {', '.join(f.path for f in files[:3])}{' ...' if len(files) > 3 else ''} "
        f"for data set {ds.name!r}: " + " | ".join(f"{url}: {exc}" for url, exc in failures) +
        f" (fix: check the network connection and run `combo data fetch {ds.name}` again, or download "
        f"{src.urls[0]} by hand and put the files under {staging.parent} as listed in docs/data.md)")


def fetch(name: Union[str, Dataset], home: Union[str, Path, None] = None, *,
          urlopen: Optional[Opener] = None, force: bool = False,
          log: Optional[Callable[[str], None]] = None) -> DatasetStatus:
    """Download a data set into ``home`` (default :func:`data_home`) and verify it.

    Only sources with a missing or failing file are downloaded (all with
    ``force``). Each download goes to a staging folder inside ``home``; its
    hash, or the hashes of the pinned members it unpacks to, are checked; when
    every file of the data set has passed, the files are moved into place with
    atomic renames. On any failure the staging folder is removed and nothing in
    ``home`` changes. ``urlopen(url)`` returns a binary file object (default:
    :func:`urllib.request.urlopen`; tests inject a local one). Returns the
    verified :class:`DatasetStatus`; raises :class:`ChecksumError` or
    :class:`DownloadError`.
    """
    ds = get_dataset(name)
    root = _home(home)
    opener = urlopen or _default_urlopen
    say = log or (lambda message: None)
    status = check(ds, root)
    if status.verified and not force:
        say(f"{ds.name}: all {len(status.files)} files present and verified under {root}")
        return status
    good = {str(fs.path) for fs in status.files if fs.ok}
    plan = [(src, [f for f in src.files if force or str(root / f.path) not in good]) for src in ds.sources]
    plan = [(src, files) for src, files in plan if files]
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{ds.name}-", suffix=".partial", dir=root))
    try:
        for src, files in plan:
            _obtain(ds, src, files, staging, opener, say)
        for src, files in plan:  # everything verified: move into place
            for f in files:
                dest = root / f.path
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / f.path, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    say(f"{ds.name}: {sum(len(files) for _, files in plan)} files fetched and verified under {root}")
    return verify(ds, root)
