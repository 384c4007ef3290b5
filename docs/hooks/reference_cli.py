"""The command-line reference page, rendered from proofsmith's own argparse parser.

Contract: ``cli_markdown(build_parser())`` lists every command and subcommand (walking
subparsers recursively), and under each one every argument the parser defines, grouped as
``--help`` groups them, with its metavar, help text (expanded as argparse expands it),
default, choices, and whether it is required or repeatable. Nothing here is hand-listed:
a flag added to ``proofsmith/cli.py`` or ``proofsmith/options.py`` appears on the next build.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from markdown_text import anchor, code, prose, toml_value

USAGE_WIDTH = 100


def command_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("proofsmith",)) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(command path, parser) for ``parser`` and every subcommand below it, depth first in definition order."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                yield from command_parsers(subparser, (*path, name))


def command_anchor(path: tuple[str, ...]) -> str:
    """The heading id of a command's section, e.g. ``proofsmith-eval-verifier``."""
    return anchor(*path)


def _usage(action: argparse.Action) -> str:
    """How the argument is typed: ``--pool N``, ``--json``, ``DATA``, ``role``."""
    if not action.option_strings:  # named as argparse names it; its choices, if any, are listed beside it
        return action.metavar if isinstance(action.metavar, str) else action.dest
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return names
    metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    return f"{names} {metavar}"


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The help text as ``--help`` prints it (``%(default)s`` and ``%%`` expanded).

    A help string with a bare ``%`` (a field docstring saying "10 %") makes argparse's own
    expansion raise; the page then shows the text as written rather than failing the build.
    """
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    try:
        return parser._get_formatter()._expand_help(action)
    except (TypeError, ValueError, KeyError):
        return action.help


def _facts(action: argparse.Action) -> list[str]:
    """What ``--help`` leaves implicit: required, repeatable, choices, and a default other than "not given"."""
    facts = []
    if action.required and action.option_strings:
        facts.append("required")
    if isinstance(action, argparse._AppendAction) and "repeatable" not in (action.help or ""):
        facts.append("repeatable")
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        facts.append("one of " + ", ".join(code(str(choice)) for choice in action.choices))
    shown_default = action.default not in (None, False, [], "", argparse.SUPPRESS) and action.nargs != 0
    if shown_default:
        facts.append("default " + code(toml_value(action.default)))
    return facts


def _argument(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    facts = _facts(action)
    lines = [code(_usage(action)), f":   {prose(_help(parser, action)) or '(no help text)'}"]
    if facts:
        lines.append(f"    ({'; '.join(facts)})")
    return "\n".join(lines)


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> list[str]:
    lines = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name in action.choices:
                target = command_anchor((*path, name))
                lines.append(f"- [`{' '.join((*path, name))}`](#{target}): {prose(helps.get(name) or '')}")
    return lines


def _usage_block(parser: argparse.ArgumentParser) -> str:
    """The usage line wrapped at a fixed width, so the page does not depend on the terminal that built it."""
    formatter = parser.formatter_class(prog=parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def command_section(path: tuple[str, ...], parser: argparse.ArgumentParser) -> str:
    """One command's section: heading, description, subcommands, then each argument group."""
    heading = "#" * min(len(path) + 1, 4)
    parts = [f"{heading} `{' '.join(path)}` {{#{command_anchor(path)}}}", "", f"```text\n{_usage_block(parser)}\n```"]
    if parser.description:
        parts += ["", prose(parser.description)]
    subcommands = _subcommands(parser, path)
    if subcommands:
        parts += ["", "Subcommands:", "", *subcommands]
    for group in parser._action_groups:
        actions = [action for action in group._group_actions if not isinstance(action, argparse._SubParsersAction)]
        if not actions:
            continue
        parts += ["", f"**{prose(group.title or 'arguments')}**", ""]
        parts += ["\n\n".join(_argument(parser, action) for action in actions)]
    return "\n".join(parts)


def cli_markdown(parser: argparse.ArgumentParser) -> str:
    """The whole page: an index of the commands, then one section per command."""
    commands = list(command_parsers(parser))
    index = ", ".join(f"[`{' '.join(path)}`](#{command_anchor(path)})" for path, _ in commands[1:])
    header = ("# Command-line reference\n\n"
              "Generated when the site is built, from the argparse parser in `proofsmith/cli.py` (its config flags come "
              "from `proofsmith/options.py`, and their help is the config field's docstring). A flag that sets a config "
              "field shows that field's default in its help; the flag itself defaults to \"not given\", so it overrides "
              "only when typed (precedence: defaults < `--config` file < flags < `--set`). The "
              "[configuration reference](config.md) lists every field, including those without a flag.\n\n"
              f"Commands: {index}.")
    sections = [command_section(path, subparser) for path, subparser in commands]
    return header + "\n\n" + "\n\n".join(sections) + "\n"
