"""Flickr8k image-caption relevance judgments (Hodosh, Young & Hockenmaier 2013, JAIR 47).

Files under ``root``: ``Flickr8k.token.txt`` (``<image>#<k><TAB>caption``,
five captions per image), ``ExpertAnnotations.txt`` (``image<TAB>caption
id<TAB>e1<TAB>e2<TAB>e3``, scores 1-4), ``CrowdFlowerAnnotations.txt``
(``image<TAB>caption id<TAB>yes share<TAB>yes<TAB>no``) and optionally the
``Flickr_8k.{train,dev,test}Images.txt`` splits (used as segment groups).

One segment per judged image (id = image file name) with the image's five
captions as references (``ref_ids`` = caption ids). Each judged candidate
caption is a candidate whose system name is its caption id (e.g.
``2549968784_39bfbe44f9.jpg#2``); a caption judged for several images is the
same "system" on several segments. Expert judgments give three Scores per
pair (raters ``e1``, ``e2``, ``e3``, aspect ``expert``); crowd judgments one
Score (aspect ``crowd``, value = share of "yes" votes).

The protocol of the published Flickr8k-Expert figures drops the pairs whose
candidate is one of the judged image's own captions (it would be scored
against itself): ``drop_own_captions=True`` (default) does so and counts the
dropped pairs in ``metadata["dropped_own_caption_pairs"]`` (158 expert pairs;
5,664 remain).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

from ..errors import InputError
from ..options import Option, parse_options
from ..testbed import Score, Segment, Testbed
from .registry import register_format
from .text import PathLike, parse_float, parse_int, read_lines, split_fields

SPLITS = (("train", "Flickr_8k.trainImages.txt"), ("dev", "Flickr_8k.devImages.txt"),
          ("test", "Flickr_8k.testImages.txt"))
JUDGMENT_FILES = {"expert": "ExpertAnnotations.txt", "crowd": "CrowdFlowerAnnotations.txt"}


def read_captions(path: PathLike) -> Tuple[Dict[str, str], Dict[str, List[str]]]:
    """``({caption id: caption}, {image: [caption ids in order]})`` from ``Flickr8k.token.txt``."""
    captions: Dict[str, str] = {}
    by_image: Dict[str, List[str]] = {}
    for lineno, line in enumerate(read_lines(path), 1):
        cid, text = split_fields(line, lineno, path, count=2)
        image, hash_, k = cid.rpartition("#")
        if not hash_ or not image:
            raise InputError(f"caption id {cid!r} is not <image>#<k>", path, lineno,
                             fix="write <image file name>#<0-4><TAB>caption")
        if cid in captions:
            raise InputError(f"duplicate caption id {cid!r}", path, lineno, fix="give each caption once")
        captions[cid] = text
        by_image.setdefault(image, []).append(cid)
    return captions, by_image


#: The reader's options (``--testbed-option KEY=VALUE``), typed.
OPTIONS = {
    "judgments": Option("expert", "Flickr8k-Expert or Flickr8k-CrowdFlower judgments", choices=("expert", "crowd")),
    "drop_own_captions": Option(True, "leave out a candidate caption that is one of the image's own references"),
}


@register_format("flickr8k", looks="folder with Flickr8k.token.txt", what="Flickr8k (option judgments)",
                 options=OPTIONS, matches=lambda p: (p / "Flickr8k.token.txt").is_file())
def read_flickr8k(root: PathLike, judgments: str = "expert", drop_own_captions: bool = True) -> Testbed:
    """Flickr8k-Expert (``judgments="expert"``) or Flickr8k-CrowdFlower (``"crowd"``) as a Testbed."""
    opts = parse_options("flickr8k test bed", OPTIONS,
                         {"judgments": judgments, "drop_own_captions": drop_own_captions})
    judgments, drop_own_captions = opts["judgments"], opts["drop_own_captions"]
    base = Path(root)
    captions, by_image = read_captions(base / "Flickr8k.token.txt")
    split_of: Dict[str, str] = {}
    for split, fname in SPLITS:
        if (base / fname).is_file():
            for image in read_lines(base / fname, allow_empty=True):
                split_of[image] = split

    path = base / JUDGMENT_FILES[judgments]
    seg_index: Dict[str, int] = {}
    segments: List[Segment] = []
    candidates: Dict[str, Dict[int, str]] = {}
    scores: List[Score] = []
    dropped = 0
    judged_images = set()
    n_fields = 5
    for lineno, line in enumerate(read_lines(path), 1):
        f = split_fields(line, lineno, path, count=n_fields)
        image, cid = f[0], f[1]
        if image not in by_image:
            raise InputError(f"judgment names unknown image {image!r}", path, lineno,
                             fix="every judged image needs its captions in Flickr8k.token.txt")
        if cid not in captions:
            raise InputError(f"judgment names unknown caption {cid!r}", path, lineno,
                             fix="every judged caption must be in Flickr8k.token.txt")
        if judgments == "expert":
            values = [parse_float(t, lineno, path, "expert score", 1.0, 4.0) for t in f[2:]]
        else:
            share = parse_float(f[2], lineno, path, "yes share", 0.0, 1.0)
            yes, no = parse_int(f[3], lineno, path, "yes count"), parse_int(f[4], lineno, path, "no count")
            if yes < 0 or no < 0 or yes + no == 0 or abs(share - yes / (yes + no)) > 1e-6:
                raise InputError(f"yes share {share} does not match {yes} yes / {no} no", path, lineno,
                                 fix="the third column is yes / (yes + no)")
            values = [share]
        judged_images.add(image)
        if drop_own_captions and cid.rpartition("#")[0] == image:
            dropped += 1
            continue
        seg = seg_index.get(image)
        if seg is None:
            seg = seg_index[image] = len(segments)
            ids = by_image[image]
            segments.append(Segment(id=image, references=[captions[c] for c in ids], ref_ids=list(ids),
                                    group=split_of.get(image, "")))
        outs = candidates.setdefault(cid, {})
        if seg in outs:
            raise InputError(f"caption {cid!r} is judged twice for image {image!r}", path, lineno,
                             fix="give each image/caption pair once")
        outs[seg] = captions[cid]
        if judgments == "expert":
            scores.extend(Score(cid, seg, v, f"e{k + 1}", "expert") for k, v in enumerate(values))
        else:
            scores.append(Score(cid, seg, values[0], None, "crowd"))
    tb = Testbed(name=f"flickr8k-{judgments}", segments=segments, candidates=candidates, scores=scores)
    tb.metadata = {
        "format": "flickr8k",
        "target_language": "en",
        "judgments": judgments,
        "drop_own_captions": drop_own_captions,
        "dropped_own_caption_pairs": dropped,
        "dropped_images": len(judged_images) - len(segments),
        "pairs": sum(len(v) for v in candidates.values()),
    }
    return tb
