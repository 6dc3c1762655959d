"""DSTC7 Task 2, grounded response generation (Galley et al. 2019, "Grounded Response
Generation Task at DSTC7"), with its human evaluation.

Files under ``root`` (all tab-separated, ``InstanceID`` joins them):

* ``dstc7-task2-context.tsv``: InstanceID, Depth, Context -> segment source;
* ``dstc7-task2-gold_responses.tsv``: InstanceID, Reference1, Reference2, ...
  (0 to 1,009 per instance) -> references, ``ref_ids`` = column names;
* ``dstc7-task2-system_responses.tsv``: SystemID, InstanceID, Response ->
  candidates (``Human`` is a rated system whose responses are human-written);
* ``dstc7-task2-human-eval-per-judge.tsv``: JudgeID, InstanceID, SystemID,
  Relevance, Informativeness -> Scores with aspects ``relevance`` and
  ``informativeness``, rater = JudgeID;
* ``dstc7-task2-human_evaluation.tsv``: InstanceID then one column per
  system (mean rating) -> Scores with aspect ``mean``; its last row
  ``Average`` (over all 1,000 instances) -> ``system_scores["mean"]``.

Upstream quirks handled here, each documented and counted in ``metadata``:

* The per-judge file starts with a byte-order mark; this loader strips it
  (user-supplied files elsewhere reject BOMs).
* The per-judge file labels half of TeamCE's judgments ``TeamEC``, a system
  with no responses; the organisers' mean file pools both under TeamCE
  (pooling reproduces every mean to two decimals), so ``system_aliases``
  maps TeamEC to TeamCE by default.
* 46 instances have no reference; they are skipped (``skipped_no_references``),
  with their judgments (``skipped_judgments``).
* With ``remove_human_copy`` (default), the gold reference that the Human
  response copies is removed from that instance (otherwise Human trivially
  matches itself; needed for human-likeness, e.g. KING). The Human responses
  are lower-cased, detokenised forms of the reference, so "copy" means equal
  after lower-casing and keeping only letters and digits (or, when that
  leaves nothing, equal after lower-casing and removing white space). 893 of
  the 954 instances with references have such a copy (``human_copy_instances``).
* ``min_references`` drops instances with fewer references (after the copy
  is removed); the data README's "953 usable instances" are those with at
  least 3 references.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

from ..errors import InputError
from ..options import Option, parse_options
from ..testbed import Score, Segment, Testbed
from .registry import register_format
from .text import PathLike, check_row_width, parse_float, parse_int, read_lines, read_table

CONTEXT = "dstc7-task2-context.tsv"
GOLD = "dstc7-task2-gold_responses.tsv"
SYSTEMS = "dstc7-task2-system_responses.tsv"
PER_JUDGE = "dstc7-task2-human-eval-per-judge.tsv"
MEANS = "dstc7-task2-human_evaluation.tsv"
DEFAULT_ALIASES = {"TeamEC": "TeamCE"}

_NOT_ALNUM = re.compile(r"[\W_]+")
_SPACE = re.compile(r"\s+")


def copy_key(text: str) -> str:
    """Key under which a Human response equals the reference it copies (see module doc)."""
    key = _NOT_ALNUM.sub("", text.lower())
    return key if key else _SPACE.sub("", text.lower())


#: The reader's options (``--testbed-option KEY=VALUE``), typed; ``system_aliases`` (a mapping) is Python-only.
OPTIONS = {
    "remove_human_copy": Option(True, "leave out Human responses that copy one of the segment's references"),
    "min_references": Option(1, "skip (and count) instances with fewer references", check=lambda v: v >= 1),
    "human_system": Option("Human", "name of the human-response system"),
}


# -- the first-run sample (``--testbed dstc7-sample``): a rule applied to the release, never a copy of it --------

SAMPLE_NAME = "dstc7-sample"
SAMPLE_INSTANCES = 100   # the first InstanceIDs of the context file (sorted by hash upstream: score-blind) ...
SAMPLE_MIN_REFERENCES = 5  # ... among those with at least 5 references (4 left once the Human copy goes; KING needs 4)
SAMPLE_KEEP_REFERENCES = 8  # the first 8 references of each, in column order


def _byte_lines(path: Path) -> List[bytes]:
    return path.read_bytes().split(b"\n")[:-1]  # the release's files end with a newline


def sample_instances(release: PathLike) -> List[bytes]:
    """The InstanceIDs of the sample, in context-file order (rule above, committed before any score on it)."""
    base = Path(release)
    gold = {}
    for line in _byte_lines(base / GOLD)[1:]:
        iid, _, rest = line.partition(b"\t")
        gold[iid] = [r for r in rest.split(b"\t") if r] if rest else []
    order = [line.split(b"\t", 1)[0] for line in _byte_lines(base / CONTEXT)[1:]]
    return [iid for iid in order if len(gold.get(iid, ())) >= SAMPLE_MIN_REFERENCES][:SAMPLE_INSTANCES]


def write_sample(release: PathLike, out: PathLike) -> Dict[str, int]:
    """Write the sample of the DSTC7 release at ``release`` to ``out`` in the release's layout: the chosen
    instances' lines byte for byte (gold lines cut after the eighth reference), the ``Average`` row left
    out (it is a mean over all 1,000 instances), LICENSE.txt and README.txt unchanged. Rows written per file."""
    base, out = Path(release), Path(out)
    keep = set(sample_instances(base))
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for name, column in ((CONTEXT, 0), (SYSTEMS, 1), (MEANS, 0), (PER_JUDGE, 1)):  # InstanceID's column
        lines = _byte_lines(base / name)
        rows = [line for line in lines[1:] if line.split(b"\t")[column] in keep]
        (out / name).write_bytes(b"\n".join([lines[0], *rows]) + b"\n")
        counts[name] = len(rows)
    lines = _byte_lines(base / GOLD)
    rows = []
    for line in lines[1:]:
        iid, _, rest = line.partition(b"\t")
        if iid in keep:
            rows.append(b"\t".join([iid, *[r for r in rest.split(b"\t") if r][:SAMPLE_KEEP_REFERENCES]]))
    (out / GOLD).write_bytes(b"\n".join([lines[0], *rows]) + b"\n")
    counts[GOLD] = len(rows)
    for name in ("LICENSE.txt", "README.txt"):
        (out / name).write_bytes((base / name).read_bytes())
    return counts


@register_format("dstc7", looks="folder with dstc7-task2-context.tsv", what="DSTC7 Task 2", options=OPTIONS,
                 matches=lambda p: (p / CONTEXT).is_file())
def read_dstc7(root: PathLike, remove_human_copy: bool = True, min_references: int = 1,
               human_system: str = "Human",
               system_aliases: Optional[Mapping[str, str]] = None) -> Testbed:
    """DSTC7 Task 2 as a Testbed: one segment per instance with references (see module doc)."""
    opts = parse_options("dstc7 test bed", OPTIONS, {"remove_human_copy": remove_human_copy,
                                            "min_references": min_references, "human_system": human_system})
    remove_human_copy, min_references, human_system = (opts["remove_human_copy"], opts["min_references"],
                                                       opts["human_system"])
    aliases = dict(DEFAULT_ALIASES if system_aliases is None else system_aliases)
    base = Path(root)
    context, depth, order = _read_contexts(base / CONTEXT)
    refs = _read_references(base / GOLD, context, order)
    responses = _read_responses(base / SYSTEMS, context)
    if remove_human_copy and human_system not in responses:
        raise InputError(f"no responses of system {human_system!r}", base / SYSTEMS,
                         fix="pass human_system=<name> or remove_human_copy=False")
    human = responses[human_system] if remove_human_copy else {}
    segments, seg_of, counts = _segments(order, context, refs, human, min_references)
    tb = Testbed(name="dstc7-task2", segments=segments)
    for system, outs in responses.items():
        tb.candidates[system] = {seg_of[iid]: t for iid, t in outs.items() if iid in seg_of}
    skipped_judgments = _read_judgments(base / PER_JUDGE, tb, context, responses, seg_of, aliases)
    skipped_means = _read_means(base / MEANS, tb, context, responses, seg_of)
    tb.metadata = {
        "format": "dstc7-task2",
        "target_language": "en",
        "instances": len(order),
        "skipped_no_references": counts["no_references"],
        "min_references": min_references,
        "skipped_few_references": counts["few_references"],
        "remove_human_copy": remove_human_copy,
        "human_system": human_system,
        "human_copy_instances": counts["copies"],
        "human_copy_references_removed": counts["removed"],
        "skipped_judgments": skipped_judgments,
        "skipped_mean_scores": skipped_means,
        "system_aliases": aliases,
        "system_scores_over": "all instances (the organisers' Average row)",
        "depth": {iid: depth[iid] for iid in seg_of},
    }
    return tb


def _read_contexts(path: Path) -> Tuple[Dict[str, str], Dict[str, int], List[str]]:
    """The context file: each instance's context and depth, and the instances in file order."""
    _, rows = read_table(path, ("InstanceID", "Depth", "Context"), count=3)
    context: Dict[str, str] = {}
    depth: Dict[str, int] = {}
    order: List[str] = []
    for lineno, (iid, d, text) in rows:
        if iid in context:
            raise InputError(f"duplicate InstanceID {iid!r}", path, lineno, fix="give each instance once")
        context[iid] = text
        depth[iid] = parse_int(d, lineno, path, "Depth")
        order.append(iid)
    return context, depth, order


def _read_references(path: Path, context: Mapping[str, str], order: List[str]) -> Dict[str, List[str]]:
    """The gold file: each instance's references (empty fields dropped), one line for every instance."""
    lines = read_lines(path)
    if not lines[0].startswith("InstanceID\t"):
        raise InputError("the header must start with InstanceID", path, 1,
                         fix="use the gold_responses.tsv of the DSTC7 release")
    refs: Dict[str, List[str]] = {}
    for lineno, line in enumerate(lines[1:], 2):
        iid, _, rest = line.partition("\t")
        if iid not in context:
            raise InputError(f"unknown InstanceID {iid!r}", path, lineno,
                             fix=f"every instance needs a context in {CONTEXT}")
        if iid in refs:
            raise InputError(f"duplicate InstanceID {iid!r}", path, lineno, fix="give each instance once")
        refs[iid] = [r for r in rest.split("\t") if r != ""] if rest else []
    missing = [iid for iid in order if iid not in refs]
    if missing:
        raise InputError(f"{len(missing)} instances have no line, e.g. {missing[0]!r}", path,
                         len(lines) + 1, fix="give one line per instance (it may have no reference)")
    return refs


def _read_responses(path: Path, context: Mapping[str, str]) -> Dict[str, Dict[str, str]]:
    """The system responses file: ``{system: {InstanceID: response}}``, one response per system and instance."""
    _, rows = read_table(path, ("SystemID", "InstanceID", "Response"), count=3)
    responses: Dict[str, Dict[str, str]] = {}
    for lineno, (system, iid, text) in rows:
        if iid not in context:
            raise InputError(f"response for unknown InstanceID {iid!r}", path, lineno,
                             fix=f"every instance needs a context in {CONTEXT}")
        outs = responses.setdefault(system, {})
        if iid in outs:
            raise InputError(f"second response of {system!r} for instance {iid!r}", path, lineno,
                             fix="give one response per system and instance")
        outs[iid] = text
    return responses


def _segments(order: List[str], context: Mapping[str, str], refs: Mapping[str, List[str]],
              human: Mapping[str, str], min_references: int) -> Tuple[List[Segment], Dict[str, int], Dict[str, int]]:
    """One segment per instance with at least ``min_references`` references once the reference that the human
    response (``human``: empty when copies are kept) copies is removed; with each kept instance's segment index
    and the counts of skipped instances and removed copies."""
    segments: List[Segment] = []
    seg_of: Dict[str, int] = {}
    counts = {"no_references": 0, "few_references": 0, "copies": 0, "removed": 0}
    for iid in order:
        rs = refs[iid]
        ids = [f"Reference{k + 1}" for k in range(len(rs))]
        if not rs:
            counts["no_references"] += 1
            continue
        if iid in human:
            key = copy_key(human[iid])
            keep = [k for k, r in enumerate(rs) if copy_key(r) != key]
            if len(keep) < len(rs):
                counts["copies"] += 1
                counts["removed"] += len(rs) - len(keep)
                rs, ids = [rs[k] for k in keep], [ids[k] for k in keep]
        if len(rs) < min_references:
            counts["few_references"] += 1
            continue
        seg_of[iid] = len(segments)
        segments.append(Segment(id=iid, source=context[iid], references=rs, ref_ids=ids))
    return segments, seg_of, counts


def _read_judgments(path: Path, tb: Testbed, context: Mapping[str, str], responses: Mapping[str, Dict[str, str]],
                    seg_of: Mapping[str, int], aliases: Mapping[str, str]) -> int:
    """Add the per-judge relevance and informativeness scores to ``tb``; return the judgments of skipped
    instances."""
    _, rows = read_table(path, ("JudgeID", "InstanceID", "SystemID", "Relevance", "Informativeness"),
                         count=5, strip_bom=True)
    skipped = 0
    for lineno, (judge, iid, system, rel, inf) in rows:
        system = aliases.get(system, system)
        if iid not in context:
            raise InputError(f"judgment names unknown InstanceID {iid!r}", path, lineno,
                             fix=f"every judged instance needs a context in {CONTEXT}")
        if system not in responses:
            raise InputError(f"judgment names unknown system {system!r}", path, lineno,
                             fix=f"every judged system needs responses in {SYSTEMS} (or a system alias)")
        seg = seg_of.get(iid)
        r = parse_float(rel, lineno, path, "Relevance")
        i = parse_float(inf, lineno, path, "Informativeness")
        if seg is None:
            skipped += 1
            continue
        if seg not in tb.candidates[system]:
            raise InputError(f"judgment of {system!r} on instance {iid!r}, which has no response from it",
                             path, lineno, fix="judge only responses that exist")
        tb.scores.append(Score(system, seg, r, judge, "relevance"))
        tb.scores.append(Score(system, seg, i, judge, "informativeness"))
    return skipped


def _read_means(path: Path, tb: Testbed, context: Mapping[str, str], responses: Mapping[str, Dict[str, str]],
                seg_of: Mapping[str, int]) -> int:
    """Add the organisers' mean ratings to ``tb`` (aspect ``mean``; the ``Average`` row as its system scores);
    return the mean scores of skipped instances."""
    head, rows = read_table(path, ("InstanceID",))
    systems = head[1:]
    for k, system in enumerate(systems):
        if system in systems[:k]:
            raise InputError(f"duplicate system column {system!r}", path, 1, fix="name each system once")
        if system not in responses:
            raise InputError(f"column names unknown system {system!r}", path, 1,
                             fix=f"every system column needs responses in {SYSTEMS}")
    skipped = 0
    average: Dict[str, float] = {}
    for lineno, fields in rows:
        check_row_width(fields, head, lineno, path, fix="give a value for every system column")
        iid = fields[0]
        values = [parse_float(v, lineno, path, "mean rating") for v in fields[1:]]
        if iid == "Average":
            average = dict(zip(systems, values))
            continue
        if iid not in context:
            raise InputError(f"unknown InstanceID {iid!r}", path, lineno,
                             fix=f"every instance needs a context in {CONTEXT}")
        seg = seg_of.get(iid)
        if seg is None:
            skipped += len(values)
            continue
        for system, v in zip(systems, values):
            tb.scores.append(Score(system, seg, v, None, "mean"))
    if average:
        tb.system_scores["mean"] = average
    return skipped
