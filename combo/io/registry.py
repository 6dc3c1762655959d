"""The test-bed formats :func:`combo.io.load_testbed` knows: one record per format, registered by its reader module.

A reader module declares its typed options in a module-level ``OPTIONS``
table and registers its format once, on its reader function::

    OPTIONS = {"system": Option("B", "name of the system whose candidates are the B sentences")}

    @register_format("sick", looks="SICK*.txt file", what="SICK pairs", options=OPTIONS,
                     matches=lambda p: p.is_file() and p.name.startswith("SICK") and p.suffix == ".txt")
    def read_sick(path, system="B"): ...

:mod:`combo.io` imports the reader modules and reads everything else from
here: the reader dispatch (:func:`formats`, tried in the order registered),
the options of each format (``READER_OPTIONS``), the list of known formats
that an unrecognised path is answered with, and its own docstring's list.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ..options import Option, parse_options
from ..testbed import Testbed

#: The language-pair option (``--lp``) of the readers of test sets holding several pairs.
LP = Option(None, "language pair, e.g. de-en", type="str")


@dataclass(frozen=True)
class ReaderFormat:
    """One test-bed format: how :func:`combo.io.load_testbed` spots its paths and which reader reads them."""

    name: str  # the format's key (READER_OPTIONS, messages: "<name> test bed: ...")
    looks: str  # what a path of this format is, as the list of formats says it ("*.jsonl file")
    what: str  # what the format is ("canonical JSONL test bed"), with the options worth naming
    matches: Callable[[Path], bool]  # whether a path is of this format (a file's name, a folder's layout)
    reader: Callable[..., Testbed]  # the reader function, registered with @register_format
    options: Mapping[str, Option] = field(default_factory=dict)  # typed options (--testbed-option KEY=VALUE)
    #: ``load(path, **options)`` when the reader does not take the matched path and the options as they come
    #: (mt-metrics-eval: the test set's parent folder, its name and one language pair); None: the reader does
    load: Optional[Callable[..., Testbed]] = None

    def read(self, path: Path, /, **options: Any) -> Testbed:
        """The test bed at ``path``, options parsed by their declared types (unknown ones refused)."""
        if self.load is not None:
            return self.load(path, **options)
        return call_reader(self.name, self.reader, path, **options)


_FORMATS: Dict[str, ReaderFormat] = {}


def register_format(name: str, *, looks: str, what: str, matches: Callable[[Path], bool],
                    options: Optional[Mapping[str, Option]] = None,
                    load: Optional[Callable[..., Testbed]] = None) -> Callable[[Callable[..., Testbed]],
                                                                               Callable[..., Testbed]]:
    """Decorator of a reader function: register its format (a name already taken is refused).

    :func:`combo.io.load_testbed` tries the formats in the order they are
    registered, so a new format is tried after the built-in ones.
    """

    def deco(reader: Callable[..., Testbed]) -> Callable[..., Testbed]:
        add_format(ReaderFormat(name, looks, what, matches, reader, {} if options is None else options, load))
        return reader

    return deco


def add_format(record: ReaderFormat) -> ReaderFormat:
    """Add a format record (what :func:`register_format` does); undone by :func:`unregister_format`."""
    if record.name in _FORMATS and _FORMATS[record.name] is not record:
        raise ValueError(f"test-bed format {record.name!r} is registered twice")
    _FORMATS[record.name] = record
    return record


def unregister_format(name: str) -> None:
    """Remove a registered format (a test's, say)."""
    _FORMATS.pop(name, None)


def formats() -> Tuple[ReaderFormat, ...]:
    """Every registered format, in the order :func:`combo.io.load_testbed` tries them."""
    return tuple(_FORMATS.values())


def get_format(name: str) -> ReaderFormat:
    return _FORMATS[name]


def format_options(name: str) -> Mapping[str, Option]:
    return _FORMATS[name].options


def call_reader(fmt: str, reader: Callable[..., Testbed], /, *args: Any, **options: Any) -> Testbed:
    """``reader(*args, **options)`` with every option parsed by format ``fmt``'s declared types.

    An option the format does not declare is refused with the list of those it
    takes, unless its value is not text and the reader has a parameter of that
    name: a Python-only value (a mapping, say) goes to the reader as it is.
    """
    table = _FORMATS[fmt].options
    typed = {k: v for k, v in options.items() if k in table}
    untyped = {k: v for k, v in options.items() if k not in table and not isinstance(v, str)
               and k in inspect.signature(reader).parameters}  # Python-only values (e.g. a mapping)
    rest = {k: v for k, v in options.items() if k not in typed and k not in untyped}
    parsed = parse_options(f"{fmt} test bed", table, {**typed, **rest}, defaults=False)
    return reader(*args, **parsed, **untyped)


class ReaderOptions(Mapping):
    """``{format name: its options table}``, read from the registry each time (formats registered later too)."""

    def __getitem__(self, name: str) -> Mapping[str, Option]:
        return format_options(name)

    def __iter__(self):
        return iter(list(_FORMATS))

    def __len__(self) -> int:
        return len(_FORMATS)

    def __repr__(self) -> str:
        return repr(dict(self))


def known_formats() -> str:
    """The formats, one per line: what the path is and what it holds."""
    return "\n".join(f"  {f.looks:<47}{f.what}" for f in formats())


def formats_doc() -> List[str]:
    """The formats as the lines of a reST list for a docstring: what the path is, and its reader."""
    return [f"* {f.looks}: {f.what}, :func:`{f.reader.__module__}.{f.reader.__name__}`" for f in formats()]
