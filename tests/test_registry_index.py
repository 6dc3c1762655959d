"""The registry's index of metric modules (``combo.metrics.registry.module_index``, read from the sources) finds
every metric the modules register, and a lookup through it imports only the module that registers the metric."""

import json
import subprocess
import sys
from pathlib import Path

from combo.metrics import registry

ROOT = Path(__file__).resolve().parents[1]


def registered_modules():
    """``{name: module under combo.metrics}`` of every metric the package's modules register."""
    registry._discover()
    prefix = "combo.metrics."
    return {cls.name: cls.__module__[len(prefix):] for cls in registry._REGISTRY.values()
            if cls.__module__.startswith(prefix)}


def test_index_names_every_registered_metric_and_its_module():
    found = registered_modules()
    index = {name: module for name, module in registry.module_index().values()}
    missing = {name: module for name, module in found.items() if name not in index}
    assert not missing, f"register these with an @register(\"name\") line of their own: {missing}"
    assert index == found


def test_list_metrics_is_the_registry_after_discovery():
    found = registered_modules()
    assert set(found) <= set(registry.list_metrics())
    assert registry.list_metrics() == sorted(cls.name for cls in registry._REGISTRY.values())


def _fresh(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_lookup_imports_only_the_metrics_module():
    code = ("import json, sys\n"
            "from combo.metrics.registry import metric_class, list_metrics\n"
            "names = list_metrics()\n"
            "cls = metric_class('TER')\n"
            "mods = sorted(m for m in sys.modules if m.startswith('combo.metrics.') and m.count('.') >= 2)\n"
            "print(json.dumps({'cls': cls.name, 'mods': mods, 'sparse': 'scipy.sparse' in sys.modules,"
            " 'n': len(names)}))")
    got = _fresh(code)
    assert got["cls"] == "ter"
    assert got["n"] == len(registry.module_index())
    registering = {f"combo.metrics.{m}" for _, m in registry.module_index().values()}
    assert [m for m in got["mods"] if m in registering] == ["combo.metrics.lexical.ter"], got["mods"]
    assert not got["sparse"]


def test_unknown_name_still_discovers_and_suggests():
    code = ("import json\n"
            "from combo.errors import OptionError\n"
            "from combo.metrics.registry import metric_class\n"
            "try:\n"
            "    metric_class('chfr')\n"
            "except OptionError as err:\n"
            "    print(json.dumps({'msg': str(err)}))\n")
    assert "chrf" in _fresh(code)["msg"]


def test_a_metric_registered_outside_the_package_is_found_and_listed():
    from combo.metrics import Metric, register

    @register("index-test-metric")
    class _Plugin(Metric):  # noqa: F841 - registered by the decorator
        pass

    try:
        assert registry.metric_class("Index-Test-Metric") is _Plugin
        assert "index-test-metric" in registry.list_metrics()
    finally:
        del registry._REGISTRY["index-test-metric"]
