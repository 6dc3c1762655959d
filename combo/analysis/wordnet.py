"""WordNet (Miller 1995) through NLTK, loaded once per process.

WordNet is an optional resource: :func:`load_wordnet` raises
:class:`combo.errors.ResourceMissing` naming the fix when NLTK cannot find it.
Folders listed in ``NLTK_DATA`` are honoured even when the variable was set
after NLTK was imported, and so is the ``nltk_data`` folder of the data home,
where ``combo data fetch wordnet`` puts it. Lookups are memoised per distinct word.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any, FrozenSet

from ..errors import ResourceMissing

RESOURCE = "WordNet (the NLTK corpus 'wordnet')"
INSTALL = ("combo data fetch wordnet (or python -m nltk.downloader wordnet), or point the NLTK_DATA "
           "environment variable at a folder holding corpora/wordnet.zip")

_reader: Any = None


def _add_nltk_data_env(nltk_module: Any) -> None:
    """Append the folders of ``$NLTK_DATA`` (NLTK reads it only at import) and the data home's
    ``nltk_data`` (``combo data fetch wordnet``) to ``nltk.data.path``."""
    from ..io.fetch import dataset_dir

    folders = os.environ.get("NLTK_DATA", "").split(os.pathsep) + [str(dataset_dir("wordnet"))]
    for folder in folders:
        if folder and folder not in nltk_module.data.path:
            nltk_module.data.path.append(folder)


def load_wordnet() -> Any:
    """NLTK's WordNet reader (``nltk.corpus.wordnet``), loaded; ResourceMissing when absent."""
    global _reader
    if _reader is not None:
        return _reader
    try:
        import nltk
        from nltk.corpus import wordnet
    except ImportError:  # nltk is a dependency, but be explicit if it was removed
        raise ResourceMissing("NLTK (needed for WordNet)", "pip install nltk") from None
    _add_nltk_data_env(nltk)
    try:
        wordnet.ensure_loaded()
    except LookupError:
        raise ResourceMissing(RESOURCE, INSTALL) from None
    _reader = wordnet
    return _reader


def wordnet_available() -> bool:
    """Whether :func:`load_wordnet` would succeed here."""
    try:
        load_wordnet()
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
