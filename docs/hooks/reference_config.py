"""The configuration reference page, rendered from the config dataclasses.

Contract: for each root config (the one ``--config`` file of a command family), every
section (a field whose type is a dataclass) and every field of every section is listed
under its TOML name with its type, its default as the root builds it (a section whose
parent supplies its own defaults, like ``[scoring]``, shows those) and its docstring, read
by ``proofsmith.config.field_docs``, the same reader that writes ``--help`` and the
comments of ``--dry-run``. Nothing here is hand-listed.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from markdown_text import anchor, code, prose, toml_value
from proofsmith.config import field_docs, toml_key


@dataclass(frozen=True)
class Root:
    """A config dataclass that one TOML file fills."""

    cls: type
    title: str
    """The heading: which commands read it."""
    slug: str
    """Prefix of its sections' heading ids."""
    summary: str
    """One sentence on where the file is given."""


def _type_name(annotation: Any) -> str:
    """The annotation as the source writes it (modules use postponed annotations, so it is usually a string)."""
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))


def sections(root: type) -> Iterator[tuple[str | None, type, Any]]:
    """(TOML table name or None for top-level keys, dataclass, its default instance) of ``root``, in field order."""
    defaults = root()
    top = [item for item in dataclasses.fields(root) if not dataclasses.is_dataclass(getattr(defaults, item.name))]
    if top:
        yield None, root, defaults
    for item in dataclasses.fields(root):
        value = getattr(defaults, item.name)
        if dataclasses.is_dataclass(value):
            yield toml_key(item.name), type(value), value


def class_doc(cls: type) -> str | None:
    """The class's own docstring; None for the signature ``dataclass`` writes when there is none."""
    doc = inspect.getdoc(cls)
    return None if not doc or doc.startswith(f"{cls.__name__}(") else doc


def section_anchor(root: Root, table: str | None) -> str:
    return anchor(root.slug, table or "top-level")


def _fields(cls: type, instance: Any, nested_tables: bool) -> list[str]:
    docs = field_docs(cls)
    entries = []
    for item in dataclasses.fields(cls):
        value = getattr(instance, item.name)
        if dataclasses.is_dataclass(value) and not nested_tables:
            continue
        facts = [code(_type_name(item.type)), "default " + code(toml_value(value))]
        entries.append(f"{code(toml_key(item.name))}\n:   {prose(docs.get(item.name) or '(no docstring)')}\n    ({'; '.join(facts)})")
    return entries


def root_section(root: Root) -> str:
    parent_docs = field_docs(root.cls)
    parts = [f"## {root.title} {{#{anchor(root.slug)}}}", "", root.summary]
    tables = list(sections(root.cls))
    parts += ["", "Tables: " + ", ".join(f"[{code(f'[{table}]' if table else 'top-level keys')}](#{section_anchor(root, table)})"
                                           for table, _, _ in tables) + "."]
    for table, cls, instance in tables:
        title = f"[{table}]" if table else "top-level keys"
        parts += ["", f"### {code(title)} {{#{section_anchor(root, table)}}}", ""]
        described = [parent_docs.get(table) if table else None, class_doc(cls) if table else None]
        text = " ".join(" ".join(line.split()) for line in described if line)
        if text:
            parts += [prose(text), ""]
        parts.append(f"Defined by `{cls.__module__}.{cls.__qualname__}`.")
        parts += ["", "\n\n".join(_fields(cls, instance, nested_tables=False))]
    return "\n".join(parts)


def config_markdown(roots: list[Root]) -> str:
    header = ("# Configuration reference\n\n"
              "Generated when the site is built, from the config dataclasses and the docstring under each field (the "
              "text `--help` and `--dry-run` print). Every field can be set in the TOML file given with `--config`, "
              "overridden with `--set TABLE.KEY=VALUE` (repeatable), and many also by a flag (see the "
              "[command-line reference](cli.md)). Precedence: defaults < `--config` file < flags < `--set`. Defaults "
              "shown are those the command starts from; the shipped recipes in `configs/` change some of them.\n\n"
              + "\n".join(f"- [{root.title}](#{anchor(root.slug)})" for root in roots))
    return header + "\n\n" + "\n\n".join(root_section(root) for root in roots) + "\n"
