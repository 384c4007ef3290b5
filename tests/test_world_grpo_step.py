"""benchmarks/world_grpo_step.py: a step's split from the timed parts' calls (the runs themselves are the benchmark)."""

from __future__ import annotations

import json

import pytest

from benchmark_modules import load_benchmark

grpo_step = load_benchmark("world_grpo_step")


def calls(step_seconds: list[tuple[float, float, float]]) -> list[str]:
    """One JSON line per timed call, in the order TRL makes them within a step."""
    lines = []
    for generate, reward, step in step_seconds:
        lines += [json.dumps({"part": "_generate", "s": generate}), json.dumps({"part": "_calculate_rewards", "s": reward}),
                  json.dumps({"part": "training_step", "s": step})]
    return lines


def test_the_warm_up_step_is_left_out_and_optimisation_is_the_rest_of_a_step():
    summary = grpo_step.summarise(calls([(90.0, 90.0, 900.0), (20.0, 10.0, 40.0), (30.0, 6.0, 50.0)]))
    assert summary == {"steps_measured": 2, "step_s": 45.0, "generation_s": 25.0, "reward_s": 8.0, "optimisation_s": 12.0}


@pytest.mark.parametrize("lines", [calls([(1.0, 1.0, 3.0)]), calls([(1.0, 1.0, 3.0)] * 2)[:-1]])
def test_a_run_with_one_step_or_a_missing_call_is_refused(lines):
    with pytest.raises(ValueError, match="one call of each part per step"):
        grpo_step.summarise(lines)
