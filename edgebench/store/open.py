"""Open a results store by URL (level 2a): the table of schemes, each backend imported on use.

``open_store(None)`` / ``open_store("")`` / a plain path / ``duckdb:PATH`` open the embedded
index over a runs folder (:mod:`edgebench.store.embedded`); ``postgresql://...`` opens a
lab's shared store (``edgebench.store.postgres``). Each backend module provides
``connect(url, root) -> ResultsStore``. The URL in messages never shows a password
(:func:`redact`).
"""
from __future__ import annotations

import importlib
import os
import re

from edgebench.errors import StoreError
from edgebench.store.base import ResultsStore

#: URL scheme -> the module implementing it (its ``connect(url, root)``).
SCHEMES = {
    "duckdb": "edgebench.store.embedded",
    "postgresql": "edgebench.store.postgres",
    "postgres": "edgebench.store.postgres",
}
DEFAULT_SCHEME = "duckdb"
#: The environment variable naming a shared store every run is also appended to.
ENV = "EDGEBENCH_STORE"


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (safe to print)."""
    text = re.sub(r"(://[^:/@\s]*:)[^@/\s]*@", r"\1***@", str(url))
    return re.sub(r"(password=)[^&\s]*", r"\1***", text, flags=re.IGNORECASE)


def scheme_of(url) -> str:
    """The scheme of a store URL: ``duckdb`` for none, a path or ``duckdb:``."""
    text = "" if url is None else str(url)
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", text)
    if not m or len(m.group(1)) == 1:      # no scheme, or a Windows drive letter
        return DEFAULT_SCHEME
    return m.group(1).lower()


def open_store(url=None, root="runs") -> ResultsStore:
    """The results store at ``url`` (see the module doc); ``root`` is the local runs folder the
    embedded store indexes. StoreError (one line, no password) for an unknown scheme or a
    backend that is not installed."""
    scheme = scheme_of(url)
    module = SCHEMES.get(scheme)
    if module is None:
        raise StoreError(f"unknown results store {redact(url)!r} (scheme {scheme}:)",
                         f"give a runs folder, duckdb:PATH or one of {', '.join(s + '://' for s in SCHEMES if s != 'duckdb')}")
    try:
        backend = importlib.import_module(module)
    except ImportError as exc:
        raise StoreError(f"the {scheme} results store is not available here ({exc})",
                         "install edgebench with its store dependencies (pip install 'edgebench[store]')") from None
    return backend.connect("" if url is None else str(url), root)


def shared_url(option=None):
    """The shared store a run is appended to besides the local index: ``--store`` if given, else
    ``$EDGEBENCH_STORE``; None for none."""
    value = option if option not in (None, "") else os.environ.get(ENV, "")
    return value or None


__all__ = ["DEFAULT_SCHEME", "ENV", "SCHEMES", "open_store", "redact", "scheme_of", "shared_url"]
