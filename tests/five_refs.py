"""A small test bed with 5 references per segment (enough for KING and QUEEN) and a ``scores:`` TSV of its
candidates, for the command-line tests of notes, refusals and advice (imported as a plain module)."""

import json
from pathlib import Path

SYSTEMS = ("good", "fair", "poor")
REFERENCES = [
    ["the cat sat on the mat", "a cat was sitting on the mat", "the cat is on the mat",
     "on the mat sat the cat", "a cat sat on a mat"],
    ["the dog ran into the park", "a dog ran to the park", "the dog was running in the park",
     "into the park ran the dog", "the dog hurried into the park"],
    ["it rained all day in the city", "the whole day it rained in town", "rain fell on the city all day",
     "it was raining in the city all day", "all day long it rained in the city"],
    ["we are meeting at noon tomorrow", "tomorrow we meet at midday", "we will meet tomorrow at noon",
     "our meeting is tomorrow at noon", "we meet at twelve tomorrow"],
    ["the train left the station late", "the train departed late from the station",
     "late, the train left the station", "the train was late leaving the station", "the train left late"],
    ["she bought fresh bread this morning", "this morning she bought fresh bread",
     "she got fresh bread in the morning", "fresh bread was bought by her this morning",
     "she purchased fresh bread this morning"],
]
OUTPUTS = {
    "good": ["the cat sat on the mat", "a dog ran into the park", "it rained all day in the city",
             "we meet tomorrow at noon", "the train left the station late", "she bought fresh bread this morning"],
    "fair": ["cat sat on mat", "the dog ran in park", "it rains the day in city", "we meeting noon",
             "train left station", "she bought bread morning"],
    "poor": ["a mat", "park", "city rain", "noon tomorrow we", "the late", "bread"],
}
HUMAN = {"good": [5, 4, 5, 4, 5, 5], "fair": [3, 3, 2, 3, 3, 4], "poor": [1, 2, 1, 2, 1, 1]}


def write_testbed(folder: Path, judgments: str = "scores", name: str = "five", few_references: int = 0) -> Path:
    """``folder/NAME.jsonl``: 6 segments x 5 references, 3 systems; ``judgments``: ``scores`` (absolute, aspect
    adequacy), ``preferences`` (relative rankings only, from the same order), ``system`` (system scores only) or
    ``none``. ``few_references``: that many segments (the first) keep 2 references only."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = [f"s{i + 1}" for i in range(len(REFERENCES))]
    records = [{"type": "testbed", "format": 1, "name": name, "metadata": {"target_language": "en"}}]
    records += [{"type": "segment", "id": sid, "source": "x", "references": refs[:2] if k < few_references else refs,
                 "weights": None, "ref_ids": None, "group": ""} for k, (sid, refs) in enumerate(zip(ids, REFERENCES))]
    records += [{"type": "candidate", "system": s, "segment": sid, "text": OUTPUTS[s][i]}
                for s in SYSTEMS for i, sid in enumerate(ids)]
    if judgments == "scores":
        records += [{"type": "score", "system": s, "segment": sid, "value": float(HUMAN[s][i]), "rater": None,
                     "aspect": "adequacy"} for s in SYSTEMS for i, sid in enumerate(ids)]
    elif judgments == "preferences":
        records += [{"type": "preference", "segment": sid, "better": a, "worse": b, "judge": None,
                     "tie": False, "block": i}
                    for i, sid in enumerate(ids) for a, b in (("good", "fair"), ("fair", "poor"), ("good", "poor"))]
    elif judgments == "system":
        records += [{"type": "system_score", "system": s, "aspect": "adequacy", "value": sum(HUMAN[s]) / 6}
                    for s in SYSTEMS]
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_scores(folder: Path, missing=(("poor", "s1"),), name: str = "lengths.tsv") -> Path:
    """A ``scores:`` TSV file: each candidate's length in words, ``None`` for the candidates in ``missing``."""
    lines = ["system\tsegment\tscore"]
    for s in SYSTEMS:
        for i, text in enumerate(OUTPUTS[s]):
            sid = f"s{i + 1}"
            lines.append(f"{s}\t{sid}\t{'None' if (s, sid) in set(missing) else len(text.split())}")
    path = folder / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
