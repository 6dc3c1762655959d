"""WordNet (Miller 1995) as NLTK keeps it, read by combo's own reader, loaded once per process.

WordNet is an optional resource: :func:`find_wordnet` (availability checks,
nothing loaded) and :func:`load_wordnet` raise
:class:`combo.errors.ResourceMissing` naming the fix when it is not where NLTK looks.
Folders listed in ``NLTK_DATA`` are honoured even when the variable was set
after NLTK was imported, and so is the ``nltk_data`` folder of the data home,
where ``combo data fetch wordnet`` puts it. Lookups are memoised per distinct word.
"""

from __future__ import annotations

import os
import sys
import zipfile
from functools import lru_cache
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from ..errors import ResourceMissing

RESOURCE = "WordNet (the NLTK corpus 'wordnet')"
INSTALL = ("combo data fetch wordnet (or python -m nltk.downloader wordnet), or point the NLTK_DATA "
           "environment variable at a folder holding corpora/wordnet.zip")

#: How :func:`synonym_lemmas` reads a word's synonyms; bump when what it gives for a word changes (the synonyms
#: looked up are cached on disk under :func:`wordnet_version`).
READER_VERSION = "1"

_reader: Optional["WordNetDatabase"] = None
_version: Optional[str] = None


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


class WordNetDatabase:
    """WordNet 3.0's database files (Princeton's ``wndb(5WN)`` format) read by combo, as NLTK's
    ``WordNetCorpusReader`` reads them for ``synsets`` and lemma names.

    NLTK's reader took 1.5 s to load (every index line parsed, through its own line reader) and read each
    synset by seeking in an unpacked copy of its data file; with NLTK's import (0.9 s, SciPy's statistics
    with it), that was the cold start of METEOR in each worker. Here the index files become one dictionary
    per part of speech, lemma to index line, parsed when a lemma is asked for; a data file is kept as bytes
    and a synset's line read at its offset.

    ``read(name)`` gives the bytes of one database file (``index.noun``, ``data.adj``, ``verb.exc`` ...);
    ``where`` is the folder or zip they come from, named when a lookup finds them damaged.
    """

    #: parts of speech in NLTK's ``POS_LIST`` order, with their files' suffixes
    FILES = (("n", "noun"), ("v", "verb"), ("a", "adj"), ("r", "adv"))
    #: morphy's detachment rules (WordNet's ``morph(3WN)``), as NLTK lists them
    SUBSTITUTIONS = {
        "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
              ("men", "man"), ("ies", "y")),
        "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
              ("ing", "")),
        "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
        "r": (),
    }

    def __init__(self, read: Callable[[str], bytes], where: Optional[str] = None):
        self.where = where
        self._index: Dict[str, Dict[str, str]] = {}
        self._exceptions: Dict[str, Dict[str, List[str]]] = {}
        self._data: Dict[str, bytes] = {}
        for pos, suffix in self.FILES:
            lines = (line for line in read(f"index.{suffix}").decode("utf8").splitlines()
                     if line and not line.startswith(" "))  # the licence's lines start with a space
            self._index[pos] = {line[:line.index(" ")]: line for line in lines}
            self._exceptions[pos] = {terms[0]: terms[1:] for terms in map(
                str.split, read(f"{suffix}.exc").decode("utf8").splitlines()) if terms}
            self._data[pos] = read(f"data.{suffix}")

    def index_lemmas(self, pos: str) -> List[str]:
        """Every lemma of ``index.<pos>``, in the file's order (NLTK's ``all_lemma_names(pos)``)."""
        return list(self._index[pos])

    def morphy(self, form: str, pos: str) -> List[str]:
        """The base forms of ``form`` in WordNet under ``pos``, as NLTK 3.9+'s ``_morphy``: the form itself,
        then its exception list's forms if it has one, else the forms one detachment rule makes; those in the
        index, each once, in that order. (NLTK 3.8 and earlier applied the rules again while none was found.)"""
        if form in self._exceptions[pos]:
            forms = self._exceptions[pos][form]
        else:
            forms = [form[:len(form) - len(old)] + new for old, new in self.SUBSTITUTIONS[pos] if form.endswith(old)]
        index = self._index[pos]
        return [f for f in dict.fromkeys([form] + forms) if f in index]

    def offsets(self, lemma: str, pos: str) -> List[int]:
        """The synset offsets of an index line: ``lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt
        tagsense_cnt synset_offset...``."""
        fields = self._index[pos][lemma].split()
        count, pointers = int(fields[2]), int(fields[3])
        first = 4 + pointers + 2
        return [int(offset) for offset in fields[first:first + count]]

    def lemma_names(self, pos: str, offset: int) -> List[str]:
        """The lemma names of the synset at ``offset`` of ``data.<pos>`` (``offset lex_filenum ss_type w_cnt
        word lex_id ...``, ``w_cnt`` in hexadecimal), without an adjective's syntactic marker (``(a)``,
        ``(p)``, ``(ip)``)."""
        data = self._data[pos]
        end = data.find(b"\n", offset)
        fields = data[offset:end].decode("utf8").split() if end >= 0 else []
        if not fields or fields[0] != f"{offset:08d}":
            raise ValueError(f"data.{dict(self.FILES)[pos]} has no synset at offset {offset}")
        names = fields[4:4 + 2 * int(fields[3], 16):2]
        return [name[:name.rindex("(")] if name.endswith(")") and "(" in name else name for name in names]

    def synset_lemma_names(self, word: str) -> Set[str]:
        """Every lemma name of every synset of ``word`` in any part of speech: what NLTK's
        ``{lemma.name() for s in wordnet.synsets(word) for lemma in s.lemmas()}`` gives (``word`` lowercased,
        each part of speech's base forms by :meth:`morphy`)."""
        word = word.lower()
        try:
            return {name for pos, _ in self.FILES for form in self.morphy(word, pos)
                    for offset in self.offsets(form, pos) for name in self.lemma_names(pos, offset)}
        except (ValueError, IndexError) as exc:  # a truncated or edited file: its lines are read on demand
            raise _damaged(exc, self.where) from None


def load_wordnet() -> WordNetDatabase:
    """WordNet's database, read once per process (:class:`WordNetDatabase`); ResourceMissing when absent.

    The files are found where NLTK's ``nltk.corpus.wordnet`` would open them (a ``corpora/wordnet`` folder
    anywhere on its search path first, then ``corpora/wordnet.zip``), without importing NLTK unless it is
    already imported (its search path may then have been changed) or the search needs it
    (:func:`_located_without_nltk`).
    """
    global _reader
    if _reader is not None:
        return _reader
    where, root = _located()
    if root is not None:
        def read(name: str) -> bytes:
            with root.join(name).open() as stream:
                return stream.read()
    elif where.endswith(".zip"):
        archive = _open_zip(where)

        def read(name: str) -> bytes:
            return archive.read(f"wordnet/{name}")
    else:
        def read(name: str) -> bytes:
            with open(os.path.join(where, name), "rb") as stream:
                return stream.read()
    try:
        _reader = WordNetDatabase(read, where)
    except (zipfile.BadZipFile, OSError, KeyError, ValueError, IndexError) as exc:  # a damaged or partial copy
        raise _damaged(exc, where) from None
    return _reader


def _located() -> Tuple[str, Any]:
    """Where this process reads WordNet: the folder or zip :func:`_located_without_nltk` finds (and None), or
    else the path of the corpus root NLTK's own search gives (and that root, which reads it)."""
    where = _located_without_nltk()
    if where is not None:
        return where, None
    root = _wordnet_root()
    packed = getattr(root, "zipfile", None)
    return (packed.filename if packed is not None else root.path), root


def wordnet_version() -> str:
    """Which WordNet this process reads, for a cache of what is looked up in it: where it is, the size and
    modification time of its zip (or of its folder's ``data.noun``), and :data:`READER_VERSION`. A copy
    replaced, or one found elsewhere, starts a new cache. Nothing is loaded; ResourceMissing when absent."""
    global _version
    if _version is None:
        where, _ = _located()
        stat = os.stat(where if where.endswith(".zip") else os.path.join(where, "data.noun"))
        _version = f"{os.path.abspath(where)}|{stat.st_size}|{stat.st_mtime_ns}|reader:{READER_VERSION}"
    return _version


def _open_zip(path: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise _damaged(exc, path) from None


def find_wordnet() -> None:
    """ResourceMissing unless NLTK finds the WordNet corpus, where its reader looks for it (a folder, or
    ``wordnet.zip``). Nothing is loaded: an availability check (a metric set's members, ``combo metrics``) in
    the main process made every scoring run wait for a load before its workers started; the reader loads
    where METEOR first matches synonyms. NLTK itself is not imported either (0.9 s) when its default search
    path already shows the corpus (:func:`_located_without_nltk`)."""
    if _reader is None and _located_without_nltk() is None:
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


def _located_without_nltk() -> Optional[str]:
    """The first WordNet on NLTK's search path, taken in the order :func:`_wordnet_root` asks NLTK (a folder
    anywhere, then a zip), if it is a folder or a readable zip: that path. Anything else (NLTK already imported,
    Windows, nothing found, a damaged zip) is left to NLTK's own search, which gives the exact answer or error."""
    if "nltk" in sys.modules or sys.platform.startswith("win"):
        return None
    folders = nltk_search_path()
    for folder in folders:
        if os.path.isdir(os.path.join(folder, "corpora", "wordnet")):
            return os.path.join(folder, "corpora", "wordnet")
    for folder in folders:
        packed = os.path.join(folder, "corpora", "wordnet.zip")
        if os.path.exists(packed):
            try:
                with zipfile.ZipFile(packed) as archive:
                    found = any(name.startswith("wordnet/") for name in archive.namelist())
            except (zipfile.BadZipFile, OSError):
                return None
            return packed if found else None
    return None


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


def _damaged(exc: Exception, where: Optional[str] = None) -> ResourceMissing:
    """The error for a WordNet found but unreadable, naming ``where`` it was read or else the first
    ``corpora/wordnet.zip`` on NLTK's path."""
    if where is None:
        import nltk

        found = [os.path.join(d, "corpora", "wordnet.zip") for d in nltk.data.path
                 if isinstance(d, str) and os.path.isfile(os.path.join(d, "corpora", "wordnet.zip"))]
        where = found[0] if found else None
    at = f" at {where}" if where else ""
    return ResourceMissing(f"{RESOURCE}, found{at} but unreadable ({type(exc).__name__}: {exc}),",
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
    names = {name for name in load_wordnet().synset_lemma_names(word) if "_" not in name}
    names.add(word)
    return frozenset(names)
