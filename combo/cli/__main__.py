"""``python -m combo.cli``: the ``combo`` command."""

from . import main

if __name__ == "__main__":  # pragma: no cover
    main()
