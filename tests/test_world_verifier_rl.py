"""benchmarks/world_verifier_rl.py: (c) read from a calibration's analyses, and a variant of the config kept apart."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchmark_modules import BENCHMARKS, load_benchmark

verifier_rl = load_benchmark("world_verifier_rl")


def analysis(score: float, blamed: int | None) -> dict:
    return {"score": score, "analysis": f"Step {blamed} is wrong." if blamed else "Every step is correct."}


def record(proof_id: str, split: str, analyses: list[dict]) -> dict:
    return {"id": proof_id, "split": split, "truth": {"score": 0.0, "first_bad_step": 2, "steps": 4}, "analyses": analyses}


def test_scaling_reads_the_first_n_analyses_of_each_test_in_proof(tmp_path):
    records = [
        record("found-second", "test_in", [analysis(1.0, None), analysis(0.0, 2), analysis(0.0, 1), analysis(1.0, None)]),
        record("found-fourth", "test_in", [analysis(1.0, None), analysis(0.0, 3), analysis(0.0, 1), analysis(0.0, 2)]),
        record("never-found", "test_in", [analysis(0.0, 1)] * 4),
        record("train-proof", "train", [analysis(0.0, 2)] * 4),  # not test_in: never counted
    ]
    (tmp_path / "verifications.jsonl").write_text("".join(json.dumps(row) + "\n" for row in records), encoding="utf-8")

    by_n = verifier_rl.scaling_from_calibration(tmp_path, 4)["truth_by_n"]

    assert sorted(by_n, key=int) == ["1", "2", "4"]
    assert [by_n[n]["localised_by_any"] for n in ("1", "2", "4")] == [0.0, pytest.approx(1 / 3), pytest.approx(2 / 3)]
    assert all(by_n[n]["items"] == 3 for n in by_n)
    assert by_n["1"]["random_step"]["localised_by_any"] == pytest.approx(1 / 4)  # four steps: one try in four
    assert by_n["4"]["random_step"]["localised_by_any"] == pytest.approx(1 - (3 / 4) ** 4)
    assert sorted(verifier_rl.scaling_from_calibration(tmp_path, 2)["truth_by_n"]) == ["1", "2"]


def test_a_variant_of_the_config_must_train_into_runs_of_its_own():
    result = subprocess.run([sys.executable, str(BENCHMARKS / "world_verifier_rl.py"), "--set", "grpo.max_steps=40"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith(
        "error: --set needs --runs other than runs: a variant of the config must not resume the config's own runs")
    assert "Traceback" not in result.stderr
