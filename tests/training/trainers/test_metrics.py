"""metrics.jsonl and the reward plots: what is written, what is read back, which keys are plotted."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from training.trainers.metrics import PLOTTED, MetricsFile, curve, metric_name, moving_average, plot_rewards, read_metrics


@dataclass
class FakeState:
    global_step: int
    is_world_process_zero: bool = True


def write_lines(path: Path, records: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records) + tail, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("reward", "reward"),
        ("reward/format", "reward/format"),
        ("train/reward", "reward"),
        ("train/reward/format", "reward/format"),
        ("rewards/reward/format", "reward/format"),
        ("rewards/verifier_reward/mean", "verifier_reward/mean"),
        ("rewards/verifier_reward/reward/format", "verifier_reward/reward/format"),
        ("train/rewards/verifier_reward/mean", "rewards/verifier_reward/mean"),  # prefixes are stripped in one pass
        ("eval_reward", "eval_reward"),
        ("loss", "loss"),
    ],
)
def test_metric_name(key: str, name: str) -> None:
    assert metric_name(key) == name


@pytest.mark.parametrize(
    ("key", "plotted_as"),
    [
        # what GRPOTrainer.log actually hands the callbacks: log_metric names as given, its own names unprefixed
        ("reward", "reward"),
        ("reward/format", "reward/format"),
        ("reward/score_agreement", "reward/score_agreement"),
        ("frac_reward_zero_std", "frac_reward_zero_std"),
        ("loss", "loss"),
        ("self_score", "self_score"),
        ("train/reward/meta", "reward/meta"),
        # TRL's per-function summaries are not among the plotted names
        ("rewards/verifier_reward/mean", None),
        ("rewards/verifier_reward/reward/format", None),
        ("learning_rate", None),
    ],
)
def test_which_keys_are_plotted(key: str, plotted_as: str | None) -> None:
    records = [{"step": 1, key: 0.25}, {"step": 2, key: 0.75}]
    found = {name: curve(records, name) for name in PLOTTED}
    hits = [name for name, (steps, _) in found.items() if steps]
    assert hits == ([plotted_as] if plotted_as else [])
    if plotted_as:
        assert found[plotted_as] == ([1, 2], [0.25, 0.75])


def test_curve_skips_steps_without_a_finite_number() -> None:
    records = [
        {"step": 1, "reward": 0.5},
        {"step": 2, "reward": float("nan")},
        {"step": 3, "reward": None},
        {"step": 4, "loss": 1.0},
        {"step": 5, "reward": float("inf")},
        {"step": 6, "reward": 1},
        {"step": 7, "reward": "0.5"},
    ]
    assert curve(records, "reward") == ([1, 6], [0.5, 1.0])
    assert curve(records, "kl") == ([], [])


def test_moving_average_uses_what_came_before_only() -> None:
    assert moving_average([1.0, 3.0, 5.0, 7.0], 2) == [1.0, 2.0, 4.0, 6.0]
    assert moving_average([1.0, 3.0, 5.0], 3) == [1.0, 2.0, 3.0]
    assert moving_average([2.0, 4.0], 1) == [2.0, 4.0]


def test_curve_takes_one_value_per_record() -> None:
    assert curve([{"step": 3, "reward": 0.1, "train/reward": 0.9}], "reward") == ([3], [0.1])


def test_read_metrics_keeps_the_last_value_per_step_and_skips_a_cut_off_line(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "metrics.jsonl", [
        {"step": 1, "reward": 0.1, "loss": 2.0},
        {"step": 2, "reward": 0.2},
        {"step": 3, "reward": 0.3},
        # a resumed run logs steps 2 and 3 again
        {"step": 2, "reward": 0.25},
        {"step": 3, "reward": 0.35, "kl": 0.01},
        {"step": 1, "loss": 1.5},
    ], tail='{"step": 4, "rew')
    assert read_metrics(path) == [
        {"step": 1, "reward": 0.1, "loss": 1.5},
        {"step": 2, "reward": 0.25},
        {"step": 3, "reward": 0.35, "kl": 0.01},
    ]


def test_read_metrics_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_metrics(tmp_path / "none.jsonl") == []


def test_read_metrics_reads_nan_back_and_curve_drops_it(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "metrics.jsonl", [{"step": 1, "reward": float("nan")}, {"step": 2, "reward": 0.5}])
    records = read_metrics(path)
    assert math.isnan(records[0]["reward"])
    assert curve(records, "reward") == ([2], [0.5])


def test_metrics_file_appends_one_numeric_line_per_log(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    callback = MetricsFile(path)
    callback.on_log(None, FakeState(1), None, logs={"reward": 0.5, "reward/format": 1, "note": "text", "kl": None})
    callback.on_log(None, FakeState(2), None, logs={"loss": 0.25})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {"step": 1, "reward": 0.5, "reward/format": 1},
        {"step": 2, "loss": 0.25},
    ]
    assert read_metrics(path)[0]["reward/format"] == 1


@pytest.mark.parametrize(("state", "logs"), [(FakeState(1, is_world_process_zero=False), {"reward": 1.0}),
                                              (FakeState(1), {}), (FakeState(1), None)])
def test_metrics_file_writes_nothing_off_the_main_process_or_without_logs(tmp_path: Path, state: FakeState,
                                                                         logs: dict[str, Any] | None) -> None:
    path = tmp_path / "metrics.jsonl"
    MetricsFile(path).on_log(None, state, None, logs=logs)
    assert not path.exists()


def test_plot_rewards_writes_a_png(tmp_path: Path) -> None:
    callback = MetricsFile(tmp_path / "metrics.jsonl")
    for step in range(1, 6):
        callback.on_log(None, FakeState(step), None, logs={
            "reward": step / 10, "reward/format": 1.0, "frac_reward_zero_std": 0.5, "loss": 1 / step, "learning_rate": 1e-5,
        })
    out = plot_rewards(tmp_path / "metrics.jsonl", tmp_path / "rewards.png", "verifier run")
    assert out == tmp_path / "rewards.png"
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000


@pytest.mark.parametrize("records", [[], [{"step": 1, "learning_rate": 1e-5, "rewards/verifier_reward/mean": 0.5}],
                                     [{"step": 1, "reward": float("nan")}]])
def test_plot_rewards_returns_none_when_nothing_is_plotted(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    path = write_lines(tmp_path / "metrics.jsonl", records)
    assert plot_rewards(path, tmp_path / "rewards.png", "run") is None
    assert not (tmp_path / "rewards.png").exists()


def test_plot_rewards_without_a_metrics_file(tmp_path: Path) -> None:
    assert plot_rewards(tmp_path / "missing.jsonl", tmp_path / "rewards.png", "run") is None
    assert list(tmp_path.iterdir()) == []  # no PNG (and no metrics file) written
