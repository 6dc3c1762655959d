"""The disk score cache (``--cache``): one ``.npz`` entry per metric and data, written atomically, its folder
marked as combo's; ``combo cache info|clear`` read and empty it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..analysis.layers import cache_dir
from ..errors import InputError
from ..metrics.base import Metric
from ..testbed import SuppliedTrees
from .provenance import analysis_provenance


def _fingerprint(*parts) -> str:
    """SHA-256 of the texts and layout a score depends on."""
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part if not isinstance(part, np.ndarray) else part.tolist(),
                            ensure_ascii=False).encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def cache_warning(message: str) -> None:
    """One line on stderr: a cache problem costs time, never a result."""
    sys.stderr.write(f"combo: warning: {message}\n")
    sys.stderr.flush()


#: The file that makes a folder a combo score cache: ``combo cache clear`` refuses a folder without it.
SCORE_CACHE_MARKER = ".combo-score-cache"
_MARKER_CONTENT = {"format": "combo-score-cache", "version": 1}
#: What combo writes in a score-cache folder, and all that ``combo cache clear`` removes: entries
#: ``<metric>-<32 hex key>.npz``, their temporary files ``.<entry stem>-<mkstemp's letters>.tmp`` and
#: the marker's ``.combo-score-cache-<letters>.tmp``.
_ENTRY = re.compile(r".+-[0-9a-f]{32}\.npz")
_ENTRY_TMP = re.compile(r"\..+-[0-9a-f]{32}-[a-z0-9_]+\.tmp")
_MARKER_TMP = re.compile(re.escape(SCORE_CACHE_MARKER) + r"-[a-z0-9_]+\.tmp")
#: The name of the array in which an entry records its key (the arrays themselves are ``a0, a1, ...``).
_KEY_ARRAY = "key"


class _Cache:
    """Per-metric score arrays in ``.npz`` files keyed by data fingerprint and metric signature.

    ``shapes`` are the shapes the entry must hold (one per array). An entry is
    written under a unique temporary name, fsynced and renamed into place, so
    concurrent runs on one folder and a run killed mid-write never leave a
    partial entry; it records its own key (the SHA-256 of what it depends on),
    so a file copied over another entry's name is not read as that entry. A
    damaged one (truncated, empty, other arrays or shapes, another key or none)
    is recomputed after one warning line. The folder gets a marker file
    (:data:`SCORE_CACHE_MARKER`) with its first entry.
    """

    def __init__(self, folder, fingerprint: str, kind: str, shapes: Sequence[Tuple[int, ...]] = (),
                 trees: Optional[SuppliedTrees] = None):
        self.folder = None if folder is None else Path(folder)
        self.trees = trees
        self.fingerprint = fingerprint
        self.kind = kind
        self.shapes = [tuple(s) for s in shapes]

    def _key(self, metric: Metric) -> str:
        depends = f"{self.kind}|{self.fingerprint}|{metric.signature}|{analysis_provenance(metric, self.trees)}"
        return hashlib.sha256(depends.encode()).hexdigest()

    def _path(self, metric: Metric, key: Optional[str] = None) -> Path:
        key = self._key(metric) if key is None else key
        return self.folder / f"{metric.name.replace('/', '_')}-{key[:32]}.npz"

    def get(self, metric: Metric):
        if self.folder is None:
            return None
        key = self._key(metric)
        path = self._path(metric, key)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                if _KEY_ARRAY not in z.files:
                    raise ValueError("it records no key")
                stored = str(z[_KEY_ARRAY])
                if stored != key:
                    raise ValueError(f"it records the key of another entry, {stored[:32]}")
                count = len(z.files) - 1
                arrays = tuple(np.asarray(z[f"a{i}"], dtype=np.float64) for i in range(count))
            if self.shapes and [a.shape for a in arrays] != self.shapes:
                raise ValueError(f"arrays of shapes {[a.shape for a in arrays]}, expected {self.shapes}")
            return arrays
        except Exception as exc:  # noqa: BLE001 - any damage (BadZipFile, EOFError, ...) means recompute
            cache_warning(f"damaged score-cache entry {path} ({type(exc).__name__}: {str(exc)[:80]}); "
                          "recomputing it")
            return None

    def put(self, metric: Metric, arrays) -> None:
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _mark_score_cache(self.folder)
            key = self._key(metric)
            write_npz_atomic(self._path(metric, key), arrays, key=key)
        except OSError as exc:
            cache_warning(f"cannot write the score cache in {self.folder} ({exc.strerror}); "
                          "scores are not cached")


def _mark_score_cache(folder: Path) -> None:
    """Write ``folder``'s marker once (a temporary file renamed into place, as the entries)."""
    marker = folder / SCORE_CACHE_MARKER
    if not marker.is_file():
        _write_atomic(marker, f"{SCORE_CACHE_MARKER}-", (json.dumps(_MARKER_CONTENT) + "\n").encode("utf-8"))


def _is_score_cache(folder: Path) -> bool:
    """Whether ``folder`` holds the marker combo writes with a score cache's first entry."""
    try:
        content = json.loads((folder / SCORE_CACHE_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(content, dict) and content.get("format") == _MARKER_CONTENT["format"]


def write_npz_atomic(path: Path, arrays, key: Optional[str] = None) -> None:
    """``arrays`` as ``a0, a1, ...`` in ``path`` (and ``key``, when given, as the string array ``key``): a
    uniquely named temporary file, fsynced, renamed into place, with the mode a plain ``open`` gives (the
    umask's, so a cache folder shared by a group stays shared)."""
    named = {f"a{i}": a for i, a in enumerate(arrays)}
    if key is not None:
        named[_KEY_ARRAY] = np.array(key)
    _write_atomic(path, f".{path.stem}-", lambda fh: np.savez(fh, **named))


def _write_atomic(path: Path, prefix: str, content) -> None:
    """``content`` (bytes, or a function writing to a binary file) in ``path`` through a temporary file
    ``<prefix>XXXXXXXX.tmp`` beside it, fsynced and renamed into place, with the umask's mode."""
    from ..io.text import current_umask

    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(content):
                content(fh)
            else:
                fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


#: ``COMBO_SCORE_CACHE=off`` (or 0, no, false): the command line keeps no score cache unless given ``--cache``.
SCORE_CACHE_VARIABLE = "COMBO_SCORE_CACHE"


def default_score_cache() -> Optional[Path]:
    """The command line's score-cache folder when ``--cache`` is not given: ``scores/`` inside the analysis
    cache's folder (``$COMBO_CACHE_DIR``, else ``~/.cache/combo``), so both caches live in one place that
    ``combo cache info|clear`` shows and empties, and a killed run keeps every metric it finished. None when
    the disk cache is off (``COMBO_CACHE_DIR=""``) or ``COMBO_SCORE_CACHE=off``. The Python API caches scores
    only when asked (``cache_dir=``)."""
    if os.environ.get(SCORE_CACHE_VARIABLE, "").strip().lower() in ("off", "0", "no", "false"):
        return None
    folder = cache_dir()
    return None if folder is None else folder / "scores"


def _combo_files(folder: Path) -> Tuple[List[Path], List[Path]]:
    """The entries and the temporary files combo wrote in ``folder``, by exact name; other files are not
    combo's."""
    entries, temporary = [], []
    for p in sorted(folder.iterdir()):
        if _ENTRY.fullmatch(p.name) and p.is_file():
            entries.append(p)
        elif (_ENTRY_TMP.fullmatch(p.name) or _MARKER_TMP.fullmatch(p.name)) and p.is_file():
            temporary.append(p)
    return entries, temporary


def cache_info(folder, require_marker: bool = True) -> Dict[str, Any]:
    """Entries (``<metric>-<key>.npz``) and bytes of a score-cache folder, and whether it has combo's marker.
    A folder without the marker counts no entries unless ``require_marker`` is false (the default folder,
    whose entries an older combo may have written without a marker)."""
    folder = Path(folder)
    marked = folder.is_dir() and _is_score_cache(folder)
    entries = _combo_files(folder)[0] if folder.is_dir() and (marked or not require_marker) else []
    return {"folder": str(folder), "score_entries": len(entries),
            "score_bytes": sum(p.stat().st_size for p in entries), "marked": marked}


def cache_clear(folder, require_marker: bool = True) -> int:
    """Remove the score-cache entries of ``folder`` and leftover temporary files of combo's; returns how many.

    Only files named as combo names them go; the marker stays (the folder is still a cache). A folder
    without combo's marker is refused (:class:`InputError`, nothing removed) unless ``require_marker`` is
    false: the default folder, a path combo owns, where an older combo wrote entries without a marker.
    A missing folder has nothing to remove."""
    folder = Path(folder)
    if not folder.is_dir():
        return 0
    if require_marker and not _is_score_cache(folder):
        marker = SCORE_CACHE_MARKER
        why = f"its {marker} is not combo's marker" if (folder / marker).exists() else f"no {marker} marker"
        raise InputError(f"is not a combo score cache ({why}): nothing was removed", folder,
                         fix="name the folder a command's --cache wrote, or delete the files yourself")
    entries, temporary = _combo_files(folder)
    for p in entries + temporary:
        p.unlink(missing_ok=True)
    return len(entries) + len(temporary)
