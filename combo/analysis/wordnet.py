"""WordNet (Miller 1995) through NLTK, loaded once per process.

WordNet is an optional resource: :func:`find_wordnet` (availability checks,
nothing loaded) and :func:`load_wordnet` raise
:class:`combo.errors.ResourceMissing` naming the fix when NLTK cannot find it.
Folders listed in ``NLTK_DATA`` are honoured even when the variable was set
after NLTK was imported, and so is the ``nltk_data`` folder of the data home,
where ``combo data fetch wordnet`` puts it. Lookups are memoised per distinct word.
"""

from __future__ import annotations

import os
import sys
import zipfile
from functools import lru_cache
from typing import Any, FrozenSet, List

from ..errors import ResourceMissing

RESOURCE = "WordNet (the NLTK corpus 'wordnet')"
INSTALL = ("combo data fetch wordnet (or python -m nltk.downloader wordnet), or point the NLTK_DATA "
           "environment variable at a folder holding corpora/wordnet.zip")

_reader: Any = None


def _add_nltk_data_env(nltk_module: Any) -> None:
    """Append the folders of ``$NLTK_DATA`` (NLTK reads it only at import) and the data home's
    ``nltk_data`` (``combo data fetch wordnet``) to ``nltk.data.path``."""
    for folder in _added_folders():
        if folder not in nltk_module.data.path:
            nltk_module.data.path.append(folder)


def _added_folders() -> List[str]:
    """``$NLTK_DATA``'s folders (``~`` expanded, as NLTK does) and the data home's ``nltk_data``."""
    from ..io.fetch import dataset_dir

    return [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d] + [
        str(dataset_dir("wordnet"))]


def _nltk() -> Any:
    """NLTK, with :func:`_add_nltk_data_env`'s folders on its data path."""
    try:
        import nltk
    except ImportError:  # nltk is a dependency, but be explicit if it was removed
        raise ResourceMissing("NLTK (needed for WordNet)", "pip install nltk") from None
    _add_nltk_data_env(nltk)
    return nltk


def load_wordnet() -> Any:
    """NLTK's WordNet reader, loaded once per process; ResourceMissing when absent.

    The reader is NLTK's ``WordNetCorpusReader`` on the corpus ``nltk.corpus.wordnet`` would open, less one
    step: NLTK 3.9+ maps the loaded WordNet onto a "wordnet" it takes for another version, itself, by
    reading ``index.sense`` twice (2.6 of the 4.6 s NLTK's load took here). That map serves only the multilingual
    (OMW) lookups; ``synsets`` and lemma names never read it.
    """
    global _reader
    if _reader is not None:
        return _reader
    root = _wordnet_root()
    from nltk.corpus.reader import CorpusReader
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    class Reader(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> Any:
            return None if version == "wordnet" else super().map_wn(version)

    omw = LazyCorpusLoader("omw-1.4", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8")  # as NLTK's
    try:
        _reader = Reader(root, omw)
    except (zipfile.BadZipFile, OSError) as exc:  # found but unreadable: a damaged or truncated download
        raise _damaged(exc) from None
    return _reader


def find_wordnet() -> None:
    """ResourceMissing unless NLTK finds the WordNet corpus, where its reader looks for it (a folder, or
    ``wordnet.zip``). Nothing is loaded: an availability check (a metric set's members, ``combo metrics``) in
    the main process made every scoring run wait for a load before its workers started; the reader loads
    where METEOR first matches synonyms. NLTK itself is not imported either (0.9 s) when its default search
    path already shows the corpus (:func:`_found_without_nltk`)."""
    if _reader is None and not _found_without_nltk():
        _wordnet_root()


def nltk_search_path() -> List[str]:
    """The folders NLTK searches for data, in its order, without importing it: ``$NLTK_DATA``,
    ``~/nltk_data`` and the system folders (as ``nltk.data.path`` starts on Unix), then the data home's
    ``nltk_data`` (:func:`_add_nltk_data_env`)."""
    added = _added_folders()
    folders = added[:-1]  # $NLTK_DATA first, as NLTK reads it at import
    if "APPENGINE_RUNTIME" not in os.environ and os.path.expanduser("~/") != "~/":
        folders.append(os.path.expanduser("~/nltk_data"))
    folders += [os.path.join(sys.prefix, "nltk_data"), os.path.join(sys.prefix, "share", "nltk_data"),
                os.path.join(sys.prefix, "lib", "nltk_data"), "/usr/share/nltk_data", "/usr/local/share/nltk_data",
                "/usr/lib/nltk_data", "/usr/local/lib/nltk_data"]
    return list(dict.fromkeys(folders + added))


def _found_without_nltk() -> bool:
    """Whether the first WordNet on NLTK's search path, taken in the order :func:`_wordnet_root` asks NLTK (a
    folder anywhere, then a zip), is a folder or a readable zip. Anything else (NLTK already imported, Windows,
    nothing found, a damaged zip) is left to NLTK's own search, which gives the exact answer or error."""
    if "nltk" in sys.modules or sys.platform.startswith("win"):
        return False
    folders = nltk_search_path()
    if any(os.path.isdir(os.path.join(d, "corpora", "wordnet")) for d in folders):
        return True
    for folder in folders:
        packed = os.path.join(folder, "corpora", "wordnet.zip")
        if os.path.exists(packed):
            try:
                with zipfile.ZipFile(packed) as archive:
                    return any(name.startswith("wordnet/") for name in archive.namelist())
            except (zipfile.BadZipFile, OSError):
                return False
    return False


def _wordnet_root() -> Any:
    """The WordNet corpus root NLTK's ``nltk.corpus.wordnet`` would open (a folder first, then ``wordnet.zip``),
    or ResourceMissing."""
    nltk = _nltk()
    for name in ("corpora/wordnet", "corpora/wordnet.zip/wordnet/"):
        try:
            return nltk.data.find(name)
        except LookupError:
            continue
        except (zipfile.BadZipFile, OSError) as exc:
            raise _damaged(exc) from None
    raise ResourceMissing(RESOURCE, INSTALL)


def _damaged(exc: Exception) -> ResourceMissing:
    """The error for a WordNet NLTK finds but cannot read, naming the first ``corpora/wordnet.zip`` on its path."""
    import nltk

    found = [os.path.join(d, "corpora", "wordnet.zip") for d in nltk.data.path
             if isinstance(d, str) and os.path.isfile(os.path.join(d, "corpora", "wordnet.zip"))]
    where = f" at {found[0]}" if found else ""
    return ResourceMissing(f"{RESOURCE}, found{where} but unreadable ({type(exc).__name__}: {exc}),",
                           f"delete it and fetch it again: {INSTALL}")


def wordnet_available() -> bool:
    """Whether NLTK finds WordNet here (:func:`find_wordnet`)."""
    try:
        find_wordnet()
    except ResourceMissing:
        return False
    return True


@lru_cache(maxsize=2 ** 18)
def synonym_lemmas(word: str) -> FrozenSet[str]:
    """One-word lemma names of every synset of ``word`` (any part of speech), plus ``word`` itself.

    This is the synonym set of METEOR's WordNet module as NLTK builds it
    (``nltk.translate.meteor_score``): multi-word lemmas (with ``_``) are left out.
    """
    wordnet = load_wordnet()
    names = {lemma.name() for synset in wordnet.synsets(word) for lemma in synset.lemmas()}
    names = {name for name in names if "_" not in name}
    names.add(word)
    return frozenset(names)
