"""The default backend on the real embedded model."""

from __future__ import annotations

import pytest

from data.errors import ModelNotFoundError, PromptTooLongError
from engine.base import ChatMessage, GenerationRequest
from engine.config import EngineConfig

pytestmark = pytest.mark.slow


def ask(text: str, **sampling: object) -> GenerationRequest:
    settings = {"max_tokens": 12, "temperature": 0.8, **sampling}
    return GenerationRequest((ChatMessage("user", text),), **settings)  # type: ignore[arg-type]


def test_batched_requests_with_different_n_and_settings(transformers_engine) -> None:
    requests = [ask("Say hi.", n=3), ask("Name a prime number." + " Thanks." * 5), ask("Say bye.", temperature=0.0, n=2)]
    results = transformers_engine.generate(requests)
    assert [len(result.completions) for result in results] == [3, 1, 2]
    assert results[1].prompt_tokens > results[0].prompt_tokens
    for result in results:
        assert result.completion_tokens == sum(completion.completion_tokens for completion in result.completions)
        for completion in result.completions:
            assert completion.completion_tokens <= 12
            assert completion.finish_reason == ("length" if completion.completion_tokens == 12 else "stop")
    greedy = results[2].completions
    assert greedy[0].text == greedy[1].text


def test_seeds_reproduce_and_stop_strings_are_cut(transformers_engine) -> None:
    def sample(seed: int) -> str:
        return transformers_engine.generate([ask("Write a sentence about the sea.", seed=seed)])[0].completions[0].text

    first = sample(11)
    assert sample(11) == first
    assert sample(12) != first  # and at temperature 0.8 the seed draws the sample: not one text whatever the seed
    (stopped,) = transformers_engine.generate(
        [ask("Count from 1 to 20, separated by commas.", temperature=0.0, max_tokens=60, stop=("5",))]
    )
    assert "5" not in stopped.completions[0].text
    assert stopped.completions[0].finish_reason == "stop"


def test_prompt_longer_than_context_is_refused(transformers_engine) -> None:
    with pytest.raises(PromptTooLongError, match="context holds 8192"):
        transformers_engine.generate([ask("word " * 9000)])


def test_missing_model_path_is_a_clear_error() -> None:
    from engine.factory import create_engine
    from engine.auto import Workload

    with pytest.raises(ModelNotFoundError, match="does not exist"):
        create_engine(EngineConfig(backend="transformers", model="./no/such/model"), Workload(1, 10))


def test_converted_checkpoint_loads_and_is_trainable(embedded_checkpoint: str) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(embedded_checkpoint)
    assert getattr(model, "hf_quantizer", None) is None
    assert all(parameter.dtype.is_floating_point for parameter in model.parameters())
    assert model.config.tie_word_embeddings
