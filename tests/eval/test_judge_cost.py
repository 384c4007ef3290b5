"""Tokens per judgement from items.jsonl records, by hand."""

from __future__ import annotations

import pytest

from eval.judge_cost import judge_cost

RECORDS = [
    {"analyses": [{"completion_tokens": 10, "finish_reason": "stop", "meta": [{"completion_tokens": 4}, {"completion_tokens": 6}]},
                  {"completion_tokens": 30, "finish_reason": "length", "meta": []}]},
    {"analyses": [{"completion_tokens": 20, "finish_reason": "stop", "meta": []}]},
]


def test_judge_cost_by_hand() -> None:
    cost = judge_cost(RECORDS)
    assert (cost.proofs, cost.judgements, cost.meta_ratings) == (2, 3, 2)
    assert cost.tokens_per_judgement == pytest.approx(60 / 3)
    assert cost.hit_max_tokens == pytest.approx(1 / 3)
    assert cost.tokens_per_meta_rating == pytest.approx(10 / 2)
    assert cost.tokens_per_proof == pytest.approx(70 / 2)


def test_missing_counts_are_none_not_zero() -> None:
    cost = judge_cost([{"analyses": [{"score": 1, "meta": []}]}])
    assert cost.tokens_per_judgement is None and cost.tokens_per_proof is None and cost.tokens_per_meta_rating is None
    empty = judge_cost([])
    assert empty.judgements == 0 and empty.tokens_per_judgement is None and empty.hit_max_tokens is None
