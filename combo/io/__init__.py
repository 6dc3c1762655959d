"""Readers that build :class:`combo.Testbed` objects, and the canonical JSONL form.

One module per format; each declares its typed options (``OPTIONS``) and
registers its format with :func:`combo.io.registry.register_format` (what its
paths look like, how they are spotted, its reader). :mod:`.text` reads lines
safely for all of them; :mod:`.fetch` fetches the public data sets.

:func:`load_testbed` picks the reader from the path, trying the registered
formats in order (:func:`formats`); the first that matches reads:

{formats}

Other keyword options go to the chosen reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..testbed import Testbed
# The reader modules register their formats as they are imported, in the order load_testbed tries them.
from . import jsonl, sick, plain, mtme, wmt, flickr8k, dstc7, mutt  # noqa: F401,I001  (this order)
from .dstc7 import OPTIONS as DSTC7_OPTIONS  # noqa: F401 (their former names)
from .dstc7 import read_dstc7
from .flickr8k import OPTIONS as FLICKR8K_OPTIONS  # noqa: F401
from .flickr8k import read_flickr8k
from .jsonl import read_jsonl, write_jsonl
from .mtme import read_mtme
from .mutt import CORRUPTION_KINDS, MuttTrial, mutt_testbed, TRIAL_SETS, read_mutt, read_mutt_testbed  # noqa: F401
from .plain import PLAIN_LAYOUT, names_from_paths, read_plain, read_plain_dir
from .registry import (LP, ReaderFormat, ReaderOptions, add_format, formats, formats_doc, known_formats,  # noqa: F401
                       register_format, unregister_format)
from .sick import read_sick
from .text import read_lines
from .wmt import WMT12_INTO_ENGLISH, WMT12_NON_TIE_PAIRS, read_wmt12, read_wmt12_into_english

if __doc__:  # None under python -OO
    __doc__ = __doc__.format(formats="\n".join(formats_doc()))

__all__ = [
    "CORRUPTION_KINDS", "MuttTrial", "PLAIN_LAYOUT", "WMT12_INTO_ENGLISH", "WMT12_NON_TIE_PAIRS",
    "load_testbed", "mutt_testbed", "names_from_paths", "read_dstc7", "read_flickr8k", "read_jsonl",
    "read_lines", "read_mtme", "read_mutt", "read_mutt_testbed", "read_plain", "read_plain_dir", "read_sick",
    "read_wmt12", "read_wmt12_into_english", "write_jsonl", "FORMATS", "KNOWN_FORMATS", "ReaderLayout",
    "ReaderFormat", "READER_OPTIONS", "formats", "known_formats", "register_format", "unregister_format",
]

#: ``{format: {option: Option}}``: each format's typed options, read from the registry (:mod:`.registry`).
READER_OPTIONS = ReaderOptions()
#: A registered format (its former name).
ReaderLayout = ReaderFormat


def __getattr__(name: str) -> Any:
    """``FORMATS`` (the registered formats, in the order tried) and ``KNOWN_FORMATS`` (their list, one per line),
    read from the registry when asked, so a format registered later is in them."""
    if name == "FORMATS":
        return formats()
    if name == "KNOWN_FORMATS":
        return known_formats()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _load_dstc7_sample(**options: Any) -> Testbed:
    """``--testbed dstc7-sample``: the sample rule of :mod:`combo.io.dstc7` applied to the DSTC7 release in
    the data home (``combo data fetch dstc7``), written to a temporary folder and read from there."""
    import tempfile

    from .dstc7 import CONTEXT, SAMPLE_NAME, read_dstc7, write_sample
    from .fetch import data_home_origin, dataset_dir

    release = dataset_dir("dstc7")
    if not (release / CONTEXT).is_file():
        raise InputError(f"dstc7-sample is built from the DSTC7 release, which is not in the data home "
                         f"({data_home_origin()})", release,
                         fix="run 'combo data fetch dstc7', or set COMBO_DATA_HOME to a folder holding dstc7/ "
                             "(e.g. COMBO_DATA_HOME=../shared/data)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / SAMPLE_NAME
        write_sample(release, folder)
        testbed = read_dstc7(folder, **options)
    testbed.metadata["sample_of"] = str(release)
    return testbed


def _readable(path: Path) -> bool:
    """Whether a reader takes ``path`` (what a "did you mean" may offer for ``--testbed``: not a model file)."""
    for layout in formats():
        try:
            if layout.matches(path):
                return True
        except OSError:
            return False
    return False


def load_testbed(path: Any, **options: Any) -> Testbed:
    """Read a test bed, choosing the reader from the path (see the module doc and :func:`formats`).

    Options are parsed by the reader's declared types (its module's ``OPTIONS``, :data:`READER_OPTIONS`):
    ``"false"`` is False, ``"3"`` is 3, and an unknown option or a value of the wrong type is one error listing
    what is accepted.
    """
    p = Path(path)
    if str(path) == "example" and not p.exists():  # the bundled example test bed, as --testbed example
        from .fetch import example_path

        p = example_path()
    if str(path) == "dstc7-sample" and not p.exists():  # built from the DSTC7 release in the data home
        return _load_dstc7_sample(**options)
    if not p.exists():
        from ..options import did_you_mean

        here = [q.name for q in p.parent.iterdir() if _readable(q)] if p.parent.is_dir() else []  # test beds only
        hint = did_you_mean(p.name, here + ([] if p.parent != Path(".") else ["example", "dstc7-sample"]))
        raise InputError("no such file or folder", p, fix=hint or "check the path")
    for layout in formats():
        if layout.matches(p):
            return layout.read(p, **options)
    known = "; ".join(f.looks for f in formats())
    raise InputError("unknown test-bed format", p, fix=f"give one of: {known} (see docs/testbeds.md)")
