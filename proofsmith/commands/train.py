"""``proofsmith train ROLE``: GRPO for the verifier, meta-verifier or generator, or the SFT cold start.

Order of work, so that every user error surfaces before a model loads and leaves no
run directory behind: resolve the config (``--dry-run`` writes it to the run directory,
prints it and stops), read and check the data, write the config, then train. The run itself
(agreement before and after, the trainer, the summary) is ``training.trainers.run``'s.
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
from proofsmith.commands.common import with_model_prompts
from proofsmith.config import resolve_config, to_toml
from proofsmith.options import TRAIN_FLAGS, overrides_from
from training.config import CHECKER, WORLD_RATERS, TrainConfig, is_complete
from verifier.templates import check_prompts_dir


ASYNC_ROLES = ("generator", "verifier", "meta-verifier")
"""The GRPO roles; the SFT cold start and `train loop` (which runs its own stages) have no async form."""


def prepare_run_dir(config: TrainConfig) -> Path:
    """Create the run directory and write the resolved config in it (the main process writes)."""
    from training.processes import is_main_process

    run_dir = Path(config.run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise InputError(f"run_dir {run_dir} exists and is not a directory")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create run_dir {run_dir}: {error.strerror}") from None
    if is_main_process():
        write_text_atomic(run_dir / "config.toml", to_toml(config))
    return run_dir


def run_loop(config: TrainConfig, as_json: bool) -> int:
    from training.loop.schedule import Loop
    from training.processes import agree, is_main_process

    loop = Loop(config, to_toml)
    loop.check_data()
    prepare_run_dir(config)
    agree(run_dir=str(Path(config.run_dir).resolve()), data=loop.data_fingerprint())
    with contextlib.redirect_stdout(sys.stderr):
        stages = loop.run()
    if not is_main_process():
        return 0
    result = {"role": "loop", "run_dir": config.run_dir, "final_model": loop.model, "stages": stages}
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        for stage in stages:
            print(f"iteration {stage['iteration']} {stage['stage']}: {stage['status']}")
        print(f"loop complete; final model {loop.model}")
    return 0


def check_meta_source(config: TrainConfig) -> None:
    """With ``rewards.meta_check``: refuse R_meta from a model that rates critiques by their box, not their defect."""
    if config.rewards.meta in ("none", *WORLD_RATERS) or not config.rewards.meta_check:  # the checker reads the defect itself
        return
    from eval.meta_by_defect import refuse_unless_rates_by_defect

    rater = config.scorer.model if config.rewards.meta == "engine" else config.model.name
    refuse_unless_rates_by_defect(config.rewards.meta_check, rater)


def run(args: argparse.Namespace) -> int:
    role = args.role
    overrides = overrides_from(args, TRAIN_FLAGS)
    if "path" in overrides.get("data", {}):  # --data replaces the config's data, its rated analyses included
        overrides["data"].setdefault("meta_path", "")
    config: TrainConfig = resolve_config(args.config, overrides, args.set, root=TrainConfig)
    config = with_model_prompts(config, config.model.name)
    check_prompts_dir(config.prompts_dir)
    if args.dry_run:
        prepare_run_dir(config)
        sys.stdout.write(to_toml(config))
        return 0
    check_meta_source(config)
    if config.rewards.meta in WORLD_RATERS and role != "verifier":
        raise InputError(f"rewards.meta = {config.rewards.meta!r} rates a verifier's analyses of world proofs; "
                         f"`train {role}` has none (use it with `train verifier`)")
    if config.async_ and role not in ASYNC_ROLES:
        raise InputError(f"async = true trains {', '.join(ASYNC_ROLES)}; `train {role}` runs synchronously (set async = false)")
    from training.processes import agree, fingerprint, is_main_process, refuse_async_on_several_processes

    if config.async_:
        refuse_async_on_several_processes()
    if role == "loop":
        return run_loop(config, args.json)
    from training.role_data.rows import FIRST_BAD_STEP, read_rows, read_sft_rows, split_holdout, verifier_rows

    formats = tuple(config.sft.formats)
    held_out: list[Any] = []
    if role == "verifier":  # with data.meta_path: the enhanced verifier, rated analyses beside the graded proofs
        rows, held_out = verifier_rows(config.data, config.data.holdout)
    else:
        rows = read_sft_rows(config.data, formats) if role == "sft" else read_rows(config.data, role, formats)
        if config.data.holdout:
            rows, held_out = split_holdout(rows, config.data.holdout, config.data.seed)
    from training.role_data.selection import selected

    rows = selected(role, rows, config.data)
    unchecked = sum(not row.goal for row in rows) if role == "generator" and config.rewards.verifier == CHECKER else 0
    if unchecked:
        raise InputError(f"rewards.verifier = 'checker' needs world problems with a goal (column {config.data.goal_column!r}); "
                         f"{unchecked} of {len(rows)} training problems have none")
    graded = [row for row in rows if not row.task]
    unknown = sum(not row.step_known for row in graded) if config.rewards.meta in WORLD_RATERS else 0
    if unknown:
        raise InputError(f"rewards.meta = {config.rewards.meta!r} needs world proofs that say their first bad step (column "
                         f"{FIRST_BAD_STEP!r}); {unknown} of {len(graded)} training proofs do not")
    run_dir = prepare_run_dir(config)
    agree(run_dir=str(run_dir.resolve()), rows=len(rows), rows_read=fingerprint([row.id for row in rows]),
          held_out=len(held_out), held_out_read=fingerprint([row.id for row in held_out]))
    if is_complete(run_dir) and is_main_process():
        print(f"proofsmith: {run_dir} is already complete; its model is {run_dir / 'final'}", file=sys.stderr)
    from training.trainers.run import train_role  # torch, transformers, TRL: after the data is checked (seconds)

    with contextlib.redirect_stdout(sys.stderr):  # the trainers print their logs; stdout is for --json
        summary = train_role(role, config, rows, held_out)
    if not is_main_process():  # one process reports
        return 0
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        print_summary(role, run_dir, summary)
    return 0


def print_summary(role: str, run_dir: Path, summary: dict[str, Any]) -> None:
    from training.trainers.run import SUMMARISED_CURVES

    print(f"{role}: {summary['steps']} steps in {run_dir}; model in {summary['final_model']}")
    for name in SUMMARISED_CURVES:
        if name in summary:
            print(f"  {name}: {summary[name]['first']} -> {summary[name]['last']}")
    for name, shown in (("holdout", "held-out"), ("training_rows", "training-row")):
        if name in summary:
            before, after = summary[name]["before"], summary[name]["after"]
            print(f"  {shown} agreement ({before['rows']} rows, greedy): exact {before['exact']} -> {after['exact']}, "
                  f"format failures {before['format_failure_rate']} -> {after['format_failure_rate']}")
