"""Every choice option of the command line reads its values from the module that implements them."""

import sys
from pathlib import Path

import click

from combo import cli


def _choice_options(command, path=()):
    for param in command.params:
        types = param.type.types if isinstance(param.type, click.Tuple) else [param.type]
        for t in types:
            if isinstance(t, click.Choice):
                yield path + (command.name,), param, tuple(t.choices)
    for sub in getattr(command, "commands", {}).values():
        yield from _choice_options(sub, path + (command.name,))


#: The registries' listings: a choice of registered names (criteria, schemes, objectives) is read from these when
#: offered.
REGISTRY_LISTS = (("combo.evaluate.records", ("criterion_names", "accepted_criterion_names", "scheme_names")),
                  ("combo.meta.objectives", ("objective_names",)))


def _module_constants():
    """Every tuple (or dict's keys) held by a module-level name of combo, and what the registries' listing
    functions (:data:`REGISTRY_LISTS`) return now."""
    out = {getattr(sys.modules[module], f)() for module, functions in REGISTRY_LISTS for f in functions}
    for name, module in list(sys.modules.items()):
        if name.startswith("combo.") and name != "combo.cli" and not name.startswith("combo.cli."):
            for value in [getattr(module, attr) for attr in dir(module)]:
                if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
                    out.add(value)
                elif isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
                    out.add(tuple(value))
    return out


def test_choices_other_than_output_formats_are_module_constants():
    import combo.evaluate  # noqa: F401  - the criteria's registry, whatever other tests imported before

    constants = _module_constants()
    options = list(_choice_options(cli.main))
    assert len(options) >= 20
    for where, param, choices in options:
        if param.name == "fmt" and where[-1] != "metrics":  # output formats the CLI itself writes
            continue
        assert choices in constants, (where, param.name, choices)


def test_no_choice_list_is_spelled_out_in_the_cli_except_output_formats():
    sources = [path.read_text(encoding="utf-8") for path in Path(cli.__file__).parent.glob("*.py")]
    assert len(sources) > 1  # the package's modules, not its __init__ alone
    literals = [line.strip() for source in sources for line in source.splitlines()
                if "Choice([" in line]  # click.Choice or the CLI's own Choice
    assert all('"--format", "fmt"' in line for line in literals), literals
