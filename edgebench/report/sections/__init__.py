"""The report's sections, one module per kind of figure (level 1, pure): each renders what a run of
its kind holds, reading the typed run record (:mod:`edgebench.results.figures`) by attribute.

:mod:`edgebench.report.html` names them in its ``SECTIONS`` table (a run kind lists the sections it
has, :attr:`edgebench.results.kinds.RunKind.sections`); :mod:`base` holds what they share (the run's
data as the CLI read it, the HTML helpers). A section that renders as blocks
(:mod:`edgebench.report.sections.blocks`) is drawn both as HTML and as Markdown from one description.
"""
