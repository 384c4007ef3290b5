"""What every command does first: resolve the config, quiet the libraries, open the engine."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

from engine.auto import Workload
from engine.base import Engine
from proofsmith.config import Config, resolve_config, to_toml
from proofsmith.options import ENGINE_FLAGS, Flag, overrides_from
from verifier.templates import check_prompts_dir


def config_from_args(args: argparse.Namespace, flags: tuple[Flag, ...], renamed: Mapping[str, str] | None = None) -> Config:
    overrides = overrides_from(args, ENGINE_FLAGS + flags, renamed)
    config: Config = resolve_config(args.config, overrides, args.set)
    check_prompts_dir(config.prompts_dir)
    return config


def quiet_libraries(verbose: bool) -> None:
    """Keep transformers/vLLM chatter and weight-loading bars off the terminal unless asked."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # vLLM logs to stdout by default, which would corrupt --json output.
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    if not verbose:
        # Deprecation notices raised inside torch/vLLM imports say nothing a user can act on.
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        logging.getLogger("httpx").setLevel(logging.WARNING)


def print_dry_run(config: Config) -> None:
    sys.stdout.write(to_toml(config))


def open_engine(config: Config, workload: Workload) -> Engine:
    from engine.factory import create_engine

    return create_engine(config.engine, workload)


def engine_record(engine: Engine) -> dict[str, Any]:
    return {"engine": engine.name, "model": engine.model}
