"""combo.io.text: safe line reading (missing, empty, invalid UTF-8, BOM, CRLF) and field parsing."""

import re

import pytest

from combo.errors import InputError
from combo.io.text import parse_float, parse_int, read_lines, read_table, split_fields
from testutil import input_error as _error


def test_lines_trailing_newline_and_empty_lines(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes("one\n\nthree ü\n".encode("utf-8"))
    assert read_lines(p) == ["one", "", "three ü"]
    p.write_bytes(b"no final newline")
    assert read_lines(p) == ["no final newline"]
    p.write_bytes(b"a\n\n")  # an empty last segment is a real line
    assert read_lines(p) == ["a", ""]
    p.write_bytes(b"\n")  # one empty segment
    assert read_lines(p) == [""]


def test_only_newline_splits_lines(tmp_path):
    # str.splitlines would also split on \x0b, \x1c, \x85 and \u2028 and shift every later segment.
    p = tmp_path / "odd.txt"
    p.write_bytes("a\x0bb\x1cc\u2028d\x85e\x0cf\nsecond\n".encode("utf-8"))
    assert read_lines(p) == ["a\x0bb\x1cc\u2028d\x85e\x0cf", "second"]


def test_missing_file(tmp_path):
    err = _error(read_lines, tmp_path / "nope.txt")
    assert err.path == str(tmp_path / "nope.txt") and "not found" in str(err) and err.fix


def test_folder_is_not_a_file(tmp_path):
    err = _error(read_lines, tmp_path)
    assert "folder" in str(err)


def test_empty_file(tmp_path):
    p = tmp_path / "e.txt"
    p.write_bytes(b"")
    err = _error(read_lines, p)
    assert (err.path, err.line) == (str(p), 1) and "empty" in str(err) and err.fix
    assert read_lines(p, allow_empty=True) == []


def test_invalid_utf8_names_line_of_first_bad_byte(tmp_path):
    p = tmp_path / "latin1.txt"
    p.write_bytes("ok\nalso ok\ncaf\xe9\nmore\xff\n".encode("latin-1"))
    err = _error(read_lines, p)
    assert (err.path, err.line) == (str(p), 3)
    assert "0xe9" in str(err) and "UTF-8" in str(err) and err.fix


def test_a_byte_order_mark_is_dropped_not_read_as_text(tmp_path):
    p = tmp_path / "bom.txt"
    p.write_bytes(b"\xef\xbb\xbfhello\nworld\n")
    assert read_lines(p) == ["hello", "world"] == read_lines(p, strip_bom=True)
    assert read_lines(p, strip_bom=False)[0] == "\ufeffhello"
    p.write_bytes(b"\xef\xbb\xbf")  # only a BOM: empty
    err = _error(read_lines, p)
    assert err.line == 1 and "empty" in str(err)
    p.write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")  # its CRLF endings are still named
    assert "CRLF" in str(_error(read_lines, p))


def test_crlf_rejected_unless_accepted(tmp_path):
    p = tmp_path / "crlf.txt"
    p.write_bytes(b"a\nb\r\nc\r\n")
    err = _error(read_lines, p)
    assert (err.path, err.line) == (str(p), 2) and "CRLF" in str(err) and "dos2unix" not in err.fix
    assert read_lines(p, accept_crlf=True) == ["a", "b", "c"]
    import shutil
    import subprocess

    if shutil.which("sed"):  # the command the fix offers, run as printed, makes a file that reads
        subprocess.run(err.fix.split("e.g. ")[1], shell=True, cwd=tmp_path, check=True)
        assert read_lines(tmp_path / "crlf.lf.txt") == ["a", "b", "c"]


def test_lone_carriage_return_rejected_even_with_crlf_accepted(tmp_path):
    p = tmp_path / "cr.txt"
    p.write_bytes(b"a\r\nb\rc\n")
    err = _error(read_lines, p, accept_crlf=True)
    assert err.line == 2 and "carriage return" in str(err)


def test_split_fields_and_numbers(tmp_path):
    assert split_fields("a\tb\tc", 4, "f", count=3) == ["a", "b", "c"]
    err = _error(split_fields, "a\tb", 4, "f", count=3)
    assert (err.path, err.line) == ("f", 4)
    assert split_fields("x  1.5", 1, "f", count=2, sep=None) == ["x", "1.5"]
    assert parse_float(" 2.5", 3, "f") == 2.5
    assert parse_int("-1", 3, "f") == -1
    for bad in ("nan", "NaN", "inf", "-Infinity"):
        err = _error(parse_float, bad, 7, "f")
        assert err.line == 7 and "NaN or infinite" in err.fix
    assert "not a number" in str(_error(parse_float, "abc", 2, "f"))
    assert "outside" in str(_error(parse_float, "5.5", 2, "f", "score", 1.0, 5.0))
    assert "not an integer" in str(_error(parse_int, "1.5", 2, "f"))


def test_read_table_header_and_fields(tmp_path):
    p = tmp_path / "t.tsv"
    p.write_text("a\tb\n1\t2\n3\t4\n", encoding="utf-8")
    head, rows = read_table(p, ("a", "b"), count=2)
    assert head == ["a", "b"] and rows == [(2, ["1", "2"]), (3, ["3", "4"])]
    err = _error(read_table, p, ("a", "c"))
    assert err.line == 1 and "header" in str(err)
    p.write_text("a\tb\n1\t2\n3\n", encoding="utf-8")
    assert _error(read_table, p, ("a", "b"), count=2).line == 3


def test_read_lines_on_real_files(data):
    # The WMT12 de-en outputs: 16 files x 3,003 lines; the DSTC7 gold file is ~4 MB.
    files = sorted((data / "wmt12" / "plain" / "system-outputs" / "newstest2012" / "de-en").iterdir())
    total = sum(len(read_lines(f)) for f in files)
    total_gold = len(read_lines(data / "dstc7" / "dstc7-task2-gold_responses.tsv"))
    assert total == 16 * 3003 and total_gold == 1001


@pytest.mark.parametrize("data, said", [
    ("hi\r\nyo\r\n".encode("utf-16"), "UTF-16 (little-endian) text with CRLF (Windows) line endings"),
    ("hi\nyo\n".encode("utf-16-le"), "UTF-16 (little-endian) text, not UTF-8"),
    ("hi\nyo\n".encode("utf-16-be"), "UTF-16 (big-endian) text, not UTF-8"),
    ("hi\nyo\n".encode("utf-32"), "UTF-32 (little-endian) text, not UTF-8"),
    ("café\r\nyo\r\n".encode("cp1252"), "CRLF (Windows) line endings; also invalid UTF-8 (byte 0xe9)"),
])
def test_the_encoding_is_named_first_and_every_problem_once(tmp_path, data, said):
    import codecs
    import shutil
    import subprocess

    from combo.io.text import read_lines

    path = tmp_path / "h.txt"
    path.write_bytes(data)
    with pytest.raises(InputError, match=re.escape(said)) as err:
        read_lines(path)
    assert str(err.value).count("\n") == 0
    fixed = data.decode("utf-16" if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) and
                        data[:4] != codecs.BOM_UTF32_LE else "utf-32" if data[:4] == codecs.BOM_UTF32_LE else
                        "utf-16-le" if data[1:2] == b"\x00" else "utf-16-be" if data[:1] == b"\x00" else "cp1252")
    path.write_text(fixed.replace("\r\n", "\n"), encoding="utf-8")  # what the fix's iconv | sed makes
    assert read_lines(path) == [fixed.split("\r\n")[0].split("\n")[0], "yo"]
    one_command = "; and " not in str(err.value)  # two problems, two fixes: not one command to run
    if shutil.which("iconv") and shutil.which("sed") and "iconv" in str(err.value) and one_command:
        command = str(err.value).split("e.g. ")[1].rstrip(")")
        path.write_bytes(data)
        subprocess.run(command, shell=True, cwd=tmp_path, check=True)
        assert read_lines(tmp_path / "h.utf8.txt")[-1] == "yo"  # the printed command, run as printed
