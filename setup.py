"""Compiled parts of combo. Each is optional: where it does not build (no C compiler), the numpy path it
speeds up runs instead, with identical results (tests/test_compiled.py)."""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("combo.metrics.lexical._ter", ["combo/metrics/lexical/_ter.c"], optional=True),
])
