"""Porter's suffix-stripping stemmer (Porter 1980) with NLTK's extensions, without importing NLTK.

The stems are those of ``nltk.stem.porter.PorterStemmer()`` in its default mode (``NLTK_EXTENSIONS``), which
METEOR (as ``nltk.translate.meteor_score``) and ROUGE (as rouge-score) use. Importing NLTK takes about a second
and a half (it imports SciPy's statistics), which each worker paid before its first METEOR or stemmed ROUGE
score. NLTK's departures from the published algorithm, all kept here:

* a short list of irregular forms (``dying`` -> ``die``, ``skies`` -> ``sky``, ``news``, ``proceed`` ...), looked
  up after lowercasing as NLTK 3.10+ does (before 3.10, ``Lying`` missed the list and stemmed to ``ly``; METEOR
  and ROUGE stem lowercased words, so their stems are the same with any NLTK);
* words of one or two characters are only lowercased;
* step 1a: ``ies`` -> ``ie`` in four-letter words; step 1b: ``ied`` -> ``ie`` (four letters) or ``i``;
* step 1c: ``y`` -> ``i`` only after a consonant that is not the stem's only letter;
* step 1b's and 5a's ``*o`` also holds for a two-letter vowel-consonant stem;
* step 2: ``alli`` -> ``al`` first (then step 2 again), ``bli`` -> ``ble`` for ``abli`` -> ``able``, and
  ``fulli`` -> ``ful`` and ``logi`` -> ``log`` (the ``l`` counted in the stem's measure) added.

Within a step, the first rule whose suffix the word ends with decides: its condition true, the suffix is
replaced; false, the word is left as it is.
"""

from __future__ import annotations

from functools import lru_cache
from typing import List, Tuple

_VOWELS = frozenset("aeiou")

#: NLTK's irregular forms: the stem of each, taken before any rule.
_IRREGULAR = {form: stem for stem, forms in {
    "sky": ("sky", "skies"), "die": ("dying",), "lie": ("lying",), "tie": ("tying",), "news": ("news",),
    "inning": ("innings", "inning"), "outing": ("outings", "outing"), "canning": ("cannings", "canning"),
    "howe": ("howe",), "proceed": ("proceed",), "exceed": ("exceed",), "succeed": ("succeed",),
}.items() for form in forms}

# (suffix, replacement, least measure of the stem before the suffix, letters the stem must end with: "" any), in
# Porter's order (1980, steps 2-4). NLTK's "logi" -> "log" counts the "l" in the stem's measure: "ogi" after "l".
_STEP2: Tuple[Tuple[str, str, int, str], ...] = tuple((suffix, replacement, 1, "") for suffix, replacement in (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"), ("bli", "ble"),
    ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"),
    ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
    ("iviti", "ive"), ("biliti", "ble"), ("fulli", "ful"))) + (("ogi", "og", 1, "l"),)
_STEP3 = tuple((suffix, replacement, 1, "") for suffix, replacement in (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", "")))
_STEP4 = tuple((suffix, "", 2, "st" if suffix == "ion" else "") for suffix in (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate",
    "iti", "ous", "ive", "ize"))


def _consonants(word: str) -> List[bool]:
    """Porter's consonants: a letter other than a, e, i, o, u, and other than a y that follows a consonant."""
    flags: List[bool] = []
    for i, char in enumerate(word):
        flags.append(char not in _VOWELS and (char != "y" or i == 0 or not flags[i - 1]))
    return flags


def _measure(stem: str) -> int:
    """m in ``[C](VC){m}[V]``: how many times a vowel is followed by a consonant."""
    flags = _consonants(stem)
    return sum(1 for before, after in zip(flags, flags[1:]) if not before and after)


def _has_vowel(stem: str) -> bool:
    return not all(_consonants(stem))


def _ends_cvc(stem: str) -> bool:
    """``*o``: consonant, vowel, consonant other than w, x, y; NLTK: also a two-letter vowel-consonant stem."""
    flags = _consonants(stem)
    if len(stem) >= 3 and flags[-3] and not flags[-2] and flags[-1] and stem[-1] not in "wxy":
        return True
    return len(stem) == 2 and not flags[0] and flags[1]


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonants(word)[-1]


def _first_rule(word: str, rules: Tuple[Tuple[str, str, int, str], ...]) -> str:
    for suffix, replacement, least, after in rules:
        if word.endswith(suffix):
            stem = word[:len(word) - len(suffix)]
            if _measure(stem) < least or (after and not stem.endswith(tuple(after))):
                return word
            return stem + replacement
    return word


def _step1a(word: str) -> str:
    if word.endswith("ies") and len(word) == 4:
        return word[:-3] + "ie"
    for suffix, replacement in (("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("s", "")):
        if word.endswith(suffix):
            return word[:len(word) - len(suffix)] + replacement
    return word


def _step1b(word: str) -> str:
    if word.endswith("ied"):
        return word[:-3] + ("ie" if len(word) == 4 else "i")
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[:-len(suffix)]):
            stem = word[:-len(suffix)]
            break
    else:
        return word
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if _ends_double_consonant(stem):
        return stem if stem[-1] in "lsz" else stem[:-1]
    if _measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"
    return stem


def _step1c(word: str) -> str:
    if word.endswith("y") and len(word) > 2 and _consonants(word[:-1])[-1]:
        return word[:-1] + "i"
    return word


def _step2(word: str) -> str:
    if word.endswith("alli") and _measure(word[:-4]) > 0:  # NLTK: alli -> al first, then step 2 again
        return _step2(word[:-2])
    return _first_rule(word, _STEP2)


def _step5(word: str) -> str:
    if word.endswith("e"):
        m = _measure(word[:-1])
        if m > 1 or (m == 1 and not _ends_cvc(word[:-1])):
            word = word[:-1]
    if word.endswith("ll") and _measure(word[:-1]) > 1:
        word = word[:-1]
    return word


@lru_cache(maxsize=2 ** 18)
def porter_stem(word: str) -> str:
    """The Porter stem of ``word``, lowercased (Porter 1980, steps 1a-5b; NLTK's extensions), memoised."""
    lowered = word.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if len(word) <= 2:
        return lowered
    stem = _step1c(_step1b(_step1a(lowered)))
    return _step5(_first_rule(_first_rule(_step2(stem), _STEP3), _STEP4))
