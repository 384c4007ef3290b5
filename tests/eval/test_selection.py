"""The pick rule, the selection metrics, and scoring pairs through one scripted engine."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from data.pairwise import ProofPair
from engine.base import Completion, GenerationRequest, GenerationResult
from engine.config import SamplingConfig
from engine.sampling import sample_seeds
from eval.selection import JudgedPair, metric_values, outcome, pick, selection_metrics
from eval.selection_run import score_pairs

VERDICT = "Here is my evaluation of the solution:\nChecked.\n\nBased on my evaluation, the final overall score should be: \\boxed{{{score}}}"


@pytest.mark.parametrize(
    "scores_1, scores_2, expected",
    [
        ([1.0, 0.5], [0.5, 0.5], (1, None)),
        ([0.0, None], [0.5], (2, None)),
        ([None, None], [0.0], (2, None)),  # no parsed score loses, even to a 0
        ([0.0], [None], (1, None)),
        ([1.0, 0.0], [0.5, 0.5], (None, "tie")),
        ([None], [None, None], (None, "no_pick")),
        ([], [], (None, "no_pick")),
    ],
)
def test_the_pick_rule(scores_1: list, scores_2: list, expected: tuple) -> None:
    assert pick(scores_1, scores_2) == expected


def test_outcomes_and_metrics_count_ties_and_no_picks_as_misses() -> None:
    assert outcome(1, [1.0], [0.0]) == (1, "correct") and outcome(2, [1.0], [0.0]) == (1, "wrong")
    pairs = [JudgedPair(1, (1.0,), (0.0,)), JudgedPair(2, (1.0,), (0.0,)), JudgedPair(1, (0.5,), (0.5,)),
             JudgedPair(2, (None,), (None,))]
    values = metric_values(pairs)
    assert values["selection_accuracy"] == 0.25 and values["accuracy_ties_as_half"] == 0.5
    assert values["decided_accuracy"] == 0.5 and values["tie_rate"] == 0.25 and values["no_pick_rate"] == 0.25
    assert values["format_failure_rate"] == 0.25
    assert metric_values([])["selection_accuracy"] is None


def test_selection_metrics_from_records() -> None:
    records = [{"id": "a", "correct_index": 1, "scores_1": [1.0, 1.0], "scores_2": [0.0, 0.5], "completion_tokens": 8},
               {"id": "b", "correct_index": 2, "scores_1": [1.0, 1.0], "scores_2": [0.0, None], "completion_tokens": 4},
               {"id": "c", "correct_index": 1, "error": "prompt does not fit"}]
    document = selection_metrics(records)
    counts = document["counts"]
    assert (counts["judged"], counts["prompt_too_long"], counts["correct"], counts["wrong"]) == (2, 1, 1, 1)
    assert (counts["picked_1"], counts["picked_2"], counts["correct_index_1"]) == (2, 0, 1)
    accuracy = document["metrics"]["selection_accuracy"]
    assert accuracy["value"] == 0.5 and accuracy["interval"] == (0.0, 1.0)
    assert document["baselines"] == {"always_first": 0.5, "always_second": 0.5}
    assert document["tokens"]["completion"] == 12
    with pytest.raises(ValueError, match="must be one of 0, 0.5, 1"):
        JudgedPair(1, (0.7,), (1.0,))


class ScriptedVerifier:
    """Scores a proof 1 when it contains "good", else 0 (the text "broken" gets no score); counts the requests."""

    name = "scripted"
    model = "script"

    def __init__(self) -> None:
        self.requests: list[GenerationRequest] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        self.requests.extend(requests)
        results = []
        for request in requests:
            prompt = request.messages[-1].content
            text = "no verdict" if "broken" in prompt else VERDICT.format(score=1 if "good" in prompt else 0)
            results.append(GenerationResult(tuple(Completion(text, "stop", 5) for _ in range(request.n)), 20, 5 * request.n, 0.0))
        return results

    def close(self) -> None:
        pass


def test_score_pairs_verifies_each_proof_n_times_and_records_the_pick() -> None:
    engine = ScriptedVerifier()
    pairs = [(0, ProofPair("a", "P", "a good proof", "a weak proof", 1)), (3, ProofPair("b", "P", "weak", "broken", 2))]
    records = score_pairs(engine, pairs, 2, SamplingConfig(temperature=0.7, max_tokens=16, seed=5))
    assert [request.n for request in engine.requests] == [2, 2, 2, 2]
    assert [request.seed for request in engine.requests] == [5, 7, 17, 19]  # by position: (2·position + proof − 1)·n
    seeds = [seed for request in engine.requests for seed in sample_seeds(request)]
    assert len(set(seeds)) == len(seeds)  # vLLM seeds sample j with the request's seed + j
    first, second = records
    assert (first["scores_1"], first["scores_2"], first["pick"], first["outcome"]) == ([1.0, 1.0], [0.0, 0.0], 1, "correct")
    assert (second["scores_2"], second["pick"], second["outcome"]) == ([None, None], 1, "wrong")
    assert second["completion_tokens"] == 20 and len(second["samples_2"]) == 2
    assert second["samples_2"][0]["format_errors"]
