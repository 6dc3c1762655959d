"""Small helpers shared by the reader tests (imported as a plain module: pytest puts tests/ on sys.path)."""

import pytest

from combo.errors import InputError


def input_error(fn, *args, **kwargs) -> InputError:
    """The InputError that ``fn(*args, **kwargs)`` raises (fails the test if it raises none)."""
    with pytest.raises(InputError) as info:
        fn(*args, **kwargs)
    return info.value


def write_text(path, text):
    """Write UTF-8 ``text`` to ``path``, creating its folders; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
