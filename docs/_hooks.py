"""MkDocs hook: the docstrings use Sphinx roles (:func:`name`), which mkdocstrings shows as
written; render them as plain code."""

import re

_ROLE = re.compile(r":(?:func|mod|class|meth|data|attr|obj|exc):(<code>)")


def on_page_content(html, **_):
    return _ROLE.sub(r"\1", html)
