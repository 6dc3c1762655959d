"""Statistics of a WMT23 release metric computed here from mt-metrics-eval's files with scipy alone: the
oracles the tests of combo's WMT23 statistics compare with."""

from pathlib import Path

import numpy as np
from scipy.stats import pearsonr


def columns(path):
    return [tuple(line.split("\t")) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def release_pearsons(folder, lp, metric):
    """Segment Pearson without grouping and system Pearson of a release metric's scores against MQM, read from
    mt-metrics-eval's files: the human translation refA left out, unrated segments left out, a system's MQM
    the mean of its rated segments."""
    def per_system(path):  # each system's scores in segment order
        out = {}
        for name, v in columns(path):
            out.setdefault(name, []).append(v)
        return out

    human = per_system(folder / "human-scores" / f"{lp}.mqm.seg.score")
    scores = per_system(folder / "metric-scores" / lp / f"{metric}.seg.score")  # some systems unrated by MQM
    systems = sorted(name for name in human if name != "refA")
    rated = [(float(h), float(m)) for name in systems for h, m in zip(human[name], scores[name]) if h != "None"]
    by_system = {name: [float(h) for h in human[name] if h != "None"] for name in systems}
    own = dict((name, float(v)) for name, v in columns(folder / "metric-scores" / lp / f"{metric}.sys.score"))
    return (pearsonr(*zip(*rated))[0],
            pearsonr([np.mean(by_system[s]) for s in systems], [own[s] for s in systems])[0])
