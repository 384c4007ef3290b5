"""Who scores rollouts: the trained model at its current weights (policy) or frozen at its start (reference)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.base import ChatMessage, GenerationRequest
from engine.config import EngineConfig
from training.rewards.scoring_engines import PolicyEngine, close_all, open_scoring_engines, reference_engine_config, scoring_sources, stage_clients
from training.config import ModelSettings, RewardSettings, TrainConfig

PROMPTS = [[ChatMessage("user", "Prove that the sum of two even integers is even.")],
           [ChatMessage("user", "What is 2 + 3? Answer in one word.")]]


def greedy(engine: object, max_tokens: int = 12) -> list[str]:
    requests = [GenerationRequest(messages=tuple(prompt), temperature=0.0, max_tokens=max_tokens) for prompt in PROMPTS]
    return [result.completions[0].text for result in engine.generate(requests)]  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def lora_model(embedded_checkpoint: str) -> tuple[object, object]:
    """The embedded model with LoRA adapters whose B matrices are non-zero, so they change its output."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(embedded_checkpoint, dtype=torch.float32)
    model = get_peft_model(base, LoraConfig(r=8, lora_alpha=64, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0.0, 0.05)
    model.train()
    return model, AutoTokenizer.from_pretrained(embedded_checkpoint)


@pytest.mark.slow
def test_the_reference_is_the_starting_model_with_its_adapters_off(lora_model: tuple[object, object], transformers_engine: object) -> None:
    model, tokenizer = lora_model
    starting = greedy(transformers_engine)
    reference, policy = PolicyEngine(model, tokenizer, starting_weights=True), PolicyEngine(model, tokenizer)
    assert greedy(reference) == starting
    moved = greedy(policy)
    assert moved != starting
    # the adapters are back on after a reference call, and the trainer's train mode is kept
    assert greedy(reference) == starting and greedy(policy) == moved
    assert model.training  # type: ignore[attr-defined]
    assert (reference.model, policy.model) == ("reference", "policy")


@pytest.mark.slow
def test_starting_weights_need_adapters_to_switch_off(lora_model: tuple[object, object]) -> None:
    model, tokenizer = lora_model
    plain = model.get_base_model()  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="peft"):
        PolicyEngine(plain, tokenizer, starting_weights=True)


def scoring_config(tmp_path: Path, start: str) -> TrainConfig:
    return TrainConfig(run_dir=str(tmp_path / "run"), model=ModelSettings(name=start),
                       scorer=EngineConfig(backend="transformers", model="embedded", dtype="float32", batch_size=4))


@pytest.mark.parametrize(
    ("role", "verifier", "meta", "expected"),
    [("generator", "reference", "none", {"verifier": "reference"}),
     ("generator", "policy", "engine", {"verifier": "policy", "meta": "engine"}),
     ("verifier", "reference", "reference", {"meta": "reference"}), ("verifier", "engine", "none", {}),
     ("meta-verifier", "policy", "policy", {})],
)
def test_scoring_sources_name_who_scores_each_stage_of_a_role(role: str, verifier: str, meta: str, expected: dict[str, str]) -> None:
    config = TrainConfig(rewards=RewardSettings(verifier=verifier, meta=meta))
    assert scoring_sources(role, config) == expected


def test_stages_of_one_source_share_a_client_and_the_trained_models_stages_wait() -> None:
    engine = object()
    clients = stage_clients({"verifier": "engine", "meta": "engine"}, {"engine": engine}, retries=2)  # type: ignore[dict-item]
    assert clients["verifier"] is clients["meta"] and clients["verifier"].engine is engine and clients["verifier"].retries == 2
    assert stage_clients({"verifier": "reference", "meta": "engine"}, {"engine": engine}, 0)["verifier"] is None  # type: ignore[dict-item]


def test_the_reference_engine_takes_the_scorer_settings_on_the_starting_model(tmp_path: Path) -> None:
    config = scoring_config(tmp_path, "runs/sft/final")
    reference = reference_engine_config(config)
    assert reference.model == "runs/sft/final"
    assert (reference.backend, reference.dtype, reference.batch_size) == ("transformers", "float32", 4)


@pytest.mark.parametrize(
    ("sources", "reference_in_trainer", "opened"),
    [(set(), False, set()), ({"policy"}, False, set()), ({"reference"}, True, set()), ({"reference"}, False, {"reference"}),
     ({"engine", "policy"}, True, {"engine"}), ({"engine", "reference"}, False, {"engine", "reference"})],
)
@pytest.mark.slow
def test_open_scoring_engines_opens_only_what_the_trainer_does_not_serve(
    tmp_path: Path, embedded_checkpoint: str, sources: set[str], reference_in_trainer: bool, opened: set[str]
) -> None:
    engines = open_scoring_engines(scoring_config(tmp_path, embedded_checkpoint), sources, 8, reference_in_trainer)
    try:
        assert set(engines) == opened
        if "reference" in engines:
            assert engines["reference"].model == embedded_checkpoint  # type: ignore[attr-defined]
        if "engine" in engines:
            assert engines["engine"].model == "embedded"  # type: ignore[attr-defined]
    finally:
        close_all(engines)
