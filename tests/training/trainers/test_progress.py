"""training.trainers.progress: a run's steps and latest loss/reward as proofsmith progress lines."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from transformers import PrinterCallback, ProgressCallback

from engine import progress
from training.trainers.progress import TrainingProgress, show_training_progress


def test_steps_and_the_latest_loss_and_reward_are_shown(progress_shown: None, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(progress.INTERVAL_VARIABLE, "60")  # only the start and end lines
    callback = TrainingProgress("train verifier")
    state = SimpleNamespace(is_world_process_zero=True, max_steps=3, global_step=1)  # resumed after step 1
    callback.on_train_begin(None, state, None)
    for step in (2, 3):
        state.global_step = step
        callback.on_step_end(None, state, None)
        callback.on_log(None, state, None, logs={"loss": 0.5 / step, "reward": 0.25 * step, "learning_rate": 1e-4})
    callback.on_train_end(None, state, None)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "proofsmith: train verifier: 1/3 steps (33%), 0:00 elapsed"
    assert lines[-1].startswith("proofsmith: train verifier: 3/3 steps (100%)")
    assert lines[-1].endswith("loss=0.1667, reward=0.75") and "learning_rate" not in lines[-1]


def test_the_trainers_own_bar_and_printer_are_replaced() -> None:
    class Trainer:
        def __init__(self) -> None:
            self.callbacks: list[object] = [ProgressCallback(), PrinterCallback()]

        def remove_callback(self, kind: type) -> None:
            self.callbacks = [callback for callback in self.callbacks if not isinstance(callback, kind)]

        def add_callback(self, callback: object) -> None:
            self.callbacks.append(callback)

    trainer = Trainer()
    show_training_progress(trainer, "train sft")
    assert [type(callback) for callback in trainer.callbacks] == [TrainingProgress]
