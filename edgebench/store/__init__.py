"""Results stores (level 2a): every run in one history, behind one protocol (:mod:`edgebench.store.base`).

The runs folder stays the source of truth on the writing machine; a store indexes it
(:mod:`edgebench.store.embedded`, DuckDB, the default) or shares it with a lab
(``edgebench.store.postgres``). :func:`edgebench.store.open.open_store` picks one by URL.
docs/store.md describes both.
"""
