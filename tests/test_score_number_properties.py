"""Property: a number in a scores file is exactly the float it says, or one clear InputError.

Random numeric strings (huge, tiny, signed, exponents, many digits, empty, white space, inf/nan spellings,
underscores, other digits, noise) go through the three readers of per-candidate numbers: ``scores:FILE``
as TSV and as JSON, and mt-metrics-eval's ``SYSTEM SCORE`` files (:func:`combo.io.mtme.read_score_file`,
which reads human and metric scores). Each token is either read as ``float(token)`` to the bit (a finite
value: ``1e400`` is refused, not read as infinity) or refused with an :class:`InputError` naming the file
and line 1 (the JSON line of the token). No real data: a one-candidate test bed made here.
"""

import json
import math

from hypothesis import HealthCheck, given, settings, strategies as st

import combo
from combo.errors import InputError
from combo.io.mtme import read_score_file
from combo.testbed import Segment, Testbed

EXAMPLES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

DIGITS = st.text("0123456789", min_size=1, max_size=400)
SIGN = st.sampled_from(["", "+", "-"])
EXPONENT = st.one_of(st.just(""), st.builds(lambda e, s, d: e + s + d, st.sampled_from("eE"), SIGN,
                                            st.text("0123456789", min_size=1, max_size=5)))
MANTISSA = st.one_of(DIGITS, DIGITS.map(lambda d: d + "."), DIGITS.map(lambda d: "." + d),
                     st.builds(lambda a, b: f"{a}.{b}", DIGITS, DIGITS))
PAD = st.sampled_from(["", " ", "  ", "\t", "\x0c"])
DECIMAL = st.builds(lambda l, s, m, e, r: l + s + m + e + r, PAD, SIGN, MANTISSA, EXPONENT, PAD)
SPECIAL = st.sampled_from(["", " ", "   ", "inf", "-inf", "+inf", "Infinity", "-Infinity", "INF", "iNfInItY",
                           "nan", "NaN", "-nan", "+NaN", "nan(1)", "None", "null", "1_000", "1,5", "0x10", "1e",
                           "e5", ".", "-", "+-1", "--1", "1.5.2", "\u0661\u0662", "\uff11\uff12", "1e400", "-1e400",
                           "4.9e-324", "2.5e-324", "1e-400", "1.7976931348623157e308", "1.8e308", "-0", "-0.0"])
NOISE = st.text("0123456789.eE+-_ infatyINFATY\t", max_size=30)
HUGE_INT = st.integers(min_value=10 ** 300, max_value=10 ** 420).map(str)
FLOAT = st.floats(allow_nan=True, allow_infinity=True).flatmap(
    lambda x: st.sampled_from([repr(x), f"{x:e}", f"{x:.17g}", f"{x:f}" if math.isfinite(x) else repr(x)]))
TOKEN = st.one_of(DECIMAL, SPECIAL, NOISE, HUGE_INT, FLOAT)


def _testbed() -> Testbed:
    tb = Testbed(name="one", segments=[Segment(id="1", source="s", references=["a cat"])])
    tb.candidates = {"A": {0: "a cat"}}
    return tb


def _expected(token: str):
    """The float Python reads, or None when it reads none (or an infinite one, which is no score)."""
    if token in ("None", "null"):
        return "missing"
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _check(read, token, path, line=1, missing=("None",)):
    """``read()`` gives float(token) exactly, or one InputError naming ``path``."""
    try:
        value = read()
    except InputError as err:
        assert err.path == str(path) and err.line == line, (token, str(err))
        assert err.reason and err.fix, (token, str(err))
        return None
    expected = _expected(token)
    if token.strip() in missing and token == token.strip():
        assert value is None, (token, value)
        return value
    assert expected not in (None, "missing"), f"{token!r} was read as {value!r}"
    assert repr(value) == repr(expected), (token, value, expected)
    return value


@EXAMPLES
@given(token=TOKEN)
def test_tsv_scores(tmp_path_factory, token):
    path = tmp_path_factory.mktemp("tsv") / "s.tsv"
    path.write_bytes(f"A\t1\t{token}\n".encode("utf-8"))
    metric = combo.get_metric(f"scores:{path}")
    if "\t" in token:  # another field: the line's field count is wrong
        _check(lambda: metric.read(_testbed())[0]["A"][0], token, path)
        return
    value = _check(lambda: metric.read(_testbed())[0]["A"][0], token, path, missing=("None", "null"))
    if value is not None:  # a finite score is accepted only as decimal notation
        assert token.strip().lower().lstrip("+-") not in ("inf", "infinity", "nan") and "_" not in token


@EXAMPLES
@given(token=TOKEN, before=st.integers(0, 3))
def test_json_scores(tmp_path_factory, token, before):
    path = tmp_path_factory.mktemp("json") / "s.json"
    path.write_bytes(("{" + "\n" * before + f'"A": {{"1": {token}}}}}\n').encode("utf-8"))
    metric = combo.get_metric(f"scores:{path}")
    try:
        json.loads(path.read_text(encoding="utf-8"), parse_constant=str)
    except ValueError:  # not JSON (inf, 1_000, empty, ...): one InputError naming the file and the JSON line
        try:
            metric.read(_testbed())
        except InputError as err:
            assert err.path == str(path) and err.line is not None, str(err)
        else:
            raise AssertionError(f"{token!r} read from invalid JSON")
        return
    _check(lambda: metric.read(_testbed())[0]["A"][0], token, path, before + 1, missing=("null",))


@EXAMPLES
@given(token=TOKEN)
def test_mtme_score_files(tmp_path_factory, token):
    path = tmp_path_factory.mktemp("mtme") / "en-de.mqm.seg.score"
    path.write_bytes(f"A {token}\n".encode("utf-8"))
    if len(f"A {token}".split()) != 2:  # white space only, or inside the token: a field count error
        _check(lambda: read_score_file(path, "seg", 1)["A"][0], token, path)
        return
    _check(lambda: read_score_file(path, "seg", 1)["A"][0], token.strip(), path)


@EXAMPLES
@given(x=st.floats(allow_nan=False, allow_infinity=False), form=st.sampled_from(["repr", "e", "17g", "f"]))
def test_every_finite_float_written_any_usual_way_is_read_back(tmp_path_factory, x, form):
    token = {"repr": repr(x), "e": f"{x:e}", "17g": f"{x:.17g}", "f": f"{x:f}"}[form]
    folder = tmp_path_factory.mktemp("round")
    (folder / "s.tsv").write_text(f"A\t1\t{token}\n")
    (folder / "s.json").write_text(f'{{"A": {{"1": {token}}}}}')
    (folder / "m.score").write_text(f"A\t{token}\n")
    got = [combo.get_metric(f"scores:{folder / 's.tsv'}").read(_testbed())[0]["A"][0],
           combo.get_metric(f"scores:{folder / 's.json'}").read(_testbed())[0]["A"][0],
           read_score_file(folder / "m.score", "seg", 1)["A"][0]]
    assert [repr(v) for v in got] == [repr(float(token))] * 3
