"""``combo models fetch|where``: the neural checkpoints the ``comet`` and ``metricx`` metrics read.

Nothing in combo downloads a checkpoint on its own: ``fetch`` is the one step that does, on the user's word, into
the Hugging Face cache that the metrics then read offline.
"""

from __future__ import annotations

import click

from ..extras import CHECKPOINT_KINDS
from .options import Choice


def _kind(name: str, kind: str) -> str:
    if kind != "auto":
        return kind
    return "metricx" if "metricx" in name.lower() else "comet"


@click.group()
def models() -> None:
    """Neural checkpoints (COMET, MetricX): fetch them once, see where they are."""


@models.command(name="fetch")
@click.argument("name")
@click.option("--kind", type=Choice(CHECKPOINT_KINDS), default="auto", show_default=True,
              help="What NAME is (auto: metricx when the name says so, else comet).")
def models_fetch(name: str, kind: str) -> None:
    """Download checkpoint NAME (a Hugging Face name) and what it needs into the Hugging Face cache.

    A COMET checkpoint also needs its encoder's tokenizer and configuration (``pretrained_model`` in its
    hparams.yaml, e.g. xlm-roberta-large); MetricX-23 needs mT5's tokenizer (google/mt5-xl). Prints the
    metric spec that reads it.
    """
    from ..extras import install_hint, require_modules

    require_modules(("huggingface_hub",), "huggingface_hub (to download checkpoints)", install_hint(_kind(name, kind)))
    from huggingface_hub import snapshot_download

    kind = _kind(name, kind)
    log = lambda msg: click.echo(msg, err=True)  # noqa: E731
    log(f"fetching {name} ...")
    folder = _download(snapshot_download, name)
    tokenizer_files = ["*.json", "*.model", "*.txt"]
    if kind == "comet":
        from ..metrics.comet import _hparams

        encoder = _hparams(f"{folder}/hparams.yaml").get("pretrained_model")
        if encoder:
            log(f"fetching the tokenizer and configuration of its encoder {encoder} ...")
            _download(snapshot_download, encoder, allow_patterns=tokenizer_files)
        click.echo(f"comet:model={name}")
    else:
        from ..metrics.metricx import DEFAULT_TOKENIZER

        log(f"fetching mT5's tokenizer {DEFAULT_TOKENIZER} ...")
        _download(snapshot_download, DEFAULT_TOKENIZER, allow_patterns=tokenizer_files)
        qe = ",qe=yes" if "-qe-" in name.lower() else ""
        click.echo(f"metricx:model={name}{qe}")


def _download(snapshot_download, repo_id: str, **kwargs) -> str:
    """huggingface_hub's download of ``repo_id``; a failure (no network, no such repository) is one error line."""
    from ..errors import ResourceMissing

    try:
        return snapshot_download(repo_id=repo_id, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the hub's errors are many; each means "not downloaded"
        raise ResourceMissing(f"checkpoint {repo_id!r} (the download failed: {type(exc).__name__})",
                              "check the name and the network; or download the folder elsewhere and give "
                              "model=PATH") from None


@models.command(name="where")
@click.argument("name")
def models_where(name: str) -> None:
    """The local folder of checkpoint NAME in the Hugging Face cache (exit 2 when it is not there)."""
    from ..metrics.neural import local_folder

    click.echo(str(local_folder(name, "checkpoint")))
