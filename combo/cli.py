"""The ``combo`` command line: thin wrappers that parse arguments, call the API and print.

Every error a user can cause is a :class:`combo.errors.ComboError`: it is
printed as one line on stderr and the command exits with code 2 (a traceback
only with ``--debug``). Output files are written whole or not at all.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import sys
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import click

from ._version import __version__
from .errors import ComboError, InputError, OptionError
from .io.fetch import example_path  # noqa: F401 - the public name is combo.example_path
from .io.text import check_writable, write_text_atomic
from .evaluate import KING_TIE_WARNING
from .metrics.registry import is_model_file
from .metrics.sets import SEARCH, expand_metric_sets, training_default
# The values of every choice option, read from the module that implements them.
from .catalogue import FORMATS as CATALOGUE_FORMATS
from .metrics.tuned import CV_BY, JUDGMENTS, METHOD_NAMES, NORMALISE, OBJECTIVES, OUTPUT_CHOICES, REGRESSORS
from .meta.queen import TRIPLES
from .combine.search import STRATEGIES
from .testbed import TREE_KINDS
from .io.mutt import TRIAL_SETS
from .meta.likeness import KING_TIES
from .metric_unit_tests import SCHEMES as UNIT_TEST_SCHEMES
from .meta.pairwise import TIE_RULES, VARIANTS as KENDALL_VARIANTS
from .parallel import BACKENDS
from .scoring import LEVELS

EXAMPLE = "example"
SAMPLE = "dstc7-sample"  # the first-run slice, cut from the DSTC7 release in the data home (combo.io.dstc7)


class Choice(click.Choice):
    """click's Choice whose refusal of a mistyped value gives the close names, as every other name combo reads."""

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            from .options import did_you_mean

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


class MeaningsCommand(click.Command):
    """search and evaluate: their --help ends with what each registered criterion and scheme measures, read when
    printed (:func:`_meanings_help`)."""

    @property
    def epilog(self):
        return _meanings_help()

    @epilog.setter
    def epilog(self, value):  # click.Command.__init__ sets it; the text comes from the registries
        pass


def _criterion_names() -> Tuple[str, ...]:
    """Every name a criterion option accepts (the criteria, then their old names), read from the registry."""
    from .evaluate import CRITERION_NAMES

    return CRITERION_NAMES


def _criteria() -> Tuple[str, ...]:
    """The registered criteria (without their old names)."""
    from .evaluate import CRITERIA

    return CRITERIA


def _schemes() -> Tuple[str, ...]:
    """The registered combination schemes."""
    from .evaluate import SCHEMES

    return SCHEMES


def _today_name(ctx, param, value):
    """A criterion option's callback: an old name (kendall) becomes today's (wmt_kendall)."""
    from .evaluate import criterion_name

    return None if value is None else criterion_name(value)


def _reading_references(schemes: Sequence[str]) -> List[str]:
    """The schemes among ``schemes`` that read reference-against-reference scores (QUEEN)."""
    from .evaluate import scheme_records

    return [s.name for s in scheme_records() if s.needs_references and s.name in schemes]


def _meaning(criterion: str) -> str:
    """What ``criterion`` measures and what a good value is, in one line."""
    from .evaluate import get_criterion

    return get_criterion(criterion).meaning


def _load_testbed(spec: str, lp: Optional[str] = None, options: Sequence[str] = ()):
    from .io import load_testbed

    path = example_path() if spec == EXAMPLE else spec if spec == SAMPLE else Path(spec)  # load_testbed builds SAMPLE
    from .options import split_key_values

    kwargs = split_key_values("--testbed-option", options)
    if lp is not None:
        kwargs["lp"] = lp
    testbed = load_testbed(path, **kwargs)
    ctx = click.get_current_context(silent=True)
    language = ctx.meta.get("combo.language") if ctx is not None else None
    if language is not None:  # --language: overrides what the reader knows; "any" makes it unknown
        testbed.metadata["target_language"] = None if language == "any" else language
    if ctx is not None and ctx.meta.get("combo.trees"):  # --trees: the parses of this test bed's texts
        testbed.trees.update(ctx.meta["combo.trees"])
    return testbed


def _supply_trees(ctx, param, values) -> None:
    """``--trees KIND TEXTS TREES``: read parses from any parser now (a bad file fails before any work); they are
    attached to the test bed this command loads (:func:`_load_testbed`), never kept in the process."""
    from .analysis.supplied import supply_tree_files
    from .testbed import SuppliedTrees

    trees = ctx.meta.setdefault("combo.trees", SuppliedTrees())
    for kind, texts, tree_file in values:
        supply_tree_files(trees, kind, texts, tree_file)


def _set_language(ctx, param, value) -> None:
    """``--language LANG``: the candidates' language, checked against each metric's (``any``: no check)."""
    if value is not None:
        from .testbed import primary_language

        code = primary_language(value)
        if code is None or not (code == "any" or (code.isalpha() and code.isascii())):
            raise click.BadParameter(f"{value!r} is not a language code such as 'en' or 'de', nor 'any'")
        ctx.meta["combo.language"] = code


def testbed_options(func):
    """The options every command that reads a test bed shares."""
    func = click.option("--language", default=None, expose_value=False, callback=_set_language, metavar="LANG",
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


def write_output(text: str, out: Optional[str]) -> None:
    """Print ``text``, or write it to ``out`` atomically (a temporary file renamed into place)."""
    if out is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    write_text_atomic(text, out)


def check_outputs(**paths: Optional[str]) -> None:
    """Refuse, before any work, output files that cannot be written, and two outputs naming one file.

    ``paths``: option name (``out``, ``report``) -> the path given (None: not given). Each folder must exist and
    take a new file (probed with a temporary file, removed at once, as the final write makes one); the same
    messages as the write itself (:func:`combo.io.text.write_text_atomic`) gives, only before the scoring.
    """
    import os

    given = {f"--{name}": path for name, path in paths.items() if path is not None}
    seen = {}
    for option, path in given.items():
        where = os.path.realpath(path)
        if where in seen:
            target = Path(path)
            other = target.with_name(f"{target.stem}-{option[2:]}{target.suffix or '.html'}")
            raise OptionError(f"{seen[where]} and {option} both name {path}: one would overwrite the other "
                              f"(fix: give {option} another file, e.g. {option} {other})")
        seen[where] = option
        check_writable(path)


def write_outputs(text: Optional[str], out: Optional[str], page: Optional[str] = None,
                  report_path: Optional[str] = None) -> None:
    """Write the HTML report (when asked for) and then the result ``text`` (``--out``, else stdout; None: none).

    The report goes first: when it cannot be written, no ``--out`` file and no output are left behind; when the
    result cannot be written, a report this run created is removed again.
    """
    import os

    if page is None:
        if text is not None:
            write_output(text, out)
        return
    existed = os.path.lexists(report_path)
    write_text_atomic(page, report_path)
    try:
        if text is not None:
            write_output(text, out)
    except BaseException:
        if not existed and os.path.exists(report_path):
            os.unlink(report_path)
        raise
    click.echo(f"report written to {report_path} ({len(page.encode('utf-8')) / 1e6:.2f} MB)", err=True)


def _table(records: List[dict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(records, ensure_ascii=False, indent=1) + "\n"
    buf = io.StringIO()
    if not records:
        return ""
    writer = csv.DictWriter(buf, fieldnames=list(records[0]), delimiter="\t" if fmt == "tsv" else ",",
                            lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({k: (f"{v:.6f}" if isinstance(v, float) else v) for k, v in r.items()})
    return buf.getvalue()


def one_line(message: str) -> str:
    """An error message on one line (a multi-line fix is joined with '; ')."""
    return "; ".join(part.strip() for part in str(message).splitlines() if part.strip())


class ComboGroup(click.Group):
    """Turns ComboError and click's usage errors into one line on stderr and exit code 2.

    Any other exception is a bug: one line naming it and ``--debug`` (exit 1), never a traceback
    unless ``--debug`` is given.
    """

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ComboError as err:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"combo: error: {one_line(err)}", err=True)
            ctx.exit(err.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort, KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as err:  # noqa: BLE001 - a bug: one line, the traceback only with --debug
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"combo: internal error: {type(err).__name__}: {one_line(err)[:300]} "
                       "(rerun with --debug for the traceback, and please report it)", err=True)
            ctx.exit(1)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as err:
            where = f" (see {err.ctx.command_path} --help)" if err.ctx is not None else ""
            click.echo(f"combo: error: {one_line(err.format_message())}{where}", err=True)
            sys.exit(err.exit_code)
        except click.ClickException as err:
            click.echo(f"combo: error: {one_line(err.format_message())}", err=True)
            sys.exit(err.exit_code)
        except click.Abort:
            click.echo("combo: aborted", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=ComboGroup)
@click.version_option(__version__, prog_name="combo")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Heterogeneous MT/NLG evaluation: compute, combine and meta-evaluate metrics."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _metric_list(metrics: Sequence[str]) -> List[str]:
    out: List[str] = []
    for m in metrics:
        # allow "bleu chrf" and "bleu,chrf" alike, but keep "name:key=v,key=v" specs whole
        if ":" in m:
            out.append(m)
        else:
            out.extend(x for x in m.split(",") if x)
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
    from .metrics.registry import SHORTHAND, list_metrics

    head = word.partition(":")[0].strip().lower()
    return (is_model_file(word) or word.startswith("@") or head in SHORTHAND
            or all(x.partition(":")[0].strip().lower() in list_metrics() for x in head.split(",") if x))


def _set_backend(ctx, param, value) -> None:
    """``--backend`` / ``--scheduler``: where parallel work runs (combo.parallel.config)."""
    from .parallel import config, reset

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
    from .scoring import default_score_cache

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
        from .parallel import valid_jobs

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



@dataclass
class MetaOptions:
    """The meta-evaluation options of evaluate, search and report (declared once by :func:`meta_options`), and
    the :class:`combo.evaluate.MetaEvaluator` they build (:meth:`evaluator`)."""

    aspect: Optional[str] = None
    triples: str = "distinct"
    kendall_variant: str = "wmt12"
    kendall_ties: Optional[str] = None
    king_ties: str = "count"
    include_human: bool = False
    held_out: Optional[int] = None
    memory: Optional[str] = None
    seed: int = 0
    jobs: int = 1
    progress: bool = False

    def evaluator(self, tb, table, refs, command: Optional[str] = None):
        """The MetaEvaluator of one scored test bed with these options (``command``: whose options its
        messages' fixes name)."""
        from . import evaluate  # looked up when called (a test may stand in for MetaEvaluator)

        return evaluate.MetaEvaluator(tb, table, refs, command=command, **asdict(self))  # fields: its parameters


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


def _gather_meta(func):
    """Hand ``func`` its meta-evaluation options as one ``meta`` (:class:`MetaOptions`) instead of one parameter
    each; ``progress`` is ``not quiet`` (``quiet`` is still passed)."""
    names = [f.name for f in fields(MetaOptions) if f.name != "progress"]

    @functools.wraps(func)
    def command(*args, **kwargs):
        meta = MetaOptions(**{n: kwargs.pop(n) for n in names}, progress=not kwargs.get("quiet", False))
        return func(*args, meta=meta, **kwargs)

    return command


def meta_options(func):
    """Declare the meta-evaluation options (:data:`META_OPTIONS`, then --memory, --backend and --scheduler) and
    hand the command one ``meta`` (:class:`MetaOptions`) holding them."""
    func = _gather_meta(func)
    for name in reversed(list(META_OPTIONS)):
        func = META_OPTIONS[name](func)
    return scale_options(func)


@main.command()
@testbed_options
@click.option("--metrics", "-m", cls=MetricsOption, multiple=True, default=("bleu", "chrf", "ter"), show_default=True,
              help="Metric names or sets such as @lexical: -m bleu chrf ter, or repeated -m; "
                   "options as name:key=value,key=value.")
@click.option("--level", type=Choice(LEVELS), default="system", show_default=True)
@click.option("--format", "fmt", type=Choice(["tsv", "csv", "json"]), default="tsv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write here instead of stdout.")
@jobs_option("Worker processes (-1: one per core): metrics, and chunks of rows of a large test bed, are scored "
             "in parallel.")
@score_cache_option()
@click.option("--quiet", "-q", is_flag=True, help="No progress (a bar on a terminal, a line every 10 s in a log).")
@scale_options
def score(testbed_path: str, lp: Optional[str], testbed_options: Sequence[str], metrics: Sequence[str],
          level: str, fmt: str, out: Optional[str], jobs: int, cache: Optional[str], quiet: bool,
          memory: str) -> None:
    """Score every system of a test bed: system-level (corpus) or segment-level scores."""
    from .scoring import score_testbed

    check_outputs(out=out)
    tb = _load_testbed(testbed_path, lp, testbed_options)
    table = score_testbed(tb, _metric_list(metrics), jobs=jobs, progress=not quiet,
                          cache_dir=cache, memory=memory)
    # what the scores leave out (members of @set:available, candidates a scores file has no score for): a "notes"
    # list in JSON (when there is one); beside TSV and CSV, which are data, "note:" lines on stderr
    notes = list(table.metadata.get("notes") or []) + [
        f"{name}: no score for {_count(n, 'candidate')} (segment level: nan in TSV and CSV, null in JSON; system level: from "
        "the scores given)" for name, n in (table.metadata.get("missing_scores") or {}).items()]
    if fmt == "json":
        doc = _clean(json.loads(table.to_json()))  # NaN (no score) is null: json.dumps would write invalid NaN
        text = json.dumps({**doc, "notes": notes} if notes else doc, ensure_ascii=False, indent=1) + "\n"
    else:
        text = _table(table.to_records(level), fmt)
    write_output(text, out)
    if fmt != "json":
        for note in notes:
            click.echo(f"note: {note}", err=True)
    if not quiet:
        where = table.metadata.get("provenance", {})
        for name, sig in zip(table.metrics, table.signatures):
            click.echo(f"# {name}: {sig}" + (f"|{where[name]}" if where.get(name) else ""), err=True)


SEARCH_METRICS = SEARCH  # the @search set (combo.metrics.sets): combo search's and combo report's default


def _available(metrics: Sequence[str]) -> Tuple[List[str], List[str]]:
    """Split metric specs into those usable here and those whose resources are missing (or not registered)."""
    from .errors import ResourceMissing
    from .metrics.registry import list_metrics
    from .scoring import resolve_metric

    known = set(list_metrics())
    ok, missing = [], []
    for spec in metrics:
        if not is_model_file(spec) and spec.partition(":")[0].lower() not in known:
            missing.append(spec)
            continue
        try:
            resolve_metric(spec).check_resources()
            ok.append(spec)
        except ResourceMissing:
            missing.append(spec)
    return ok, missing


def _missing_notes(missing: Sequence[str]) -> List[str]:
    """One note per missing resource: the metrics left out and the command that installs it."""
    from .errors import ResourceMissing
    from .metrics.registry import get_metric

    fixes: dict = {}
    for spec in missing:
        try:
            get_metric(spec).check_resources()
            fix = "see combo metrics"
        except ResourceMissing as err:
            fix = f"{err.resource}: {err.install}"
        except ComboError as err:
            fix = one_line(err)
        fixes.setdefault(fix, []).append(spec)
    return [f"left out (resource missing here): {', '.join(specs)} (fix: {fix})" for fix, specs in fixes.items()]


def _readable(specs: Sequence[str], testbeds) -> Tuple[List[str], List[str]]:
    """Split a default metric set into the metrics that read every test bed's language and the others."""
    from .scoring import reads_language, resolve_metric

    languages = {tb.target_language for tb in testbeds} - {None}
    foreign = [s for s in specs if not all(reads_language(resolve_metric(s), lang) for lang in languages)]
    return [s for s in specs if s not in foreign], foreign


def _in_sample_notes(specs: Sequence[str], testbed) -> List[str]:
    """A note for each tuned metric (model file) trained on this test bed: its figures here are in-sample."""
    from .scoring import resolve_metric

    notes = []
    for spec in specs:
        if is_model_file(spec):
            how = resolve_metric(spec).trained_on(testbed)
            if how:
                notes.append(f"{spec} was trained on {how}: its figures here are in-sample, not held out")
    return notes


class Asked:
    """What a command asked for: a refusal's fix names this command's options and an alternative that works.

    ``criteria``: search's ``--criterion``, or the ``--criteria`` of evaluate and report (empty: report's
    default, every criterion the test bed supports); ``schemes``: search's ``--scheme`` or the ``--combine`` of
    evaluate and report; ``search``: report's ``--search``; ``metrics``: ``-m`` as given.
    """

    def __init__(self, command: str, criteria: Sequence[str] = (), schemes: Sequence[str] = (),
                 search: Optional[str] = None, metrics: Sequence[str] = ()):
        self.command, self.criteria, self.schemes = command, list(criteria), list(schemes)
        self.search, self.metrics = search, _metric_list(metrics)

    def ask(self, criterion: str) -> str:
        """This command's way to ask for ``criterion``."""
        from .evaluate import COMMAND_OPTIONS

        return f"{COMMAND_OPTIONS[self.command][0]} {criterion}"

    def without_references(self, tb) -> Optional[str]:
        """The options that ask this run without reference-against-reference scores (KING, ORANGE, QUEEN), with a
        criterion the test bed's judgments support; None when there is none."""
        from .evaluate import DEFAULT_SCHEME_NAME as ulc, LIKENESS

        alt = _reference_free_criterion(tb)
        if self.command == "search":
            if self.criteria[0] in LIKENESS:
                return f"--criterion {alt} --scheme {ulc}" if alt else None
            return f"--scheme {ulc}"
        parts = []
        if any(c in LIKENESS for c in self.criteria):
            keep = [c for c in self.criteria if c not in LIKENESS] or ([alt] if alt else [])
            if not keep:
                return None
            parts.append(f"--criteria {','.join(keep)}")
        if _reading_references(self.schemes):
            rest = [x for x in self.schemes if x not in _reading_references(self.schemes)]
            parts.append(f"--combine {','.join(rest or [ulc])}")
        if self.search in LIKENESS:
            if not alt:
                return None
            parts.append(f"--search {alt}")
        return " ".join(parts) or None

    def leave_out(self, specs: Sequence[str]) -> str:
        """``leave scores:x.tsv out of -m (-m bleu chrf)``: the fix that drops ``specs`` from ``-m``."""
        rest = [m for m in self.metrics if m not in set(specs)]
        return f"leave {', '.join(specs)} out of -m" + (f" (-m {' '.join(rest)})" if rest else "")


def _reference_free_criterion(tb) -> Optional[str]:
    """A criterion that reads this test bed's judgments and no references: r_snt on absolute scores, wmt_kendall on
    rankings only, pearson on system scores only (3 systems or more); None without judgments."""
    if tb.scores:
        return "r_snt"
    if tb.preferences:
        return "wmt_kendall"
    if tb.system_scores and len(tb.systems) >= 3:
        return "pearson"
    return None


def _read_per_candidate(specs: Sequence[str]) -> List[str]:
    """The metrics among ``specs`` read per candidate from a file (``scores:``, ``mtme:``, models using them):
    they have no reference-against-reference scores, so QUEEN, KING and ORANGE cannot use them."""
    from .scoring import resolve_metric

    return [s for s in specs if getattr(resolve_metric(s), "row_keyed", False)]


def _prepare(testbed_path, lp, testbed_options, metrics, criterion, triples, min_refs, max_refs, seed, jobs,
             cache, quiet, needs_refs, memory=None, king_segments=None, asked: Optional[Asked] = None, tb=None):
    """Load, check reference counts, sample segments (``king_segments``), score (cached) and single-reference
    scores when QUEEN needs them. ``needs_refs="auto"`` (combo report's default criteria): single-reference scores
    when every segment has enough references and every metric has them; else KING and ORANGE are left out and
    the fifth value returned says why (None when nothing was left out)."""
    from .meta.queen import min_references
    from .evaluate import LIKENESS

    asked = asked or Asked("search", [criterion], metrics=metrics)
    tb = _load_testbed(testbed_path, lp, testbed_options) if tb is None else tb  # tb: loaded already
    likeness_note = None
    auto = needs_refs == "auto"
    if auto:  # combo report: KING and ORANGE when every segment has enough references
        needs_refs = all(len(seg.references) > min_references(triples) for seg in tb.segments)
    explicit = bool(metrics)
    set_notes: List[str] = []
    specs = expand_metric_sets(_metric_list(metrics), set_notes) if explicit else list(SEARCH_METRICS)
    specs, missing = _available(specs)
    if missing and explicit:
        from .scoring import resolve_metric
        for spec in missing:
            resolve_metric(spec).check_resources()  # raises the precise error
    notes = set_notes + _missing_notes(missing)
    if not explicit:
        specs, foreign = _readable(specs, [tb])
        if foreign:
            notes.append(f"left out (cannot read {tb.target_language!r}; see combo metrics): {', '.join(foreign)}")
    notes += _in_sample_notes(specs, tb)
    need = min_references(triples) + (1 if criterion in LIKENESS else 0) if needs_refs else 0
    if max_refs is not None and max_refs < need:
        raise OptionError(f"--max-refs {max_refs} leaves fewer than the {need} references {criterion} with QUEEN "
                          f"(triples={triples}) needs: every segment would be skipped. Fix: --max-refs {need} or more")
    instead = asked.without_references(tb)
    other = (f"use {instead}, which needs no references, or " if instead else "use ") + "a test bed with more references"
    short = [i for i, seg in enumerate(tb.segments) if len(seg.references) < need]
    if short:
        if min_refs is None and len(short) == len(tb.segments):
            raise InputError(f"no segment has the {need} references {criterion} with QUEEN (triples={triples}) "
                             "needs", testbed_path, fix=other)
        if min_refs is None:
            raise InputError(f"{len(short)} of {len(tb.segments)} segments have fewer than {need} references, "
                             f"which {criterion} with QUEEN (triples={triples}) needs", testbed_path,
                             fix=_min_refs_advice(tb, need, len(specs), triples, max_refs,
                                                  sampling=asked.command != "report"))
    if needs_refs:
        from .metrics.external import PAIR_REFUSAL

        per_candidate = _read_per_candidate(specs)
        if per_candidate:
            these = ", ".join(per_candidate)
            if auto:  # combo report's default criteria: KING and ORANGE are left out, and the report says why
                needs_refs = False
                likeness_note = (f"{these} {'is' if len(per_candidate) == 1 else 'are'} read per candidate from a "
                                 "file, without the reference-against-reference scores QUEEN needs; for KING and "
                                 f"ORANGE, {asked.leave_out(per_candidate)}")
            else:
                raise OptionError(f"{these}: {PAIR_REFUSAL} (fix: {asked.leave_out(per_candidate)}"
                                  + (f", or use {instead}, which needs no references" if instead else "") + ")")
    if min_refs is not None:
        keep = [i for i, seg in enumerate(tb.segments) if len(seg.references) >= max(min_refs, need)]
        skipped = len(tb.segments) - len(keep)
        if not keep:
            raise InputError(f"no segment has {max(min_refs, need)} references: --min-refs would skip all "
                             f"{skipped}", testbed_path, fix=other)
        tb = tb.subset(keep)
        notes.append(f"skipped {skipped} segments with fewer than {max(min_refs, need)} references")
    if king_segments is not None:
        if criterion not in LIKENESS or not needs_refs:
            raise OptionError(f"--king-segments samples segments for KING and ORANGE, which this run does not "
                              f"compute ({criterion}): drop it, or ask for {asked.ask('king')}")
        population = len(tb.segments)
        tb = tb.sample_segments(king_segments, seed)
        if len(tb.segments) < population:
            notes.append(f"KING estimated from a simple random sample of {len(tb.segments)} of {population} "
                         f"segments (seed {seed}); every criterion here is computed on them")
    progress = not quiet
    from .scoring import score_testbed, score_with_references

    if needs_refs:
        table, refs = score_with_references(tb, specs, max_refs=max_refs, seed=seed, jobs=jobs, progress=progress,
                                            cache_dir=cache, memory=memory)
    else:
        table, refs = score_testbed(tb, specs, jobs=jobs, progress=progress, cache_dir=cache, memory=memory), None
    if refs is not None and refs.capped_segments:
        notes.append(f"{refs.capped_segments} segments capped at {max_refs} references (seeded sample, seed {seed})")
    return tb, table, refs, notes, likeness_note


def _beats_text(result) -> str:
    """``yes, in-sample ...; no significant difference (p = 0.214, ...)``: whether the selected set beats the best
    single metric, that the comparison is in-sample, and the paired bootstrap test of the difference."""
    if not result.beats_best_single:
        return "no"
    text = "yes, in-sample (the set was selected on these segments)"
    test = result.gain_test_text()
    if test.startswith("significant"):
        test += ", though optimistic: confirm it on held-out segments"
    return text + (f"; {test}" if test else "")


def _estimate_text(estimate) -> str:
    """``, an estimate: 95% sampling interval [a, b]`` beside a KING figure estimated from samples; else empty."""
    if not estimate:
        return ""
    return f", an estimate: 95% sampling interval [{estimate['low']:.4f}, {estimate['high']:.4f}]"


def _ties_text(share) -> str:
    """`` (ties 71%)`` beside a KING figure; empty for other criteria."""
    return f" (ties {share:.0%})" if share is not None and share == share else ""


def _meanings_help() -> str:
    """The epilog of search and evaluate: one line per registered criterion and scheme saying what it measures."""
    from .evaluate import CRITERION_MEANINGS, SCHEME_MEANINGS

    width = max(len(c) for c in (*CRITERION_MEANINGS, *SCHEME_MEANINGS)) + 2
    lines = ["\b", "Criteria (what they measure, what is good):"]
    lines += [f"  {c:<{width}}{meaning}" for c, meaning in CRITERION_MEANINGS.items()]
    lines += ["Combinations:"] + [f"  {c:<{width}}{meaning}" for c, meaning in SCHEME_MEANINGS.items()]
    return "\n".join(lines)


def _criterion_help() -> str:
    """search's --criterion: the old names that still work."""
    from .evaluate import CRITERION_ALIASES

    old = ", ".join(f"{a} ({c})" for a, c in CRITERION_ALIASES.items())
    return ("What each criterion measures is listed below" + (f"; old names still work: {old}." if old else "."))


def _scheme_help() -> str:
    """search's --scheme: each criterion's default combination."""
    from .evaluate import DEFAULT_SCHEME, DEFAULT_SCHEME_NAME

    other = {}
    for c, s in DEFAULT_SCHEME.items():
        if s != DEFAULT_SCHEME_NAME:
            other.setdefault(s, []).append(c)
    return ("Combination (default: " + "".join(f"{s} for {'/'.join(cs)}, " for s, cs in other.items())
            + f"{DEFAULT_SCHEME_NAME} otherwise).")


def _criteria_help() -> str:
    """evaluate's --criteria: every registered criterion."""
    return "Comma-separated: " + ", ".join(_criteria()) + "."


def _combine_help(what: str) -> str:
    """--combine: every registered scheme."""
    return f"Comma-separated combinations of all the metrics to {what}: " + ", ".join(_schemes()) + "."


def _refused_pairs(criteria: Sequence[str], schemes: Sequence[str], command: str) -> None:
    """Refuse, before any work, a criterion asked with a combination it refuses (mutt with queen)."""
    from .evaluate import check_scheme, get_criterion

    for c in criteria:
        for s in schemes:
            if s in get_criterion(c).refused_schemes:
                check_scheme(c, s, command)


def _min_refs_advice(tb, need: int, n_metrics: int, triples: str, max_refs: Optional[int], sampling: bool = True
                     ) -> str:
    """The fix for segments with too few references: --min-refs, and --max-refs with the predicted cost of each
    (and ``sampling``: --king-segments and --king-sample, which combo report does not have)."""
    from .meta_run import SUGGESTED_KING_SAMPLE, SUGGESTED_KING_SEGMENTS, SUGGESTED_MAX_REFS, king_cost

    refs = [len(seg.references) for seg in tb.segments]
    cands = [0] * len(refs)
    for outputs in tb.candidates.values():
        for i in outputs:
            cands[i] += 1
    fix = f"pass --min-refs {need} to skip them (they are counted in the output)"
    as_is = king_cost(refs, cands, n_metrics, triples=triples, max_refs=max_refs)
    capped = king_cost(refs, cands, n_metrics, triples=triples, max_refs=max_refs or SUGGESTED_MAX_REFS)
    if max_refs is not None or capped.seconds() >= as_is.seconds() / 2:
        return fix + f"; predicted: {as_is.describe()}"
    return (fix + f", and --max-refs {SUGGESTED_MAX_REFS} to cap the others at a seeded sample of "
            f"{SUGGESTED_MAX_REFS} references (KING then estimates; docs/queen-king.md). Predicted with --min-refs "
            f"{need} alone: {as_is.describe()}; with --max-refs {SUGGESTED_MAX_REFS} too: {capped.describe()}. "
            + (f"Capping biases KING; an unbiased estimate with every reference and a sampling interval: "
               f"--king-segments {SUGGESTED_KING_SEGMENTS} --king-sample {SUGGESTED_KING_SAMPLE} (docs/scale.md)"
               if sampling else "Capping biases KING (docs/queen-king.md)"))


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
    func = _gather_meta(func)
    for opt in reversed(options):
        func = opt(func)
    return scale_options(testbed_options(func))


@main.command(cls=MeaningsCommand)
@search_options
@click.option("--criterion", type=RegistryChoice(_criterion_names), default="king", show_default=True,
              callback=_today_name, cls=RegistryHelpOption, help_from=_criterion_help)
@click.option("--scheme", type=RegistryChoice(_schemes), default=None, cls=RegistryHelpOption,
              help_from=_scheme_help)
@click.option("--strategy", type=Choice(STRATEGIES),
              default="greedy", show_default=True)
@click.option("--beam-width", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--bootstrap", "n_resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples (seeded with --seed) of the paired test of the selected set against the best "
                   "single metric (0: no test).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the HTML report (see combo report) of this run here.")
def search(testbed_path, lp, testbed_options, metrics, min_refs, max_refs, cache, fmt, out, quiet, king_segments,
           criterion, scheme, strategy, beam_width, n_resamples, report_path, meta: MetaOptions):
    """Find the metric set whose combination best meets a meta-evaluation criterion (Giménez & Màrquez 2008)."""
    import numpy as np

    from .evaluate import DEFAULT_SCHEME, check_scheme, get_scheme, search_metric_sets

    _check_report_possible(report_path)
    check_outputs(out=out, report=report_path)
    scheme = scheme or DEFAULT_SCHEME.get(criterion, "ulc")
    check_scheme(criterion, scheme, "search")
    seed = meta.seed
    tb, table, refs, notes, likeness_note = _prepare(
        testbed_path, lp, testbed_options, metrics, criterion, meta.triples, min_refs, max_refs, seed, meta.jobs,
        cache, quiet, needs_refs=bool(_reading_references([scheme])), memory=meta.memory,
        king_segments=king_segments, asked=Asked("search", [criterion], [scheme], metrics=metrics))
    ev = meta.evaluator(tb, table, refs, command="search")
    ev.likeness_note = likeness_note or f"not measured by this search ({criterion} with {scheme})"
    options = {"width": beam_width} if strategy == "beam" else {}
    result = search_metric_sets(ev, criterion, scheme, strategy, n_resamples=n_resamples, **options)
    if tb.metadata.get("skipped"):
        notes.append(f"{tb.metadata['skipped']} trials left out: no references")
    notes += result.left_out()  # what the selected set's and the best single metric's values leave out
    if result.quality is None or not np.isfinite(result.quality):  # no metric set has a defined quality
        raise InputError(f"{criterion} is undefined for every metric on this test bed ({len(tb.segments)} "
                         "segments): nothing can be selected", testbed_path,
                         fix="choose a criterion the test bed's judgments and references support")
    result.details.update({"testbed": tb.name, "segments": len(tb.segments), "aspect": ev.aspect,
                           "meaning": _meaning(criterion), "scheme_meaning": get_scheme(scheme).meaning,
                           "triples": meta.triples, "king_ties": meta.king_ties, "notes": notes,
                           "randomness": {"seed": seed, "max_refs": max_refs, "king_sample": meta.held_out,
                                          "king_segments": (tb.metadata.get("segment_sample") or {}).get("size"),
                                          "capped_segments": refs.capped_segments if refs is not None else 0},
                           "signatures": dict(zip(table.metrics, table.signatures))})
    if fmt == "json":
        text = json.dumps(_clean(result.to_dict()), indent=1, ensure_ascii=False, default=_json_default) + "\n"
    else:
        ties = _ties_text(result.details.get("tie_share"))
        lines = [f"criterion: {criterion} (scheme {scheme}, strategy {strategy}) on {tb.name}, "
                 f"{len(tb.segments)} segments",
                 f"selected: {', '.join(result.selected)}",
                 f"quality: {_fmt(result.quality)}{ties}{_estimate_text(result.details.get('estimate'))}",
                 f"  meaning: {criterion}: {_meaning(criterion)}",
                 f"best single metric: {result.best_single[0]} {_fmt(result.best_single[1])}",
                 f"beats best single: {_beats_text(result)}",
                 "trace:"]
        for step in result.trace:
            lines.append(f"  {step['step']:<6} {str(step.get('metric') or ''):<18} {_fmt(step['quality'])}"
                         f"{_ties_text(step.get('tie_share'))}  "
                         f"{'kept' if step.get('kept') else 'dropped'}  [{', '.join(step['set'])}]")
        lines += [f"warning: {w}" for w in result.details.get("warnings", [])]
        lines += [f"note: {n}" for n in notes]
        text = "\n".join(lines) + "\n"
    page = _report_page(ev, metrics, table, notes, seed, search=result) if report_path else None
    write_outputs(text, out, page, report_path)


@main.command(cls=MeaningsCommand)
@search_options
@click.option("--criteria", default="r_snt,wmt_kendall,pearson", show_default=True, cls=RegistryHelpOption,
              help_from=_criteria_help)
@click.option("--combine", "combos", default="ulc", show_default=True, cls=RegistryHelpOption,
              help_from=lambda: _combine_help("evaluate too"))
@click.option("--bootstrap", "n_resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples for the 95% intervals (0: none).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the HTML report (see combo report) of this run here.")
def evaluate(testbed_path, lp, testbed_options, metrics, min_refs, max_refs, cache, fmt, out, quiet, king_segments,
             criteria, combos, n_resamples, report_path, meta: MetaOptions):
    """Meta-evaluate each metric and their combinations against the human judgments, with bootstrap intervals.

    Several language pairs of one folder (--lp en-de,he-en): each pair's table, then WMT23's official average over
    the pairs (system accuracy pooled; the other tasks per pair)."""
    from .evaluate import LIKENESS, evaluate_entries

    _check_report_possible(report_path)
    check_outputs(out=out, report=report_path)
    crits = _named_list(criteria, "criterion", _criterion_names())
    schemes = _named_list(combos, "combination", _schemes())
    _refused_pairs(crits, schemes, "evaluate")
    lps = _language_pairs(lp)
    if len(lps) > 1 and report_path:
        raise OptionError(f"--report draws one test bed's report: give one --lp (e.g. --lp {lps[0]}) with --report")
    needs_refs = any(c in LIKENESS for c in crits) or bool(_reading_references(schemes))
    likeness = next((c for c in crits if c in LIKENESS), crits[0] if crits else "r_snt")
    seed = meta.seed
    docs, texts, evaluators = [], [], {}
    loaded = [_load_testbed(testbed_path, one_lp, testbed_options) for one_lp in lps]  # every pair, before scoring
    for one_lp, one_tb in zip(lps, loaded):
        tb, table, refs, notes, _ = _prepare(testbed_path, one_lp, testbed_options, metrics, likeness, meta.triples,
                                             min_refs, max_refs, seed, meta.jobs, cache, quiet, needs_refs=needs_refs,
                                             memory=meta.memory, king_segments=king_segments,
                                             asked=Asked("evaluate", crits, schemes, metrics=metrics), tb=one_tb)
        ev = meta.evaluator(tb, table, refs, command="evaluate")
        ev.likeness_note = f"not asked for (--criteria {','.join(crits)})"
        evaluators[one_lp or tb.name] = ev
        names, qualities = evaluate_entries(ev, crits, schemes, n_resamples, seed)
        doc, text = _evaluation_output(ev, tb, table, crits, names, qualities, notes, n_resamples, seed,
                                       meta.king_ties)
        docs.append(doc)
        texts.append(text)
    if len(lps) > 1:
        official = _official_average(evaluators, [s for s in schemes if s not in _reading_references(schemes)])
        if fmt == "json":
            text = json.dumps(_clean({"pairs": docs, "wmt23_official": official}), indent=1, ensure_ascii=False,
                              default=_json_default) + "\n"
        else:
            text = "\n".join(texts) + "\n" + official["text"]
    else:
        text = (json.dumps(_clean(docs[0]), indent=1, ensure_ascii=False, default=_json_default) + "\n"
                if fmt == "json" else texts[0])
    page = _report_page(ev, metrics, table, notes, seed, schemes=schemes, n_resamples=n_resamples,
                        evaluation=(names, qualities)) if report_path else None
    write_outputs(text, out, page, report_path)


def _named_list(text: str, what: str, known: Sequence[str]) -> List[str]:
    """``--criteria``/``--combine``: comma-separated names, each known (old names mapped to today's); a typo gets
    the close names."""
    from .evaluate import CRITERION_ALIASES
    from .options import did_you_mean

    names = [c.strip() for c in text.split(",") if c.strip()]
    for name in names:
        if name not in known:
            hint = did_you_mean(name, known)
            raise OptionError(f"unknown {what} {name!r}; " + (f"{hint} " if hint else "")
                              + f"(choose from {', '.join(n for n in known if n not in CRITERION_ALIASES)})")
    return [CRITERION_ALIASES.get(n, n) for n in names]


def _language_pairs(lp: Optional[str]) -> List[Optional[str]]:
    """``--lp``: one pair, or several separated by commas (distinct)."""
    lps = [x.strip() for x in lp.split(",")] if lp else [None]
    if len(set(lps)) != len(lps) or "" in lps:
        raise OptionError(f"--lp {lp}: give distinct language pairs separated by commas (e.g. en-de,he-en)")
    return lps


def _evaluation_output(ev, tb, table, crits, names, qualities, notes, n_resamples, seed, king_ties):
    """One test bed's ``combo evaluate`` result: the JSON document and the table text."""
    from .evaluate import evaluation_rows, left_out_notes

    rows = evaluation_rows(names, qualities)
    notes = list(notes) + left_out_notes(names, qualities)  # what the values leave out: in the table and JSON
    warnings = [f"KING of {r['metric']} is decided by ties: {r['king']['tie_share']:.0%} of its comparisons "
                f"(with --king-ties strict: {r['king']['value_strict']:.4f}; see docs/queen-king.md)" for r in rows
                if r.get("king") and (r["king"]["tie_share"] or 0) > KING_TIE_WARNING and king_ties != "strict"]
    doc = {"testbed": tb.name, "segments": len(tb.segments), "aspect": ev.aspect, "criteria": crits,
           "meanings": {c: _meaning(c) for c in crits}, "rows": rows, "notes": notes,
           "warnings": warnings, "signatures": dict(zip(table.metrics, table.signatures)),
           "bootstrap": {"resamples": n_resamples, "seed": seed, "confidence": 0.95,
                         "unit": "whole segments (system-level criteria: systems)"}}
    width = max(len("metric"), *(len(r["metric"]) for r in rows)) + 2
    cols = [max(len(c), 26, *(len(r[c]["text"]) for r in rows if r[c] is not None)) for c in crits]
    lines = [f"{'metric':<{width}}" + "".join(f"{c:<{w + 2}}" for c, w in zip(crits, cols))]
    for r in rows:
        cells = [("-" if r[c] is None else r[c]["text"]) for c in crits]
        lines.append(f"{r['metric']:<{width}}" + "".join(f"{x:<{w + 2}}" for x, w in zip(cells, cols)))
    lines += [f"# {c}: {_meaning(c)}" for c in crits]
    lines += [f"warning: {w}" for w in warnings]
    lines.append(f"# {tb.name}: {len(tb.segments)} segments, aspect {ev.aspect}; 95% bootstrap intervals "
                 f"over {n_resamples} resamples of whole segments (system-level criteria: of systems), "
                 f"seed {seed}" if n_resamples else f"# {tb.name}")
    lines += [f"note: {n}" for n in notes]
    return doc, "\n".join(lines) + "\n"


def _official_average(evaluators, schemes) -> dict:
    """WMT23's official average over the language pairs of ``evaluators`` (combo.evaluate.wmt23_over_pairs)."""
    from .evaluate import wmt23_over_pairs

    names, rows = wmt23_over_pairs(evaluators, schemes)
    rows = sorted(rows, key=lambda r: -r["average"])
    tasks = list(rows[0]["tasks"])
    width = max(len("metric"), *(len(r["metric"]) for r in rows)) + 2
    lines = [f"WMT23's official average over {', '.join(sorted(evaluators))} (mt-metrics-eval tasks.WMT23: system "
             f"accuracy pooled over the pairs weighs {len(evaluators)}/{4 * len(evaluators)}, each other task "
             f"1/{4 * len(evaluators)}; correlations mapped to [0, 1]):",
             f"{'metric':<{width}}{'average':>9}" + "".join(f"{t:>{max(len(t), 6) + 2}}" for t in tasks)]
    for r in rows:
        lines.append(f"{r['metric']:<{width}}{r['average']:>9.4f}"
                     + "".join(f"{r['tasks'][t]:>{max(len(t), 6) + 2}.4f}" for t in tasks))
    return {"pairs": sorted(evaluators), "rows": rows, "text": "\n".join(lines) + "\n"}


# -- the HTML report: combo report, and --report FILE on evaluate and search ------------------------------------

def _check_report_possible(report_path: Optional[str]) -> None:
    """Fail before any scoring when the report cannot be drawn (matplotlib missing)."""
    if report_path is not None:
        from .report.plots import require_matplotlib

        require_matplotlib()


def _report_page(ev, metrics, table, notes, seed, **inputs) -> str:
    from .report import ReportInputs, build_report, tuned_weights

    tuned = tuned_weights(expand_metric_sets(_metric_list(metrics)), table.metrics) if metrics else {}
    program = Path(sys.argv[0]).name if sys.argv else ""
    command = "combo " + " ".join(sys.argv[1:]) if program in ("combo", "cli.py", "__main__.py") else ""
    return build_report(ev, ReportInputs(seed=seed, notes=notes, tuned=tuned, command=command, **inputs))



def _mutt_accuracy(specs: Sequence[str], corruptions: str, flickr8k: Optional[str], seed: int):
    """MUTT accuracy ``{metric: {corruption type: accuracy}}`` of ``specs`` on the trials in ``corruptions``
    that have references (the FLICKR trials, given ``flickr8k``), and a sentence saying what was run."""
    from .io.mutt import read_mutt, select_trials
    from .metric_unit_tests import run_unit_tests

    sets = read_mutt(corruptions, flickr8k=flickr8k)
    trials, left_out = select_trials([t for v in sets.values() for t in v], "flickr")
    if not trials:
        raise InputError("no MUTT trial has references", corruptions,
                         fix="give the Flickr8k folder with --mutt-flickr8k so the FLICKR trials get their captions")
    result = run_unit_tests(trials, list(specs), seed=seed)
    return result.accuracy, (f"MUTT unit tests on {len(trials)} trials of {corruptions} with their Flickr8k "
                             f"references ({left_out} trials without references left out), seed {seed}.")


@main.command()
@testbed_options
@click.option("--metrics", "-m", cls=MetricsOption, multiple=True,
              help="Metrics or sets such as @lexical: -m bleu chrf, or repeated -m (default: @search).")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--criteria", default=None,
              help="Comma-separated criteria (default: every one the test bed supports).")
@click.option("--combine", "combos", default="ulc", show_default=True, cls=RegistryHelpOption,
              help_from=lambda: _combine_help("show too"))
@click.option("--search", "search_criterion", default=None, type=RegistryChoice(_criterion_names),
              callback=_today_name, help="Also search the optimal metric set under this criterion and show its trace.")
@click.option("--strategy", type=Choice(STRATEGIES),
              default="greedy", show_default=True, help="Search strategy (with --search).")
@click.option("--mutt", "mutt", default=None, type=click.Path(exists=True, file_okay=False), metavar="CORRUPTIONS",
              help="Also run the MUTT unit tests of this corruptions folder and show their accuracy heatmap.")
@click.option("--mutt-flickr8k", default=None, type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="Flickr8k folder: the FLICKR trials of --mutt get their image's captions as references.")
@click.option("--bootstrap", "n_resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples for the 95% intervals and the significance clusters.")
@click.option("--worst", type=click.IntRange(min=0), default=5, show_default=True,
              help="Worst-scored segments shown per metric.")
@click.option("--min-refs", type=click.IntRange(min=1), default=None,
              help="Skip (and count) segments with fewer references.")
@click.option("--max-refs", type=click.IntRange(min=1), default=None,
              help="Cap references per segment with a seeded sample.")
@meta_options
@score_cache_option()
@click.option("--quiet", "-q", is_flag=True)
def report(testbed_path, lp, testbed_options, metrics, out, criteria, combos, search_criterion, strategy, mutt,
           mutt_flickr8k, n_resamples, worst, min_refs, max_refs, cache, quiet, meta: MetaOptions):
    """Write one self-contained HTML report: meta-evaluation, intervals, correlations, plots, worst segments."""
    from .evaluate import DEFAULT_SCHEME, LIKENESS, search_metric_sets

    _check_report_possible(out)
    check_outputs(out=out)
    crits = None if criteria is None else _named_list(criteria, "criterion", _criterion_names())
    schemes = _named_list(combos, "combination", _schemes())
    _refused_pairs((crits or []) + ([search_criterion] if search_criterion else []), schemes, "report")
    asked = (crits or []) + ([search_criterion] if search_criterion else [])
    likeness = next((c for c in asked if c in LIKENESS), None)
    search_scheme = DEFAULT_SCHEME.get(search_criterion, "ulc")
    needs_refs = True if likeness or _reading_references(schemes) else "auto" if crits is None else False
    checked = likeness or ("king" if needs_refs == "auto" else "r_snt")  # the reference count _prepare checks
    seed = meta.seed
    tb, table, refs, notes, likeness_note = _prepare(
        testbed_path, lp, testbed_options, metrics, checked, meta.triples, min_refs, max_refs, seed, meta.jobs,
        cache, quiet, needs_refs=needs_refs, memory=meta.memory,
        asked=Asked("report", crits or [], schemes, search_criterion, metrics))
    ev = meta.evaluator(tb, table, refs, command="report --search")
    ev.likeness_note = likeness_note or (f"not asked for (--criteria {criteria})" if crits is not None else None)
    result = (search_metric_sets(ev, search_criterion, search_scheme, strategy, n_resamples=n_resamples)
              if search_criterion else None)
    ev.command = "report"  # the table's criteria: --criteria
    accuracy, mutt_note = (None, "MUTT unit tests were not run (combo report --mutt CORRUPTIONS).")
    if mutt:
        accuracy, mutt_note = _mutt_accuracy(table.metrics, mutt, mutt_flickr8k, seed)
    page = _report_page(ev, metrics, table, notes, seed, criteria=crits, schemes=schemes, n_resamples=n_resamples,
                        search=result, mutt=accuracy, mutt_note=mutt_note or "", worst=worst)
    write_outputs(None, None, page, out)


def _fmt(value) -> str:
    import math

    return "undefined" if value is None or not math.isfinite(value) else f"{value:.4f}"


def _clean(obj):
    """JSON-safe copy: NaN and infinities become null (json.dumps would write invalid NaN)."""
    import math

    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _json_default(obj):
    import numpy as np

    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        v = float(obj)
        return v if v == v and abs(v) != float("inf") else None
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


@main.command(name="metrics")
@click.option("--format", "fmt", type=Choice(CATALOGUE_FORMATS), default="table",
              show_default=True)
def metrics_cmd(fmt: str) -> None:
    """List every metric with its family, range, resources and availability here."""
    from .catalogue import catalogue, render

    click.echo(render(catalogue(), fmt), nl=False)


@main.group()
def data() -> None:
    """Public data sets: fetch them with pinned checksums, list what is here."""


@data.command(name="list")
@click.option("--home", type=click.Path(file_okay=False), default=None,
              help="Data folder (default: $COMBO_DATA_HOME, else ~/.cache/combo/data).")
def data_list(home: Optional[str]) -> None:
    """Which data sets are present and verified."""
    from .io import fetch

    for st in fetch.list_datasets(home):
        ok = sum(1 for f in st.files if f.ok)
        click.echo(f"{st.name}\t{st.state}\t{ok}/{len(st.files)} files\t{fetch.dataset_dir(st.name, home)}")
    where = fetch.data_home() if home is None else Path(home).expanduser()
    click.echo(f"# looked in {where} ({fetch.data_home_origin(home)}); data sets elsewhere: "
               "COMBO_DATA_HOME=DIR or --home DIR (a folder holding wmt12/, dstc7/, ... as docs/data.md shows); "
               "missing ones: combo data fetch NAME", err=True)


@data.command(name="fetch")
@click.argument("name")
@click.option("--home", type=click.Path(file_okay=False), default=None,
              help="Data folder (default: $COMBO_DATA_HOME or ~/.cache/combo/data).")
@click.option("--force", is_flag=True, help="Download again even when the files verify.")
def data_fetch(name: str, home: Optional[str], force: bool) -> None:
    """Download data set NAME, check every file's SHA-256 and unpack it."""
    from .io import fetch

    fetch.fetch(name, home, force=force, log=lambda msg: click.echo(msg, err=True))
    click.echo(str(fetch.dataset_dir(name, home)))  # the folder, for scripts: --testbed "$(combo data fetch dstc7)"


@data.command(name="verify")
@click.argument("name")
@click.option("--home", type=click.Path(file_okay=False), default=None)
def data_verify(name: str, home: Optional[str]) -> None:
    """Check every file of data set NAME against its pinned SHA-256."""
    from .io import fetch

    st = fetch.verify(name, home)
    click.echo(f"{st.name}\t{st.state}\t{len(st.files)} files")


# -- caches: combo cache info, combo cache clear ------------------------------------------------------

@main.group()
def cache() -> None:
    """Show or empty the caches: metric scores (scores/ in $COMBO_CACHE_DIR, or a --cache folder) and text
    analyses ($COMBO_CACHE_DIR/analysis.sqlite)."""


_CACHE_FOLDER = score_cache_option("folder")


@cache.command(name="info")
@_CACHE_FOLDER
def cache_info_cmd(folder: Optional[str]) -> None:
    """Entries and sizes of both caches."""
    from .analysis.layers import analysis_cache_info
    from .scoring import cache_info

    if folder is None:
        click.echo("scores\t(off)")
    else:
        named = _cache_named(click.get_current_context())
        _named_cache_exists(folder, named)
        s = cache_info(folder, require_marker=named)
        foreign = "\tnot a combo score cache" if named and Path(folder).is_dir() and not s["marked"] else ""
        n = s["score_entries"]
        click.echo(f"scores\t{s['folder']}\t{n} {'entry' if n == 1 else 'entries'}\t{s['score_bytes']} bytes{foreign}")
    a = analysis_cache_info()
    state = f"\tdamaged: {a['damaged']}" if "damaged" in a else ""
    click.echo(f"analyses\t{a['file'] or '(off)'}\t{a['rows']} rows in {a['tables']} layer tables\t"
               f"{a['bytes']} bytes{state}")


def _named_cache_exists(folder: str, named: bool) -> None:
    """A folder that ``--cache`` names must exist: a mistyped one would read as an empty cache ("0 entries")."""
    if named and not Path(folder).is_dir():
        raise InputError("no such folder", folder, fix="name the folder a command's --cache wrote")


def _cache_named(ctx: click.Context) -> bool:
    """Whether ``--cache`` was given (its callback fills in the default folder when it was not)."""
    return ctx.get_parameter_source("folder") is click.core.ParameterSource.COMMANDLINE


@cache.command(name="clear")
@_CACHE_FOLDER
def cache_clear_cmd(folder: Optional[str]) -> None:
    """Empty the score cache --cache names (only it, and only combo's entries: a folder without combo's marker
    is refused), or without --cache both default caches."""
    from .analysis.layers import analysis_cache_clear, cache_dir
    from .scoring import cache_clear

    named = _cache_named(click.get_current_context())
    if folder is None:
        click.echo("scores\t(off)")
    else:
        # the default folder is combo's own path: entries an older combo wrote there without a marker go too
        _named_cache_exists(folder, named)
        removed = cache_clear(folder, require_marker=named)
        click.echo(f"scores\t{folder}\t{removed} {'entry' if removed == 1 else 'entries'} removed")
    if named:
        return
    removed = analysis_cache_clear()
    click.echo(f"analyses\t{cache_dir() or '(off)'}\t{'removed' if removed else 'nothing to remove'}")


# -- learned combinations: combo train, combo apply -------------------------------------------------

@main.command()
@testbed_options
@click.option("--metrics", "-m", cls=MetricsOption, multiple=True,
              help="Feature metrics or sets (@heterogeneous, @lexical: combo metrics lists them): -m bleu chrf, "
                   "or repeated -m; options as name:key=value (default: @heterogeneous if installed, else @lexical).")
@click.option("--method", type=Choice(METHOD_NAMES), default="auto", show_default=True,
              help="direct: weights searched for --objective (absolute judgments: MQM, DA); pairwise-lr: pairwise "
                   "logistic ranking (DiscoTK); regression on scores; ULC. auto: direct on absolute judgments, "
                   "pairwise-lr on rankings.")
@click.option("--objective", type=Choice(tuple(OBJECTIVES)), default="wmt23", show_default=True,
              help="What --method direct maximises on the training judgments: " + "; ".join(
                  f"{k}: {v}" for k, v in OBJECTIVES.items()) + ".")
@click.option("--output", type=Choice(OUTPUT_CHOICES), default="auto", show_default=True,
              help="Segment score: human (linear, fitted to the training judgments' scale), linear (w.x + b), or "
                   "sigmoid (DiscoTK's, saturates). auto: human on absolute judgments, linear on rankings. The "
                   "system score is the mean of w.x + b.")
@click.option("--regressor", type=Choice(REGRESSORS), default="ridge", show_default=True,
              help="Learner of --method regression.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Model file to write (JSON).")
@click.option("--name", default=None, help="Model name recorded in the file (default: the file name stem).")
@click.option("--judgments", type=Choice(JUDGMENTS), default="auto", show_default=True,
              help="Train on relative rankings or absolute scores (auto: rankings when present).")
@click.option("--min-diff", type=click.FloatRange(min=0.0), default=None,
              help="Absolute scores: a pair needs a larger difference (default by judgment type: MQM and ESA 0, "
                   "DA on 0-100 WMT DARR's 25, other scales 25% of the range).")
@click.option("--aspect", default=None, help="Absolute-score aspect (default: the test bed's main one).")
@click.option("--normalise", type=Choice(NORMALISE), default="testbed", show_default=True,
              help="Min-max ranges of the training features: per test bed, per segment group, or over all.")
@click.option("--folds", type=click.IntRange(min=0), default=10, show_default=True,
              help="Cross-validation folds, grouped by segment, for the printed quality (0: none).")
@click.option("--cv", "cv_by", type=Choice(CV_BY), default="segment", show_default=True,
              help="Cross-validate by segment (--folds folds) or leave one test bed (language pair) out.")
@click.option("--inner-folds", type=click.IntRange(min=0), default=5, show_default=True,
              help="Folds (grouped by segment) choosing C or alpha inside each training set (0: none, the "
                   "middle of the grid).")
@jobs_option()
@score_cache_option()
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
@click.option("--quiet", "-q", is_flag=True)
def train(testbed_path, lp, testbed_options, metrics, method, objective, output, regressor, out, name, judgments,
          min_diff, aspect, normalise, folds, cv_by, inner_folds, jobs, cache, fmt, quiet):
    """Train a tuned metric on a test bed's human judgments; print its cross-validated quality.

    Several language pairs of one folder train one model: --lp cs-en,de-en,es-en.
    """
    from .combine.learn import TrainOptions, cross_validate, fit_model, training_data, training_report
    from .scoring import score_testbed

    check_outputs(out=out)
    if folds == 1:
        raise OptionError("--folds 1: give 0 (no cross-validation) or at least 2")
    if inner_folds == 1:
        raise OptionError("--inner-folds 1: give 0 (no inner cross-validation: the middle C or alpha of the grid) "
                          "or at least 2")
    lps = [x.strip() for x in lp.split(",")] if lp else [None]
    if len(set(lps)) != len(lps) or "" in lps:
        raise OptionError(f"--lp {lp}: give distinct language pairs separated by commas (e.g. cs-en,de-en)")
    testbeds = [_load_testbed(testbed_path, x, testbed_options) for x in lps]
    set_notes: List[str] = []
    if metrics:
        given = _metric_list(metrics)
        metric_set = ", ".join(m for m in given if m.startswith("@")) or None
        specs = expand_metric_sets(given, set_notes)
    else:  # @heterogeneous where its extras are installed, else what @lexical can read (combo.metrics.sets)
        metric_set, specs, set_notes = training_default([tb.target_language for tb in testbeds])
    if any(is_model_file(spec) for spec in specs):
        raise OptionError("a tuned metric (model file) cannot be a feature of another model")
    options = TrainOptions(method=method, regressor=regressor, inner_folds=inner_folds,
                           name=name or Path(out).stem, objective=objective, output=output)
    options.check()
    for tb in testbeds:
        if not tb.preferences and not tb.scores:
            raise InputError(f"test bed {tb.name!r} has no human judgments (relative rankings or absolute scores) "
                             "to train on", testbed_path, fix="give a test bed with judgments")
    if cv_by == "testbed" and folds and len(testbeds) < 2:
        raise OptionError("--cv testbed leaves one test bed out: train on at least two (e.g. --lp cs-en,de-en)")
    progress = not quiet
    sources = [(tb, score_testbed(tb, specs, jobs=jobs, progress=progress, cache_dir=cache)) for tb in testbeds]
    data = training_data(sources, normalise, judgments, min_diff, aspect, targets=method == "regression")
    options = options.resolved(data.pairs.kind)
    if options.method == "direct" and data.pairs.kind == "rankings" and all(tb.scores for tb in testbeds):
        raise OptionError("--method direct searches weights over absolute human scores; with --judgments auto it "
                          "reads these test beds' relative rankings (fix: add --judgments scores, since they have "
                          "absolute scores too, or use --method pairwise-lr)")
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # counted and printed below instead
        cv = cross_validate(data, options, folds, by=cv_by) if folds else None
        model = fit_model(data, options)
    model.training["metric_set"] = {"sets": metric_set, "default": not metrics, "notes": set_notes}
    report = training_report(data, cv, options.method, [table.system for _, table in sources])
    from .metrics.tuned import save_text

    save_text(model.to_json(), out)
    est = model.training["estimator"]
    stopped = {"final": est.get("not_converged", 0), "cross_validation": cv.not_converged if cv is not None else 0}
    if fmt == "json":
        doc = {"model": out, "name": model.name, "method": model.method,
               "testbed": ", ".join(tb.name for tb in testbeds), "testbeds": [tb.name for tb in testbeds],
               "training": data.sources[0] if len(testbeds) == 1 else data.sources,
               "chosen": {k: est[k] for k in ("C", "alpha") if k in est},
               "weights": dict(zip(model.specs, model.weights.tolist())), "bias": model.bias,
               "metric_set": model.training["metric_set"], "cross_validation": report, "not_converged": stopped}
        text = json.dumps(_clean(doc), indent=1, ensure_ascii=False, default=_json_default) + "\n"
    else:
        chosen = ", ".join(f"{k} = {est[k]:g}" for k in ("C", "alpha") if k in est)
        lines = []
        for tb, described in zip(testbeds, data.sources):
            left = [f"{described['ties_dropped']} human ties left out"] if described["ties_dropped"] else []
            if described.get("below_threshold"):
                left.append(f"{described['below_threshold']} candidate pairs within min_diff "
                            f"{described['min_diff']:g}" + (f" ({described['min_diff_rule']})"
                                                           if described.get("min_diff_rule") else ""))
            if described["few_candidates"]:
                left.append(f"{described['few_candidates']} judged segments with fewer than 2 candidates")
            lines.append(f"trained {model.method} on {tb.name}: {described['segments']} segments, "
                         f"{described['candidates']} candidates, {described['pairs']} pairs from "
                         f"{described['judgments']}" + (f" ({'; '.join(left)})" if left else "")
                         + (f"; {chosen}" if chosen and len(testbeds) == 1 else ""))
        if chosen and len(testbeds) > 1:
            lines.append(f"one model on all {len(testbeds)} test beds; {chosen}")
        if "objective" in est:
            lines.append(f"weights searched for {est['objective']}: {est['objective_value']:.4f} on the training "
                         f"data (uniform weights, ULC: {est['uniform_value']:.4f}); {est['selected']} of "
                         f"{len(model.specs)} metrics kept; {est['evaluations']} evaluations")
        if "calibration" in est:
            lines.append(f"output: linear, fitted to the training judgments' scale ({data.sources[0].get('targets')}"
                         f"; segment and system scores on that scale)")
        if metric_set:
            lines.append(f"features: {metric_set}, {len(model.specs)} metrics"
                         + (" (the default)" if not metrics else ""))
        lines += [f"note: {n}" for n in set_notes]
        lines.append(f"model written to {out}")
        if any(stopped.values()):
            lines.append(f"note: fits stopped at the iteration limit before converging (ConvergenceWarning): "
                         f"{stopped['final']} training the model (parameter search included), "
                         f"{stopped['cross_validation']} in cross-validation")
        if cv is not None and "statistics" in report:
            how = ("leaving one test bed out" if cv.by == "testbed"
                   else f"{report['folds']} folds grouped by segment")
            lines.append(f"cross-validated quality ({how}; WMT23 statistics; a metric's system score is its own, "
                         "a combination's the mean of its segment scores):")
            heads = ("seg Pearson", "acc_eq", "sys Pearson", "sys accuracy", "average")
            best = report["best_single"]
            entries = ((f"tuned ({model.method}, cv)", report["tuned"]), ("ULC (all metrics)", report["ulc"]),
                       (f"best single: {best['metric']}", best))
            labels = [(f"{name}: {label}", row["testbeds"][name]) for name in report["tuned"]["testbeds"]
                      for label, row in entries]
            width = max(len(label) for label, _ in labels) + 2
            lines.append(f"  {'':<{width}}" + "".join(f"{h:>13}" for h in heads))
            lines += [f"  {label:<{width}}" + "".join(f"{_fmt(values[k]):>13}" for k in report["statistics"])
                      for label, values in labels]
        elif cv is not None:
            how = ("leaving one test bed out" if cv.by == "testbed"
                   else f"{report['folds']} folds grouped by segment")
            over = (f"mean over {len(testbeds)} test beds of" if len(testbeds) > 1 else "over")
            lines.append(f"cross-validated quality ({how}; WMT12 Kendall {over} {report['pairs']} pairs):")
            lines.append(f"  {'':<28}{'ties discordant':>16}{'ties excluded':>16}")
            best = report["best_single"]
            for label, row in ((f"tuned ({model.method}, cv)", report["tuned"]), ("ULC (all metrics)", report["ulc"]),
                               (f"best single: {best['metric']}", best)):
                lines.append(f"  {label:<28}{_fmt(row['ties_discordant']):>16}{_fmt(row['ties_excluded']):>16}")
        lines.append("weights (features min-max normalised; error rates flipped):")
        width = max(len(s) for s in model.specs) + 2
        lines += [f"  {s:<{width}}{w:+.4f}" for s, w in zip(model.specs, model.weights)]
        lines.append(f"  {'bias':<{width}}{model.bias:+.4f}")
        text = "\n".join(lines) + "\n"
    click.echo(text, nl=False)


def _count(n: int, noun: str) -> str:
    """``1 line``, ``3 lines``."""
    from .progress import plural

    return f"{n} {plural(noun, n)}"


def _system_name(path: str) -> str:
    """A system's name from its output file, as the test-bed readers name them: the file name without ``.txt``."""
    name = Path(path).name
    return name[:-4] if name.endswith(".txt") and len(name) > 4 else name


class _ManyValuesCommand(click.Command):
    """Lets ``--refs A B C`` (and ``--hyps``) take several values: rewritten to ``--refs A --refs B --refs C``."""

    many = ("--refs", "--hyps")

    def parse_args(self, ctx: click.Context, args: List[str]) -> List[str]:
        out: List[str] = []
        current = None
        for arg in args:
            if arg == "--":
                current = None
                out.append(arg)
            elif arg in self.many:
                current = arg
                out.append(arg)
                continue
            elif current is not None and not arg.startswith("-"):
                if out[-1] != current:
                    out.append(current)
                out.append(arg)
                continue
            else:
                current = None
                out.append(arg)
        return super().parse_args(ctx, out)


@main.command(name="apply", cls=_ManyValuesCommand)
@click.option("--model", "model_path", required=True, type=click.Path(dir_okay=False),
              help="Model file written by combo train.")
@click.option("--hyps", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="Hypothesis file(s), one segment per line; one per system.")
@click.option("--refs", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="Reference file(s), one segment per line each (several files: several references).")
@click.option("--level", type=Choice(LEVELS), default="system", show_default=True)
@click.option("--format", "fmt", type=Choice(["tsv", "json"]), default="tsv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write here instead of stdout.")
@click.option("--language", default=None, expose_value=False, callback=_set_language, metavar="LANG",
              help="Language of the hypotheses and references (ISO 639-1); a model with metrics that cannot "
                   "read it is refused.")
@click.pass_context
def apply_cmd(ctx, model_path, hyps, refs, level, fmt, out):
    """Score hypothesis files against reference files with a tuned metric."""
    from .metrics.tuned import load_model
    from .io.text import read_lines
    from .metrics.base import refs_from_streams
    from .scoring import check_language

    metric = load_model(model_path)
    language = ctx.meta.get("combo.language")
    check_language(metric, None if language == "any" else language, "the --hyps files", model_path)
    streams = [read_lines(p, allow_empty=True) for p in refs]
    for p, stream in zip(refs[1:], streams[1:]):
        if len(stream) != len(streams[0]):
            raise InputError(f"has {_count(len(stream), 'line')} but {refs[0]} has {len(streams[0])}", p,
                             fix="give one reference line per segment in every reference file")
    references = refs_from_streams(streams)
    if not references:
        raise InputError("no segments: the reference files are empty", refs[0],
                         fix="give one reference line per segment")
    import os

    seen: dict = {}
    for p in hyps:
        where = os.path.realpath(p)
        if where in seen:
            same = "" if seen[where] == p else f" (also as {seen[where]})"
            raise OptionError(f"--hyps names {p} twice{same}: give each system's file once")
        seen[where] = p
    names = [_system_name(p) for p in hyps]  # as test beds name systems: the file name without .txt
    if len(set(names)) != len(names):
        names = list(hyps)
    records = []
    for name, path in zip(names, hyps):
        lines = read_lines(path, allow_empty=True)
        if len(lines) != len(references):
            raise InputError(f"has {_count(len(lines), 'line')} but the references have {len(references)}", path,
                             fix="give one hypothesis line per reference line")
        stats = metric.segment_statistics(lines, references)
        if level == "system":
            records.append({"system": name, "score": float(metric.score(stats.sum(axis=0), segment_level=False))})
        else:
            seg = metric.score(stats, segment_level=True)
            records += [{"system": name, "segment": i + 1, "score": float(v)} for i, v in enumerate(seg)]
    if fmt == "json":
        doc = {"model": model_path, "signature": metric.signature, "level": level,
               "scores": records, "output": metric.model.output,
               "note": ("segment: sigmoid(w.x + b) (DiscoTK's output); system: mean of w.x + b over segments"
                        if metric.model.output == "sigmoid" else
                        "segment: w.x + b; system: the mean of the segment scores (one scale)")}
        text = json.dumps(_clean(doc), indent=1, ensure_ascii=False) + "\n"
    else:
        text = _table(records, "tsv")
    write_output(text, out)


@main.command(name="mutt")
@click.argument("corruptions", type=click.Path())
@click.option("--flickr8k", type=click.Path(file_okay=False), default=None,
              help="Flickr8k folder: the FLICKR trials get their image's five captions as references.")
@click.option("--metrics", "-m", cls=MetricsOption, multiple=True, default=(),
              help="Metric specs or model files: -m bleu ter, repeated -m, or comma-separated. Default: bleu meteor "
                   "cider ter; on released trial files coco-caption's CIDEr-D and BLEU-4 settings, meteor and ter.")
@click.option("--scheme", type=Choice(UNIT_TEST_SCHEMES), default=None, help="Also test the ULC of the metrics.")
@click.option("--references", type=click.IntRange(min=1), default=None,
              help="At most this many references per trial (seeded sample). On released trial files: the "
                   "reference file to use, TYPE_r5/_r10/_r20.json (5, 10 or 20; default 5).")
@click.option("--trials", type=Choice(TRIAL_SETS), default="flickr", show_default=True,
              help="flickr: the trials with references (others counted); all: every trial must have references.")
@click.option("--fluency/--no-fluency", default=True, show_default=True,
              help="Add the SICK+ fluency corruptions generated from the trials' sentences (shallow parser).")
@click.option("--seed", type=int, default=0, show_default=True)
@jobs_option()
@score_cache_option()
@click.option("--format", "fmt", type=Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None)
@click.option("--quiet", "-q", is_flag=True)
def mutt_cmd(corruptions, flickr8k, metrics, scheme, references, trials, fluency, seed, jobs, cache, fmt, out, quiet):
    """Metric unit tests (Boag et al. 2016): accuracy of each metric on each corruption type.

    CORRUPTIONS is the folder of the corruption files (neg_subj.txt, ...), or of the authors' released trial
    files (TYPE_a.json, TYPE_b.json, TYPE_r5/_r10/_r20.json: detected), judged by their script's rules
    (the Difference formula for det_sub, near_syms and passive, the original above its corruption otherwise).
    """
    from click.core import ParameterSource

    from .io.mutt import read_mutt, select_trials
    from .io.mutt_released import is_released_folder, read_released
    from .metric_unit_tests import COCO_CAPTION_SPECS, run_released_unit_tests, run_unit_tests

    check_outputs(out=out)
    skipped = 0
    if is_released_folder(corruptions):
        ctx = click.get_current_context()
        given = [flag for name, flag in (("flickr8k", "--flickr8k"), ("trials", "--trials"),
                                         ("fluency", "--fluency/--no-fluency"), ("seed", "--seed"))
                 if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE]
        if given:
            raise OptionError(f"{', '.join(given)}: not for the released trial files, which hold their references "
                              "and generated types; choose their reference file with --references 5, 10 or 20")
        specs = (_metric_list(metrics) if metrics else
                 [COCO_CAPTION_SPECS["CIDEr"], COCO_CAPTION_SPECS["Bleu_4"], "meteor", "ter"])
        sets = read_released(corruptions, 5 if references is None else references)
        result = run_released_unit_tests([t for v in sets.values() for t in v], specs, scheme=scheme, jobs=jobs,
                                         cache_dir=cache, progress=not quiet)
    else:
        sets = read_mutt(corruptions, flickr8k=flickr8k)
        chosen, skipped = select_trials([t for v in sets.values() for t in v], trials)
        if not chosen:
            raise InputError("no trial has references", corruptions,
                             fix="give --flickr8k so the FLICKR trials get their image's captions")
        specs = _metric_list(metrics) if metrics else ["bleu", "meteor", "cider", "ter"]
        result = run_unit_tests(chosen, specs, references=references, seed=seed, scheme=scheme,
                                fluency=fluency, jobs=jobs, cache_dir=cache, progress=not quiet)
    if skipped:
        result.notes.insert(0, f"{skipped} trials left out: no references (SEMEVAL, or caption not in Flickr8k)")
    if fmt == "json":
        text = json.dumps(_clean(result.to_dict()), indent=1, ensure_ascii=False) + "\n"
    elif fmt == "csv":
        text = _table(result.to_records(), "csv")
    else:
        text = result.to_table()
    write_output(text, out)
    if fmt == "csv":  # the table and JSON hold the notes; CSV is data: its notes go to stderr
        for note in result.notes:
            click.echo(f"note: {note}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
