"""MetricX-23 (``metricx:``) on a tiny random MT5 built offline, against a direct transformers computation of
google-research/metricx's published inference, on real WMT23 en-de candidates."""

import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("transformers", reason="the metricx extra (transformers) is not installed")
pytest.importorskip("sentencepiece", reason="the metricx extra (sentencepiece) is not installed")

import combo  # noqa: E402
from combo.cli import main  # noqa: E402
from combo.errors import ResourceMissing  # noqa: E402
from neural_checkpoints import metricx_checkpoint  # noqa: E402

N = 40


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, data):
    return metricx_checkpoint(tmp_path_factory.mktemp("metricx") / "tiny-metricx", data)


@pytest.fixture(scope="module")
def wmt23(data):
    """The first N segments of WMT23 en-de: sources, refA, and two systems' outputs."""
    root = data / "wmt23"
    read = lambda p: p.read_text(encoding="utf-8").split("\n")[:N]  # noqa: E731
    src, ref = read(root / "sources" / "en-de.txt"), read(root / "references" / "en-de.refA.txt")
    systems = {n: read(root / "system-outputs" / "en-de" / f"{n}.txt") for n in ("ONLINE-A", "Lan-BridgeMT")}
    return src, ref, systems


def reference_scores(folder, hyps, refs, srcs=None):
    """MetricX-23 by its published definition, one segment at a time with plain transformers: the input string,
    mT5's tokens without the final EOS, one decoder step from token 0, the logit of token 250089 clipped to
    [0, 25]."""
    import torch
    from transformers import AutoTokenizer, MT5ForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = MT5ForConditionalGeneration.from_pretrained(str(folder)).eval()
    out = []
    with torch.no_grad():
        for k, h in enumerate(hyps):
            text = f"candidate: {h} source: {srcs[k]}" if srcs else f"candidate: {h} reference: {refs[k]}"
            ids = tokenizer(text, max_length=1024, truncation=True)["input_ids"]
            assert ids[-1] == tokenizer.eos_token_id
            logits = model(input_ids=torch.tensor([ids[:-1]]),
                           decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits
            out.append(float(torch.clamp(logits[0, 0, 250089], 0, 25)))
    return np.array(out)


def test_scores_equal_the_published_inference(checkpoint, wmt23):
    src, ref, systems = wmt23
    hyps = systems["ONLINE-A"]
    expected = reference_scores(checkpoint, hyps, ref)
    assert len(set(np.round(expected, 3))) > N // 2 and 0 < expected.min() < expected.max() <= 25  # no ties
    one = combo.get_metric(f"metricx:model={checkpoint},batch_size=1").score_texts(hyps, [[r] for r in ref])
    np.testing.assert_allclose(one, expected, rtol=0, atol=1e-6)
    batched = combo.get_metric(f"metricx:model={checkpoint}").score_texts(hyps, [[r] for r in ref])
    np.testing.assert_allclose(batched, expected, rtol=0, atol=1e-5)  # padding in a batch: float rounding only
    qe = combo.get_metric(f"metricx:model={checkpoint},qe=yes,batch_size=1").score_texts(hyps, sources=src)
    np.testing.assert_allclose(qe, reference_scores(checkpoint, hyps, ref, src), rtol=0, atol=1e-6)
    assert not np.allclose(qe, one)


def test_a_test_bed_scores_each_distinct_triple_once(checkpoint, wmt23, monkeypatch):
    from combo.metrics.metricx import MetricX

    src, ref, systems = wmt23
    tb = combo.Testbed("wmt23-slice", [combo.Segment(str(i + 1), s, [r]) for i, (s, r) in enumerate(zip(src, ref))])
    tb.candidates = {name: dict(enumerate(lines)) for name, lines in systems.items()}
    tb.candidates["copy"] = dict(enumerate(systems["ONLINE-A"]))  # the same texts again
    calls = []
    predict = MetricX.predict
    monkeypatch.setattr(MetricX, "predict", lambda self, *a, **k: calls.append(len(a[1])) or predict(self, *a, **k))
    table = combo.score_testbed(tb, [f"metricx:model={checkpoint}"])
    assert calls == [len({(h, r) for name in systems for h, r in zip(systems[name], ref)})]
    metric = combo.get_metric(f"metricx:model={checkpoint}")
    for s, name in enumerate(table.systems):
        seg = table.segment[0][table.row_system == s]
        alone = metric.score_texts(list(tb.candidates[name].values()), [[r] for r in ref])
        np.testing.assert_allclose(seg, alone, rtol=0, atol=1e-5)  # other batches: float rounding only
        assert table.system[0][s] == pytest.approx(seg.mean(), abs=1e-12)  # the system score: their mean
    assert metric.higher_is_better is False and "|sha256:" in table.signatures[0]


def test_score_cache_is_keyed_by_the_checkpoint_content(checkpoint, tmp_path, monkeypatch):
    from combo.metrics.metricx import MetricX

    tb = combo.load_testbed(combo.example_path())
    spec = f"metricx:model={checkpoint}"
    first = combo.score_testbed(tb, [spec], cache_dir=tmp_path / "cache")

    def refuse(*args, **kwargs):
        raise AssertionError("scored again although the cache holds the scores")

    monkeypatch.setattr(MetricX, "predict", refuse)
    again = combo.score_testbed(tb, [spec], cache_dir=tmp_path / "cache")
    np.testing.assert_array_equal(first.segment, again.segment)
    assert first.signatures == again.signatures
    monkeypatch.undo()
    copy = tmp_path / "copy"
    import shutil

    shutil.copytree(checkpoint, copy)
    config = json.loads((copy / "config.json").read_text())
    config["layer_norm_epsilon"] = 1e-3  # another checkpoint under the same file names
    (copy / "config.json").write_text(json.dumps(config))
    changed = combo.get_metric(f"metricx:model={copy}")
    assert changed.signature.split("|sha256:")[1][:16] != first.signatures[0].split("|sha256:")[1][:16]


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_command_line(checkpoint):
    res = _run("score", "--testbed", "example", "-m", f"metricx:model={checkpoint}", "-m", "chrf", "--level", "segment",
               "-q")
    assert res.exit_code == 0, res.output
    rows = [line.split("\t") for line in res.output.strip().split("\n")]
    assert rows[0][-2:] == [f"metricx:model={checkpoint}", "chrf"] and len(rows) == 1 + 4 * 24
    assert all(0 <= float(r[-2]) <= 25 for r in rows[1:])
    for args, said in [(("-m", "metricx:model=/nonexistent/metricx"), "metricx checkpoint '/nonexistent/metricx'"),
                       (("-m", "metricx:model=google/metricx-23-nothing"),
                        "combo models fetch google/metricx-23-nothing"),
                       (("-m", f"metricx:model={checkpoint},device=gpu"), "is not one of auto, cpu, cuda"),
                       (("-m", f"metricx:model={checkpoint},batch_size=0"), "batch_size")]:
        res = _run("score", "--testbed", "example", *args)
        assert res.exit_code == 2 and res.output.count("\n") == 1 and said in res.output, res.output


def test_missing_extra_is_one_line_naming_it(checkpoint, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if uninstalled
    with pytest.raises(ResourceMissing, match=r"pip install 'combo-eval\[metricx\]'"):
        combo.get_metric(f"metricx:model={checkpoint}").check_resources()
    res = _run("score", "--testbed", "example", "-m", f"metricx:model={checkpoint}")
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "combo-eval[metricx]" in res.output


def test_cuda_is_refused_where_torch_sees_none(checkpoint):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: device=cuda runs")
    with pytest.raises(combo.OptionError, match="no CUDA device"):
        combo.get_metric(f"metricx:model={checkpoint},device=cuda").score_texts(["a"], [["b"]])
    assert combo.metrics.neural.torch_device("auto") == "cpu"
