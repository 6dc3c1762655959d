"""SICK sentence pairs (Marelli et al. 2014, "A SICK cure for the evaluation of compositional
distributional semantic models", LREC).

``SICK.txt`` is tab-separated with a header: pair_ID, sentence_A, sentence_B,
entailment_label, relatedness_score (1-5), entailment_AB, entailment_BA,
sentence_A_original, sentence_B_original, sentence_A_dataset,
sentence_B_dataset, SemEval_set. The released file has CRLF line endings;
this loader of the known upstream file accepts them (user files reject them).

Each pair is a segment (id = pair_ID, group = SemEval_set) whose single
reference is sentence_A; sentence_B is the candidate of system ``"B"``,
and the relatedness is a Score with aspect ``relatedness``.
``metadata["entailment"]`` maps pair_ID to the entailment label.
"""

from __future__ import annotations

from typing import Dict, List

from ..errors import InputError
from ..options import Option
from ..testbed import Score, Segment, Testbed
from .registry import register_format
from .text import PathLike, check_row_width, parse_float, read_table

SICK_COLUMNS = ("pair_ID", "sentence_A", "sentence_B", "entailment_label", "relatedness_score")
ENTAILMENT_LABELS = ("NEUTRAL", "ENTAILMENT", "CONTRADICTION")


#: The reader's options (``--testbed-option KEY=VALUE``), typed.
OPTIONS = {"system": Option("B", "name of the system whose candidates are the B sentences")}


@register_format("sick", looks="SICK*.txt file", what="SICK pairs", options=OPTIONS,
                 matches=lambda p: p.is_file() and p.name.startswith("SICK") and p.suffix == ".txt")
def read_sick(path: PathLike, system: str = "B") -> Testbed:
    """SICK as a Testbed (see module doc)."""
    head, rows = read_table(path, SICK_COLUMNS, accept_crlf=True)
    group_col = head.index("SemEval_set") if "SemEval_set" in head else None
    segments: List[Segment] = []
    outs: Dict[int, str] = {}
    scores: List[Score] = []
    entailment: Dict[str, str] = {}
    for lineno, f in rows:
        check_row_width(f, head, lineno, path, fix="give every column of the header on each line")
        pid = f[0]
        if pid in entailment:
            raise InputError(f"duplicate pair_ID {pid!r}", path, lineno, fix="give each pair once")
        label = f[3]
        if label not in ENTAILMENT_LABELS:
            raise InputError(f"unknown entailment label {label!r}", path, lineno,
                             fix="use " + ", ".join(ENTAILMENT_LABELS))
        value = parse_float(f[4], lineno, path, "relatedness", 1.0, 5.0)
        seg = len(segments)
        segments.append(Segment(id=pid, references=[f[1]], ref_ids=["A"],
                                group=f[group_col] if group_col is not None else ""))
        outs[seg] = f[2]
        scores.append(Score(system, seg, value, None, "relatedness"))
        entailment[pid] = label
    tb = Testbed(name="sick", segments=segments, candidates={system: outs}, scores=scores)
    tb.metadata = {"format": "sick", "target_language": "en", "entailment": entailment}
    return tb
