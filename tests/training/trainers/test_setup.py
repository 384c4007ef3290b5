"""``training.trainers.setup``: which checkpoint a rerun resumes from."""

from __future__ import annotations

from pathlib import Path

from training.trainers.setup import last_checkpoint


def test_a_rerun_resumes_from_the_newest_whole_checkpoint(tmp_path: Path) -> None:
    checkpoints = tmp_path / "checkpoints"
    assert last_checkpoint(checkpoints) is None  # no directory yet
    for step in (2, 10):
        (checkpoints / f"checkpoint-{step}").mkdir(parents=True)
        (checkpoints / f"checkpoint-{step}" / "trainer_state.json").write_text("{}", encoding="utf-8")
    (checkpoints / "checkpoint-11").mkdir()  # a kill during its save: weights maybe, no trainer state
    (checkpoints / "checkpoint-11" / "model.safetensors").write_bytes(b"")
    (checkpoints / "checkpoint-x").mkdir()
    assert last_checkpoint(checkpoints) == str(checkpoints / "checkpoint-10")  # 10 > 2 numerically, 11 is cut off
