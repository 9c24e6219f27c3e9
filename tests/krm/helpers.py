"""Build ResourceList text the way kpt does, from documents."""

from __future__ import annotations

from pathlib import Path

from krm_merge.krm.package import split_documents
from krm_merge.krm.resourcelist import indent_item

CORPUS = Path(__file__).resolve().parent / "corpus"


def corpus_documents() -> list[tuple[str, str]]:
    """(name, document text) of every document of the corpus, LF line ends."""
    out = []
    for path in sorted(CORPUS.iterdir()):
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        _, docs = split_documents(text)
        for n, doc in enumerate(docs):
            if doc.strip() and doc.strip() != "...":
                out.append((f"{path.name}#{n}", doc.replace("\n...\n", "\n")))
    return out


def resource_list(docs: list[str], function_config: str | None = None) -> str:
    """A ResourceList in kyaml's canonical layout holding ``docs``."""
    parts = ["apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"]
    parts.extend(indent_item(doc) for doc in docs)
    if function_config:
        parts.append("functionConfig:\n" + "".join("  " + line + "\n" for line in function_config.splitlines()))
    return "".join(parts)
