"""The generated reference cannot drift from the code: every command, flag and config field appears in it.

The expected names are computed here from the parser and the config dataclasses, not from the
renderers, and each must appear in the right section of the generated Markdown (a flag under
its own command, a field under its own table). These tests need neither MkDocs nor a browser.
"""

from __future__ import annotations

import argparse
import dataclasses
import re

import pytest

import docs_hooks  # noqa: F401  (puts docs/hooks on sys.path)
from proofsmith.cli import build_parser
from proofsmith.config import Config, toml_key
from reference_pages import generated_pages
from reference_records import READ, WRITTEN
from training.config import TrainConfig
from training.world_model.config import WorldModelConfig

PAGES = generated_pages()
ROOT_HEADINGS = {Config: "Commands:", TrainConfig: "proofsmith train", WorldModelConfig: "proofsmith world model"}


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("proofsmith",)) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(" ".join(path), parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                found += commands(subparser, (*path, name))
    return found


def expected_arguments() -> list[tuple[str, str]]:
    """(command, how an argument is named) for every argument of every command the parser defines."""
    expected = []
    for command, parser in commands(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            names = action.option_strings or [action.metavar if isinstance(action.metavar, str) else action.dest]
            expected += [(command, name) for name in names]
    return expected


def expected_fields() -> list[tuple[type, str, str]]:
    """(root config, TOML table or '' for top-level keys, TOML key) for every field of every config."""
    expected = []
    for root in ROOT_HEADINGS:
        for item in dataclasses.fields(root):
            value = getattr(root(), item.name)
            if dataclasses.is_dataclass(value):
                expected += [(root, toml_key(item.name), toml_key(sub.name)) for sub in dataclasses.fields(value)]
            else:
                expected.append((root, "", toml_key(item.name)))
    return expected


def sections(markdown: str, level: int) -> dict[str, str]:
    """Heading text -> the text under it, up to the next heading of the same or a higher level."""
    parts = re.split(rf"^(#{{1,{level}}} .*)$", markdown, flags=re.M)
    return {heading.lstrip("#").strip(): body for heading, body in zip(parts[1::2], parts[2::2])}


def command_section(command: str) -> str:
    matches = [body for heading, body in sections(PAGES["reference/cli.md"], 4).items()
               if heading.startswith(f"`{command}`")]
    assert len(matches) == 1, f"no single section for {command!r} in the CLI reference"
    return re.sub(r"^```.*?^```", "", matches[0], flags=re.M | re.S)  # the usage block alone does not list a flag


def mentions(text: str, name: str) -> bool:
    """``name`` as a whole word (``--seed`` is not found in ``--seeds``)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


@pytest.mark.parametrize(("command", "name"), expected_arguments(), ids=lambda value: str(value))
def test_every_argument_is_listed_under_its_command(command: str, name: str) -> None:
    section = command_section(command)
    listed = mentions(section, name) if name.startswith("-") else f"`{name}`" in section
    assert listed, f"{command} {name} is missing from the CLI reference"


def test_every_command_has_a_section() -> None:
    for command, parser in commands(build_parser()):
        section = command_section(command)
        if parser.description:
            assert " ".join(parser.description.split()[:3]) in section.replace("\\", "")


@pytest.mark.parametrize(("root", "table", "key"), expected_fields(), ids=lambda value: getattr(value, "__name__", str(value)))
def test_every_config_field_is_listed_under_its_table(root: type, table: str, key: str) -> None:
    roots = [body for heading, body in sections(PAGES["reference/config.md"], 2).items()
             if heading.startswith(ROOT_HEADINGS[root])]
    assert len(roots) == 1, f"no single section for {root.__name__}"
    tables = sections(roots[0], 3)
    title = f"`[{table}]`" if table else "`top-level keys`"
    body = next((text for heading, text in tables.items() if heading.startswith(title)), None)
    assert body is not None, f"{root.__name__}: no section {title}"
    assert f"`{key}`\n:" in body, f"{root.__name__} [{table}] {key} is missing from the configuration reference"


@pytest.mark.parametrize("cls", sorted({cls for record in (*READ, *WRITTEN) for cls in record.classes}, key=str),
                         ids=lambda cls: cls.__qualname__)
def test_every_field_of_a_listed_record_is_on_the_formats_page(cls: type) -> None:
    page = PAGES["reference/records.md"]
    assert f"`{cls.__module__}.{cls.__qualname__}`" in page
    for item in dataclasses.fields(cls):
        assert f"- `{item.name}` (" in page, f"{cls.__qualname__}.{item.name} is missing from the data-formats page"
