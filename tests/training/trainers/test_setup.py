"""``training.trainers.setup``: which checkpoint a rerun resumes from, and a rerun after the last step trains no more."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from data.jsonl import read_jsonl
from train_inputs import write_short_prompts
from training.trainers.setup import checkpoint_step, last_checkpoint

WORLD_TRAIN = Path(__file__).resolve().parents[3] / "data" / "bundled" / "world" / "train.jsonl"


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


@pytest.mark.slow
def test_a_run_killed_after_its_last_step_trains_no_step_more(cli, tmp_path: Path, tiny_world_model: str) -> None:
    """Trained, checkpointed at the last step, then killed before ``final/``: the rerun writes ``final/`` from that
    checkpoint; resumed there, transformers would train one step past ``max_steps``. (The tiny world model: the
    mechanism is the subject, its steps take milliseconds.)"""
    from safetensors.torch import load_file

    prompts = write_short_prompts(tmp_path / "prompts")
    run_dir = tmp_path / "run"
    args = ("train", "sft", "--run-dir", str(run_dir), "--model", tiny_world_model, "--data", str(WORLD_TRAIN),
            "--prompts", str(prompts), "--json", "--sft-steps", "2", "--set", "data.max_rows=8", "--set", "sft.batch_size=4",
            "--set", "sft.max_length=256", "--set", "sft.save_steps=1", "--set", "sft.precision=fp32")
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    trained = load_file(str(run_dir / "final" / "model.safetensors"))
    steps = [line["step"] for line in read_jsonl(run_dir / "metrics.jsonl") if "loss" in line]
    assert steps == [1, 2] and checkpoint_step(str(run_dir / "checkpoints" / "checkpoint-2")) == 2
    shutil.rmtree(run_dir / "final")
    (run_dir / "COMPLETE").unlink()

    again = cli(*args)
    assert again.returncode == 0, again.stderr
    assert [line["step"] for line in read_jsonl(run_dir / "metrics.jsonl") if "loss" in line] == steps
    rewritten = load_file(str(run_dir / "final" / "model.safetensors"))
    assert rewritten.keys() == trained.keys() and all(rewritten[name].equal(trained[name]) for name in trained)
    assert json.loads(again.stdout)["steps"] == 2
