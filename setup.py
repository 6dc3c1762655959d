"""Compiled parts of combo. Each is optional: where it does not build (no C compiler), the numpy path it
speeds up runs instead, with identical results (tests/test_ter.py, tests/test_kernels_compiled.py)."""

import sys

from setuptools import Extension, setup

# Floating-point results must equal the numpy paths to the bit: no fused multiply-adds.
FLAGS = [] if sys.platform == "win32" else ["-ffp-contract=off"]

setup(ext_modules=[
    Extension("combo.metrics.lexical._ter", ["combo/metrics/lexical/_ter.c"], optional=True),
    Extension("combo.analysis._kernels", ["combo/analysis/_kernels.c"], optional=True, extra_compile_args=FLAGS),
    Extension("combo.analysis._trees", ["combo/analysis/_trees.c"], optional=True),
])
