"""training.loop.schedule.Loop, without training: each stage's learning rate and the problems each iteration samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data.errors import InputError
from proofsmith.config import resolve_config, to_toml
from training.config import TrainConfig
from training.loop.schedule import Loop


def write_problems(path: Path, names: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": name, "problem": f"Prove {name}."}) + "\n" for name in names), encoding="utf-8")
    return path


def loop_with(tmp_path: Path, *overrides: str) -> Loop:
    config = resolve_config(None, None, [f"run_dir={tmp_path / 'loop'}", *overrides], root=TrainConfig)
    return Loop(config, to_toml)


def test_each_stage_trains_at_its_own_learning_rate_where_the_loop_sets_one(tmp_path: Path) -> None:
    loop = loop_with(tmp_path, "grpo.learning_rate=3e-5", "loop.generator_learning_rate=1e-5")
    rates = {stage: loop.stage_config(tmp_path / stage, stage).grpo.learning_rate
             for stage in ("verifier", "meta-verifier", "generator", "rft")}
    assert rates == {"verifier": 3e-5, "meta-verifier": 3e-5, "generator": 1e-5, "rft": 3e-5}
    loop = loop_with(tmp_path, "loop.verifier_learning_rate=5e-5")
    assert loop.stage_config(tmp_path / "v", "meta-verifier").grpo.learning_rate == 5e-5
    assert loop.stage_config(tmp_path / "g", "generator").grpo.learning_rate == loop.config.grpo.learning_rate
    with pytest.raises(InputError, match="generator_learning_rate must be >= 0"):
        loop_with(tmp_path, "loop.generator_learning_rate=-1")


def test_each_iteration_samples_its_own_random_problems_from_the_generators(tmp_path: Path) -> None:
    """A data file ordered by template would give the first rows to one template: the draw is random, seeded,
    different from one iteration to the next, and keeps to the problems the generator stage trains on."""
    names = [f"p{index}" for index in range(40)]
    problems = write_problems(tmp_path / "problems.jsonl", names)
    loop = loop_with(tmp_path, f"loop.generator_data={problems}", "loop.sample_problems=5")
    first, second = loop.problems_to_sample(1), loop.problems_to_sample(2)
    assert len(set(first)) == len(set(second)) == 5 and first != second
    assert first != [f"Prove {name}." for name in names[:5]]
    assert loop_with(tmp_path, f"loop.generator_data={problems}", "loop.sample_problems=5").problems_to_sample(1) == first
    assert loop_with(tmp_path, f"loop.generator_data={problems}", "loop.sample_problems=5",
                     "data.seed=1").problems_to_sample(1) != first
    edge = tmp_path / "calibration.json"
    edge.write_text(json.dumps({"edge_of_competence": {"problems_with_spread": ["p3", "p7"]}}), encoding="utf-8")
    calibrated = loop_with(tmp_path, f"loop.generator_data={problems}", "loop.sample_problems=5", f"data.calibration={edge}")
    assert sorted(calibrated.problems_to_sample(1)) == ["Prove p3.", "Prove p7."]  # fewer than asked: all of them
