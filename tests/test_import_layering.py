"""combo's dependencies point down: every import (function-local ones included) goes to the same or a lower
layer, and no chain of imports comes back to where it started.

The layers are written here once, lowest first (docs/architecture.md explains them). A module belongs to the
first layer with an entry that is its name or a package above it.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "combo"

LAYERS = [
    ("foundation", ["combo._version", "combo.errors", "combo.options", "combo.budget", "combo.extras",
                    "combo.normalise", "combo.progress"]),
    ("execution", ["combo.parallel", "combo.dask_backend"]),
    ("testbed", ["combo.testbed"]),
    ("io", ["combo.io"]),
    ("analysis", ["combo.analysis"]),
    ("metrics", ["combo.metrics", "combo.catalogue"]),
    ("scoring", ["combo.scoring", "combo.score_files"]),
    ("meta", ["combo.meta"]),
    ("meta runner", ["combo.meta_run"]),
    ("combine", ["combo.combine"]),
    ("evaluate", ["combo.evaluate", "combo.prepare", "combo.metric_unit_tests"]),
    ("report", ["combo.report"]),
    ("interface", ["combo.cli", "combo"]),  # combo.cli: the package of commands, each module in this layer
]

#: Packages kept pure: besides the layer rule, they import none of these modules. meta/ holds statistics as pure
#: functions on arrays; how the work is cut to a memory budget, sent to workers or Dask, and reported as
#: progress belongs to the layer that runs it (combo.meta_run for QUEEN and KING).
PURE = {
    "combo.meta": ["combo.parallel", "combo.dask_backend", "combo.budget", "combo.progress"],
}


def module_files():
    """``{module name: path}`` of every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports_of(name, path, modules):
    """``[(imported module, line)]``: every import of a combo module in ``path``, at any depth of the code.

    ``from X import y`` counts as an import of ``X.y`` when that is a module, else of ``X``.
    """
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "combo"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "combo":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in modules else target, node.lineno))
    return list(dict.fromkeys(found))


def layer_of(module):
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if prefix != "combo" and (module == prefix or module.startswith(prefix + ".")):
                return rank
    return len(LAYERS) - 1 if module == "combo" else None


def import_graph():
    modules = module_files()
    return modules, {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_every_module_has_a_layer():
    modules, _ = import_graph()
    assert [m for m in modules if layer_of(m) is None] == []


def test_no_import_points_to_a_higher_layer():
    modules, graph = import_graph()
    upward = []
    for name, imports in graph.items():
        for target, line in imports:
            if layer_of(target) is not None and layer_of(target) > layer_of(name):
                upward.append(f"{modules[name].relative_to(PACKAGE.parent)}:{line}: {name} "
                              f"({LAYERS[layer_of(name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})")
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


def impure_imports(graph):
    """``[(module, line, target)]`` for every import a :data:`PURE` package may not make."""
    found = []
    for name, imports in graph.items():
        for package, banned in PURE.items():
            if name != package and not name.startswith(package + "."):
                continue
            found += [(name, line, target) for target, line in imports
                      if any(target == b or target.startswith(b + ".") for b in banned)]
    return found


def test_meta_imports_nothing_that_runs_work():
    modules, graph = import_graph()
    found = [f"{modules[name].relative_to(PACKAGE.parent)}:{line}: {name} imports {target}"
             for name, line, target in impure_imports(graph)]
    assert not found, ("meta/ holds pure functions on arrays; budgets, workers and progress belong to "
                       "combo.meta_run:\n" + "\n".join(found))


def test_the_checker_sees_meta_importing_the_execution_layer(tmp_path):
    """A function-local import of the execution layer (or of the budget) in meta/ is caught; meta's own are not."""
    source = tmp_path / "likeness.py"
    source.write_text("def king(segments, jobs=1):\n    from ..parallel import run_tasks\n"
                      "    from .. import budget\n    from .queen import segment_chunks\n", encoding="utf-8")
    modules = {"combo.meta.likeness": source, "combo.parallel": None, "combo.budget": None, "combo.meta.queen": None}
    graph = {"combo.meta.likeness": imports_of("combo.meta.likeness", source, modules),
             "combo.meta_run": [("combo.parallel", 1)]}
    assert impure_imports(graph) == [("combo.meta.likeness", 2, "combo.parallel"),
                                     ("combo.meta.likeness", 3, "combo.budget")]


def strongly_connected(graph):
    """The strongly connected components of ``{node: [(node, line)]}`` (Tarjan 1972), iteratively."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = [t for t, _ in graph[node] if t in graph]
            for j in range(i, len(targets)):
                target = targets[j]
                if target not in index:
                    work += [(node, j + 1), (target, 0)]
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    components.append(component)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return components


def test_no_import_cycle():
    modules, graph = import_graph()
    cycles = []
    for component in strongly_connected(graph):
        if len(component) > 1:
            cycles += [f"{modules[m].relative_to(PACKAGE.parent)}:{line}: {m} imports {target}"
                       for m in sorted(component) for target, line in graph[m] if target in component]
            cycles.append("")
    assert not cycles, "modules that import each other (directly or through others):\n" + "\n".join(cycles)


def test_the_checker_sees_function_local_imports(tmp_path):
    """The parser finds an import hidden in a function body (how cycles hide) and resolves relative imports."""
    source = tmp_path / "learn.py"
    source.write_text("import os\n\ndef load():\n    from ..metrics.registry import get_metric\n"
                      "    from .. import errors\n    return get_metric\n", encoding="utf-8")
    modules = {"combo.combine.learn": source, "combo.metrics.registry": None, "combo.errors": None}
    assert imports_of("combo.combine.learn", source, modules) == [("combo.metrics.registry", 4),
                                                                  ("combo.errors", 5)]
    assert layer_of("combo.metrics.registry") < layer_of("combo.combine.learn")
    graph = {"a": [("b", 1)], "b": [("c", 2)], "c": [("a", 3)], "d": [("a", 4)], "e": [("e", 5)]}
    assert sorted(map(sorted, strongly_connected(graph))) == [["a", "b", "c"], ["d"], ["e"]]
