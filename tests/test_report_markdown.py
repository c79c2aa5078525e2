"""The Markdown report escapes every run field for GitHub (issue 22, item 8), checked with
GitHub's own Markdown parser (cmark-gfm, through the cmarkgfm bindings) with raw HTML let
through, so anything a run smuggled in would show."""
from __future__ import annotations

import re

import pytest
from conftest import require_module

from edgebench.report import html, markdown
from edgebench.report.check import check
from edgebench.results.model import RunResult

HOSTILE = {
    "comment": "<!-- everything after this is hidden",
    "img": '<img src="https://evil.example/x.png" onerror="alert(1)">',
    "link": "[click me](https://evil.example/steal)",
    "image": "![x](https://evil.example/track.png)",
    "www": "www.evil.example",
    "scheme": "see https://evil.example/a",
    "email": "mail-me@evil.example",
    "emphasis": "**bold** _it_ ~~gone~~ `code`",
    "table": "a | b | c",
    "heading": "# heading",
    "entity": "&lt;script&gt; &amp;",
    "backticks": "`` ` ``",
}


def _gfm(text: str) -> str:
    require_module("cmarkgfm")
    import cmarkgfm
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)


def _visible(rendered: str) -> str:
    import html as std

    return std.unescape(re.sub(r"<[^>]+>", "", rendered)).replace("\u200b", "")


@pytest.mark.parametrize("name,value", sorted(HOSTILE.items()))
def test_a_hostile_run_field_renders_as_its_literal_text(name, value):
    r = RunResult(run_id=f"id-{name}", created_utc="2026-01-01T00:00:00+00:00", status="complete",
                  label="measured", model={"name": value, "path": f"/models/{value}.tflite"},
                  board={"name": value}, extra={"claim": f"claim {value} end"})
    out = _gfm(html.render_markdown([html.RunData(result=r)], check([r]), title=value))
    assert "<a " not in out and "<img" not in out and "<!--" not in out, out
    assert "<script" not in out and "<strong>bold" not in out and "<del>" not in out and "<em>it" not in out
    assert "<h1>" not in out
    text = _visible(out)
    assert f"claim {' '.join(value.split())} end" in text, text      # the claim comes through, whole and literal
    assert " ".join(value.split()) in text.split("\n")[0]            # the title too


def test_the_report_keeps_its_own_markdown():
    r = RunResult(run_id="abc", created_utc="2026-01-01T00:00:00+00:00", status="complete",
                  model={"name": "kws_ref_model"}, extra={"claim": "fast"})
    out = _gfm(html.render_markdown([html.RunData(result=r)], check([r])))
    assert "<h2>edgebench report</h2>" in out and "<table>" in out and "<code>" in out
    assert "kws_ref_model" in _visible(out)


def test_md_escape_and_code_spans():
    assert html.md_escape("a_b") == "a\\_b" and html.md_escape(None) == "–"
    assert html.md_escape("x\ny") == "x y"
    code = markdown.md_code("a``b")
    assert code.startswith("```") and _visible(_gfm(code)).strip() == "a``b"
