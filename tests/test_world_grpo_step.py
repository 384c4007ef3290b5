"""benchmarks/world_grpo_step.py: a step's split from the timed parts' calls (the runs themselves are the benchmark)."""

from __future__ import annotations

import pytest

from benchmark_modules import load_benchmark

grpo_step = load_benchmark("world_grpo_step")


def calls(step_seconds: list[tuple[float, float, float]]) -> dict[str, list[float]]:
    """Each timed part's calls, one a step, as record_parts writes them."""
    return {"_generate": [generate for generate, _, _ in step_seconds], "_calculate_rewards": [reward for _, reward, _ in step_seconds],
            "training_step": [step for _, _, step in step_seconds]}


def test_the_warm_up_step_is_left_out_and_optimisation_is_the_rest_of_a_step():
    summary = grpo_step.summarise(calls([(90.0, 90.0, 900.0), (20.0, 10.0, 40.0), (30.0, 6.0, 50.0)]))
    assert summary == {"steps_measured": 2, "step_s": 45.0, "generation_s": 25.0, "reward_s": 8.0, "optimisation_s": 12.0}


def without_last_step(calls: dict[str, list[float]]) -> dict[str, list[float]]:
    return {**calls, "training_step": calls["training_step"][:-1]}


@pytest.mark.parametrize("timed_calls", [calls([(1.0, 1.0, 3.0)]), without_last_step(calls([(1.0, 1.0, 3.0)] * 2))])
def test_a_run_with_one_step_or_a_missing_call_is_refused(timed_calls):
    with pytest.raises(ValueError, match="one call of each part per step"):
        grpo_step.summarise(timed_calls)


def test_the_async_variant_is_split_from_its_own_step_metrics_after_the_warm_up():
    metrics = [
        {"step": 1, "time/step_s": 90.0, "time/wait_s": 80.0, "time/train_s": 9.0, "time/weight_sync_s": 1.0, "reward": 0.5},
        {"step": 2, "time/step_s": 20.0, "time/wait_s": 14.0, "time/train_s": 5.0, "time/weight_sync_s": 0.2},
        {"step": 3, "time/step_s": 16.0, "time/wait_s": 12.0, "time/train_s": 3.0, "time/weight_sync_s": 0.4},
        {"step": 3},  # the trainer's closing record
    ]
    assert grpo_step.summarise_async(metrics) == {"steps_measured": 2, "step_s": 18.0, "rollouts_s": 13.0,
                                                  "optimisation_s": 4.0, "sync_s": 0.3}
    with pytest.raises(ValueError, match="at least two timed steps"):
        grpo_step.summarise_async(metrics[:1])
