"""What every command does first: resolve the config, quiet the libraries, open the engine."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from data.atomic import write_text_atomic
from engine.auto import Workload
from engine.base import ChatMessage, Engine
from proofsmith.config import Config, resolve_config, to_toml
from proofsmith.options import ENGINE_FLAGS, Flag, overrides_from
from proofsmith.run_files import CONFIG_NAME
from training.config import TrainConfig
from verifier.templates import check_prompts_dir

AnyConfig = TypeVar("AnyConfig", Config, TrainConfig)


def config_from_args(args: argparse.Namespace, flags: tuple[Flag, ...], renamed: Mapping[str, str] | None = None) -> Config:
    overrides = overrides_from(args, ENGINE_FLAGS + flags, renamed)
    config: Config = with_model_prompts(resolve_config(args.config, overrides, args.set))
    check_prompts_dir(config.prompts_dir)
    return config


def with_model_prompts(config: AnyConfig, model: str | None = None) -> AnyConfig:
    """``config`` with the prompts its model (``model``, else ``config.engine.model``) carries
    (``engine.model_store.model_prompts``) when ``config.prompts_dir`` is empty; a run config or a train config."""
    from engine.model_store import model_prompts

    if config.prompts_dir:
        return config
    name = model if model is not None else config.engine.model
    carried = model_prompts(name)
    if carried is None:
        return config
    logging.getLogger(__name__).info("using the prompts %s carries: %s (--prompts overrides)", name, carried)
    return dataclasses.replace(config, prompts_dir=carried)


def eval_config_from_args(args: argparse.Namespace, flags: tuple[Flag, ...], section: str) -> Config:
    """An ``eval`` subcommand's config: its flags, with the positional data file (absolute) in ``[section]``."""
    overrides = overrides_from(args, ENGINE_FLAGS + flags)
    overrides.setdefault(section, {})["data"] = str(Path(args.data).absolute())
    config: Config = with_model_prompts(resolve_config(args.config, overrides, args.set))
    check_prompts_dir(config.prompts_dir)
    return config


PROJECT_PACKAGES = frozenset({"proofsmith", "engine", "generator", "verifier", "meta_verifier", "data", "training", "eval"})


class OnlyOwnWarnings(logging.Filter):
    """Let the project's warnings through; of third-party loggers (vLLM, transformers, TRL) only errors."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or record.name.split(".", 1)[0] in PROJECT_PACKAGES


def quiet_libraries(verbose: bool) -> None:
    """Keep third-party chatter and weight-loading bars off the terminal unless asked.

    vLLM logs through the root logger here (its warnings would precede every error),
    torch's C++ side prints its own warnings (vLLM's NUMA binding notice), transformers
    and the Hub draw loading bars: each has its own switch, set before any of them loads.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    if not verbose:
        handler.addFilter(OnlyOwnWarnings())
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler], force=True)
    # vLLM logs to stdout by default, which would corrupt --json output.
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    if not verbose:
        # Deprecation notices raised inside torch/vLLM imports say nothing a user can act on.
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")  # datasets' map/filter bars in the trainers
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        logging.getLogger("httpx").setLevel(logging.WARNING)


def print_dry_run(config: Config) -> None:
    sys.stdout.write(to_toml(config))


def open_engine(config: Config, workload: Workload, prompts: Sequence[Sequence[ChatMessage]] = ()) -> Engine:
    """The engine the config names; ``prompts`` known up front are checked against its context before it loads."""
    from engine.factory import create_engine

    return create_engine(config.engine, workload, prompts)


@contextmanager
def eval_engine(out: Path, config: Config, workload: Workload) -> Iterator[Engine]:
    """The engine for an eval's pending items, closed on the way out.

    ``OUT/config.toml`` is written only once the engine has loaded, so a bad model or an
    unreachable server leaves no run directory behind.
    """
    engine = open_engine(config, workload)
    try:
        out.mkdir(exist_ok=True)
        write_text_atomic(out / CONFIG_NAME, to_toml(config))
        yield engine
    finally:
        engine.close()


def previous_engine(out: Path, config: Config) -> dict[str, Any]:
    """Engine and model of the run that wrote an eval directory's records (its metrics.json settings), when this rerun opens no engine."""
    try:
        shown = json.loads((out / "metrics.json").read_text(encoding="utf-8"))["settings"]
        return {"engine": shown["engine"], "model": shown["model"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {"engine": config.engine.backend, "model": config.engine.model}


def engine_record(engine: Engine) -> dict[str, Any]:
    return {"engine": engine.name, "model": engine.model}
