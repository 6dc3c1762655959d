"""Progress of long steps, on stderr: a bar on a terminal, a line now and then in a log, nothing when quiet.

Every step that can take more than a few seconds (scoring each metric, scoring reference pairs, KING's
chunks of segments, the metric sets a search measures, the bootstrap of each entry of ``combo evaluate``)
reports through :func:`progress`, so the command line shows one consistent kind of progress:

* stderr is a terminal: a tqdm bar that disappears when the step is done;
* stderr is a file or a pipe (a log, ``2> run.log``, a batch job): one line per step at most every
  ``interval`` seconds (default 10), none for a step that ends sooner, and a last line with the total time
  when any line was written;
* ``enabled=False`` (``--quiet``), or stderr is neither (an in-memory stream): nothing.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Optional

LINE_INTERVAL = 10.0  # seconds between two progress lines in a log


def progress(total: Optional[float], desc: str, enabled: bool = True, unit: str = "step",
             stream: Optional[IO[str]] = None, interval: float = LINE_INTERVAL, unit_scale: bool = False):
    """A progress reporter with ``update(n)`` and ``close()`` (also a context manager); see the module doc.

    ``total``: the number of units (None when unknown, e.g. a beam search). ``stream``: default sys.stderr.
    """
    stream = sys.stderr if stream is None else stream
    if not enabled:
        return _Silent()
    if _isatty(stream):
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit_scale, leave=False, file=stream)
    if _is_file(stream):
        return _Lines(total, desc, unit, stream, interval)
    return _Silent()


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _is_file(stream) -> bool:
    """A real file or pipe (a log), not an in-memory stream such as a test runner's capture."""
    try:
        stream.fileno()
        return True
    except (AttributeError, ValueError, OSError):
        return False


class _Silent:
    def update(self, n: float = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def plural(noun: str, count: float = 2) -> str:
    """``noun`` for ``count`` things: "1 entry", "2 entries", "3 sets", "2 passes"."""
    if count == 1:
        return noun
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")


class _Lines(_Silent):
    """One line per step, at most every ``interval`` seconds, then a last line when any was written."""

    def __init__(self, total: Optional[float], desc: str, unit: str, stream, interval: float):
        self.total, self.desc, self.unit, self.stream, self.interval = total, desc, unit, stream, interval
        self.done = 0.0
        self.start = self.last = time.monotonic()
        self.written = False

    def _write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
        self.written = True

    def _count(self) -> str:
        done = f"{self.done:.3g}" if self.done >= 1e4 else f"{self.done:g}"
        if not self.total:
            return f"{done} {plural(self.unit, self.done)}"
        total = f"{self.total:.3g}" if self.total >= 1e4 else f"{self.total:g}"
        return f"{done}/{total} {plural(self.unit, self.total)} ({100 * self.done / self.total:.0f}%)"

    def update(self, n: float = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            elapsed = now - self.start
            left = ""
            if self.total and 0 < self.done < self.total:
                left = f", about {elapsed * (self.total - self.done) / self.done:.0f} s left"
            self._write(f"{self.desc}: {self._count()} in {elapsed:.0f} s{left}")

    def close(self) -> None:
        if self.written:
            self._write(f"{self.desc}: done, {self._count()} in {time.monotonic() - self.start:.0f} s")
            self.written = False
