"""COMET (``comet:``) on tiny checkpoints built offline by COMET's own classes, against COMET's own ``predict``
on the same checkpoint, on real WMT23 en-de candidates.

``unbabel-comet`` pins numpy<2 and transformers<5, so these tests run in a venv of their own (``.ci/comet``);
where the package is not installed (the README's test venv) they skip, and the one test that needs it absent
checks the error a user then gets.
"""

import sys

import numpy as np
import pytest
from click.testing import CliRunner

import combo
from combo.cli import main

N = 40


def _have_comet() -> bool:
    import importlib.util

    return importlib.util.find_spec("comet") is not None


needs_comet = pytest.mark.skipif(not _have_comet(), reason="unbabel-comet is not installed here: .ci/comet runs "
                                                           "these tests in a venv with the comet extra")


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.skipif(_have_comet(), reason="unbabel-comet is installed: the missing-extra message cannot show")
def test_without_the_extra_one_line_names_it(tmp_path):
    res = _run("score", "--testbed", "example", "-m", f"comet:model={tmp_path}")
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "pip install 'combo-eval[comet]'" in res.output and "unbabel-comet" in res.output


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory, data):
    pytest.importorskip("comet", reason="unbabel-comet is not installed")
    import torch

    from neural_checkpoints import comet_checkpoint

    torch.set_num_threads(1)  # tiny matrices: two OpenMP threads on two cores were far slower than one
    root = tmp_path_factory.mktemp("comet")
    return {kind: comet_checkpoint(root / kind, data, kind) for kind in ("regression", "kiwi")}


@pytest.fixture(scope="module")
def wmt23(data):
    root = data / "wmt23"
    read = lambda p: p.read_text(encoding="utf-8-sig").split("\n")[:N]  # noqa: E731
    return (read(root / "sources" / "en-de.txt"), read(root / "references" / "en-de.refA.txt"),
            {n: read(root / "system-outputs" / "en-de" / f"{n}.txt") for n in ("ONLINE-A", "AIRC")})


def _comet_predict(ckpt, samples, half=False, batch_size=8):
    """COMET's own computation: its loader and predict() on CPU (``half``: cast to half precision first, as
    comet-score does)."""
    from comet import load_from_checkpoint

    model = load_from_checkpoint(str(ckpt), local_files_only=True)
    if half:
        model.half()
    out = model.predict(samples, batch_size=batch_size, gpus=0, progress_bar=False)
    return np.asarray(out.scores), float(out.system_score)


@needs_comet
def test_segment_and_system_scores_equal_comets_predict(checkpoints, wmt23):
    src, ref, systems = wmt23
    hyps = systems["ONLINE-A"]
    expected, system = _comet_predict(checkpoints["regression"],
                                      [{"src": s, "mt": h, "ref": r} for s, h, r in zip(src, hyps, ref)])
    assert len(set(np.round(expected, 4))) > N // 2
    metric = combo.get_metric(f"comet:model={checkpoints['regression']}")
    got = metric.score_texts(hyps, [[r] for r in ref], src)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    tb = combo.Testbed("wmt23-slice", [combo.Segment(str(i + 1), s, [r]) for i, (s, r) in enumerate(zip(src, ref))])
    tb.candidates = {name: dict(enumerate(lines)) for name, lines in systems.items()}
    table = combo.score_testbed(tb, [f"comet:model={checkpoints['regression'].parents[1]}"])  # the folder names it
    online = table.systems.index("ONLINE-A")
    np.testing.assert_allclose(table.segment[0][table.row_system == online], expected, rtol=0, atol=1e-6)
    assert table.system[0][online] == pytest.approx(system, abs=1e-6)  # comet-score's system score: the mean
    assert "|sha256:" in table.signatures[0] and "|unbabel-comet:2.2" in table.signatures[0]
    samples = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(src, hyps, ref)]
    half, _ = _comet_predict(checkpoints["regression"], samples, half=True, batch_size=16)
    halved = combo.get_metric(f"comet:model={checkpoints['regression']},half=yes")
    ours = halved.score_texts(hyps, [[r] for r in ref], src)
    np.testing.assert_allclose(ours, half, rtol=0, atol=1e-6)  # comet-score's precision, when asked
    assert np.abs(half - expected).max() > 1e-5  # which is not predict()'s in full precision


@needs_comet
def test_every_weight_of_the_checkpoint_is_loaded(checkpoints):
    """COMET loads with strict=False, so a weight missing from the checkpoint would vanish silently: the loaded
    model must hold every tensor of the file, equal."""
    import torch

    from combo.metrics.comet import Comet

    model = Comet(model=str(checkpoints["regression"])).model()
    stored = torch.load(str(checkpoints["regression"]), map_location="cpu", weights_only=False)["state_dict"]
    loaded = model.state_dict()
    assert set(stored) <= set(loaded) and len(stored) > 10
    for key, tensor in stored.items():
        assert torch.equal(loaded[key], tensor), key


@needs_comet
def test_a_reference_free_checkpoint_reads_sources_and_no_reference(checkpoints, wmt23):
    src, ref, systems = wmt23
    hyps = systems["AIRC"]
    metric = combo.get_metric(f"comet:model={checkpoints['kiwi']}")
    assert metric.reads() == (True, False)
    expected, _ = _comet_predict(checkpoints["kiwi"], [{"src": s, "mt": h} for s, h in zip(src, hyps)])
    np.testing.assert_allclose(metric.score_texts(hyps, sources=src), expected, rtol=0, atol=1e-6)
    with pytest.raises(combo.OptionError, match="reads the source"):
        metric.score_texts(hyps, [[r] for r in ref])


@needs_comet
def test_command_line(checkpoints):
    folder = checkpoints["regression"].parents[1]
    res = _run("score", "--testbed", "example", "-m", f"comet:model={folder}", "-q")
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"system\tcomet:model={folder}\n") and len(res.output.strip().split("\n")) == 5
    for args, said in [(("-m", "comet:model=/nonexistent/comet"), "comet checkpoint '/nonexistent/comet'"),
                       (("-m", "comet:model=Unbabel/no-such-model"), "combo models fetch Unbabel/no-such-model"),
                       (("-m", f"comet:model={folder},batch_size=0"), "batch_size")]:
        res = _run("score", "--testbed", "example", *args)
        assert res.exit_code == 2 and res.output.count("\n") == 1 and said in res.output, res.output


@needs_comet
def test_missing_sources_are_named(checkpoints, tmp_path):
    (tmp_path / "h.txt").write_text("Hallo Welt\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("Hallo, Welt\n", encoding="utf-8")
    tb = combo.io.plain.read_plain(None, [tmp_path / "r.txt"], [tmp_path / "h.txt"])
    with pytest.raises(combo.InputError, match="reads sources"):
        combo.score_testbed(tb, [f"comet:model={checkpoints['regression']}"])
    assert sys.modules.get("comet") is not None


@needs_comet
def test_the_shipped_model_scores_files_with_its_features_computed_here(checkpoints, wmt23, tmp_path):
    """`combo apply --model combo-wmt23 --src --hyps A B --refs --feature ...`: each release feature bound to a
    COMET checkpoint computed here gives the model's formula over COMET's own predictions, and the systems are
    compared pairwise."""
    import json

    from combo.metrics.tuned import load_model

    src, ref, systems = wmt23
    for name, lines in [("src", src), ("ref", ref), *systems.items()]:
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = load_model("combo-wmt23", features={})
    kiwi = {"mtme:CometKiwi"}
    binds = [("--feature", f"{spec}=comet:model={checkpoints['kiwi' if spec in kiwi else 'regression']}")
             for spec in model.model.specs if spec.startswith("mtme:")]
    res = _run("apply", "--model", "combo-wmt23", "--src", tmp_path / "src.txt", "--hyps",
               *[tmp_path / f"{n}.txt" for n in systems], "--refs", tmp_path / "ref.txt", "--level", "segment",
               "--format", "json", "-q", *[x for pair in binds for x in pair])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    chrf, bleu = combo.get_metric("chrf"), combo.get_metric("bleu")
    for name, hyps in systems.items():
        columns = []
        for spec in model.model.specs:
            if spec.startswith("mtme:"):
                kind = "kiwi" if spec in kiwi else "regression"
                samples = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(src, hyps, ref)]
                columns.append(_comet_predict(checkpoints[kind], samples)[0])
            else:
                columns.append({"chrf": chrf, "bleu": bleu}[spec].segment_scores(hyps, [[r] for r in ref]))
        fitted = model.model  # the file's own numbers, in the model's formula: w . (x - lo) / (hi - lo) + b
        assert fitted.higher_is_better.all()  # every input is higher-is-better: no flip
        x = (np.vstack(columns) - fitted.lo[:, None]) / (fitted.hi - fitted.lo)[:, None]
        want = fitted.weights @ x + fitted.bias
        got = [r["score"] for r in doc["scores"] if r["system"] == name]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)  # COMET to 1e-6, times the weights
    (pair,) = doc["significance"]
    assert {pair["system_a"], pair["system_b"]} == set(systems) and pair["segments"] == N
