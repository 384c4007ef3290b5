"""Per-completion token counts: exact from per-choice token ids, else a flagged split of the total that sums to it."""

from __future__ import annotations

import pytest

from engine.base import GenerationRequest, ChatMessage
from engine.config import EngineConfig
from engine.openai_backend import OpenAIEngine
from engine.token_counts import choice_token_counts, split_total


def choice(text: str, token_ids: list[int] | None = None) -> dict:
    made = {"message": {"content": text}, "finish_reason": "stop"}
    return made if token_ids is None else {**made, "token_ids": token_ids}


@pytest.mark.parametrize("total, texts", [(10, ["a", "bbb"]), (7, ["x", "y", "z"]), (0, ["a", "b"]), (5, ["", "", "abc"]), (1, ["a"] * 4)])
def test_a_split_sums_to_the_total_and_follows_the_text_lengths(total: int, texts: list[str]) -> None:
    shares = split_total(total, texts)
    assert sum(shares) == total and len(shares) == len(texts) and min(shares) >= 0
    assert split_total(100, ["a", "aaa"]) == [25, 75]


def test_per_choice_token_ids_give_exact_counts() -> None:
    counts, estimated = choice_token_counts([choice("a b", [1, 2, 3]), choice("c", [4])], 4)
    assert (counts, estimated) == ([3, 1], False)


def test_a_total_alone_is_split_and_flagged() -> None:
    counts, estimated = choice_token_counts([choice("aaaa"), choice("aaaaaaaaaaaa")], 8)
    assert (counts, estimated) == ([2, 6], True)
    assert choice_token_counts([choice("whatever")], 9) == ([9], False)  # n = 1: the total is the count


def test_token_ids_that_disagree_with_the_total_are_not_trusted() -> None:
    counts, estimated = choice_token_counts([choice("a", [1]), choice("b", [2])], 10)
    assert sum(counts) == 10 and estimated


def test_the_openai_backend_turns_an_answer_into_counted_completions() -> None:
    engine = OpenAIEngine(EngineConfig(backend="openai", base_urls=["http://127.0.0.1:1/v1"], model="m"))
    request = GenerationRequest((ChatMessage("user", "hi"),), n=2)
    body = {"choices": [choice("aa", [1, 2]), {**choice("b", [3]), "index": 1}], "usage": {"completion_tokens": 3, "prompt_tokens": 4}}
    result = engine._to_result(body, request, 0.1)
    assert [c.completion_tokens for c in result.completions] == [2, 1] and not any(c.tokens_estimated for c in result.completions)
    body = {"choices": [choice("aa"), choice("b")], "usage": {"completion_tokens": 3, "prompt_tokens": 4}}
    result = engine._to_result(body, request, 0.1)
    assert sum(c.completion_tokens for c in result.completions) == result.completion_tokens == 3
    assert all(c.tokens_estimated for c in result.completions)
