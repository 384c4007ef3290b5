"""benchmarks/world_model_loop.py's bookkeeping: stage wall times from a loop's files, and figures across seeds."""

from __future__ import annotations

import os
from pathlib import Path

from benchmark_modules import load_benchmark

loop_benchmark = load_benchmark("world_model_loop")


def touch(path: Path, seconds: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("", encoding="utf-8")
    os.utime(path, (seconds, seconds))


def test_stage_seconds_reads_each_stage_from_its_start_and_end_files(tmp_path):
    touch(tmp_path / "config.toml", 1000)
    touch(tmp_path / "iter1" / "verifier" / "config.toml", 1000)
    touch(tmp_path / "iter1" / "verifier" / "COMPLETE", 1500)
    touch(tmp_path / "iter1" / "generator" / "config.toml", 1500)
    touch(tmp_path / "iter1" / "generator" / "COMPLETE", 2300)
    touch(tmp_path / "iter2" / "label" / "COMPLETE", 2450)
    touch(tmp_path / "iter2" / "rft_records.json", 2460)
    touch(tmp_path / "iter2" / "verifier" / "config.toml", 2500)  # started, not finished: no entry
    assert loop_benchmark.stage_seconds(tmp_path) == {
        "iter1 verifier": 500.0, "iter1 generator": 800.0, "iter2 sample and label": 150.0, "iter2 pick the fine-tuning set": 10.0}
    touch(tmp_path / "config.toml", 2400)  # the loop restarted after a copied iteration 1: sampling counts from then
    assert loop_benchmark.stage_seconds(tmp_path)["iter2 sample and label"] == 50.0


def seed_entry(precision: float, auc: float | None, generator_gain: float) -> dict:
    gain = {"balanced_accuracy gain": {"value": 0.01}, "localisation gain": {"value": -0.02}}
    return {"labels": {"metrics": {"precision_of_1": precision}, "signal": {"true_above_false": auc}},
            "verifier": {"iter1 verifier -> iter2 verifier": {"test_in": {"metrics": gain}}},
            "generator": {"iter1 generator -> iter2 generator": {"edge groups (seen)": {"problems": 70, "gain": generator_gain}},
                          "nothing measured": {"edge groups (seen)": {"problems": 0, "gain": 0.0}}}}


def test_across_seeds_keeps_each_seed_and_skips_what_a_seed_did_not_measure():
    summary = loop_benchmark.across_seeds({0: seed_entry(0.28, 0.46, -0.036), 1: seed_entry(0.32, None, 0.004)})
    precision = summary["precision of label 1"]
    assert precision["seeds"] == {"0": 0.28, "1": 0.32} and abs(precision["mean"] - 0.30) < 1e-9
    assert summary["label AUC (true above false)"]["seeds"] == {"0": 0.46}
    generator = summary["generator iter1 generator -> iter2 generator: edge-group pass@1 gain"]
    assert (generator["min"], generator["max"]) == (-0.036, 0.004)
    assert not any(name.startswith("generator nothing measured") for name in summary)
    assert "Across seeds" in loop_benchmark.across_table(summary)
    assert loop_benchmark.across_table(loop_benchmark.across_seeds({0: seed_entry(0.28, 0.46, 0.0)})) == ""  # one seed
