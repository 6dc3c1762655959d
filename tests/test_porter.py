"""combo's Porter stemmer (Porter 1980 with NLTK's extensions): Porter's own examples, each extension, and
NLTK's ``PorterStemmer()`` on real words (WordNet's lemma names, WMT12 de-en's tokens) and made-up ones."""

import random

import pytest

from combo.analysis.porter import _measure, porter_stem


def test_the_measure_of_porters_examples():
    # Porter (1980), section 2: m=0 TR, EE, TREE, Y, BY; m=1 TROUBLE, OATS, TREES, IVY; m=2 TROUBLES, PRIVATE,
    # OATEN, ORRERY
    for m, words in enumerate([("tr", "ee", "tree", "y", "by"), ("trouble", "oats", "trees", "ivy"),
                               ("troubles", "private", "oaten", "orrery")]):
        assert [_measure(w) for w in words] == [m] * len(words), words


def test_porters_examples_step_by_step():
    # each step's examples from Porter (1980), through all the steps (so some go further than the step's line)
    cases = {
        "caresses": "caress", "ponies": "poni", "caress": "caress", "cats": "cat",  # 1a
        "feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",  # 1b
        "sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
        "tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file",
        "happy": "happi",  # 1c
        "relational": "relat", "conditional": "condit", "rational": "ration", "digitizer": "digit",  # 2
        "operator": "oper", "feudalism": "feudal", "decisiveness": "decis", "hopefulness": "hope",
        "triplicate": "triplic", "formative": "form", "formalize": "formal", "electrical": "electr",  # 3
        "goodness": "good", "revival": "reviv", "allowance": "allow", "inference": "infer",  # 4
        "airliner": "airlin", "gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens",
        "irritant": "irrit", "replacement": "replac", "adjustment": "adjust", "dependent": "depend",
        "adoption": "adopt", "communism": "commun", "activate": "activ", "effective": "effect",
        "bowdlerize": "bowdler", "probate": "probat", "rate": "rate", "cease": "ceas",  # 5a
        "controll": "control", "roll": "roll",  # 5b
    }
    assert {w: porter_stem(w) for w in cases} == cases


def test_nltks_extensions():
    cases = {
        "dying": "die", "skies": "sky", "news": "news", "innings": "inning", "proceed": "proceed",  # irregular
        "at": "at", "IS": "is",  # one or two characters: lowercased only
        "dies": "die", "flies": "fli",  # ies -> ie in four letters only
        "died": "die", "spied": "spi",  # ied -> ie (four letters) or i
        "enjoy": "enjoy", "spy": "spi", "by": "by",  # y -> i only after a consonant that is not alone
        "radically": "radic",  # alli -> al first, then step 2 again
        "archaeology": "archaeolog", "geology": "geolog",  # logi -> log, the l counted in the measure
        "Dying": "die",  # lowercased first
    }
    assert {w: porter_stem(w) for w in cases} == cases


def test_equals_nltk_on_real_and_made_up_words(data, wmt12_de_en):
    # NLTK's PorterStemmer() (NLTK_EXTENSIONS) is the oracle: a seeded sample of WordNet's lemma names (with _
    # and -), every token of WMT12 de-en's reference and two systems, upper-case forms, and made-up words heavy
    # in y's and doubled letters (the consonant rule's corner cases). benchmarks/bench_wordnet.py compares all
    # 473,452 such words.
    stemmer = pytest.importorskip("nltk.stem.porter").PorterStemmer()
    from combo.analysis.wordnet import load_wordnet

    wordnet = load_wordnet()
    rng = random.Random(3)
    words = set(rng.sample(sorted({w for pos, _ in wordnet.FILES for w in wordnet.index_lemmas(pos)}), 30000))
    ref, systems = wmt12_de_en
    for lines in (ref, systems["onlineA"], systems["uedin-wmt12"]):
        words.update(token for line in lines for token in line.split())
    words.update([w.upper() for w in sorted(words)[::7]])
    words.update("".join(rng.choice("aeiouyybcdllssttzng") for _ in range(rng.randint(1, 12))) for _ in range(10000))
    words = sorted(words)
    assert len(words) > 60000
    if tuple(int(part) for part in __import__("nltk").__version__.split(".")[:2]) < (3, 10):
        # NLTK before 3.10 looked irregular forms up before lowercasing ("Lying" -> "ly"): compare what METEOR and
        # ROUGE stem, lowercased words
        words = sorted({w.lower() for w in words})
    wrong = [(w, porter_stem(w), stemmer.stem(w)) for w in words if porter_stem(w) != stemmer.stem(w)]
    assert wrong == []
