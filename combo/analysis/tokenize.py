"""Word tokenizers shared by the lexical metrics.

``13a`` and ``intl`` follow mteval-v13a.pl and mteval-v14.pl (the tokenizers
sacreBLEU calls by the same names); ``none`` splits on white space only;
``coco`` is coco-caption's (Stanford's PTB tokenizer, lower-cased, its
punctuation tokens removed: :mod:`combo.analysis.ptb`).
Every tokenizer maps a string to a string of space-separated tokens; metrics
split it. Results are memoised per process, so a text shared by many systems
or metrics is tokenized once.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

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


@lru_cache(maxsize=None)
def _intl_rules():
    """mteval-v14 international tokenization (Unicode properties): the ``regex`` module's patterns, compiled on
    first use (importing ``regex`` costs every command that lists the metrics 6 ms)."""
    import regex

    return [
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
    for pattern, repl in _intl_rules():
        line = pattern.sub(repl, line)
    return " ".join(line.split())


def tokenize_coco(line: str) -> str:
    """coco-caption's tokenization (:func:`combo.analysis.ptb.tokenize_coco`; its scanner is built when first
    used)."""
    from .ptb import tokenize_coco as coco

    return coco(line)


def tokenize_none(line: str) -> str:
    """No tokenization: the text as given (split on white space by the metric)."""
    return line


TOKENIZERS: Dict[str, Callable[[str], str]] = {
    "13a": tokenize_13a,
    "intl": tokenize_intl,
    "none": tokenize_none,
    "coco": tokenize_coco,
}


def get_tokenizer(name: str) -> Callable[[str], str]:
    """The tokenizer called ``name`` (``13a``, ``intl``, ``none`` or ``coco``)."""
    try:
        return TOKENIZERS[name]
    except KeyError:
        raise OptionError(f"unknown tokenizer {name!r}; choose one of {sorted(TOKENIZERS)}") from None


_SPACE, _NEWLINE, _DASH = 0x20, 0x0A, 0x2D
_SYMBOL = np.zeros(256, dtype=bool)  # the ASCII symbols str.translate pads with _13A_SYMBOLS, less the space
_SYMBOL[[c for c in _13A_SYMBOLS if c != _SPACE]] = True
_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[0x30:0x3A] = True
_PERIOD_COMMA = np.zeros(256, dtype=bool)
_PERIOD_COMMA[[0x2E, 0x2C]] = True


def _pad(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``data`` with one space inserted before and after each byte at the sorted positions ``at``."""
    if not len(at):
        return data
    return np.insert(data, np.concatenate([at, at + 1]), _SPACE)


def _runs(at: np.ndarray):
    """For sorted positions: each one's index within its run of adjacent positions, and whether it starts one."""
    first = np.ones(len(at), dtype=bool)
    first[1:] = at[1:] != at[:-1] + 1
    starts = np.flatnonzero(first)
    index = np.arange(len(at)) - np.repeat(starts, np.diff(np.append(starts, len(at))))
    return index, first


def _by_line(data: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """Per byte: the flag of its line (lines are the bytes between newlines)."""
    bounds = np.concatenate([[0], np.flatnonzero(data == _NEWLINE) + 1, [len(data)]])
    return np.repeat(flags, np.diff(bounds))


def _13a_rules(data: np.ndarray) -> np.ndarray:
    """mteval-v13a's period, comma and dash rules on the UTF-8 bytes of space-padded lines joined by newlines.

    On a line without digits every period and comma is padded with spaces. On
    a line with digits the three ``re.sub`` rules of :func:`tokenize_13a` run
    in turn, each padding the period, comma or dash it matches; ``re.sub``
    takes leftmost matches that do not overlap, so in a run of adjacent
    periods and commas the matches alternate:

    - ``([^0-9])([\\.,])``: the first of a run matches when the byte before it
      is no digit, then every second one; otherwise the second, fourth, ...
    - ``([\\.,])([^0-9])``: the first, third, ... of a run, the last only when
      the byte after it is no digit.
    - ``([0-9])(-)``: every dash after a digit.

    A newline is never one of the two bytes of a match (it stands between
    spaces), so no rule crosses lines.
    """
    has_digit = np.zeros(np.count_nonzero(data == _NEWLINE) + 1, dtype=bool)  # per line
    has_digit[np.searchsorted(np.flatnonzero(data == _NEWLINE), np.flatnonzero(_DIGIT[data]))] = True
    data = _pad(data, np.flatnonzero(_PERIOD_COMMA[data] & ~_by_line(data, has_digit)))
    if not has_digit.any():
        return data
    at = np.flatnonzero(_PERIOD_COMMA[data] & _by_line(data, has_digit))  # rule 1
    index, first = _runs(at)
    first_ok = (at[first] >= 1) & ~_DIGIT[data[np.maximum(at[first] - 1, 0)]]
    first_ok = np.repeat(first_ok, np.diff(np.append(np.flatnonzero(first), len(at))))
    data = _pad(data, at[(index % 2) == np.where(first_ok, 0, 1)])
    at = np.flatnonzero(_PERIOD_COMMA[data] & _by_line(data, has_digit))  # rule 2
    index, first = _runs(at)
    last = np.append(first[1:], True)
    after_ok = (at + 1 < len(data)) & ~_DIGIT[data[np.minimum(at + 1, len(data) - 1)]]
    data = _pad(data, at[(index % 2 == 0) & (~last | after_ok)])
    dash = np.flatnonzero((data == _DASH) & _by_line(data, has_digit))  # rule 3
    dash = dash[dash >= 1]
    return _pad(data, dash[_DIGIT[data[dash - 1]]])


def tokenize_13a_many(lines: Sequence[str]) -> List[str]:
    """:func:`tokenize_13a` of every line, vectorised over all lines at once."""
    return [" ".join(tokens) for tokens in _tokens_13a(lines)]


def _tokens_13a(lines: Sequence[str]) -> List[List[str]]:
    """The tokens of :func:`tokenize_13a` of every line, vectorised over all lines at once.

    The lines are joined by newlines (after each line's own newlines are
    handled), each padded with spaces as mteval-v13a pads a line, and the
    symbol padding and the period, comma and dash rules (:func:`_13a_rules`)
    run on their UTF-8 bytes: every character they test is ASCII, and no
    byte of a multi-byte character is. Padding a space with more spaces, as
    ``str.translate`` does, changes no token and no rule's match, so it is
    skipped. tests/test_bleu.py checks every WMT12 line, tests/test_properties.py random strings,
    against :func:`tokenize_13a`.
    """
    if not lines:
        return []
    out = [t.split() for t in _13a_bytes(lines).tobytes().decode("utf-8", "surrogatepass").split("\n")]
    if len(out) != len(lines):  # pragma: no cover - a newline survived the line handling above
        raise AssertionError("13a batch tokenization lost its line boundaries")
    return out


def _13a_bytes(lines: Sequence[str]) -> np.ndarray:
    """The UTF-8 bytes of the 13a-tokenized ``lines`` (at least one), joined by newlines (:func:`_tokens_13a`)."""
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1:  # a line has newlines of its own: mteval removes or blanks them first
        text = "\n".join(t.replace("<skipped>", "").replace("-\n", "").replace("\n", " ") for t in lines)
    elif "<skipped>" in text:
        text = text.replace("<skipped>", "")
    if "&" in text:
        text = text.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    data = np.frombuffer(f" {text.replace(chr(10), ' ' + chr(10) + ' ')} ".encode("utf-8", "surrogatepass"),
                         dtype=np.uint8)
    return _13a_rules(_pad(data, np.flatnonzero(_SYMBOL[data])))


#: The white space ``str.split()`` splits on (``str.isspace``): its ASCII bytes, and a pattern of the others.
_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[[0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20]] = True
_OTHER_SPACE = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def _flat_tokens_13a(lines: Sequence[str]) -> Tuple[List[str], np.ndarray]:
    """The tokens of :func:`_tokens_13a` in one list, and the number of each line's: one ``split`` of the
    whole text (half the time of one per line), the lines' counts read from the bytes' token starts. A text
    with white space beyond ASCII is split line by line."""
    data = _13a_bytes(lines)
    text = data.tobytes().decode("utf-8", "surrogatepass")
    if _OTHER_SPACE.search(text):
        per_line = [t.split() for t in text.split("\n")]
        return list(chain.from_iterable(per_line)), np.fromiter(map(len, per_line), dtype=np.int64,
                                                                count=len(per_line))
    space = _ASCII_SPACE[data]
    starts = np.flatnonzero(~space & np.concatenate([[True], space[:-1]]))
    line = np.searchsorted(np.flatnonzero(data == 0x0A), starts)
    return text.split(), np.bincount(line, minlength=len(lines))


#: Token lists of a whole list of texts at once (the same as splitting the one-text tokenizer's output).
_MANY: Dict[str, Callable[[Sequence[str]], List[List[str]]]] = {"13a": _tokens_13a}


#: Lines tokenized at a time by :func:`token_ids`: their token strings are the only ones alive at once.
TOKEN_ID_LINES = 4096


def token_ids(texts: Sequence[str], tokenizer: str = "13a",
              lowercase: bool = False) -> Tuple[np.ndarray, np.ndarray, int]:
    """The tokens of :func:`tokenize_all` as integer ids: ``(ids, ptr, n)``, the tokens of text ``t`` being
    ``ids[ptr[t]:ptr[t+1]]``, each below ``n``. A token's id is the position of its first occurrence among all
    the tokens (so equal tokens have equal ids, the same in every run; the ids are not consecutive, which
    spares numbering them again).

    The texts are tokenized :data:`TOKEN_ID_LINES` at a time, so the token strings of a large corpus never
    all exist at once (1.3 million tokens of WMT12 de-en would take about 80 MB as strings; their ids take 5).
    """
    index: Dict[str, int] = {}
    ptr = np.zeros(len(texts) + 1, dtype=np.int64)
    parts = []
    for start in range(0, len(texts), TOKEN_ID_LINES):
        lines = texts[start:start + TOKEN_ID_LINES]
        if tokenizer == "13a":
            flat, counts = _flat_tokens_13a([t.lower() for t in lines] if lowercase else lines)
        else:
            tokens = tokenize_all(lines, tokenizer, lowercase)
            flat, counts = list(chain.from_iterable(tokens)), [len(t) for t in tokens]
            del tokens
        np.cumsum(counts, out=ptr[start + 1:start + 1 + len(lines)])
        ptr[start + 1:start + 1 + len(lines)] += ptr[start]
        first = int(ptr[start])
        parts.append(np.fromiter(map(index.setdefault, flat, range(first, first + len(flat))), dtype=np.int64,
                                 count=len(flat)))
        del flat
    ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return ids, ptr, max(int(ptr[-1]), 1)


def tokenize_all(texts: Sequence[str], tokenizer: str = "13a", lowercase: bool = False) -> List[List[str]]:
    """Token lists of ``texts`` (lowercased first when asked, as sacreBLEU does)."""
    tok = get_tokenizer(tokenizer)
    if lowercase:
        texts = [t.lower() for t in texts]
    many = _MANY.get(tokenizer)
    if many is not None:
        return many(texts)
    return [tok(t).split() for t in texts]
