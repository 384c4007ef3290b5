"""What a training run leaves beside TensorBoard: a metrics JSONL and reward curves as PNG.

``metrics.jsonl`` gets one flushed line per logging step (TRL's logs: rewards, each
component, KL, loss, learning rate, ``frac_reward_zero_std`` = the fraction of groups
whose rewards are all equal, step time). The plots are redrawn from that file at the end
of training, so a resumed run's curves cover the whole run.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from data.jsonl import JsonlWriter, read_jsonl

PLOTTED = ("reward", "format_failure_rate", "reward/format", "reward/score_agreement", "reward/meta", "reward/rating_agreement",
           "reward/proof_score", "reward/self_accuracy", "truth/pass_rate", "truth/verifier_agreement", "truth/self_accuracy",
           "frac_reward_zero_std", "loss", "self_score")


def metric_name(key: str) -> str:
    """Metrics logged through TRL's ``log_metric`` keep their name; strip a ``rewards/`` or ``train/`` prefix if present."""
    for prefix in ("rewards/", "train/"):
        if key.startswith(prefix):
            key = key[len(prefix):]
    return key


class MetricsFile(TrainerCallback):
    def __init__(self, path: Path) -> None:
        self.path = path

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
        if not logs or not state.is_world_process_zero:
            return
        record = {"step": state.global_step, **{k: v for k, v in logs.items() if isinstance(v, (int, float))}}
        with JsonlWriter(self.path) as writer:  # opened per step: a resumed run first repairs a cut-off tail
            writer.write(record)


def read_metrics(path: Path) -> list[dict[str, Any]]:
    records = read_jsonl(path)  # a line cut off by a kill is skipped
    # a resumed run logs its steps again from the checkpoint: keep the last value per step
    by_step: dict[int, dict[str, Any]] = {}
    for record in records:
        by_step.setdefault(record["step"], {}).update(record)
    return [by_step[step] for step in sorted(by_step)]


def curve(records: list[dict[str, Any]], wanted: str) -> tuple[list[int], list[float]]:
    steps, values = [], []
    for record in records:
        for key, value in record.items():
            if key != "step" and metric_name(key) == wanted and isinstance(value, (int, float)) and math.isfinite(value):
                steps.append(record["step"])
                values.append(float(value))
                break
    return steps, values


def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each value and up to ``window - 1`` values before it."""
    return [sum(values[max(0, i + 1 - window): i + 1]) / (i + 1 - max(0, i + 1 - window)) for i in range(len(values))]


def plot_rewards(metrics_path: Path, out: Path, title: str) -> Path | None:
    """Reward curves (one panel per metric present) as a PNG; None when nothing was logged."""
    records = read_metrics(metrics_path)
    curves = {name: curve(records, name) for name in PLOTTED}
    curves = {name: points for name, points in curves.items() if points[0]}
    if not curves:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(3, len(curves))
    rows = math.ceil(len(curves) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.0 * rows), squeeze=False)
    for axis in axes.flat[len(curves):]:
        axis.set_visible(False)
    for axis, (name, (steps, values)) in zip(axes.flat, curves.items()):
        axis.plot(steps, values, marker="." if len(steps) < 40 else None, linewidth=1, alpha=0.5, label="per step")
        window = max(1, len(values) // 8)
        if window > 1:  # a few rollouts per step make single steps noisy: show the trend too
            axis.plot(steps, moving_average(values, window), linewidth=2, label=f"mean of last {window}")
            axis.legend(fontsize=7)
        axis.set_title(name, fontsize=9)
        axis.set_xlabel("step", fontsize=8)
        axis.grid(alpha=0.3)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return out
