"""Training sampling settings: one name per role, stated defaults, and pointers from the old names."""

from __future__ import annotations

from pathlib import Path

import pytest

from data.errors import InputError
from proofsmith.config import resolve_config, to_toml
from training.config import SamplingSettings, TrainConfig


def test_each_role_states_its_sampling_and_a_partial_section_keeps_its_own_defaults() -> None:
    config = resolve_config(None, None, ["scoring.max_tokens=96", "rollouts.top_p=0.9"], root=TrainConfig)
    assert (config.scoring.max_tokens, config.scoring.temperature, config.scoring.top_p) == (96, 0.7, 0.95)
    assert (config.rollouts.max_tokens, config.rollouts.temperature, config.rollouts.top_p) == (256, 1.0, 0.9)
    shown = to_toml(TrainConfig())
    assert "[rollouts]" in shown and "[scoring]" in shown and "top_p = 0.95" in shown


def test_the_resolved_config_round_trips_through_toml(tmp_path: Path) -> None:
    config = resolve_config(None, None, ["scoring.temperature=0.3", "rollouts.max_tokens=64"], root=TrainConfig)
    path = tmp_path / "config.toml"
    path.write_text(to_toml(config), encoding="utf-8")
    assert resolve_config(path, root=TrainConfig) == config


@pytest.mark.parametrize("old, new", [
    ("grpo.max_completion_length=64", "rollouts.max_tokens"),
    ("grpo.temperature=0.9", "rollouts.temperature"),
    ("rewards.max_tokens=64", "scoring.max_tokens"),
    ("rewards.temperature=0.5", "scoring.temperature"),
    ("loop.max_tokens=64", "rollouts.max_tokens"),
])
def test_a_moved_setting_names_its_new_place(old: str, new: str) -> None:
    with pytest.raises(InputError, match=f"is now {new}"):
        resolve_config(None, None, [old], root=TrainConfig)


def test_scoring_requests_carry_every_stated_setting() -> None:
    sampling = SamplingSettings(max_tokens=32, temperature=0.5, top_p=0.8).requests_sampling(seed=7)
    assert (sampling.max_tokens, sampling.temperature, sampling.top_p, sampling.seed) == (32, 0.5, 0.8, 7)


@pytest.mark.parametrize("assignment, message", [
    ("rollouts.top_p=0", "top_p must be in"),
    ("scoring.max_tokens=0", "max_tokens must be >= 1"),
    ("rollouts.temperature=-1", "temperature must be >= 0"),
])
def test_bad_sampling_is_refused(assignment: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        resolve_config(None, None, [assignment], root=TrainConfig)


def test_async_rollouts_sample_the_whole_vocabulary() -> None:
    with pytest.raises(InputError, match="rollouts.top_p must be 1"):
        resolve_config(None, None, ["async=true", "rollouts.top_p=0.9"], root=TrainConfig)
