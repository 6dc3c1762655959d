"""Test-bed formats register themselves (combo.io.registry): a new format is one registration, and everything that
lists or dispatches formats (load_testbed, its errors, READER_OPTIONS, the list of known formats) reads it."""

import sys

import pytest
from click.testing import CliRunner

import combo.io as io
from combo.cli import main
from combo.errors import InputError, OptionError
from combo.io import load_testbed
from combo.io.registry import formats, known_formats, register_format, unregister_format
from combo.options import Option
from combo.testbed import Segment, Testbed

BUILT_IN = ("jsonl", "sick", "plain", "mtme", "wmt12", "flickr8k", "dstc7", "mutt")


@pytest.fixture
def pairs_format():
    """A format of this test's own: ``*.pairs`` files of ``reference<TAB>candidate`` lines."""

    @register_format("pairs", looks="*.pairs file", what="reference-candidate pairs (option system)",
                     options={"system": Option("cand", "name of the candidates' system")},
                     matches=lambda p: p.is_file() and p.suffix == ".pairs")
    def read_pairs(path, system="cand"):
        rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
        tb = Testbed(name=path.stem, segments=[Segment(id=str(i + 1), source="", references=[ref])
                                               for i, (ref, _) in enumerate(rows)])
        tb.candidates[system] = {i: cand for i, (_, cand) in enumerate(rows)}
        return tb

    yield read_pairs
    unregister_format("pairs")


def test_a_format_registered_in_one_place_is_read_and_listed(pairs_format, tmp_path):
    path = tmp_path / "news.pairs"
    path.write_text("the cat sat\tthe cat sits\na dog ran\ta dog runs\n", encoding="utf-8")
    tb = load_testbed(path, system="mt")
    assert (tb.name, len(tb.segments), tb.candidates["mt"][1]) == ("news", 2, "a dog runs")
    assert [f.name for f in formats()] == [*BUILT_IN, "pairs"]  # tried after the built-in formats
    assert [f.name for f in io.FORMATS][-1] == "pairs" and "pairs" in io.READER_OPTIONS
    assert "*.pairs file" in known_formats() and known_formats() == io.KNOWN_FORMATS
    with pytest.raises(OptionError, match=r"pairs test bed: unknown option judgments; known: system \(text\)"):
        load_testbed(path, judgments="crowd")
    with pytest.raises(InputError, match=r"unknown test-bed format.*; \*\.pairs file \(see docs/testbeds.md\)"):
        load_testbed(tmp_path)
    res = CliRunner().invoke(main, ["score", "--testbed", str(path), "-m", "chrf", "-q", "--testbed-option",
                                    "system=mt"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "system\tchrf" and res.output.splitlines()[1].startswith("mt\t")


def test_unregistered_formats_are_gone_and_names_are_not_reused(pairs_format):
    with pytest.raises(ValueError, match="'pairs' is registered twice"):
        register_format("pairs", looks="x", what="x", matches=lambda p: False)(lambda path: None)
    unregister_format("pairs")
    assert [f.name for f in formats()] == list(BUILT_IN) and "pairs" not in io.READER_OPTIONS


def test_built_in_formats_in_their_order_with_their_modules_options():
    assert tuple(f.name for f in formats()) == BUILT_IN  # load_testbed tries them in this order
    for f in formats():  # one convention: the options are the reader module's OPTIONS
        assert f.options is sys.modules[f.reader.__module__].OPTIONS
        assert io.READER_OPTIONS[f.name] is f.options
        assert f"{f.reader.__module__}.{f.reader.__name__}" in io.__doc__
    assert set(io.READER_OPTIONS["mtme"]) == {"lp", "references"} and io.READER_OPTIONS["jsonl"] == {}
