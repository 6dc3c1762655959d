"""Word tokenizers shared by the lexical metrics.

``13a`` and ``intl`` follow mteval-v13a.pl and mteval-v14.pl (the tokenizers
sacreBLEU calls by the same names); ``none`` splits on white space only.
Every tokenizer maps a string to a string of space-separated tokens; metrics
split it. Results are memoised per process, so a text shared by many systems
or metrics is tokenized once.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Dict, List, Sequence

import regex

from ..errors import OptionError

# mteval-v13a: language-dependent part, applied to " line ". Its first rule pads
# each ASCII symbol in {-~ [-` space-& (-+ :-@ / with spaces; that is a
# per-character map, done with str.translate (much faster than a regex with a
# group template).
_13A_SYMBOLS = str.maketrans({chr(c): f" {chr(c)} " for lo, hi in (
    (0x7B, 0x7E), (0x5B, 0x60), (0x20, 0x26), (0x28, 0x2B), (0x3A, 0x40), (0x2F, 0x2F))
    for c in range(lo, hi + 1)})
_13A_RULES = [  # callables: much faster than group templates in re.sub
    (re.compile(r"([^0-9])([\.,])"), lambda m: f"{m[1]} {m[2]} "),  # period/comma unless after a digit
    (re.compile(r"([\.,])([^0-9])"), lambda m: f" {m[1]} {m[2]}"),  # period/comma unless before a digit
    (re.compile(r"([0-9])(-)"), lambda m: f"{m[1]} {m[2]} "),  # dash after a digit
]
_HAS_DIGIT = re.compile(r"[0-9]").search

# mteval-v14 international tokenization (Unicode properties).
_INTL_RULES = [
    (regex.compile(r"(\P{N})(\p{P})"), r"\1 \2 "),
    (regex.compile(r"(\p{P})(\P{N})"), r" \1 \2"),
    (regex.compile(r"(\p{S})"), r" \1 "),
]


@lru_cache(maxsize=2 ** 18)
def tokenize_13a(line: str) -> str:
    """mteval-v13a tokenization (WMT's standard for BLEU)."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = (line.replace("&quot;", '"').replace("&amp;", "&")
                .replace("&lt;", "<").replace("&gt;", ">"))
    line = f" {line} ".translate(_13A_SYMBOLS)
    if _HAS_DIGIT(line) is None:
        # Without digits the period/comma rules pad every "." and "," (checked
        # exhaustively against the regex rules on all strings up to length 8
        # over the alphabet {letter, ".", ",", space}) and the dash rule never fires.
        line = line.replace(".", " . ").replace(",", " , ")
    else:
        for pattern, repl in _13A_RULES:
            line = pattern.sub(repl, line)
    return " ".join(line.split())


@lru_cache(maxsize=2 ** 18)
def tokenize_intl(line: str) -> str:
    """mteval-v14 international tokenization."""
    for pattern, repl in _INTL_RULES:
        line = pattern.sub(repl, line)
    return " ".join(line.split())


def tokenize_none(line: str) -> str:
    """No tokenization: the text as given (split on white space by the metric)."""
    return line


TOKENIZERS: Dict[str, Callable[[str], str]] = {
    "13a": tokenize_13a,
    "intl": tokenize_intl,
    "none": tokenize_none,
}


def get_tokenizer(name: str) -> Callable[[str], str]:
    """The tokenizer called ``name`` (``13a``, ``intl`` or ``none``)."""
    try:
        return TOKENIZERS[name]
    except KeyError:
        raise OptionError(f"unknown tokenizer {name!r}; choose one of {sorted(TOKENIZERS)}") from None


def tokenize_all(texts: Sequence[str], tokenizer: str = "13a", lowercase: bool = False) -> List[List[str]]:
    """Token lists of ``texts`` (lowercased first when asked, as sacreBLEU does)."""
    tok = get_tokenizer(tokenizer)
    if lowercase:
        return [tok(t.lower()).split() for t in texts]
    return [tok(t).split() for t in texts]
