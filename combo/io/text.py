"""Safe reading of UTF-8 text files, shared by every reader in :mod:`combo.io`.

Lines are split on ``\\n`` only (never :meth:`str.splitlines`, which also
splits on form feeds, ``\\x1c``, ``\\u2028`` and the like and so would shift
every later segment). A final trailing newline is normal and is not a line.
Everything a user can get wrong raises one :class:`~combo.errors.InputError`
naming the file, the 1-based line and the fix: a missing or empty file,
invalid UTF-8, CRLF line endings or stray carriage returns. A UTF-8
byte-order mark at a file's start is dropped by every reader.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from ..errors import InputError

PathLike = Union[str, "os.PathLike[str]"]

BOM = b"\xef\xbb\xbf"


def read_bytes(path: PathLike) -> bytes:
    """The raw bytes of ``path``; a missing file, a folder or no permission is an InputError."""
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", p, fix="check the path") from None
    except IsADirectoryError:
        raise InputError("is a folder, not a file", p, fix="give the path of a text file") from None
    except PermissionError:
        raise InputError("permission denied", p, fix="make the file readable") from None
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", p) from None


def _line_of(data: bytes, pos: int) -> int:
    """1-based line number of byte offset ``pos``."""
    return data.count(b"\n", 0, pos) + 1


def read_lines(path: PathLike, *, allow_empty: bool = False, strip_bom: bool = True,
               accept_crlf: bool = False) -> List[str]:
    """The lines of a UTF-8 text file, without their newlines.

    A UTF-8 byte-order mark at the start is dropped (it marks the encoding
    and is no text, as Python's ``utf-8-sig`` reads it): every reader reads a
    file the same way, a plain test bed and ``combo apply`` as the
    mt-metrics-eval reader reads WMT23's ``AIRC.txt``. ``accept_crlf``
    exists only for loaders of known upstream files with CRLF endings (SICK);
    files a user supplies reject them.
    An empty file is an error unless ``allow_empty`` (then ``[]``). The
    encoding is diagnosed first (UTF-16 and UTF-32, with or without a mark,
    are named as such), and everything wrong with the file is said in one
    message, at the line of its first problem (:func:`text_problems`).
    """
    data = read_bytes(path)
    if strip_bom and data.startswith(BOM):
        data = data[len(BOM):]
    if accept_crlf:
        data = data.replace(b"\r\n", b"\n")
    if not data:
        if allow_empty:
            return []
        raise InputError("file is empty", path, 1, fix="give a file with one item per line")
    problems = text_problems(data, str(path))
    if problems:
        line = min(p[1] for p in problems)
        message = "; also ".join(p[0] for p in problems) if len(problems) > 1 else problems[0][0]
        fixes = [p[2] for p in problems]
        fix = fixes[0] if len(fixes) == 1 else "; and ".join(dict.fromkeys(fixes))
        raise InputError(message, path, line, fix=fix)
    lines = data.decode("utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


#: Byte-order marks of the encodings a text editor may save in, longest first.
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"), (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
              (b"\xff\xfe", "UTF-16 (little-endian)"), (b"\xfe\xff", "UTF-16 (big-endian)"))
#: A command every fresh machine has that turns CRLF line endings into LF (dos2unix is seldom installed).
_CR_TO_LF = "sed 's/\\r$//'"


def _wide_encoding(data: bytes) -> Optional[Tuple[str, str]]:
    """UTF-16 or UTF-32 by the byte-order mark, or by the zero bytes of mostly-ASCII text without one: its name
    and Python's (and iconv's) codec name."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return name, name.split(" ")[0]
    named = _unmarked_wide_encoding(data)
    if named is None:
        return None
    codec = named.split(" ")[0] + ("LE" if "little" in named else "BE")
    return named, codec


def _unmarked_wide_encoding(data: bytes) -> Optional[str]:
    head = data[:4096]
    if len(head) >= 4 and head.count(0) >= len(head) // 3:
        if len(head) >= 8 and head[1:4] == b"\x00\x00\x00":
            return "UTF-32 (little-endian)"
        return "UTF-16 (little-endian)" if head[1] == 0 and head[0] != 0 else \
            "UTF-16 (big-endian)" if head[0] == 0 and head[1] != 0 else None
    return None


def _beside(name: str, tag: str) -> str:
    """The shell word of a file beside ``name`` for a fix's output: ``dir/h.txt`` -> ``dir/h.utf8.txt``."""
    p = Path(name)
    return shlex.quote(str(p.with_name(f"{p.stem}.{tag}{p.suffix}")))


def text_problems(data: bytes, name: str = "FILE") -> List[Tuple[str, int, str]]:
    """What keeps ``data`` from being UTF-8 text with LF line endings: ``(problem, line, fix)``, each kind once,
    the encoding first (a UTF-16 file saved by Notepad is named as such, not by its carriage returns); ``name``
    is the file's name in the commands a fix gives."""
    wide = _wide_encoding(data)
    if wide is not None:
        described, codec = wide
        try:
            decoded = data.decode(codec.lower()).encode("utf-8")
        except (UnicodeDecodeError, LookupError):
            decoded = b""
        crlf = " with CRLF (Windows) line endings" if b"\r\n" in decoded else ""
        out = _beside(name, "utf8")
        return [(f"the file is {described} text{crlf}, not UTF-8", 1,
                 f"save it as UTF-8{' with LF line endings' if crlf else ''}, e.g. iconv -f {codec} -t UTF-8 "
                 f"{shlex.quote(name)}{' | ' + _CR_TO_LF if crlf else ''} > {out}")]
    problems: List[Tuple[str, int, str]] = []
    pos = data.find(b"\r")
    if pos >= 0:
        if data[pos + 1:pos + 2] == b"\n":
            problems.append(("CRLF (Windows) line endings", _line_of(data, pos),
                             f"convert the file to LF line endings, e.g. {_CR_TO_LF} {shlex.quote(name)} > "
                             f"{_beside(name, 'lf')}"))
        else:
            problems.append(("carriage return (\\r) inside a line", _line_of(data, pos),
                             "remove carriage returns or convert the file to LF line endings"))
    nul = data.find(b"\x00")
    if nul >= 0:
        problems.append(("NUL byte (\\x00) in the text: a binary file, or UTF-16/UTF-32 text", _line_of(data, nul),
                         "give a UTF-8 text file"))
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start:exc.start + 1].hex()
        guess = ""
        try:
            data.decode("cp1252")
            guess = " (Windows-1252 or Latin-1 text?)"
        except UnicodeDecodeError:
            pass
        problems.append((f"invalid UTF-8 (byte 0x{bad}){guess}", _line_of(data, exc.start),
                         "re-encode the file as UTF-8"
                         + (f", e.g. iconv -f CP1252 -t UTF-8 {shlex.quote(name)} > {_beside(name, 'utf8')}"
                            if guess else "")))
    return problems


def split_fields(line: str, lineno: int, path: PathLike, *, count: Optional[int] = None,
                 min_count: Optional[int] = None, sep: Optional[str] = "\t",
                 what: str = "tab-separated fields") -> List[str]:
    """Split one line into fields, checking their number; ``sep=None`` splits on whitespace."""
    fields = line.split(sep)
    if count is not None and len(fields) != count:
        raise InputError(f"expected {count} {what}, found {len(fields)}", path, lineno,
                         fix=f"give exactly {count} {what} on each line")
    if min_count is not None and len(fields) < min_count:
        raise InputError(f"expected at least {min_count} {what}, found {len(fields)}", path, lineno,
                         fix=f"give at least {min_count} {what} on each line")
    return fields


def check_row_width(fields: Sequence[str], head: Sequence[str], lineno: int, path: PathLike, fix: str) -> None:
    """Check that a row of a tab-separated table has one field per column of its header ``head``."""
    if len(fields) != len(head):
        raise InputError(f"expected {len(head)} tab-separated fields, found {len(fields)}", path, lineno, fix=fix)


#: A finite decimal number as every score file writes it: ASCII digits, an optional sign, point and exponent.
#: Python's float() also takes ``1_000`` (so a typo ``1_5`` would read as 15) and non-ASCII digits; these are refused.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
_LARGEST = "1.8e308"  # sys.float_info.max, rounded up


def parse_float(token: str, lineno: Optional[int], path: PathLike, what: str = "score",
                low: Optional[float] = None, high: Optional[float] = None, missing: Optional[str] = None) -> float:
    """A finite float (optionally within [low, high]); anything else is an InputError naming the line.

    Accepted: ASCII decimal notation (``-0.5``, ``.5``, ``3.``, ``1e-3``), white space around it allowed;
    the value is exactly ``float(token)``. Refused, each with its own message: an empty field, NaN and
    infinity in any spelling, a number beyond the float range (``1e400``, 400 digits: float() would
    silently make it infinite), and anything else (``1_5``, ``1,5``, words). ``missing`` is how the file
    marks a missing value (e.g. ``"None"``), named in the fix where it applies.
    """
    text = token.strip()
    or_missing = f", or {missing} where there is no {what}" if missing else ""
    if not text:
        raise InputError(f"{what} is empty" + (f" (a missing {what} is written {missing})" if missing else ""),
                         path, lineno, fix=f"write the {what} as a decimal number{or_missing}")
    if _NON_FINITE.fullmatch(text):
        raise InputError(f"{what} is {text!r}, not a finite number", path, lineno,
                         fix=(f"write a finite number in place of NaN or infinite values{or_missing}" if missing
                              else "remove NaN or infinite judgments"))
    if not _DECIMAL.fullmatch(text):
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise InputError(f"{what} {shown!r} is not a number", path, lineno,
                         fix=f"write the {what} as a decimal number (digits, '.', e-notation){or_missing}")
    value = float(text)
    if not math.isfinite(value):  # a decimal beyond the float range: float() makes it infinite
        shown = text if len(text) <= 40 else f"{text[:12]}... ({len(text)} characters)"
        raise InputError(f"{what} {shown!r} is beyond the float range (+-{_LARGEST}) and would read as infinite",
                         path, lineno, fix=f"write each {what} as a number within +-{_LARGEST}{or_missing}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise InputError(f"{what} {value:g} is outside [{low:g}, {high:g}]", path, lineno,
                         fix=f"give {what}s between {low:g} and {high:g}")
    return value


_INTEGER = re.compile(r"[+-]?[0-9]+")


def parse_int(token: str, lineno: Optional[int], path: PathLike, what: str = "number") -> int:
    """An integer written in ASCII decimal digits (white space around allowed); anything else is an
    InputError naming the line (``1_000`` and non-ASCII digits too, which int() would take)."""
    text = token.strip()
    if not _INTEGER.fullmatch(text):
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise InputError(f"{what} {shown!r} is not an integer", path, lineno,
                         fix=f"write the {what} as a whole number")
    try:
        return int(text)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        raise InputError(f"{what} has {len(text)} digits, too many", path, lineno,
                         fix=f"write the {what} as a whole number of at most 4300 digits") from None


def read_table(path: PathLike, header: Optional[Sequence[str]] = None, *, count: Optional[int] = None,
               min_count: Optional[int] = None, strip_bom: bool = True,
               accept_crlf: bool = False) -> Tuple[List[str], List[Tuple[int, List[str]]]]:
    """A tab-separated file: ``(header fields, [(line number, fields), ...])``.

    With ``header`` given, the first line must start with exactly those
    column names. ``count``/``min_count`` check the number of fields per row.
    """
    lines = read_lines(path, strip_bom=strip_bom, accept_crlf=accept_crlf)
    head = lines[0].split("\t")
    if header is not None and head[:len(header)] != list(header):
        raise InputError(f"unexpected header {head[:len(header)]!r}", path, 1,
                         fix="the first line must name the columns " + "\\t".join(header))
    rows = []
    for lineno, line in enumerate(lines[1:], 2):
        rows.append((lineno, split_fields(line, lineno, path, count=count, min_count=min_count)))
    return head, rows


def current_umask() -> int:
    """The process umask, read without changing it where the system tells (Linux: /proc/self/status).

    Elsewhere it is read by setting and restoring it (``os.umask`` has no read-only form), which is
    safe in the single-threaded command line.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _temporary_beside(target: Path) -> Tuple[int, str]:
    """A new temporary file in ``target``'s folder (descriptor, path); a missing or read-only folder, or a
    ``target`` that is a folder, is an InputError."""
    import tempfile

    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InputError("output folder does not exist", str(folder), fix="create it first")
    if target.is_dir():
        raise InputError("is a folder, not a file", str(target), fix="give the path of a file to write")
    try:
        return tempfile.mkstemp(prefix=".combo-", dir=str(folder))
    except OSError as exc:
        raise InputError(f"cannot write into this folder ({exc.strerror})", str(folder),
                         fix="choose a writable place for the output") from None


def check_writable(path) -> None:
    """Refuse, before any work, an output ``path`` that :func:`write_text_atomic` could not write."""
    fd, probe = _temporary_beside(Path(path))
    os.close(fd)
    os.unlink(probe)


def write_text_atomic(text: str, path) -> None:
    """Write ``text`` (UTF-8, LF) to ``path`` whole or not at all: a temporary file renamed into place.

    The file gets the mode a plain ``open(path, "w")`` would give (``0o666`` less the umask), not
    the private ``0o600`` of the temporary file it was written as.
    """
    target = Path(path)
    fd, tmp = _temporary_beside(target)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, target)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise InputError(f"cannot write the file ({exc.strerror})", str(target),
                         fix="choose a writable place for the output") from None
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
