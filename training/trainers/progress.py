"""Training steps shown as proofsmith progress (``engine.progress``), not transformers' own.

A ``Trainer`` brings a tqdm bar that is hidden off a terminal and a log printer that
writes a Python dict per step; a run then shows either nothing for minutes or a wall of
dicts. This callback takes their place: the steps done of ``max_steps``, with the latest
loss and reward as details, on a terminal or as plain lines, like every other command.
Every metric still reaches TensorBoard and ``metrics.jsonl`` (``training.trainers.metrics``).
"""

from __future__ import annotations

from typing import Any

from transformers import PrinterCallback, ProgressCallback, TrainerCallback

from engine.progress import Progress

SHOWN = ("loss", "reward", "reward_std", "frac_reward_zero_std")


class TrainingProgress(TrainerCallback):
    def __init__(self, title: str) -> None:
        self.title = title
        self.progress: Progress | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if state.is_world_process_zero:
            self.progress = Progress(self.title, state.max_steps or None, "step", initial=state.global_step)

    def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.progress is not None and state.global_step > self.progress.done:
            self.progress.update(state.global_step - self.progress.done)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
        if self.progress is None or not logs:
            return
        shown = {name: f"{logs[name]:.4g}" for name in SHOWN if isinstance(logs.get(name), (int, float))}
        if shown:
            self.progress.set_details(**shown)

    def on_train_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress = None


def show_training_progress(trainer: Any, title: str) -> None:
    """Replace the trainer's tqdm bar and log printer with :class:`TrainingProgress`."""
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(TrainingProgress(title))
