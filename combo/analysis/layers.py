"""Analysis layers: each distinct text annotated once per layer, cached in memory and on disk.

A layer is an annotator with a name and a version string (the annotator's
package and model versions and our own encoding version). :func:`annotate`
returns the analysis of a list of texts in order, computing only the texts
not seen before: first the in-memory memo of the run (:class:`AnalysisMemo`,
opened by :func:`analysis_memo`: scoring opens one per call, a metric's public
methods one per call when none is open, so nothing is held in memory from one
test bed to the next), then an on-disk cache (one SQLite file per cache
folder, one table per layer and version, keyed by a 128-bit BLAKE2b hash of
the text; without one, the stored forms are kept in the run's memo), then
the annotator itself, in batches. A task over a chunk of rows opens a memo
of its own inside the run's (:func:`task_memo`), dropped with the chunk;
:func:`prepare` annotates and stores texts without decoding them, so that
each task decodes only its own.

The layers themselves (tokens, stems, shallow and dependency parses, sentence
embeddings, WordNet synonyms, GloVe rows) are defined in :mod:`combo.analysis.layer_definitions`;
this module gives their names too.

The cache folder is ``$COMBO_CACHE_DIR`` if set (the empty string turns the
disk cache off), else ``~/.cache/combo``; :func:`set_cache_dir` overrides both.
Trees a user supplies from any parser belong to a test bed, not to this
process: see :mod:`combo.analysis.supplied`.
"""

from __future__ import annotations

import gc
import hashlib
import os
import sys
import sqlite3
import threading
from collections import ChainMap
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Callable, ContextManager, Dict, List, MutableMapping, Optional, Sequence, Tuple

from ..errors import OptionError
from .layer_definitions import (BATCH, LAYERS, DependencyParse, Layer, ShallowParse,
                                get_layer, ordered)
from .scope import run_scope

__all__ = [
    "ShallowParse", "DependencyParse", "Layer", "LAYERS", "annotate", "derive", "get_layer",
    "set_cache_dir", "cache_dir", "clear_memory", "AnalysisMemo", "analysis_memo", "task_memo", "prepare",
]


# ---------------------------------------------------------------------------
# The caches
# ---------------------------------------------------------------------------

_UNSET = object()
_cache_dir_override = _UNSET
_lock = threading.Lock()


class AnalysisMemo:
    """The analyses (by layer version, then text) and derived objects (by layer version and derivation, then text)
    of one run, held in memory so that every metric of the run reuses them.

    A memo opened inside another (``parent``, :func:`task_memo`) reads the parent's analyses and derived objects
    but keeps what it adds to itself, dropped with it: a task over a chunk of rows leaves nothing behind. The
    stored forms kept when there is no disk cache (``stored``) are always the outermost memo's, so a later task
    decodes them instead of annotating the texts again.
    """

    def __init__(self, parent: Optional["AnalysisMemo"] = None) -> None:
        self.parent = parent
        self.analyses: Dict[str, Dict[str, object]] = {}
        self.derived: Dict[Tuple[str, str], Dict[str, object]] = {}
        self.stored: Dict[str, Dict[bytes, str]] = parent.stored if parent is not None else {}

    def analyses_of(self, version: str) -> MutableMapping[str, object]:
        """The analyses of one layer version: written here, read here and then in the parents."""
        return self._chain(self.analyses, version, lambda memo: memo.analyses)

    def derived_of(self, key: Tuple[str, str]) -> MutableMapping[str, object]:
        return self._chain(self.derived, key, lambda memo: memo.derived)

    def _chain(self, own: dict, key, table: Callable[["AnalysisMemo"], dict]) -> MutableMapping[str, object]:
        with _lock:
            maps = [own.setdefault(key, {})]
            parent = self.parent
            while parent is not None:
                maps.append(table(parent).get(key, {}))
                parent = parent.parent
        return maps[0] if len(maps) == 1 else ChainMap(*maps)

    def clear(self) -> None:
        with _lock:
            self.analyses.clear()
            self.derived.clear()
            self.stored.clear()


#: The memo of the run in progress; set only inside :func:`analysis_memo`.
_MEMO: ContextVar[Optional[AnalysisMemo]] = ContextVar("combo_analysis_memo", default=None)


def analysis_memo() -> ContextManager[AnalysisMemo]:
    """Keep analyses in memory for the ``with`` body (a scoring run), or use the one already open; dropped at the
    end. Outside any, each :func:`annotate` / :func:`derive` call has a memo of its own (the disk cache still
    serves every call)."""
    return run_scope(_MEMO, AnalysisMemo)


def task_memo(memo: Optional[AnalysisMemo] = None) -> ContextManager[AnalysisMemo]:
    """A memo for one task of a run (a chunk of rows): it reads the run's memo and drops what it adds at the end
    of the ``with`` body, so the task's memory is bounded by its own texts whatever ran before it. ``memo``: the
    one an earlier task of the same run had, to go on with (what that task added is read again, not redone)."""
    if memo is not None and memo.parent is not _MEMO.get():
        raise ValueError("a task memo goes on only within the run that opened it")
    return run_scope(_MEMO, (lambda: memo) if memo is not None else (lambda: AnalysisMemo(parent=_MEMO.get())),
                     fresh=True)


def _memo() -> AnalysisMemo:
    return _MEMO.get() or AnalysisMemo()


def set_cache_dir(folder) -> None:
    """Use ``folder`` for the disk cache (None: no disk cache); overrides ``$COMBO_CACHE_DIR``."""
    global _cache_dir_override
    _cache_dir_override = None if folder is None else Path(folder)


def cache_dir() -> Optional[Path]:
    """The disk cache folder in use, or None when the disk cache is off."""
    if _cache_dir_override is not _UNSET:
        return _cache_dir_override
    env = os.environ.get("COMBO_CACHE_DIR")
    if env is not None:
        return Path(env) if env.strip() else None
    return Path.home() / ".cache" / "combo"


def clear_memory() -> None:
    """Forget the analyses and derived objects of the memo in use, as a new run would start (the disk cache
    stays)."""
    memo = _MEMO.get()
    if memo is not None:
        memo.clear()


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


#: How a disk-cache row frames a stored form: ``LENGTH:FORM``, so that a row cut short (or made longer) is found
#: damaged however its form reads (a token list cut after a word is still a token list). In the table's name, so
#: tables of unframed rows are not read.
ROW_FRAME = "framed-by-length"


def frame(form: str) -> str:
    """A stored form as the disk cache writes it (:data:`ROW_FRAME`)."""
    return f"{len(form)}:{form}"


def unframe(row) -> Optional[str]:
    """The stored form of a disk-cache row, or None where the row is damaged: not text, no length, or a form
    of another length than the one it was written with."""
    if not isinstance(row, str):
        return None
    length, colon, form = row.partition(":")
    if not (colon and length.isascii() and length.isdigit() and int(length) == len(form)):
        return None
    return form


class _DiskCache:
    """One SQLite table per layer version in ``<folder>/analysis.sqlite``, its rows framed (:func:`frame`)."""

    def __init__(self, folder: Path, version: str):
        self.path = folder / "analysis.sqlite"
        self.table = "layer_" + hashlib.sha1(f"{version}|{ROW_FRAME}".encode()).hexdigest()[:16]

    def _connect(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=60)
        con.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (k BLOB PRIMARY KEY, v TEXT NOT NULL)")
        return con

    def get(self, keys: List[bytes], values: bool = True) -> Dict[bytes, Optional[str]]:
        """The stored forms of the ``keys`` found, None for a damaged row (``values=False``: which are found, each
        mapped to "")."""
        found: Dict[bytes, str] = {}
        try:
            con = self._connect()
        except (OSError, sqlite3.Error) as exc:
            _warn_once(self.path, f"analysis cache {self.path} is unusable ({exc}); analysing without it")
            return found  # an unusable cache folder only costs time
        select = f"SELECT k, v FROM {self.table}" if values else \
            f"SELECT k, '' FROM {self.table} WHERE typeof(v) = 'text'"  # noqa: S608
        join = " AND " if not values else " WHERE "
        try:
            stored = con.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0]  # noqa: S608
            if len(keys) * 4 >= stored:  # most of the table is wanted: one scan beats many lookups
                wanted = set(keys)
                found.update(kv for kv in con.execute(select) if kv[0] in wanted)
            else:
                for start in range(0, len(keys), 900):
                    chunk = keys[start:start + 900]
                    marks = ",".join("?" * len(chunk))
                    found.update(con.execute(f"{select}{join}k IN ({marks})", chunk))
        except sqlite3.Error as exc:
            _warn_once(self.path, f"analysis cache {self.path} is unusable ({exc}); analysing without it")
            return {}
        finally:
            con.close()
        return found if not values else {k: unframe(v) for k, v in found.items()}

    def put(self, items: List[Tuple[bytes, str]]) -> None:
        try:
            con = self._connect()
            with con:
                con.executemany(f"INSERT OR REPLACE INTO {self.table} (k, v) VALUES (?, ?)",
                                [(k, frame(v)) for k, v in items])
            con.close()
        except (OSError, sqlite3.Error) as exc:  # the analysis is still returned; only the cache entry is lost
            _warn_once(self.path, f"analysis cache {self.path} cannot be written ({exc}); analysing without it")


def analysis_cache_info(folder: Optional[Path] = None) -> Dict[str, object]:
    """Rows per layer version and bytes of the analysis cache (``folder``, default :func:`cache_dir`)."""
    folder = cache_dir() if folder is None else Path(folder)
    path = None if folder is None else folder / "analysis.sqlite"
    info: Dict[str, object] = {"file": None if path is None else str(path), "rows": 0, "tables": 0, "bytes": 0}
    if path is None or not path.is_file():
        return info
    info["bytes"] = path.stat().st_size
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
        try:
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            info["tables"] = len(tables)
            info["rows"] = sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables)  # noqa: S608
        finally:
            con.close()
    except sqlite3.Error as exc:
        info["damaged"] = str(exc)
    return info


def analysis_cache_clear(folder: Optional[Path] = None) -> bool:
    """Delete the analysis cache file (``folder``, default :func:`cache_dir`); whether there was one."""
    folder = cache_dir() if folder is None else Path(folder)
    removed = False
    for suffix in ("", "-journal", "-wal", "-shm"):
        path = None if folder is None else folder / f"analysis.sqlite{suffix}"
        if path is not None and path.is_file():
            path.unlink()
            removed = removed or suffix == ""
    clear_memory()
    return removed


_warned: set = set()


def _warn_once(path: Path, message: str) -> None:
    """One warning line per cache file and process: a cache problem costs time, never a result."""
    if str(path) not in _warned:
        _warned.add(str(path))
        sys.stderr.write(f"combo: warning: {message}\n")


def _decode_all(layer: "Layer", stored: Dict[bytes, str], keys: List[bytes], texts: List[str]):
    """Decoded analyses by text, and the (key, text) pairs whose stored value is damaged (None, :func:`unframe`)
    or cannot be decoded."""
    decoded, damaged = {}, []
    for k, t in zip(keys, texts):
        try:
            if stored[k] is None:
                raise ValueError("a damaged row")
            decoded[t] = layer.decode(stored[k])
        except Exception:  # noqa: BLE001 - whatever the damage, the text is analysed again
            damaged.append((k, t))
    return decoded, damaged


@contextmanager
def _no_gc():
    """Pause the cyclic garbage collector (the values made here hold no reference cycles)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _not_decoded(layer_name: str, texts: Sequence[str]):
    """The layer (checked), its version, the memo in use, the memo's analyses of that version, and the distinct
    texts not among them, in order. ``texts`` must be a sequence of strings: one string alone would be read as
    its characters (a row for each), so it is refused, as is any text that is not a string."""
    if isinstance(texts, str):
        raise OptionError(f"the texts to analyse are one string ({texts!r:.40}), not a list of strings; "
                          "pass a list holding it")
    if not set(map(type, texts)) <= {str}:
        for k, text in enumerate(texts):
            if not isinstance(text, str):
                raise OptionError(f"text {k} to analyse is {type(text).__name__} {text!r:.40}, not a string")
    layer = get_layer(layer_name)
    layer.check()
    version = layer.version()
    run = _memo()
    memo = run.analyses_of(version)
    return layer, version, run, memo, list(dict.fromkeys(t for t in texts if t not in memo))


def annotate(layer_name: str, texts: Sequence[str], progress: Optional[Callable[[int], None]] = None) -> list:
    """The analysis of each text by layer ``layer_name``, in order; each distinct text annotated once (the
    texts found in neither the memo nor the disk cache by the layer's annotator, in batches of :data:`BATCH`).
    """
    layer, version, run, memo, todo = _not_decoded(layer_name, texts)
    if todo:
        store = _Store(layer, version, run)
        keys = [_key(t) for t in todo]
        stored = store.fill(keys, todo, progress)
        with _no_gc():  # decoding allocates many small tuples: the cyclic GC only slows it down
            decoded, damaged = _decode_all(layer, stored, keys, todo)
        if damaged:  # a damaged or hand-edited cache row: analysed again, the row replaced
            sys.stderr.write(f"combo: warning: {len(damaged)} damaged {layer.name} rows in the analysis cache "
                             f"{store.disk.path if store.disk is not None else ''}; analysing those texts again\n")
            values = layer.annotate_batch([t for _, t in damaged])
            store.put([(k, v) for (k, _), v in zip(damaged, values)])
            decoded.update((t, layer.decode(v)) for (_, t), v in zip(damaged, values))
        with _lock:
            memo.update(decoded)
    return [memo[t] for t in texts]


def unprepared(layer_name: str, texts: Sequence[str]) -> List[str]:
    """The distinct ``texts`` whose stored form by layer ``layer_name`` is in neither the run's memo nor the disk
    cache (without one, the run's stored forms), in order: what :func:`prepare` would annotate."""
    layer, version, run, _, todo = _not_decoded(layer_name, texts)
    if not todo:
        return []
    keys = [_key(t) for t in todo]
    found = _Store(layer, version, run).get(keys, values=False)
    return [t for k, t in zip(keys, todo) if k not in found]


def prepare(layer_name: str, texts: Sequence[str],
            annotator: Callable[[str, List[str], Callable[[int, List[str]], None]], None]) -> None:
    """Annotate ``texts``, which :func:`unprepared` found stored nowhere, and store them without decoding anything:
    the tasks that read the layer then decode only their own texts. ``annotator(layer_name, texts, store)``
    annotates them in :meth:`Layer.order` and hands over their stored forms a piece at a time,
    ``store(start, values)`` for ``texts[start:]``, as each piece is done (the scoring run's parallel annotation).
    """
    layer = get_layer(layer_name)
    _Store(layer, layer.version(), _memo()).add(list(texts), annotator)


class _Store:
    """Where one layer version's stored forms are kept: the disk cache, or without one the run's memo
    (:attr:`AnalysisMemo.stored`)."""

    def __init__(self, layer: Layer, version: str, run: AnalysisMemo):
        folder = cache_dir()
        self.layer, self.version, self.run = layer, version, run
        self.disk = _DiskCache(folder, version) if folder is not None else None

    def get(self, keys: List[bytes], values: bool = True) -> Dict[bytes, str]:
        if self.disk is not None:
            return self.disk.get(keys, values)
        kept = self.run.stored.get(self.version, {})
        return {k: kept[k] for k in keys if k in kept}

    def put(self, items: List[Tuple[bytes, str]]) -> None:
        if self.disk is not None:
            self.disk.put(items)
        else:
            with _lock:
                self.run.stored.setdefault(self.version, {}).update(items)

    def fill(self, keys: List[bytes], texts: List[str], progress) -> Dict[bytes, str]:
        """The stored forms of ``texts`` (``keys``), annotating and storing the missing ones in batches of
        :data:`BATCH`."""
        stored = self.get(keys)
        missing = ordered(self.layer, [(k, t) for k, t in zip(keys, texts) if k not in stored], lambda kt: kt[1])
        for start in range(0, len(missing), BATCH):
            batch = missing[start:start + BATCH]
            new = [(k, v) for (k, _), v in zip(batch, self.layer.annotate_batch([t for _, t in batch]))]
            stored.update(new)
            self.put(new)
            if progress is not None:
                progress(len(batch))
        return stored

    def add(self, texts: List[str], annotator) -> None:
        """Annotate ``texts`` (stored nowhere yet) with ``annotator`` (see :func:`prepare`), storing each piece
        as it comes and holding none here."""
        missing = ordered(self.layer, [(_key(t), t) for t in texts], lambda kt: kt[1])

        def store(start: int, piece: List[str]) -> None:
            self.put([(k, v) for (k, _), v in zip(missing[start:start + len(piece)], piece)])

        annotator(self.layer.name, [t for _, t in missing], store)


def stored_notes(layer_name: str, texts: Sequence[str]) -> List[str]:
    """The layer's notes (:meth:`Layer.notes`) on the analyses of ``texts`` found stored (the disk cache, or
    without one the run's memo), annotating nothing: empty for a layer that has none."""
    layer = get_layer(layer_name)
    if type(layer).notes is Layer.notes or not texts:
        return []
    distinct = list(dict.fromkeys(texts))
    keys = [_key(t) for t in distinct]
    found = _Store(layer, layer.version(), _memo()).get(keys)
    values = []
    for k in keys:
        try:
            values.append(layer.decode(found[k]))
        except Exception:  # noqa: BLE001 - absent or damaged: not counted
            continue
    return layer.notes(values)


def annotate_texts(layer_name: str, texts: Sequence[str]) -> List[str]:
    """The stored forms of ``texts`` by layer ``layer_name``'s annotator alone (no memo, no disk cache), in
    batches of :data:`BATCH` from the first: one task of a parallel annotation, whose texts are a piece of
    :func:`ordered` texts starting at a multiple of the layer's :attr:`Layer.group`."""
    layer = get_layer(layer_name)
    out: List[str] = []
    for start in range(0, len(texts), BATCH):
        out.extend(layer.annotate_batch(list(texts[start:start + BATCH])))
    return out


def derive(layer_name: str, name: str, texts: Sequence[str], build: Callable[[object], object]) -> list:
    """``build`` applied to each text's ``layer_name`` analysis, once per run (:func:`analysis_memo`) and
    derivation ``name``.

    Every metric asking for the same derivation (say the chunk tree of each
    text) gets the same objects, so what they cache (a tree's kernel index)
    is computed once too. ``name`` must identify ``build`` with its options.
    """
    layer = get_layer(layer_name)
    memo = _memo().derived_of((layer.version(), name))
    todo = [t for t in dict.fromkeys(texts) if t not in memo]
    if todo:
        built = {t: build(a) for t, a in zip(todo, annotate(layer_name, todo))}
        with _lock:
            memo.update(built)
    return [memo[t] for t in texts]
