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


GOAL = "(4a - 7b)^2 - (4a + 7b)^2 = -112ab"


def test_the_checker_labels_each_sampled_proof_once_against_its_problems_goal(tmp_path: Path) -> None:
    """``loop.labeler = "checker"``: the upper-bound labels, in the label pipeline's record shape, resumable."""
    problem = "Show that (4a - 7b)^2 - (4a + 7b)^2 = -112ab for all real numbers a and b."
    problems = tmp_path / "problems.jsonl"
    problems.write_text(json.dumps({"id": "p", "problem": problem, "goal": [GOAL]}) + "\n", encoding="utf-8")
    loop = loop_with(tmp_path, f"loop.generator_data={problems}", "loop.labeler=checker")
    true = f"Step 1: Note that {GOAL}, by distributing every product."
    flawed = "Step 1: Note that (4a - 7b)^2 - (4a + 7b)^2 = 0, by distributing every product.\nStep 2: So 0 = -112ab."
    drafts = [{"problem": problem, "proof": proof} for proof in (true, flawed, true)]
    loop.label(2, None, drafts)
    records = [json.loads(line) for line in (tmp_path / "loop" / "iter2" / "labeled.jsonl").read_text().splitlines()]
    assert [(record["proof"], record["label"], record["rule"]) for record in records] == [(true, 1.0, "checker"),
                                                                                           (flawed, 0.0, "checker")]
    loop.label(2, None, drafts)  # a rerun labels nothing twice
    assert len((tmp_path / "loop" / "iter2" / "labeled.jsonl").read_text().splitlines()) == 2
    assert [row.score for row in loop.labeled_rows(2)] == [1.0, 0.0]


def test_the_checker_labeler_needs_problems_with_a_goal(tmp_path: Path) -> None:
    problems = write_problems(tmp_path / "problems.jsonl", ["p0"])
    verifier = tmp_path / "graded.jsonl"
    verifier.write_text(json.dumps({"id": "g", "problem": "Prove p0.", "proof": "Step 1: done.", "score": 1}) + "\n",
                        encoding="utf-8")
    loop = loop_with(tmp_path, f"loop.generator_data={problems}", f"loop.verifier_data={verifier}", "loop.auto_label=true",
                     "loop.labeler=checker", "loop.cold_start=false")
    with pytest.raises(InputError, match="loop.labeler = 'checker' needs world problems with a goal .* 1 of"):
        loop.check_data()
    with pytest.raises(InputError, match="labeler must be one of verifier, checker"):
        loop_with(tmp_path, "loop.labeler=oracle")
