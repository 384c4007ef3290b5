"""Prompt templates: files beside each role, replaceable from a user directory.

A template ``NAME.md`` is the user message; an optional ``NAME.system.md`` beside it is the
system message. Placeholders are ``{{name}}`` and are filled in one pass, so text inside a
value (a proof that contains ``{{analysis}}``) is never expanded again. Untrusted values
(the problem, proofs, analyses) are fenced in tags that their text cannot close: when the
text contains the tag, a numbered variant is used instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from data.errors import TemplateError
from engine.base import ChatMessage

TEMPLATE_NAMES = ("generate", "refine", "verify", "meta_verify", "grade")
"""Every template a role loads; a prompts directory replaces some of them."""

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    user: str
    system: str | None = None
    source: str = ""
    """Where the template was read from, for error messages and run records."""

    def placeholders(self) -> set[str]:
        return set(_PLACEHOLDER.findall(self.user)) | set(_PLACEHOLDER.findall(self.system or ""))

    def render(self, values: Mapping[str, str]) -> tuple[ChatMessage, ...]:
        missing = sorted(self.placeholders() - set(values))
        if missing:
            raise TemplateError(f"template {self.source} uses {{{{{missing[0]}}}}}, which this role does not provide")
        fill = lambda text: _PLACEHOLDER.sub(lambda match: values[match.group(1)], text)  # noqa: E731
        messages = [ChatMessage("user", fill(self.user))]
        if self.system:
            messages.insert(0, ChatMessage("system", fill(self.system)))
        return tuple(messages)


def load_template(name: str, default_dir: Path, prompts_dir: str | Path | None = None) -> PromptTemplate:
    """Read ``name`` from ``prompts_dir`` when it has it, else from the role's own folder."""
    if prompts_dir and not Path(prompts_dir).is_dir():
        raise TemplateError(f"prompts directory does not exist: {prompts_dir}")
    for folder in ([Path(prompts_dir)] if prompts_dir else []) + [default_dir]:
        user_file = folder / f"{name}.md"
        if user_file.is_file():
            system_file = folder / f"{name}.system.md"
            try:
                user = user_file.read_text(encoding="utf-8")
                system = system_file.read_text(encoding="utf-8") if system_file.is_file() else None
            except (OSError, UnicodeDecodeError) as error:
                raise TemplateError(f"cannot read template {user_file}: {error}") from error
            return PromptTemplate(name, user, system, str(user_file))
    raise TemplateError(f"no template {name}.md in {prompts_dir or default_dir}")


def check_prompts_dir(prompts_dir: str | Path | None) -> None:
    """Refuse a prompts directory that is missing or replaces no template: surely a wrong path or misnamed files.

    ``""`` (no directory: the built-in templates) passes.
    """
    if not prompts_dir:
        return
    folder = Path(prompts_dir)
    if not folder.is_dir():
        raise TemplateError(f"prompts directory does not exist: {prompts_dir}")
    if not any((folder / f"{name}.md").is_file() for name in TEMPLATE_NAMES):
        found = sorted(path.name for path in folder.glob("*.md"))
        found_part = f"; it holds {', '.join(found[:5])}{' ...' if len(found) > 5 else ''}" if found else ", and it holds no .md file"
        raise TemplateError(
            f"prompts directory {prompts_dir} has none of the templates "
            f"{', '.join(name + '.md' for name in TEMPLATE_NAMES)}{found_part}"
        )


def fence(text: str, tag: str) -> str:
    """Wrap ``text`` in ``<tag>…</tag>`` with a tag that does not occur inside ``text``."""
    lowered = text.lower()
    candidate, counter = tag, 1
    while f"<{candidate}" in lowered or f"</{candidate}" in lowered:
        counter += 1
        candidate = f"{tag}-{counter}"
    return f"<{candidate}>\n{text.strip()}\n</{candidate}>"
