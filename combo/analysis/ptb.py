"""coco-caption's tokenization in Python: Stanford's PTBTokenizer (CoreNLP 3.4.1, ``-lowerCase``), then the
punctuation tokens coco-caption drops.

coco-caption (``pycocoevalcap.tokenizer.ptbtokenizer``) runs the Java tokenizer
over every caption and removes the tokens in :data:`COCO_PUNCTUATIONS` before
BLEU, METEOR, ROUGE-L and CIDEr score them. :func:`tokenize_coco` does the same
without Java: a longest-match scanner over the lexer rules that caption-like
English needs (JFlex picks the longest match, the first rule on ties):

* words, with ``.``/``!``/``?`` kept between letters (``hahaha.and``), single
  underscores (``a_b``), hyphens (``make-up``, ``1,700-mile``) and slashes
  (``and/or``, ``1/2``; ``1 1/2`` is one token joined by a no-break space);
* numbers (``3.5``, ``1,000``, ``.1``, ``-5``), ``$``, ``US$``, ``%``, ``#1``,
  ``#tag`` and ``@name``;
* clitics split off: ``is n't``, ``ca n't``, ``dog 's``, ``we 're``, ``gon na``,
  ``can not``, ``'t is``; ``o'clock``, ``rock 'n' roll`` and ``'90s`` kept;
* abbreviations keep their period: titles (``mr.``, ``st.``, any case),
  acronyms (``d.c.``, ``e.g.``), ``etc.``, months; ``fig.``, ``no.``, ... only
  before a number; a single letter (``a.``) unless a capitalised sentence
  starter follows (``a. The``) or the text ends there;
* brackets become ``-lrb-``, ``-rrb-``, ``-lsb-``, ``-rsb-``, ``-lcb-``,
  ``-rcb-`` (lower-cased, so coco-caption's list, which spells them in upper
  case, never removes them), ``:)`` becomes ``:-rrb-``; quotes, ``...``,
  ``--`` and the other punctuation are separate tokens, which coco-caption then
  drops;
* zero-width characters and soft hyphens are ignored.

Checked token for token against the Java tokenizer as coco-caption runs it:
identical on every caption of the MUTT authors' released trials (11,127;
``tests/test_mutt_released.py``), and, checked the same way once, on every
Flickr8k caption (40,206) and every SICK and MUTT sentence (7,685); on WMT12's
English news reference on 3,001 of 3,004 lines (the rest: slashes after
hyphenated names, ``(D-N.Y.)``).

One difference cannot be removed in a function of one text: the Java lexer
reads coco-caption's captions as one file, one caption a line, and splits a
single letter's period at the end of a caption when the *next* caption starts
with a capital letter. Here the end of the text counts as such a boundary
(coco-caption's captions nearly always start with one).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import List

#: The tokens coco-caption removes after the PTB tokenizer (``ptbtokenizer.PUNCTUATIONS``).
COCO_PUNCTUATIONS = frozenset(["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-",
                               ".", "?", "!", ",", ":", "-", "--", "...", ";"])

_L = r"[^\W\d_]"                 # a letter
_AN = r"[^\W_]"                  # a letter or a digit
_A = r"(?:[^\W_]|_(?=[^\W_]))"   # a letter or a digit, or one underscore before one
_APOS = r"['\u0092\u2019]"
_APOSX = r"['\u0092\u2019`\u0091\u2018\u201B]"
_NOT_AN = r"(?![^\W_])"          # not followed by a letter or a digit
_TITLE = (r"(?i:Mr|Mrs|Ms|Miss|Drs?|Profs?|Sens?|Reps?|Attys?|Lt|Col|Gen|Messrs|Govs?|Adm|Rev|Maj|Sgt|Cpl|Pvt|"
          r"Capt|Ste?|Ave|Pres|Lieut|Hon|Brig|Co?mdr|Pfc|Spc|Supts?|Det|M|MM|Mme|Mmes|Mlle|Mlles)")
_ACRO = r"[A-Za-z](?:\.[A-Za-z])+"
_ABBREV_TITLE = rf"(?:{_ACRO}|{_TITLE}|vs|Alex|Wm|Jos|Cie|a\.k\.a|cf|TREAS|Jr|Sr|Bros|Corp|Inc|Ltd|Co|[A-Za-z])"
_ABBREV_LOWER = (r"(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|Mon|Tue|Tues|Wed|Thu|Thurs|Fri|etc|al|seq|"
                 r"Ark|Ala|Ariz|Calif|Colo|Conn|Del|Fla|Ga|Ill|Ind|Kan|Kans|Ky|La|Md|Mass|Mich|Minn|Miss|Mo|Mont|"
                 r"Neb|Nev|Okla|Ore|Pa|Penn|Tenn|Tex|Va|Vt|Wash|Wis|Wisc|Wyo|Pty|Ph|Assn|Dept|Univ|Est)")
_ABBREV_NUMBER = r"(?:ca|figs?|prop|nos?|art|bldg|pp|op)"
_SENTENCE_STARTER = re.compile(
    r"[ \t\u00A0]+(?=[A-Z])(?:[Aa]bout|[Aa]ccording|[Aa]dditionally|[Aa]fter|[Aa]n|[Aa]|[Aa]s|[Aa]t|[Bb]ut|"
    r"[Ee]arlier|[Hh]e|[Hh]ow|[Ii]n|[Ii]s|[Ii]t|[Ii]ts|[Mm]y|[Oo]f|[Oo]n|[Ss]he|[Tt]he|[Tt]hen|[Tt]here|"
    r"[Tt]hese|[Tt]hey|[Tt]his|[Ww]e|[Ww]hat|[Ww]hen|[Ww]hich|[Ww]ho|[Ww]hy|[Yy]ou)(?:\s|$)")
_BEFORE_NUMBER = re.compile(r"\s*\d")
_NT_STEM = re.compile(r"[A-Za-z\u00AD]*[A-MO-Za-mo-z]\u00AD*")
_NT_NEXT = re.compile(rf"{_APOSX}t{_NOT_AN}")
_SPLIT_WORDS = {"cannot": 3, "gonna": 3, "gotta": 3, "lemme": 3, "gimme": 3, "wanna": 3}

#: (kind, pattern) in the lexer's order; the longest match wins, the first on ties.
_PATTERNS = [(kind, re.compile(p)) for kind, p in [
    ("sgml", r"<[A-Za-z/][^>\s]*>"),
    ("fraction", r"(?:\d{1,4}[- \u00A0])?\d{1,4}\\?/\d{1,4}"),
    ("number", r"[-+]?(?:\d*(?:[.:,]\d+)+|\d+)"),
    ("abbrev", rf"{_ABBREV_LOWER}\."),
    ("abbrev-title", rf"{_ABBREV_TITLE}\."),
    ("abbrev-number", rf"{_ABBREV_NUMBER}\."),
    ("dollar", r"[A-Z]*\$"),
    ("y'all", rf"[yY]{_APOS}(?=all)"),
    ("'tis", rf"{_APOS}[tT](?=is{_NOT_AN}|was{_NOT_AN})"),
    ("caps-amp", r"[A-Z]+(?:[+&][A-Z]+)+"),
    ("word", rf"{_L}{_A}*(?:[.!?]{_L}{_A}*)*"),
    ("thing", rf"(?:[dDoOlL]{_APOSX}{_A})?{_A}+(?:-(?:[dDoOlL]{_APOSX}{_A})?{_A}+)*"),
    ("hyphenated", rf"(?:[dDoOlL]{_APOSX}{_AN})?{_AN}(?:{_AN}|[.,\u00AD])*"
                   rf"(?:-(?:[dDoOlL]{_APOSX}{_L})?(?:{_AN}|[.\u00AD])+)+"),
    ("tag", r"[#@][^\W\d_]\w*"),
    ("slashed", rf"{_A}+(?:/{_A}+)+"),
    ("apostrophe-word", rf"{_APOS}n{_APOS}?{_NOT_AN}|[lLdDjJ]{_APOS}|{_APOS}em|{_APOS}[2-9]0s|{_APOS}till?|"
                        rf"{_APOS}cause|[A-HJ-XZn]{_APOSX}{_L}{{2}}{_L}*|{_L}+[aeiouyAEIOUY]{_APOSX}[aeiouA-Z]{_L}*"),
    ("clitic", rf"{_APOS}(?:[msdMSD]|re|ve|ll){_NOT_AN}"),
    ("n't", rf"n{_APOSX}t{_NOT_AN}"),
    ("smiley", rf"[<>]?[:;=][\-o\*']?[\(\)DPdpO\\{{@\|\[\]]{_NOT_AN}"),
    ("dots", r"\.\.\.+"),
    ("dashes", r"--+"),
    ("underscores", r"__+"),
    ("quote", r"''|``|[\"'`\u2018\u2019\u201A\u201B\u201C\u201D\u0091\u0092\u0093\u0094\u201E\u201F]"),
    ("other", r"\S"),
]]
_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
_SPACE = frozenset(" \t\r\n\x0b\x0c\u00A0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u3000")
_IGNORED = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")


def ptb_tokens(line: str) -> List[str]:
    """The PTB tokens of ``line`` in their original case, before coco-caption's punctuation removal."""
    out: List[str] = []
    pos, n = 0, len(line)
    while pos < n:
        if line[pos] in _SPACE:
            pos += 1
            continue
        tok, kind = "", ""
        for name, pattern in _PATTERNS:
            m = pattern.match(line, pos)
            if m is not None and len(m.group()) > len(tok):
                tok, kind = m.group(), name
        end = pos + len(tok)
        if kind == "hyphenated" and tok[-1] in ".,":  # a final period or comma is not part of the word
            tok = tok.rstrip(".,")
            end = pos + len(tok)
        if kind in ("word", "thing"):
            split = _SPLIT_WORDS.get(tok.lower())
            if split and kind == "word":
                out += [tok[:split], tok[split:]]
                pos = end
                continue
            if tok[-1] == "n" and _NT_NEXT.match(line, end) and len(tok) > 1 and _NT_STEM.fullmatch(tok[:-1]):
                out += [tok[:-1], tok[-1] + line[end:end + 2]]  # is|n't, ca|n't
                pos = end + 2
                continue
        elif kind.startswith("abbrev"):
            if kind == "abbrev-title" and len(tok) == 2:
                split = end >= n or not line[end:].strip() or _SENTENCE_STARTER.match(line, end) is not None
            else:
                split = kind == "abbrev-number" and _BEFORE_NUMBER.match(line, end) is None
            out += [tok[:-1], "."] if split else [tok]
            pos = end
            continue
        elif kind == "fraction":
            tok = tok.replace(" ", "\u00A0")
        elif kind == "dots":
            tok = "..."
        elif kind == "dashes":
            tok = "--"
        elif kind == "smiley":
            tok = "".join(_BRACKETS.get(ch, ch) for ch in tok)
        elif kind == "quote":  # direction does not matter: coco-caption drops every quote
            tok = "''" if tok in ("''", "``") or tok not in "'`\u2018\u2019\u201A\u201B\u0091\u0092" else "'"
        else:
            tok = _BRACKETS.get(tok, tok)
        out.append(tok)
        pos = end
    return out


@lru_cache(maxsize=2 ** 18)
def tokenize_coco(line: str) -> str:
    """coco-caption's tokens of ``line``, space-separated: PTB tokens lower-cased, its punctuation removed."""
    line = _IGNORED.sub("", line.replace("\n", " "))
    return " ".join(t for t in (w.lower() for w in ptb_tokens(line)) if t not in COCO_PUNCTUATIONS)


__all__ = ["COCO_PUNCTUATIONS", "ptb_tokens", "tokenize_coco"]
