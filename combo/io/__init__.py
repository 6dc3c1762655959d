"""Readers that build :class:`combo.Testbed` objects, and the canonical JSONL form.

One module per format: :mod:`.plain` (aligned text files), :mod:`.mtme`
(mt-metrics-eval folders), :mod:`.wmt` (WMT relative rankings),
:mod:`.flickr8k`, :mod:`.dstc7`, :mod:`.sick`, :mod:`.mutt` and
:mod:`.jsonl`; :mod:`.text` reads lines safely for all of them.

:func:`load_testbed` picks the reader from the path:

* a ``*.jsonl`` file: :func:`read_jsonl`;
* a ``SICK*.txt`` file: :func:`read_sick`;
* a folder with ``systems/`` and ``references/``: :func:`read_plain_dir`
  (layout in :data:`PLAIN_LAYOUT`);
* a folder with ``sources/`` and ``system-outputs/`` (an mt-metrics-eval
  test set such as ``.../mt-metrics-eval-v2/wmt22``): :func:`read_mtme`,
  with option ``lp`` (needed when the folder holds several pairs);
* a folder with ``wmt12.RNK_results.csv``: :func:`read_wmt12`, option ``lp``;
* a folder with ``Flickr8k.token.txt``: :func:`read_flickr8k`;
* a folder with ``dstc7-task2-context.tsv``: :func:`read_dstc7`;
* a folder of MUTT corruption files (``neg_subj.txt``, ...): :func:`read_mutt_testbed`,
  options ``flickr8k``, ``trials``, ``references``, ``seed``.

Other keyword options go to the chosen reader.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict

from ..errors import InputError, OptionError
from ..options import Option, parse_options
from ..testbed import Testbed
from .dstc7 import OPTIONS as DSTC7_OPTIONS
from .dstc7 import read_dstc7
from .flickr8k import OPTIONS as FLICKR8K_OPTIONS
from .flickr8k import read_flickr8k
from .jsonl import read_jsonl, write_jsonl
from .mtme import read_mtme
from .mutt import CORRUPTION_KINDS, MuttTrial, mutt_testbed, TRIAL_SETS, read_mutt, read_mutt_testbed
from .plain import PLAIN_LAYOUT, names_from_paths, read_plain, read_plain_dir
from .sick import read_sick
from .text import read_lines
from .wmt import WMT12_INTO_ENGLISH, WMT12_NON_TIE_PAIRS, read_wmt12, read_wmt12_into_english

__all__ = [
    "CORRUPTION_KINDS", "MuttTrial", "PLAIN_LAYOUT", "WMT12_INTO_ENGLISH", "WMT12_NON_TIE_PAIRS",
    "load_testbed", "mutt_testbed", "names_from_paths", "read_dstc7", "read_flickr8k", "read_jsonl",
    "read_lines", "read_mtme", "read_mutt", "read_mutt_testbed", "read_plain", "read_plain_dir", "read_sick",
    "read_wmt12", "read_wmt12_into_english", "write_jsonl", "FORMATS", "KNOWN_FORMATS", "ReaderLayout",
]

#: Options of the readers that take only text on the command line (the others declare ``OPTIONS`` in
#: their own module). ``lp`` is given by ``--lp``.
LP = Option(None, "language pair, e.g. de-en", type="str")
READER_OPTIONS: Dict[str, Dict[str, Option]] = {
    "jsonl": {},
    "sick": {"system": Option("B", "name of the system whose candidates are the B sentences")},
    "plain": {"name": Option(None, "test-bed name (default: the folder name)", type="str")},
    "mtme": {"lp": LP, "references": Option(None, "references to use, comma- or +-separated (default: the "
                                                  "standard one)", type="list")},
    "wmt12": {"lp": LP, "testset": Option("newstest2012", "test set name")},
    "flickr8k": FLICKR8K_OPTIONS,
    "dstc7": DSTC7_OPTIONS,
    "mutt": {"flickr8k": Option(None, "Flickr8k folder: the FLICKR trials get their image's captions as references",
                                type="str"),
             "trials": Option("flickr", "flickr: the trials with references; all: every trial", choices=TRIAL_SETS),
             "references": Option(None, "references per trial, a seeded sample (default: all)", type="int"),
             "seed": Option(0, "seed of the reference sample")},
}


def _call(fmt: str, reader: Callable[..., Testbed], *args: Any, **options: Any) -> Testbed:
    """``reader(*args, **options)`` with every option parsed by its declared type (unknown ones refused)."""
    table = READER_OPTIONS[fmt]
    typed = {k: v for k, v in options.items() if k in table}
    untyped = {k: v for k, v in options.items() if k not in table and not isinstance(v, str)
               and k in inspect.signature(reader).parameters}  # Python-only values (e.g. a mapping)
    rest = {k: v for k, v in options.items() if k not in typed and k not in untyped}
    parsed = parse_options(f"{fmt} test bed", table, {**typed, **rest}, defaults=False)
    return reader(*args, **parsed, **untyped)


def _mtme(folder: Path, lp: Any = None, **options: Any) -> Testbed:
    pairs = sorted(p.name[:-4] for p in (folder / "sources").glob("*.txt"))
    if lp is None:
        if len(pairs) != 1:
            example = pairs[0] if pairs else "xx-yy"
            raise OptionError(f"{folder} holds {len(pairs)} language pairs ({', '.join(pairs)}); choose one "
                              f"with --lp {example} (in Python: lp={example!r})")
        lp = pairs[0]
    lp = LP.parse("mtme test bed", "lp", lp)
    if pairs and lp not in pairs:
        from ..options import did_you_mean

        raise OptionError(f"{folder} holds no language pair {lp} (it holds {', '.join(pairs)})"
                          + (f"; {did_you_mean(lp, pairs)}" if did_you_mean(lp, pairs) else ""))
    return _call("mtme", read_mtme, folder.parent, folder.name, **options, lp=lp)


def _wmt12(folder: Path, **options: Any) -> Testbed:
    if "lp" not in options:
        raise OptionError("WMT12 needs a language pair: lp='de-en' (or cs-en, es-en, fr-en, en-cs, ...)")
    return _call("wmt12", read_wmt12, folder, **options)


@dataclass(frozen=True)
class ReaderLayout:
    """One test-bed layout :func:`load_testbed` recognises: how it is spotted and which reader reads it."""

    name: str  # the reader's key in READER_OPTIONS
    looks: str  # what the path is, as the format list says it
    what: str
    matches: Callable[[Path], bool]
    read: Callable[..., Testbed]


#: The reader dispatch of :func:`load_testbed`, tried in this order; the first layout that matches reads.
FORMATS = (
    ReaderLayout("jsonl", "*.jsonl file", "canonical JSONL test bed",
                 lambda p: p.is_file() and p.suffix == ".jsonl", lambda p, **o: _call("jsonl", read_jsonl, p, **o)),
    ReaderLayout("sick", "SICK*.txt file", "SICK pairs",
                 lambda p: p.is_file() and p.name.startswith("SICK") and p.suffix == ".txt",
                 lambda p, **o: _call("sick", read_sick, p, **o)),
    ReaderLayout("plain", "folder with systems/ and references/", "plain layout",
                 lambda p: (p / "systems").is_dir() and (p / "references").is_dir(),
                 lambda p, **o: _call("plain", read_plain_dir, p, **o)),
    ReaderLayout("mtme", "folder with sources/ and system-outputs/", "mt-metrics-eval test set (option lp)",
                 lambda p: (p / "sources").is_dir() and (p / "system-outputs").is_dir(), _mtme),
    ReaderLayout("wmt12", "folder with wmt12.RNK_results.csv", "WMT12 (option lp)",
                 lambda p: (p / "wmt12.RNK_results.csv").is_file(), _wmt12),
    ReaderLayout("flickr8k", "folder with Flickr8k.token.txt", "Flickr8k (option judgments)",
                 lambda p: (p / "Flickr8k.token.txt").is_file(),
                 lambda p, **o: _call("flickr8k", read_flickr8k, p, **o)),
    ReaderLayout("dstc7", "folder with dstc7-task2-context.tsv", "DSTC7 Task 2",
                 lambda p: (p / "dstc7-task2-context.tsv").is_file(),
                 lambda p, **o: _call("dstc7", read_dstc7, p, **o)),
    ReaderLayout("mutt", "folder with MUTT <type>.txt corruption files",
                 "MUTT (options flickr8k, trials, references, seed)",
                 lambda p: p.is_dir() and any((p / f"{kind}.txt").is_file() for kind in CORRUPTION_KINDS),
                 lambda p, **o: _call("mutt", read_mutt_testbed, p, **o)),
)

#: The list of layouts, one per line (``combo`` names them when a path matches none).
KNOWN_FORMATS = "\n".join(f"  {f.looks:<47}{f.what}" for f in FORMATS)


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


def load_testbed(path: Any, **options: Any) -> Testbed:
    """Read a test bed, choosing the reader from the path (see the module doc and :data:`FORMATS`).

    Options are parsed by the reader's declared types (:data:`READER_OPTIONS`): ``"false"`` is False,
    ``"3"`` is 3, and an unknown option or a value of the wrong type is one error listing what is accepted.
    """
    p = Path(path)
    if str(path) == "example" and not p.exists():  # the bundled example test bed, as --testbed example
        from .fetch import example_path

        p = example_path()
    if str(path) == "dstc7-sample" and not p.exists():  # built from the DSTC7 release in the data home
        return _load_dstc7_sample(**options)
    if not p.exists():
        from ..options import did_you_mean

        here = [q.name for q in p.parent.iterdir()] if p.parent.is_dir() else []
        hint = did_you_mean(p.name, here + ([] if p.parent != Path(".") else ["example", "dstc7-sample"]))
        raise InputError("no such file or folder", p, fix=hint or "check the path")
    for layout in FORMATS:
        if layout.matches(p):
            return layout.read(p, **options)
    formats = "; ".join(f.looks for f in FORMATS)
    raise InputError("unknown test-bed format", p, fix=f"give one of: {formats} (see docs/testbeds.md)")
