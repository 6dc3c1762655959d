"""combo.io.load_testbed: the reader is chosen from the path."""

import pytest

from combo.errors import InputError, OptionError
from combo.io import load_testbed, write_jsonl


def test_known_data_folders(data):
    assert load_testbed(data / "wmt12", lp="de-en").name == "wmt12.de-en"
    assert load_testbed(data / "flickr8k", judgments="crowd").name == "flickr8k-crowd"
    assert load_testbed(data / "dstc7").name == "dstc7-task2"
    assert load_testbed(data / "sick" / "SICK.txt").name == "sick"
    with pytest.raises(OptionError, match="lp="):
        load_testbed(data / "wmt12")
    with pytest.raises(OptionError, match="unknown option judgments; known: remove_human_copy"):
        load_testbed(data / "dstc7", judgments="crowd")


def test_plain_folder_and_jsonl(tmp_path):
    for sub, text in (("references/r.txt", "a\nb\n"), ("systems/s.txt", "x\ny\n")):
        (tmp_path / sub).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / sub).write_text(text, encoding="utf-8")
    tb = load_testbed(tmp_path)
    assert tb.systems == ["s"] and len(tb) == 2
    write_jsonl(tb, tmp_path / "t.jsonl")
    assert load_testbed(tmp_path / "t.jsonl") == tb


def test_unknown_or_missing(tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    err = pytest.raises(InputError, load_testbed, tmp_path / "notes.txt").value
    assert err.path == str(tmp_path / "notes.txt") and "unknown test-bed format" in str(err) and ".jsonl" in err.fix
    assert "unknown test-bed format" in str(pytest.raises(InputError, load_testbed, tmp_path).value)
    assert "no such file" in str(pytest.raises(InputError, load_testbed, tmp_path / "nope").value)


def test_mtme_folder_with_several_pairs_needs_lp(tmp_path):
    d = tmp_path / "wmtX"
    for lp in ("en-de", "de-en"):
        for rel, text in ((f"sources/{lp}.txt", "s\n"), (f"references/{lp}.refA.txt", "r\n"),
                          (f"system-outputs/{lp}/sys.txt", "h\n")):
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_text(text, encoding="utf-8")
    with pytest.raises(OptionError, match="2 language pairs"):
        load_testbed(d)
    assert load_testbed(d, lp="de-en").name == "wmtX.de-en"


def test_a_missing_testbed_is_offered_only_what_the_option_reads(tmp_path, monkeypatch):
    """Model files beside it (ulc.json) are not offered for --testbed; a test bed of a close name is."""
    from combo.errors import InputError
    from combo.io import load_testbed

    (tmp_path / "ulc.json").write_text("{}")
    (tmp_path / "ulc5.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as err:
        load_testbed("nosuch.jsonl")
    assert "ulc" not in err.value.fix
    (tmp_path / "nosuch2.jsonl").write_text("")
    with pytest.raises(InputError) as err:
        load_testbed("nosuch.jsonl")
    assert "nosuch2.jsonl" in err.value.fix
