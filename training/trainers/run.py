"""One training run of one role, as ``proofsmith train ROLE`` runs it: agreement before, the
trainer (SFT, GRPO or async GRPO), agreement after, and the run's summary.

With held-out rows, a verifier or meta-verifier is scored greedily before and after
training on them and on the first training rows (``training.trainers.holdout``). A run
directory that already holds ``COMPLETE`` is not trained again; its summary is returned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.config import TrainConfig, is_complete
from training.processes import is_main_process, wait_for_everyone
from training.role_data.records import sft_records
from training.role_data.rows import TrainingRow
from training.trainers.holdout import agreement_summary, measured_sets, write_agreements
from training.trainers.metrics import curve, read_metrics

SUMMARISED_CURVES = ("reward", "format_failure_rate", "loss", "frac_reward_zero_std")
"""Metrics whose first and last values the summary reports."""


def train_role(role: str, config: TrainConfig, rows: list[TrainingRow], held_out: list[TrainingRow]) -> dict[str, Any]:
    """Train ``role`` in ``config.run_dir`` (resuming; nothing when complete) and return ``run_summary``."""
    run_dir = Path(config.run_dir)
    sets = measured_sets(rows, held_out)
    measure = bool(held_out) and role in ("verifier", "meta-verifier") and not is_complete(run_dir)
    prompts_dir = config.prompts_dir or None
    if measure:
        measure_agreement(run_dir, "before", config.model.name, role, sets, config, prompts_dir)
    if is_complete(run_dir):
        return run_summary(run_dir, role)
    if role == "sft":
        from training.trainers.sft import run_sft

        run_sft(config, sft_records(rows, config.sft.formats, prompts_dir))
    elif config.async_:
        from training.async_rl.trainer import run_async_grpo

        run_async_grpo(role, config, rows)
    else:
        from training.trainers.grpo import run_grpo

        run_grpo(role, config, rows)
    if measure:
        measure_agreement(run_dir, "after", str(run_dir / "final"), role, sets, config, prompts_dir)
    return run_summary(run_dir, role)


def measure_agreement(run_dir: Path, when: str, model: str, role: str, sets: dict[str, list[TrainingRow]],
                      config: TrainConfig, prompts_dir: str | None) -> None:
    """``write_agreements`` in the main process while the others wait (one model load, one file writer)."""
    if is_main_process():
        write_agreements(run_dir, when, model, role, sets, config.rollouts.max_tokens, prompts_dir)
    wait_for_everyone()


def run_summary(run_dir: Path, role: str) -> dict[str, Any]:
    """Steps, first and last values of the main curves, and before/after agreement of a run directory."""
    records = read_metrics(run_dir / "metrics.jsonl")
    summary: dict[str, Any] = {"role": role, "run_dir": str(run_dir), "final_model": str(run_dir / "final"),
                               "steps": records[-1]["step"] if records else 0}
    for name in SUMMARISED_CURVES:
        _, values = curve(records, name)
        if values:
            summary[name] = {"first": round(values[0], 4), "last": round(values[-1], 4)}
    return {**summary, **agreement_summary(run_dir)}
