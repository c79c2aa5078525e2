"""``edgebench schema DOCUMENT``: the JSON Schema of a file edgebench reads or writes.

Each document is described once, as a pydantic model in the module that reads or writes it; the
schema printed here, the validation of that file and the key tables of its docs page
(``scripts/schema_docs.py``) all come from that model. :data:`DOCUMENTS` is the list.
"""
from __future__ import annotations

import importlib
import json
from collections import namedtuple
from pathlib import Path
from typing import Optional

import typer

from edgebench.cli import options as opt
from edgebench.errors import UsageError

Document = namedtuple("Document", "name model mode title file")

DOCUMENTS = {d.name: d for d in (
    Document("run", "edgebench.results.model:RunResult", "validation", "edgebench run (run.json)",
             "RUNS/<run>/run.json: one run, as every verb stores it (docs/results-schema.md)"),
    Document("board", "edgebench.boards.profile:BoardProfile", "validation", "edgebench board profile",
             "boards/<name>.yaml: what a board is and how to reach it (docs/boards.md)"),
    Document("farm", "edgebench.farm.fanout:FanoutSummary", "serialization", "edgebench farm fan-out (farm.json)",
             "RUNS/farm-<verb>-<time>/farm.json: one --farm fan-out over a labgrid farm (docs/farm.md)"),
    Document("sidecar", "edgebench.provenance:Sidecar", "validation", "edgebench model sidecar",
             "<model>.json: where a model file came from, written by quantize and compile (docs/quantize.md)"),
    Document("acks", "edgebench.results.acks:AcksFile", "validation", "edgebench acknowledged warnings",
             "RUNS/acknowledged.json: warnings acknowledged for a runs folder, by edgebench ack (docs/warnings.md)"),
)}


def document_schema(name: str) -> dict:
    """The JSON Schema (draft 2020-12) of document ``name`` of :data:`DOCUMENTS`."""
    # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.schema import adapter

    doc = DOCUMENTS[name]
    module, attr = doc.model.split(":")
    model = getattr(importlib.import_module(module), attr)
    schema = adapter(model).json_schema(mode=doc.mode)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": doc.title,
            "description": doc.file, **{k: v for k, v in schema.items() if k != "title"}}


def schema(
    document: Optional[str] = typer.Argument(None, metavar="DOCUMENT",
                                             help=f"One of {', '.join(DOCUMENTS)}; omit to list them."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the schema to this file."),
    json_out: bool = opt.json_flag("the list of documents (a schema is always JSON)"),
) -> None:
    """The JSON Schema of run.json, a board profile, farm.json or a model's sidecar."""
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console

    if document is None:
        if json_out:
            emit_json([{"name": d.name, "file": d.file, "title": d.title} for d in DOCUMENTS.values()])
            return
        for d in DOCUMENTS.values():
            get_console().print(f"{d.name:8} {d.file}", markup=False, highlight=False, soft_wrap=True)
        return
    if document not in DOCUMENTS:
        raise UsageError(f"no schema {document!r}", f"one of {', '.join(DOCUMENTS)}")
    text = json.dumps(document_schema(document), indent=2, ensure_ascii=False) + "\n"
    if output is None:
        typer.echo(text, nl=False)
        return
    # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.results.store import write_text_atomic

    write_text_atomic(output, text)
    get_console().print(f"the {document} schema written to {output}", markup=False, highlight=False)
