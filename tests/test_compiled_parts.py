"""The compiled parts (TER's shift search, the tree kernels, the tree builders) are built wherever a C compiler is
found, so that their tests run instead of skipping (docs/dependencies.md, "Compiled parts")."""

import shutil
import sysconfig

import pytest

from combo.analysis import kernels, trees
from combo.metrics.lexical import ter_alignment


def test_compiled_parts_are_built_where_a_c_compiler_is_found():
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}): the Python and numpy paths run")
    missing = [name for name, module in (("combo.metrics.lexical._ter", ter_alignment._compiled),
                                         ("combo.analysis._kernels", kernels._compiled),
                                         ("combo.analysis._trees", trees._compiled)) if module is None]
    assert not missing, (f"{', '.join(missing)} not importable from {kernels.__file__}: install with "
                         "'pip install -e .' (builds them beside the sources) or run "
                         "'python setup.py build_ext --inplace'")
