"""The one place combo's version is written: the package, signatures, model files and pyproject.toml read it."""

__version__ = "0.1.0"
