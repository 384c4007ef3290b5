"""Text from the code (help strings, docstrings, defaults) made safe to place in Markdown.

Help strings and field docstrings are plain text that may hold backticked names: backtick
spans are kept as code, and everything else is escaped so that ``*``, ``_``, ``<`` or ``[``
in prose (``R_format``, ``<= 0``) never turn into emphasis, HTML or links.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

_CODE_SPAN = re.compile(r"(`[^`]*`)")
_RST_LITERAL = re.compile(r"``(.+?)``")
_RST_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|obj):`")
_MARKDOWN_SPECIAL = re.compile(r"([\\*_\[\]#|])")


def prose(text: str) -> str:
    """``text`` with Markdown syntax escaped outside its backtick spans.

    Docstrings write code the reStructuredText way (````name````, ``:class:`Name```); both
    become one Markdown code span.
    """
    text = _RST_ROLE.sub("`", _RST_LITERAL.sub(r"`\1`", text))
    parts = _CODE_SPAN.split(text)
    return "".join(part if part.startswith("`") and part.endswith("`") and len(part) > 1
                   else _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(part, quote=False))
                   for part in parts)


def code(text: str) -> str:
    """``text`` as an inline code span, whatever backticks it holds."""
    fence = "``" if "`" in text else "`"
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def toml_value(value: Any) -> str:
    """A default as it would be written in a TOML config (``unset`` for None)."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + "}"
    return json.dumps(str(value), ensure_ascii=False)


def anchor(*parts: str) -> str:
    """A heading id from name parts: lower case, runs of other characters as one hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")
