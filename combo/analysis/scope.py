"""Run-scoped state: an object held in a context variable for the length of a ``with`` block (a scoring
run), so nothing an analysis keeps outlives the run or leaks into another test bed's."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator, Optional, TypeVar

T = TypeVar("T")


@contextmanager
def run_scope(var: ContextVar[Optional[T]], factory: Callable[[], T], fresh: bool = False) -> Iterator[T]:
    """The object already open in ``var`` (nested ``with`` blocks share it), or a new one from ``factory``
    (always with ``fresh``) for the block, removed at its end."""
    current = var.get()
    if current is not None and not fresh:
        yield current
        return
    token = var.set(factory())
    try:
        yield var.get()
    finally:
        var.reset(token)
