"""The byte-level fuzz target: raw bytes into each entry point.

The first byte picks the entry point (``ENTRY_POINTS``), the rest is the
hostile text, placed where that entry point reads it.  Corpus files are named
``<entry>--<what>.<ext>`` and hold only the text (the selector byte is added
when seeding the fuzzer).  A failure raises :class:`harness.Unclean` unless it
is one of the already reported ``KNOWN_BUGS``.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script by atheris
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    __package__ = "tests.reliability"

from tests.reliability.harness import Unclean, check_function, configmap, known_bug, resource_list  # noqa: E402
from tests.reliability.strategies import PIPELINE  # noqa: E402

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"
KPTFILE = ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n"
           "  - image: set-labels:v0.1\n    configMap:\n      app: x\n")
PATCH = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  fuzz: x\n"


def _rl(text: str) -> str:
    return text


def _patch(text: str) -> str:
    return resource_list([CM + "data:\n  a: b\n"], configmap({"mode": "reorder-merge", "patch": text}))


def _item(text: str) -> str:
    return resource_list([CM + text], configmap({"mode": "reorder-merge", "patch": PATCH}))


def _kptfile(text: str) -> str:
    return resource_list([text], configmap({"mode": "pipeline-merge", "origin": KPTFILE, "upstream": KPTFILE}))


def _marked(text: str) -> str:
    return resource_list([PIPELINE, text], configmap(
        {"mode": "promote", "pipeline": "default/podinfo", "environment": "prod", "value": "6.3.1",
         "allowNoMatch": "true"}))


def _fnconfig(text: str) -> str:
    return resource_list([CM], text)


ENTRY_POINTS = {"rl": _rl, "patch": _patch, "item": _item, "kptfile": _kptfile, "marked": _marked,
                "fnconfig": _fnconfig}
NAMES = list(ENTRY_POINTS)


def run_entry(entry: str, text: str) -> None:
    """Feed ``text`` to one entry point; raise Unclean on a new kind of failure."""
    try:
        check_function(ENTRY_POINTS[entry](text))
    except Unclean as err:
        if known_bug(str(err)) is None:
            raise


def one_input(data: bytes) -> None:
    """The fuzz target: selector byte + UTF-8 text (undecodable input is the CLI's job)."""
    if not data:
        return
    entry = NAMES[data[0] % len(NAMES)]
    try:
        text = data[1:].decode("utf-8")
    except UnicodeDecodeError:
        return
    run_entry(entry, text)


def seed_bytes(path: Path) -> bytes:
    """A corpus file as fuzzer input (its entry's selector byte first)."""
    entry = path.name.split("--", 1)[0]
    return bytes([NAMES.index(entry)]) + path.read_bytes()


def main() -> None:
    """``python fuzz_target.py [libFuzzer flags] CORPUS_DIR...`` under atheris."""
    import atheris

    with atheris.instrument_imports():
        import krm_merge.krm.kubeobject  # noqa: F401
        import krm_merge.krm.resourcelist  # noqa: F401
        import krm_merge.modes.pipeline_merge  # noqa: F401
        import krm_merge.modes.promote  # noqa: F401
        import krm_merge.modes.reorder_merge  # noqa: F401
        import krm_merge.runner  # noqa: F401
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
