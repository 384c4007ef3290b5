"""Command-line flags that override config fields; their help is the field's docstring.

A flag left out of the command line does not override anything, so the order of
precedence stays: defaults < ``--config`` TOML < flags < ``--set section.key=value``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from proofsmith.config import Config, field_docs


@dataclass(frozen=True)
class Flag:
    name: str
    """The option as typed, e.g. ``--engine``."""
    path: str
    """Dotted config field the flag sets, e.g. ``engine.backend``."""
    repeatable: bool = False
    """Whether the flag may be given several times, each adding to a list."""
    metavar: str | None = None
    """Placeholder shown in ``--help``."""


ENGINE_FLAGS: tuple[Flag, ...] = (
    Flag("--engine", "engine.backend", metavar="NAME"),
    Flag("--model", "engine.model", metavar="MODEL"),
    Flag("--base-url", "engine.base_urls", repeatable=True, metavar="URL"),
    Flag("--api-key-env", "engine.api_key_env", metavar="VAR"),
    Flag("--max-concurrency", "engine.max_concurrency", metavar="N"),
    Flag("--timeout", "engine.request_timeout_s", metavar="SECONDS"),
    Flag("--max-retries", "engine.max_retries", metavar="N"),
    Flag("--device", "engine.device", metavar="DEVICE"),
    Flag("--dtype", "engine.dtype", metavar="DTYPE"),
    Flag("--batch-size", "engine.batch_size", metavar="N"),
    Flag("--temperature", "sampling.temperature", metavar="T"),
    Flag("--top-p", "sampling.top_p", metavar="P"),
    Flag("--max-tokens", "sampling.max_tokens", metavar="N"),
    Flag("--seed", "sampling.seed", metavar="N"),
    Flag("--prompts", "prompts_dir", metavar="DIR"),
)

PROVE_FLAGS: tuple[Flag, ...] = (
    Flag("--max-rounds", "prove.max_rounds", metavar="N"),
    Flag("--samples", "prove.samples", metavar="K"),
    Flag("--feedback", "prove.feedback", metavar="SOURCE"),
    Flag("--verify-samples", "prove.verify_samples", metavar="N"),
    Flag("--max-evaluations", "prove.max_evaluations", metavar="N"),
)
SEARCH_FLAGS: tuple[Flag, ...] = (
    Flag("--pool", "search.pool", metavar="N"),
    Flag("--top-k", "search.top_k", metavar="K"),
    Flag("--analyses-per-prompt", "search.analyses_per_prompt", metavar="N"),
    Flag("--analysis-order", "search.analysis_order", metavar="ORDER"),
    Flag("--samples-per-pair", "search.samples_per_pair", metavar="N"),
    Flag("--rounds", "search.rounds", metavar="R"),
    Flag("--stop-at-full-pass", "search.stop_at_full_pass", metavar="true|false"),
)
VERIFY_FLAGS: tuple[Flag, ...] = (Flag("--samples", "verify.samples", metavar="N"),)
META_VERIFY_FLAGS: tuple[Flag, ...] = (Flag("--samples", "meta_verify.samples", metavar="M"),)
LABEL_FLAGS: tuple[Flag, ...] = (
    Flag("--n", "label.n", metavar="N"),
    Flag("--m", "label.m", metavar="M"),
    Flag("--k", "label.k", metavar="K"),
    Flag("--confirm-rating", "label.confirm_rating", metavar="R"),
    Flag("--majority", "label.majority", metavar="FRACTION"),
    Flag("--chunk-size", "label.chunk_size", metavar="N"),
    Flag("--on-bad-row", "label.on_bad_row", metavar="skip|fail"),
)

EVAL_VERIFIER_FLAGS: tuple[Flag, ...] = (
    Flag("--samples", "eval_verifier.samples", metavar="N"),
    Flag("--meta", "eval_verifier.meta", metavar="M"),
    Flag("--format", "eval_verifier.format", metavar="NAME"),
    Flag("--mapping", "eval_verifier.mapping", metavar="NAME"),
    Flag("--max-items", "eval_verifier.max_items", metavar="K"),
    Flag("--column", "eval_verifier.columns", repeatable=True, metavar="FIELD=COLUMN"),
)

EVAL_META_VERIFIER_FLAGS: tuple[Flag, ...] = (
    Flag("--samples", "eval_meta_verifier.samples", metavar="M"),
    Flag("--max-items", "eval_meta_verifier.max_items", metavar="K"),
)

EVAL_SELECTION_FLAGS: tuple[Flag, ...] = (
    Flag("--samples", "eval_selection.samples", metavar="N"),
    Flag("--max-items", "eval_selection.max_items", metavar="K"),
    Flag("--column", "eval_selection.columns", repeatable=True, metavar="FIELD=COLUMN"),
)

EVAL_PROVER_FLAGS: tuple[Flag, ...] = (
    Flag("--mode", "eval_prover.mode", metavar="refine|search"),
    Flag("--select", "eval_prover.select", repeatable=True, metavar="ID_PREFIX"),
    Flag("--max-items", "eval_prover.max_items", metavar="K"),
    Flag("--format", "eval_prover.format", metavar="NAME"),
    Flag("--grader-engine", "grader.backend", metavar="NAME"),
    Flag("--grader-model", "grader.model", metavar="MODEL"),
    Flag("--grader-base-url", "grader.base_urls", repeatable=True, metavar="URL"),
    Flag("--grader-api-key-env", "grader.api_key_env", metavar="VAR"),
    Flag("--grader-samples", "grader.samples", metavar="N"),
    Flag("--grader-temperature", "grader.temperature", metavar="T"),
    Flag("--grader-max-tokens", "grader.max_tokens", metavar="N"),
)

WORLD_FLAGS: tuple[Flag, ...] = (
    Flag("--seed", "world.seed", metavar="N"),
    Flag("--problems-per-template", "world.problems_per_template", metavar="N"),
    Flag("--family", "world.families", repeatable=True, metavar="NAME"),
    Flag("--defect", "world.defects", repeatable=True, metavar="NAME"),
    Flag("--test-problems-per-template", "world.test_problems_per_template", metavar="N"),
    Flag("--held-out-family", "world.held_out_families", repeatable=True, metavar="NAME"),
    Flag("--held-out-templates", "world.held_out_templates", metavar="N"),
    Flag("--level", "world.levels", repeatable=True, metavar="N"),
)

CALIBRATE_FLAGS: tuple[Flag, ...] = (
    Flag("--samples", "calibrate.samples", metavar="K"),
    Flag("--split", "calibrate.splits", repeatable=True, metavar="NAME"),
    Flag("--max-problems-per-group", "calibrate.max_problems_per_group", metavar="N"),
    Flag("--role", "calibrate.roles", repeatable=True, metavar="generator|verifier"),
)

WORLD_MODEL_FLAGS: tuple[Flag, ...] = (
    Flag("--out", "run_dir", metavar="DIR"),
    Flag("--max-steps", "training.max_steps", metavar="N"),
    Flag("--batch-size", "training.batch_size", metavar="N"),
    Flag("--learning-rate", "training.learning_rate", metavar="LR"),
    Flag("--precision", "training.precision", metavar="auto|bf16|fp32"),
    Flag("--seed", "training.seed", metavar="N"),
    Flag("--problems-per-template", "world.problems_per_template", metavar="N"),
    Flag("--family", "world.families", repeatable=True, metavar="NAME"),
    Flag("--level", "world.levels", repeatable=True, metavar="N"),
)
"""Flags of ``proofsmith world model`` (fields of ``training.world_model.config.WorldModelConfig``)."""

TRAIN_FLAGS: tuple[Flag, ...] = (
    Flag("--run-dir", "run_dir", metavar="DIR"),
    Flag("--model", "model.name", metavar="MODEL"),
    Flag("--data", "data.path", metavar="PATH"),
    Flag("--meta-data", "data.meta_path", metavar="PATH"),
    Flag("--max-steps", "grpo.max_steps", metavar="N"),
    Flag("--group-size", "grpo.group_size", metavar="G"),
    Flag("--max-tokens", "rollouts.max_tokens", metavar="N"),
    Flag("--learning-rate", "grpo.learning_rate", metavar="LR"),
    Flag("--sft-steps", "sft.max_steps", metavar="N"),
    Flag("--prompts", "prompts_dir", metavar="DIR"),
)


def _doc(path: str, root: type = Config) -> str:
    owner: Any = root
    parts = path.split(".")
    for part in parts[:-1]:
        owner = owner.__dataclass_fields__[part].default_factory  # type: ignore[misc]
    default = root()
    for part in parts:
        default = getattr(default, part)
    shown = "unset" if default in (None, "", []) else default
    # argparse %-formats help strings: a docstring's "10 %" must reach it as "10 %%"
    return f"{field_docs(owner).get(parts[-1], '')} (default: {shown})".replace("%", "%%")


def add_flags(parser: argparse.ArgumentParser, flags: tuple[Flag, ...], title: str, root: type = Config) -> None:
    group = parser.add_argument_group(title)
    for flag in flags:
        group.add_argument(
            flag.name,
            dest=flag.path,
            default=None,
            action="append" if flag.repeatable else "store",
            metavar=flag.metavar,
            help=_doc(flag.path, root),
        )


SEARCH_MODE_PATHS: dict[str, str] = {"prove.verify_samples": "search.verify_samples"}
"""Flags that set another field when the prover searches: ``--verify-samples`` is then the pool's N."""


def overrides_from(namespace: argparse.Namespace, flags: tuple[Flag, ...],
                   renamed: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The nested dict of the flags the user actually gave; ``renamed`` sends a flag's value to another field."""
    nested: dict[str, Any] = {}
    for flag in flags:
        value = getattr(namespace, flag.path, None)
        if value is None:
            continue
        cursor = nested
        parts = (renamed or {}).get(flag.path, flag.path).split(".")
        for part in parts[:-1]:
            cursor = cursor.setdefault(part, {})
        cursor[parts[-1]] = value
    return nested
