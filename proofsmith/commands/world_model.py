"""``proofsmith world model``: train the world's own small model from scratch, resumably.

Order of work, so that every user error surfaces before anything heavy runs: resolve the
config (``--dry-run`` writes it to the run directory, prints it and stops), check the run
directory (a run of other settings there is refused), write ``config.toml``, draw the world
and write its splits under ``RUN/world/`` (the test splits evaluate the model; their problems
never occur in the train split), then train (``training.world_model.run``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from data.atomic import write_text_atomic
from data.errors import InputError
from proofsmith.config import Config, resolve_config, to_toml
from proofsmith.options import WORLD_MODEL_FLAGS, overrides_from
from training.world_model.architecture import init_checkpoint
from training.world_model.config import WorldModelConfig
from verifier.templates import check_prompts_dir

CONFIG_NAME = "config.toml"


def prepare_run_dir(config: WorldModelConfig) -> Path:
    """Create the run directory and write the config; a directory holding a run of other settings is refused."""
    run_dir = Path(config.run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise InputError(f"--out {run_dir} exists and is not a directory")
    text = to_toml(config)
    written = run_dir / CONFIG_NAME
    if written.exists() and written.read_text(encoding="utf-8") != text and any(run_dir.glob("examples.jsonl")):
        raise InputError(f"{run_dir} holds a world-model run with other settings ({written}); "
                         f"choose another --out or remove it")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create run directory {run_dir}: {error.strerror}") from None
    write_text_atomic(written, text)
    return run_dir


def run(args: argparse.Namespace) -> int:
    config: WorldModelConfig = resolve_config(args.config, overrides_from(args, WORLD_MODEL_FLAGS), args.set,
                                              root=WorldModelConfig)
    check_prompts_dir(config.prompts_dir)
    init_checkpoint(config.architecture, config.init_model)  # a wrong init_model is said before the world is drawn
    run_dir = prepare_run_dir(config)
    if args.dry_run:
        sys.stdout.write(to_toml(config))
        return 0
    from data.world.caches import clear_world_caches
    from proofsmith.commands.world import write_world
    from training.world_model.run import examples_of, run_world_model

    world_dir = run_dir / "world"
    if not (world_dir / "summary.json").exists() or not (run_dir / "examples.jsonl").exists():
        # summary.json is the world's last file: with it and the examples there, a rerun draws nothing again
        train_proofs = write_world(config.world, world_dir, to_toml(Config(world=config.world)))[1]["train"].proofs
        examples_of(config, run_dir, train_proofs)
        # Training never needs the drawn world or its sympy caches: at levels 1-2 a process that drew them was at
        # 12.4 GB by step 271, one resumed without drawing at 4.4 GB by step 250 (the training's own growth, since
        # stopped by padding to a few batch shapes: docs/results/world-model.md).
        del train_proofs
        clear_world_caches()
    world_summary = json.loads((world_dir / "summary.json").read_text(encoding="utf-8"))
    with contextlib.redirect_stdout(sys.stderr):  # the trainer prints; stdout is for --json
        summary = run_world_model(config, None)
    summary = {**summary, "world": str(world_dir),
               "world_problems": {name: numbers["problems"] for name, numbers in world_summary["splits"].items()}}
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        print_summary(summary)
    return 0


def print_summary(summary: dict[str, Any]) -> None:
    examples = ", ".join(f"{count} {role}" for role, count in summary["examples"].items())
    timed = summary.get("timed_steps", summary["steps"])  # a summary written before timed_steps existed: all
    # killed sessions are not timed, and steps redone after a kill are timed twice: say which steps the time is of
    took = f"in {summary['minutes']} min" if timed == summary["steps"] else f"({timed} timed steps: {summary['minutes']} min)"
    print(f"world model: {summary['parameters']:,} parameters, {summary['steps']} steps {took} "
          f"({summary['trained_tokens']:,} tokens, {summary['tokens_per_second']} tokens/s, padding "
          f"{summary['padding_fraction']:.1%}, {summary['precision']})")
    print(f"  taught {examples} examples of {summary['problems']} problems")
    print(f"  model: {summary['final_model']} (prompts: --prompts {summary['prompts']})")
    print(f"  world splits for evaluation: {summary['world']}/test_in.jsonl, {summary['world']}/test_out.jsonl")
