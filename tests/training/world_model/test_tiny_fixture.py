"""The tiny world model shipped with the tests (tests/fixtures/tiny-world-model) is what tiny_roles.toml trains.

Retraining takes 2.5 minutes, too long for every test session, so the checkpoint is committed; this test
catches a config edited without retraining it (how to retrain: the comment at the top of tiny_roles.toml).
"""

from __future__ import annotations

import json
from pathlib import Path

from data.jsonl import read_jsonl
from proofsmith.config import Config, resolve_config, to_toml
from training.world_model.config import WorldModelConfig

REPO = Path(__file__).resolve().parents[3]
FIXTURE = Path("tests") / "fixtures" / "tiny-world-model"
CONFIG = REPO / "tests" / "training" / "world_model" / "tiny_roles.toml"


def test_the_shipped_model_was_trained_with_the_settings_of_tiny_roles_toml() -> None:
    config = resolve_config(CONFIG, {"run_dir": str(FIXTURE)}, root=WorldModelConfig)
    assert (REPO / FIXTURE / "config.toml").read_text(encoding="utf-8") == to_toml(config)
    shape = json.loads((REPO / FIXTURE / "final" / "config.json").read_text(encoding="utf-8"))
    architecture = config.architecture
    assert (shape["hidden_size"], shape["num_hidden_layers"], shape["num_attention_heads"], shape["vocab_size"]) == (
        architecture.hidden_size, architecture.layers, architecture.heads, config.tokenizer.vocab_size)


def test_the_shipped_world_is_the_one_its_config_draws() -> None:
    config = resolve_config(CONFIG, root=WorldModelConfig)
    assert (REPO / FIXTURE / "world" / "config.toml").read_text(encoding="utf-8") == to_toml(Config(world=config.world))
    summary = json.loads((REPO / FIXTURE / "world" / "summary.json").read_text(encoding="utf-8"))
    problems = read_jsonl(REPO / FIXTURE / "world" / "train_problems.jsonl")
    assert summary["splits"]["train"]["problems"] == len(problems) > 0
