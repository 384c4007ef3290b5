"""``proofsmith train ROLE``: GRPO for the verifier, meta-verifier or generator, or the SFT cold start.

Order of work, so that every user error surfaces before a model loads and leaves no
run directory behind: resolve the config (``--dry-run`` writes it to the run directory,
prints it and stops), read and check the data, write the config, then train. A run
directory that already holds ``COMPLETE`` is not trained again. With ``data.holdout``, the
verifier and meta-verifier are scored (greedily) before and after training on the held-out
rows and on up to ``MEASURED_TRAINING_ROWS`` of the training rows: the held-out score says
whether it generalises, the training-row score whether it learned what it was rewarded for.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from data.errors import InputError
from proofsmith.config import resolve_config, to_toml
from proofsmith.options import TRAIN_FLAGS, overrides_from
from training.config import TrainConfig, is_complete

MEASURED_TRAINING_ROWS = 32
"""Training rows scored before and after a verifier or meta-verifier run (the first ones)."""
AGREEMENT_SETS = ("holdout", "training_rows")
"""Row sets measured before and after: ``RUN/<name>_before.json`` and ``RUN/<name>_after.json``."""


def prepare_run_dir(config: TrainConfig) -> Path:
    run_dir = Path(config.run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise InputError(f"run_dir {run_dir} exists and is not a directory")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create run_dir {run_dir}: {error.strerror}") from None
    (run_dir / "config.toml").write_text(to_toml(config), encoding="utf-8")
    return run_dir


def summary_of(run_dir: Path, role: str) -> dict[str, Any]:
    from training.trainers.metrics import curve, read_metrics

    records = read_metrics(run_dir / "metrics.jsonl")
    summary: dict[str, Any] = {"role": role, "run_dir": str(run_dir), "final_model": str(run_dir / "final"), "steps": 0}
    if records:
        summary["steps"] = records[-1]["step"]
    for name in ("reward", "format_failure_rate", "loss", "frac_reward_zero_std"):
        steps, values = curve(records, name)
        if values:
            summary[name] = {"first": round(values[0], 4), "last": round(values[-1], 4)}
    for name in AGREEMENT_SETS:
        before, after = run_dir / f"{name}_before.json", run_dir / f"{name}_after.json"
        if before.exists() and after.exists():
            summary[name] = {"before": json.loads(before.read_text()), "after": json.loads(after.read_text())}
    return summary


def run_loop(config: TrainConfig, as_json: bool) -> int:
    from training.loop.schedule import Loop

    loop = Loop(config, to_toml)
    loop.check_data()
    prepare_run_dir(config)
    with contextlib.redirect_stdout(sys.stderr):
        stages = loop.run()
    result = {"role": "loop", "run_dir": config.run_dir, "final_model": loop.model, "stages": stages}
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        for stage in stages:
            print(f"iteration {stage['iteration']} {stage['stage']}: {stage['status']}")
        print(f"loop complete; final model {loop.model}")
    return 0


def run(args: argparse.Namespace) -> int:
    role = args.role
    config: TrainConfig = resolve_config(args.config, overrides_from(args, TRAIN_FLAGS), args.set, root=TrainConfig)
    if args.dry_run:
        prepare_run_dir(config)
        sys.stdout.write(to_toml(config))
        return 0
    if config.async_ and role != "generator":
        raise InputError(f"async = true trains the generator only; `train {role}` runs synchronously (set async = false)")
    if role == "loop":
        return run_loop(config, args.json)
    from training.role_data.rows import read_rows, split_holdout

    rows = read_rows(config.data, role, tuple(config.sft.formats))
    held_out: list[Any] = []
    if config.data.holdout:
        rows, held_out = split_holdout(rows, config.data.holdout, config.data.seed)
    run_dir = prepare_run_dir(config)
    measured = {"holdout": held_out, "training_rows": rows[:MEASURED_TRAINING_ROWS]}
    measure = bool(held_out) and role in ("verifier", "meta-verifier") and not is_complete(run_dir)
    for name, subset in measured.items():
        if measure and not (run_dir / f"{name}_before.json").exists():
            write_agreement(run_dir / f"{name}_before.json", config.model.name, role, subset, config)
    if is_complete(run_dir):
        print(f"proofsmith: {run_dir} is already complete; its model is {run_dir / 'final'}", file=sys.stderr)
    elif role == "sft":
        from training.role_data.records import sft_records
        from training.trainers.sft import run_sft

        with contextlib.redirect_stdout(sys.stderr):  # the trainers print their logs; stdout is for --json
            run_sft(config, sft_records(rows, config.sft.formats, config.prompts_dir or None))
    elif config.async_:
        from training.async_rl.trainer import run_async_grpo

        with contextlib.redirect_stdout(sys.stderr):
            run_async_grpo(config, rows)
    else:
        from training.trainers.grpo import run_grpo

        with contextlib.redirect_stdout(sys.stderr):
            run_grpo(role, config, rows)
    for name, subset in measured.items() if measure else ():
        write_agreement(run_dir / f"{name}_after.json", str(run_dir / "final"), role, subset, config)
    summary = summary_of(run_dir, role)
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        print(f"{role}: {summary['steps']} steps in {run_dir}; model in {summary['final_model']}")
        for name in ("reward", "format_failure_rate", "loss", "frac_reward_zero_std"):
            if name in summary:
                print(f"  {name}: {summary[name]['first']} -> {summary[name]['last']}")
        for name, shown in (("holdout", "held-out"), ("training_rows", "training-row")):
            if name in summary:
                before, after = summary[name]["before"], summary[name]["after"]
                print(f"  {shown} agreement ({before['rows']} rows, greedy): exact {before['exact']} -> {after['exact']}, "
                      f"format failures {before['format_failure_rate']} -> {after['format_failure_rate']}")
    return 0


def write_agreement(path: Path, model: str, role: str, rows: list[Any], config: TrainConfig) -> None:
    from training.trainers.holdout import agreement

    with contextlib.redirect_stdout(sys.stderr):
        result = agreement(model, role, rows, config.grpo.max_completion_length, config.prompts_dir or None)
    path.write_text(json.dumps({"model": model, **result}), encoding="utf-8")
