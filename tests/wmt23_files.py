"""Statistics of a WMT23 release metric computed here from mt-metrics-eval's files with scipy alone: the
oracles the tests of combo's WMT23 statistics compare with."""

from pathlib import Path

import numpy as np
from scipy.stats import pearsonr


def columns(path):
    return [tuple(line.split("\t")) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def _per_system(path):
    """Each system's column of a score file, in segment order."""
    out = {}
    for name, v in columns(path):
        out.setdefault(name, []).append(v)
    return out


def release_average(folder, lp, metric):
    """WMT23's four statistics of a release metric on one pair and their average, from mt-metrics-eval's files:
    ``(sys accuracy, sys Pearson, seg Pearson, acc_eq, average)``.

    acc_eq (Deutsch et al. 2023): every pair of rated systems of a segment is a pair; a pair MQM orders is right
    when the metric's difference in MQM's order exceeds epsilon, a pair MQM ties when the metric's absolute
    difference is at most epsilon; each segment's share of right pairs is averaged over segments, at the
    epsilon (0 or one of the absolute differences) that maximises that mean. System accuracy: the share of
    system pairs whose score differences have the same sign. The average maps the Pearsons by (r + 1) / 2 and
    weighs the four 1/4."""
    human = _per_system(folder / "human-scores" / f"{lp}.mqm.seg.score")
    scores = _per_system(folder / "metric-scores" / lp / f"{metric}.seg.score")
    systems = sorted(name for name in human if name != "refA")
    d, tie, weight = [], [], []
    n_segments = len(human[systems[0]])
    per_segment = []
    for i in range(n_segments):
        rated = [(float(human[s][i]), float(scores[s][i])) for s in systems if human[s][i] != "None"]
        pairs = [(a, b) for k, a in enumerate(rated) for b in rated[k + 1:]]
        if pairs:
            per_segment.append(pairs)
    for pairs in per_segment:
        for (ha, ma), (hb, mb) in pairs:
            tie.append(ha == hb)
            d.append(abs(ma - mb) if ha == hb else (ma - mb if ha > hb else mb - ma))
            weight.append(1.0 / (len(pairs) * len(per_segment)))
    d, tie, weight = np.array(d), np.array(tie), np.array(weight)
    eps = np.unique(np.concatenate([[0.0], np.abs(d)]))
    right_ties = _weight_at_most(d[tie], weight[tie], eps)  # MQM ties the metric ties: |d| <= eps
    right_ordered = weight[~tie].sum() - _weight_at_most(d[~tie], weight[~tie], eps)  # d > eps
    best = float((right_ties + right_ordered).max())
    own = dict((name, float(v)) for name, v in columns(folder / "metric-scores" / lp / f"{metric}.sys.score"))
    h_sys = [np.mean([float(h) for h in human[s] if h != "None"]) for s in systems]
    m_sys = [own[s] for s in systems]
    agree = [np.sign(h_sys[a] - h_sys[b]) == np.sign(m_sys[a] - m_sys[b])
             for a in range(len(systems)) for b in range(a + 1, len(systems))]
    sys_accuracy = float(np.mean(agree))
    seg, sys_ = release_pearsons(folder, lp, metric)
    average = (sys_accuracy + (sys_ + 1) / 2 + (seg + 1) / 2 + best) / 4
    return sys_accuracy, sys_, seg, best, average


def _weight_at_most(values, weights, thresholds):
    """For each threshold, the summed weight of the values at most that threshold."""
    order = np.argsort(values)
    cumulative = np.concatenate([[0.0], np.cumsum(weights[order])])
    return cumulative[np.searchsorted(values[order], thresholds, side="right")]


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
