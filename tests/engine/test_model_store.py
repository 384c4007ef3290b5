"""Model names: the bundled world model's alias and the prompts a checkpoint carries."""

from __future__ import annotations

from pathlib import Path

import pytest

from data.errors import ModelNotFoundError
from engine.model_store import EMBEDDED, WORLD_MODEL, bundled_world_model, locate, model_prompts


def test_the_world_model_alias_is_the_bundled_checkpoint_with_its_prompts() -> None:
    source = locate(WORLD_MODEL)
    assert source.kind == "checkpoint" and Path(source.path) == bundled_world_model()
    assert (bundled_world_model() / "model.safetensors").stat().st_size < 30 * 1024 * 1024  # the ceiling
    prompts = Path(model_prompts(WORLD_MODEL) or "")
    assert sorted(path.name for path in prompts.glob("*.md")) == ["generate.md", "meta_verify.md", "refine.md", "verify.md"]


def test_a_checkpoint_carries_prompts_only_when_its_folder_holds_templates(tmp_path: Path) -> None:
    checkpoint = tmp_path / "final"
    (checkpoint / "prompts").mkdir(parents=True)
    (checkpoint / "config.json").write_text("{}", encoding="utf-8")
    assert model_prompts(str(checkpoint)) is None  # an empty prompts/ folder is not a prompt set
    (checkpoint / "prompts" / "generate.md").write_text("{problem}", encoding="utf-8")
    assert model_prompts(str(checkpoint)) == str(checkpoint / "prompts")
    assert model_prompts(EMBEDDED) is None and model_prompts("org/name") is None
    assert model_prompts(str(tmp_path / "missing")) is None


def test_a_local_folder_named_like_the_alias_is_reached_by_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / WORLD_MODEL).mkdir()
    monkeypatch.chdir(tmp_path)
    assert Path(locate(WORLD_MODEL).path) == bundled_world_model()
    with pytest.raises(ModelNotFoundError, match="neither a .gguf file nor a directory with config.json"):
        locate(f"./{WORLD_MODEL}")
