"""Typed options: every metric option and every test-bed reader option declares its type.

A value reaches an option from the command line (``bleu:lowercase=no``,
``--testbed-option judgments=crowd``), from Python, or from a model file. One
parser per declared type turns it into the value the code uses, so no metric
or reader casts by hand and no word is silently taken for another:

======== ======================================================================
bool     ``True``/``False``; the words true/false, yes/no, on/off, 1/0 (any case)
int      an integer (not a bool, not ``2.5``)
float    a finite number
choice   one of ``choices`` (the text of a non-text choice also selects it)
list     a comma- or ``+``-separated text, or a list; each item one of ``choices``
         when they are declared; kept as the canonical comma-joined text
str      any text
======== ======================================================================

Anything else is one :class:`combo.errors.OptionError` that names the owner,
the option, the value and what is accepted. An option whose default is
``None`` also accepts ``None`` (meaning "not given").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from .errors import OptionError

KINDS = ("bool", "int", "float", "choice", "list", "str")
TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")
_INT = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class Option:
    """A declared option: default, help, type, accepted values and the key used in signatures.

    ``type`` is one of :data:`KINDS`; when omitted it follows ``choices`` (choice)
    or the default's Python type (bool, int, float, else str).
    """

    default: Any
    help: str = ""
    choices: Optional[Tuple[Any, ...]] = None
    check: Optional[Callable[[Any], bool]] = None
    short: Optional[str] = None  # key used in the signature (defaults to the option name)
    type: Optional[str] = None

    def __post_init__(self) -> None:
        if self.type is not None and self.type not in KINDS:
            raise ValueError(f"option type {self.type!r} is not one of {KINDS}")

    @property
    def kind(self) -> str:
        """The declared type, or the one the choices or the default imply."""
        if self.type is not None:
            return self.type
        if self.choices is not None:
            return "choice"
        if isinstance(self.default, bool):
            return "bool"
        if isinstance(self.default, int):
            return "int"
        if isinstance(self.default, float):
            return "float"
        return "str"

    def accepted(self) -> str:
        """What the option accepts, in words (used in errors and in ``combo metrics``)."""
        kind = self.kind
        if kind == "bool":
            return "true or false (also yes/no, on/off, 1/0)"
        if kind == "int":
            return "an integer"
        if kind == "float":
            return "a finite number"
        if kind == "choice":
            return "one of " + ", ".join(str(c) for c in self.choices)
        if kind == "list":
            items = f" of {', '.join(map(str, self.choices))}" if self.choices else ""
            return f"a comma-separated list{items}"
        return "text"

    def brief(self) -> str:
        """The type in a word, or the choices (``expert|crowd``), for lists of options."""
        if self.kind == "choice":
            return "|".join(str(c) for c in self.choices)
        return {"str": "text"}.get(self.kind, self.kind)

    def parse(self, owner: str, name: str, value: Any) -> Any:
        """``value`` as the declared type, checked; an OptionError naming the owner, option and accepted values."""
        if value is None and self.default is None:
            return None
        kind = self.kind
        try:
            out = _PARSERS[kind](self, value)
        except (TypeError, ValueError, OverflowError):
            hint = ""
            if self.choices and isinstance(value, str):  # a mistyped choice (over=lemma): the close ones
                hint = did_you_mean(value, [str(c) for c in self.choices])
            raise OptionError(f"{owner}: option {name}={value!r} is not {self.accepted()}"
                              + (f"; {hint}" if hint else "")) from None
        if self.check is not None:
            try:
                ok = bool(self.check(out))
            except (TypeError, ValueError, OverflowError):
                ok = False
            if not ok:
                raise OptionError(f"{owner}: option {name}={value!r} is out of range"
                                  + (f" ({self.help})" if self.help else ""))
        return out

    # kept for callers of the former name
    validate = parse

    def show(self, value: Any) -> str:
        """``value`` as written in a signature."""
        if isinstance(value, bool):
            return "yes" if value else "no"
        return str(value)


def _bool(opt: Option, value: Any) -> bool:
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    raise ValueError(value)


def _int(opt: Option, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int) or type(value).__name__.startswith("int"):
        return int(value)
    if isinstance(value, str) and _INT.fullmatch(value.strip()):
        return int(value.strip())
    raise ValueError(value)


def _float(opt: Option, value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, str):
        value = value.strip()
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(value)
    return out


def _choice(opt: Option, value: Any) -> Any:
    for choice in opt.choices:
        if type(choice) is type(value) and choice == value:
            return choice
    if isinstance(value, str):
        for choice in opt.choices:
            if not isinstance(choice, str) and str(choice) == value.strip():
                return choice
    raise ValueError(value)


def _list(opt: Option, value: Any) -> str:
    if isinstance(value, str):
        items = [x.strip() for x in re.split(r"[,+]", value)]
    elif isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
        items = [x.strip() for x in value]
    else:
        raise ValueError(value)
    if not items or any(not x for x in items):
        raise ValueError(value)
    if opt.choices is not None and any(x not in opt.choices for x in items):
        raise ValueError(value)
    if len(set(items)) != len(items):
        raise ValueError(value)
    return ",".join(items)


def _str(opt: Option, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(value)
    return value


_PARSERS: Dict[str, Callable[[Option, Any], Any]] = {
    "bool": _bool, "int": _int, "float": _float, "choice": _choice, "list": _list, "str": _str,
}


def parse_options(owner: str, table: Mapping[str, Option], given: Mapping[str, Any],
                  defaults: bool = True) -> Dict[str, Any]:
    """Every option of ``table`` parsed from ``given`` (unknown keys are one error listing the known ones).

    With ``defaults`` the result holds every option (its default when not given),
    otherwise only the given ones.
    """
    unknown = sorted(set(given) - set(table))
    if unknown:
        known = ", ".join(f"{k} ({o.brief()})" for k, o in table.items()) or "none"
        raise OptionError(f"{owner}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                          f"known: {known}")
    out: Dict[str, Any] = {}
    for key, opt in table.items():
        if key in given:
            out[key] = opt.parse(owner, key, given[key])
        elif defaults:
            out[key] = opt.default
    return out


def split_key_values(owner: str, items, sep: str = ",") -> Dict[str, str]:
    """``["k=v", ...]`` into a dict; an item without ``=`` or a key given twice is one error."""
    out: Dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise OptionError(f"{owner}: expected KEY=VALUE, got {item!r}")
        if key in out:
            raise OptionError(f"{owner}: option {key} given twice ({key}={out[key]!r} and {key}={value.strip()!r}); "
                              "give it once")
        out[key] = value.strip()
    return out


def close_names(word: str, choices, n: int = 3) -> list:
    """The choices closest to ``word`` (a typo), compared case-insensitively with ``-`` and ``_`` alike; at most
    ``n``, best first, each as the choice is written."""
    import difflib

    def key(text: str) -> str:
        return str(text).lower().replace("_", "-")

    by_key: Dict[str, str] = {}
    for c in choices:
        by_key.setdefault(key(c), str(c))
    exact = by_key.get(key(word))
    if exact is not None:
        return [exact]
    return [by_key[k] for k in difflib.get_close_matches(key(word), list(by_key), n=n, cutoff=0.6)]


def did_you_mean(word: str, choices, n: int = 3) -> str:
    """``"did you mean X or Y?"`` for a mistyped ``word`` among ``choices``, or ``""`` when nothing is close: one
    wording for every name a user types (metrics, sets, test beds, criteria, mtme names)."""
    close = close_names(word, choices, n)
    if not close:
        return ""
    return "did you mean " + (close[0] if len(close) == 1 else ", ".join(close[:-1]) + " or " + close[-1]) + "?"


def name_taken(records, name: str, aliases=()) -> Optional[str]:
    """The first (sorted) of ``name`` and ``aliases`` that one of ``records`` (each with ``name`` and ``aliases``)
    already bears, else None: the registries of criteria and of objectives refuse a record that would shadow
    another."""
    records = list(records)
    taken = {r.name for r in records} | {a for r in records for a in r.aliases}
    clash = sorted(taken & {name, *aliases})
    return clash[0] if clash else None
