"""The options the commands share, declared once: choices that name the close values, the test-bed options (and
:func:`load_testbed`, which reads them), ``-m`` lists, ``--jobs``, ``--cache``, the scale options, and the
meta-evaluation options of evaluate, search and report (:class:`MetaOptions`, :func:`meta_options`,
:func:`search_options`)."""

from __future__ import annotations

import functools
from dataclasses import fields
from pathlib import Path
from typing import List, Optional, Sequence

import click

from ..errors import OptionError
from ..io.fetch import example_path
from ..metrics.registry import is_model_file, shipped_model
from ..meta.queen import TRIPLES
from ..testbed import TREE_KINDS
from ..meta.likeness import KING_TIES
from ..meta.pairwise import TIE_RULES, VARIANTS as KENDALL_VARIANTS
from ..parallel import BACKENDS
from ..prepare import MetaOptions

EXAMPLE = "example"
SAMPLE = "dstc7-sample"  # the first-run slice, cut from the DSTC7 release in the data home (combo.io.dstc7)


class Choice(click.Choice):
    """click's Choice whose refusal of a mistyped value gives the close names, as every other name combo reads."""

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            from ..options import did_you_mean

            hint = did_you_mean(str(value), [str(c) for c in self.choices])
            self.fail(f"{str(value)!r} is not one of {', '.join(map(repr, self.choices))}"
                      + (f"; {hint}" if hint else ""), param, ctx)


class RegistryChoice(Choice):
    """A Choice whose values are read when they are needed (converting a value, --help, a refusal), from a
    registry such as combo.evaluate's criteria: a criterion registered after this module was imported is offered."""

    def __init__(self, names):
        self._names = names  # a function returning the values
        super().__init__(())

    @property
    def choices(self):
        return tuple(self._names())

    @choices.setter
    def choices(self, value):  # click.Choice.__init__ sets it; the values come from ``names``
        pass


class RegistryHelpOption(click.Option):
    """An option whose help is written when --help prints it (``help_from()``): lists read from a registry."""

    def __init__(self, *args, help_from=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.help_from = help_from

    def get_help_record(self, ctx):
        if self.help_from is not None:
            self.help = self.help_from()
        return super().get_help_record(ctx)


def load_testbed(spec: str, lp: Optional[str] = None, options: Sequence[str] = ()):
    """The test bed ``--testbed`` names (``--lp``, ``--testbed-option``), with the ``--language`` and ``--trees``
    of the command being run (:func:`testbed_options`)."""
    from ..io import load_testbed as read_testbed
    from ..options import split_key_values

    path = example_path() if spec == EXAMPLE else spec if spec == SAMPLE else Path(spec)  # the reader builds SAMPLE
    kwargs = split_key_values("--testbed-option", options)
    if lp is not None:
        kwargs["lp"] = lp
    testbed = read_testbed(path, **kwargs)
    ctx = click.get_current_context(silent=True)
    language = ctx.meta.get("combo.language") if ctx is not None else None
    if language is not None:  # --language: overrides what the reader knows; "any" makes it unknown
        testbed.metadata["target_language"] = None if language == "any" else language
    if ctx is not None and ctx.meta.get("combo.trees"):  # --trees: the parses of this test bed's texts
        testbed.trees.update(ctx.meta["combo.trees"])
    return testbed


def _supply_trees(ctx, param, values) -> None:
    """``--trees KIND TEXTS TREES``: read parses from any parser now (a bad file fails before any work); they are
    attached to the test bed this command loads (:func:`load_testbed`), never kept in the process."""
    from ..analysis.supplied import supply_tree_files
    from ..testbed import SuppliedTrees

    trees = ctx.meta.setdefault("combo.trees", SuppliedTrees())
    for kind, texts, tree_file in values:
        supply_tree_files(trees, kind, texts, tree_file)


def set_language(ctx, param, value) -> None:
    """``--language LANG``: the candidates' language, checked against each metric's (``any``: no check)."""
    if value is not None:
        from ..testbed import primary_language

        code = primary_language(value)
        if code is None or not (code == "any" or (code.isalpha() and code.isascii())):
            raise click.BadParameter(f"{value!r} is not a language code such as 'en' or 'de', nor 'any'")
        ctx.meta["combo.language"] = code


def testbed_options(func):
    """The options every command that reads a test bed shares."""
    func = click.option("--language", default=None, expose_value=False, callback=set_language, metavar="LANG",
                        help="Language of the candidates and references (ISO 639-1, e.g. de), overriding what "
                             "the reader knows; metrics that cannot read it are refused. 'any': no check.")(func)
    func = click.option("--trees", type=(Choice(TREE_KINDS),
                                         click.Path(dir_okay=False), click.Path(dir_okay=False)),
                        multiple=True, expose_value=False, callback=_supply_trees,
                        metavar="KIND TEXTS TREES",
                        help="Trees from any parser for the lines of TEXTS (a hypothesis or reference file): "
                             "Penn bracketed one per line, or CoNLL-U (.conllu). Repeatable.")(func)
    func = click.option("--testbed-option", "testbed_options", multiple=True, metavar="KEY=VALUE",
                        help="Option for the test-bed reader (e.g. judgments=crowd), repeatable.")(func)
    func = click.option("--lp", default=None, help="Language pair, for folders holding several (e.g. de-en).")(func)
    func = click.option("--testbed", "testbed_path", required=True,
                        help="A .jsonl file, a supported folder layout (see docs/testbeds.md), "
                             "or a bundled one: 'dstc7-sample' (real DSTC7 data) or 'example'.")(func)
    return func


def comma_separated(text: str, option: str, what: str, where: str) -> List[str]:
    """The names of ``text``, separated by commas and stripped. An empty one (``a,,b``, ``a,``, ``''``) is an error
    naming ``option``, not a name quietly left out; ``where`` tells where the names are listed."""
    names = [x.strip() for x in text.split(",")]
    if "" in names:
        raise OptionError(f"{option} {text!r} names an empty {what}; give each {what} a name, with commas only "
                          f"between names {where}")
    return names


def metric_list(metrics: Sequence[str]) -> List[str]:
    """The metric specs of ``-m`` words: ``bleu chrf`` and ``bleu,chrf`` alike, ``name:key=v,key=v`` whole."""
    out: List[str] = []
    for m in metrics:
        out.extend([m.strip()] if ":" in m else comma_separated(m, "-m", "metric", "(`combo metrics` lists them)"))
    return out


class MetricsOption(click.Option):
    """``-m/--metrics`` taking a list: ``-m bleu chrf ter``, as well as ``-m bleu -m chrf`` and ``-m bleu,chrf``.

    Click has no ``nargs=-1`` for options, so the option's parser step is wrapped to take the words that
    follow it, up to the next option. In a command with positional arguments (``combo mutt CORRUPTIONS``)
    it takes only words that look like metric specs (a registered name, ``name:options``, a model file,
    ``@set``), so the argument is left for the command.
    """

    def add_to_parser(self, parser, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        positional = any(isinstance(p, click.Argument) for p in ctx.command.params)
        for name in self.opts:
            option = parser._long_opt.get(name) or parser._short_opt.get(name)
            if option is None:
                continue
            process = option.process

            def take_list(value, state, process=process):
                process(value, state)
                while state.rargs and not state.rargs[0].startswith("-") and (
                        not positional or _looks_like_metric(state.rargs[0])):
                    process(state.rargs.pop(0), state)

            option.process = take_list


def _looks_like_metric(word: str) -> bool:
    from ..metrics.registry import SHORTHAND, list_metrics

    head = word.partition(":")[0].strip().lower()
    return (is_model_file(word) or word.startswith("@") or head in SHORTHAND
            or all(x.partition(":")[0].strip().lower() in list_metrics() for x in head.split(",") if x))


def _set_backend(ctx, param, value) -> None:
    """``--backend`` / ``--scheduler``: where parallel work runs (combo.parallel.config)."""
    from ..parallel import config, reset

    if param.name == "backend":
        ctx.meta["combo.backend"] = value
        if value is None:
            reset()  # each command starts local unless told (the setting is process-wide)
    if param.name == "scheduler" and value is not None:
        ctx.meta["combo.scheduler"] = value
    backend, scheduler = ctx.meta.get("combo.backend"), ctx.meta.get("combo.scheduler")
    if backend is not None and (backend == "local" or scheduler is not None or param.name == "scheduler"):
        reset()
        config(backend=backend, scheduler=scheduler)


def scale_options(func):
    """``--memory``, ``--backend`` and ``--scheduler``: the bounds and the place of large runs (docs/scale.md)."""
    func = click.option("--scheduler", default=None, expose_value=False, is_eager=False, callback=_set_backend,
                        metavar="ADDRESS", help="Dask scheduler address for --backend dask (tcp://host:8786).")(func)
    func = click.option("--backend", type=Choice(BACKENDS), default=None, expose_value=False,
                        callback=_set_backend,
                        help="Run metrics and chunks of KING segments on local processes (--jobs) or on "
                             "a Dask cluster (needs --scheduler; pip install 'combo-eval[dask]').")(func)
    func = click.option("--memory", default="2G", show_default=True, metavar="SIZE",
                        help="Memory budget (e.g. 2G, 500M): rows, text pairs and KING segments are processed in "
                             "chunks that fit it; a budget too small for one segment is an error.")(func)
    return func


def _score_cache_folder(ctx, param, value) -> Optional[str]:
    """``--cache``: the folder given, else the default beside the analysis cache (None when caching is off)."""
    if value is not None:
        return value
    from ..scoring import default_score_cache

    folder = default_score_cache()
    return None if folder is None else str(folder)


class _Jobs(click.ParamType):
    """``--jobs``: a number of worker processes, or -1 for one per core (as scikit-learn's ``n_jobs``)."""

    name = "N"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            number = value
        else:
            try:
                number = int(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a whole number: give a number of worker processes (e.g. 2), or -1 "
                          "for one per core", param, ctx)
        from ..parallel import valid_jobs

        if valid_jobs(number):
            return number
        self.fail(f"{number} worker processes: give 1 or more, or -1 for one per core", param, ctx)


def jobs_option(help: str = "Worker processes (-1: one per core)."):
    """``--jobs``/``-j`` of every command that runs tasks in parallel."""
    return click.option("--jobs", "-j", type=_Jobs(), default=1, show_default=True, help=help)


def score_cache_option(name: str = "cache"):
    """``--cache`` (the parameter ``name``) of every command that scores, and of ``combo cache info|clear``."""
    return click.option("--cache", name, type=click.Path(file_okay=False), default=None,
                        callback=_score_cache_folder,
                        help="Folder caching each metric's scores between runs, written as each metric finishes "
                             "(default: scores/ in $COMBO_CACHE_DIR or ~/.cache/combo, beside the analysis cache; "
                             "COMBO_SCORE_CACHE=off: none; see docs/trust.md).")


#: each meta-evaluation option's click declaration, by its MetaOptions field (``memory``: :func:`scale_options`,
#: which also declares --backend and --scheduler; ``progress``: ``not --quiet``, declared by each command)
META_OPTIONS = {
    "triples": click.option("--triples", type=Choice(TRIPLES),
                            default="distinct", show_default=True, help="QUEEN's reference-triple convention."),
    "seed": click.option("--seed", type=int, default=0, show_default=True),
    "aspect": click.option("--aspect", default=None, help="Human judgment aspect (default: the test bed's main one)."),
    "kendall_variant": click.option("--kendall-variant", type=Choice(tuple(KENDALL_VARIANTS)), default="wmt12",
                                    show_default=True),
    "kendall_ties": click.option("--kendall-ties", type=Choice(TIE_RULES), default=None,
                                 help="Override the variant's metric-tie rule."),
    "king_ties": click.option("--king-ties", type=Choice(KING_TIES), default="count",
                              show_default=True,
                              help="KING: a reference tied with the best candidate counts 1 (the paper's >=), "
                                   "1/2 or 0."),
    "include_human": click.option("--include-human", is_flag=True,
                                  help="Score human translations that a test bed lists as systems (mt-metrics-eval's "
                                       "outputs named after an unused reference) as systems, as WMT23 does for "
                                       "he-en's refA."),
    "jobs": jobs_option(),
    "held_out": click.option("--king-sample", "held_out", type=click.IntRange(min=2), default=None, metavar="S",
                             help="KING from S held-out references per segment with more (drawn with --seed): an "
                                  "unbiased estimate with a 95% sampling interval, for segments too large for the "
                                  "exact count."),
}


def gather_meta(func):
    """Hand ``func`` its meta-evaluation options as one ``meta`` (:class:`MetaOptions`) instead of one parameter
    each; ``progress`` is ``not quiet`` (``quiet`` is still passed)."""
    names = [f.name for f in fields(MetaOptions) if f.init and f.name != "progress"]

    @functools.wraps(func)
    def command(*args, **kwargs):
        meta = MetaOptions(**{n: kwargs.pop(n) for n in names}, progress=not kwargs.get("quiet", False))
        return func(*args, meta=meta, **kwargs)

    return command


def meta_options(func):
    """Declare the meta-evaluation options (:data:`META_OPTIONS`, then --memory, --backend and --scheduler) and
    hand the command one ``meta`` (:class:`MetaOptions`) holding them."""
    func = gather_meta(func)
    for name in reversed(list(META_OPTIONS)):
        func = META_OPTIONS[name](func)
    return scale_options(func)


def _parse_features(ctx, param, values) -> None:
    """``--feature NAME=SPEC``: a tuned model's feature bound to scores or a metric (combo.metrics.binding)."""
    if values:
        from ..metrics.binding import parse_bindings

        ctx.meta["combo.features"] = parse_bindings(values)


def feature_option(func):
    """``--feature NAME=SPEC`` (repeatable), and the command run with those bindings (:func:`bound_features`): a
    binding that no model of ``--model`` or ``-m MODEL.json`` has as a feature is refused first."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        from ..metrics.binding import bound_features, check_all_used
        from ..metrics.tuned import load_model

        features = click.get_current_context().meta.get("combo.features") or {}
        if features:
            models = [kwargs["model_path"]] if kwargs.get("model_path") else [
                m.strip() for m in kwargs.get("metrics") or () if is_model_file(m)
                and (Path(m.strip()).is_file() or shipped_model(m))]
            check_all_used(features, {m: load_model(m, features={}).model.specs for m in models})
        with bound_features(features):
            return func(*args, **kwargs)

    return click.option("--feature", "features", multiple=True, metavar="NAME=SPEC", expose_value=False,
                        callback=_parse_features,
                        help="Bind a tuned model's feature: to scores you hold (mtme:XCOMET-XL=scores:x.tsv) or "
                             "to a metric combo computes (mtme:COMET=comet:model=Unbabel/wmt22-comet-da). "
                             "Repeatable.")(run)


def search_options(func):
    """evaluate's and search's options: the meta-evaluation ones (:data:`META_OPTIONS`, handed over as one
    ``meta``) in their places among the others."""
    options = [
        click.option("--metrics", "-m", cls=MetricsOption, multiple=True,
                     help="Candidate metrics or sets such as @lexical: -m bleu chrf ter, or repeated -m "
                          "(default: @search)."),
        META_OPTIONS["triples"],
        click.option("--min-refs", type=click.IntRange(min=1), default=None,
                     help="Skip (and count) segments with fewer references."),
        click.option("--max-refs", type=click.IntRange(min=1), default=None,
                     help="Cap references per segment with a seeded sample (DSTC7 has up to 1,009)."),
        META_OPTIONS["seed"],
        META_OPTIONS["aspect"],
        META_OPTIONS["kendall_variant"],
        META_OPTIONS["kendall_ties"],
        META_OPTIONS["king_ties"],
        META_OPTIONS["include_human"],
        META_OPTIONS["jobs"],
        score_cache_option(),
        click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True),
        click.option("--out", type=click.Path(dir_okay=False), default=None),
        click.option("--quiet", "-q", is_flag=True,
                     help="No progress (a bar on a terminal, a line every 10 s in a log)."),
        META_OPTIONS["held_out"],
        click.option("--king-segments", type=click.IntRange(min=2), default=None, metavar="N",
                     help="KING from a simple random sample of N segments (drawn with --seed before scoring, so "
                          "only their reference pairs are scored): an unbiased estimate of the whole test bed's "
                          "KING with a 95% two-stage sampling interval (docs/scale.md)."),
    ]
    assert sum(opt in options for opt in META_OPTIONS.values()) == len(META_OPTIONS)  # each declared here once
    func = feature_option(gather_meta(func))
    for opt in reversed(options):
        func = opt(func)
    return scale_options(testbed_options(func))
