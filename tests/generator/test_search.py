"""Pool search: selection, ordering, stopping and resume, with a scripted engine at the seam
(tests/generator/test_search_cli.py runs the same path on the real model)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from engine.base import Completion, GenerationRequest, GenerationResult
from engine.config import SamplingConfig
from engine.sampling import sample_seeds
from generator.config import SearchConfig
from generator.prompt import issues_first
from generator.search import (
    Candidate, ProblemSearch, SearchState, best, final_proof, full_passes, quoted_analyses, search, top_k,
)

OPENER = "Here is my evaluation of the solution:"
CLOSER = "Based on my evaluation, the final overall score should be:"


def candidate(name: str, scores: list[float | None], self_score: float | None = 0.5, proof: str = "p") -> Candidate:
    analyses = tuple({"score": score, "analysis": f"{name}-critique-{index}"} for index, score in enumerate(scores))
    return Candidate(name, 0, (), proof, self_score, "", "", "stop", (), analyses, 0)


@pytest.mark.parametrize(
    "pool, k, expected",
    [
        pytest.param([candidate("a", [0, 0]), candidate("b", [1, 0]), candidate("c", [1, 1])], 2, ["c", "b"], id="by-mean"),
        pytest.param([candidate("a", [1, 0], 0.0), candidate("b", [0, 1], 1.0)], 1, ["b"], id="tie-broken-by-self-score"),
        pytest.param([candidate("a", [1, 0]), candidate("b", [0, 1])], 1, ["a"], id="full-tie-keeps-earlier"),
        pytest.param([candidate("a", [None, None]), candidate("b", [0])], 2, ["b", "a"], id="unscored-ranks-last"),
        pytest.param([candidate("a", [], proof="p"), candidate("b", [1], proof="")], 2, [], id="unverified-or-empty-skipped"),
        pytest.param([candidate("a", [1])], 5, ["a"], id="k-larger-than-pool"),
    ],
)
def test_top_k(pool: list[Candidate], k: int, expected: list[str]) -> None:
    assert [c.id for c in top_k(pool, k)] == expected


def test_quoted_analyses_put_issues_first_and_respect_the_limit() -> None:
    proof = candidate("a", [1, 0.5, None, 0, 1])
    assert [score for _, score in quoted_analyses(proof, 3, "issues-first")] == [0, 0.5, 1]
    assert [score for _, score in quoted_analyses(proof, 8, "issues-first")] == [0, 0.5, 1, 1, None]
    assert [score for _, score in quoted_analyses(proof, 2, "sampled")] == [1, 0.5]


def test_quoted_analyses_are_the_visible_analysis_without_think_block_or_verdict() -> None:
    raw = f"<think>private</think>Here is my evaluation of the solution:\nStep 2 is wrong.\n\n{CLOSER} \\boxed{{0}}"
    proof = replace(candidate("a", [0]), analyses=({"score": 0.0, "analysis": raw},))
    assert quoted_analyses(proof, 8, "issues-first") == [("Step 2 is wrong.", 0.0)]


def test_which_analyses_of_a_score_are_quoted_is_drawn_afresh_each_round_and_seeded() -> None:
    proof = candidate("a", [0] * 6 + [1] * 6)
    def first_three(round_number: int) -> list[str]:
        draw = random.Random(f"0/{round_number}/a")
        return [text for text, _ in quoted_analyses(proof, 3, "issues-first", draw)]
    rounds = [first_three(number) for number in range(1, 6)]
    assert all(text.split("-")[-1] in {"0", "1", "2", "3", "4", "5"} for chosen in rounds for text in chosen)  # issues first
    assert len({tuple(chosen) for chosen in rounds}) > 1  # a parent chosen again is shown other analyses
    assert first_three(2) == first_three(2)  # and a rerun quotes the same


def test_issues_first_orders_by_score_with_unscored_last_and_keeps_ties_in_order() -> None:
    quoted = [("a", 1.0), ("b", None), ("c", 0.5), ("d", 0.0), ("e", 0.5)]
    assert [name for name, _ in issues_first(quoted)] == ["d", "c", "e", "a", "b"]


def test_the_final_proof_of_a_search_is_its_best_candidate_with_the_whole_pools_tokens() -> None:
    pool = [candidate("a", [0, 1]), candidate("b", [1, 1], self_score=1.0, proof="best"), candidate("c", [None])]
    pool = [replace(c, completion_tokens=tokens) for c, tokens in zip(pool, (5, 7, 11))]
    final = final_proof(pool, SearchConfig(verify_samples=2, stop_at_full_pass=True))
    assert (final.proof, final.self_score, final.verifier_mean, final.rounds) == ("best", 1.0, 1.0, 1)
    assert (final.stopped, final.completion_tokens, full_passes(pool, 2)) == ("full pass", 23, ["b"])
    assert final_proof(pool, SearchConfig(verify_samples=2, stop_at_full_pass=False)).stopped == "round limit"
    empty = final_proof([], SearchConfig())
    assert (empty.proof, empty.verifier_mean, empty.format_errors, empty.rounds) == ("", None, ("the pool holds no proof",), 0)
    assert empty.to_dict()["format_errors"] == ["the pool holds no proof"]


def test_full_pass_needs_every_verification_to_say_1() -> None:
    assert candidate("a", [1, 1]).passes_all(2)
    assert not candidate("a", [1, None]).passes_all(2)
    assert not candidate("a", [1]).passes_all(2)


class PoolEngine:
    """Generations carry a counter; a proof's verifications come from ``verdict(proof)``."""

    name = "scripted"
    model = "script"

    def __init__(self, verdict) -> None:
        self.verdict, self.generated, self.prompts = verdict, 0, []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        results = []
        for request in requests:
            prompt = request.messages[-1].content
            self.prompts.append(prompt)
            texts = []
            for _ in range(request.n):
                if prompt.startswith("You are grading a proof"):
                    proof = prompt.split("<proof>\n", 1)[1].split("\n</proof>", 1)[0]
                    texts.append(f"{OPENER}\nnote\n{CLOSER} \\boxed{{{self.verdict(proof)}}}")
                else:
                    self.generated += 1
                    texts.append(f"## Solution\nproof number {self.generated}\n## Self Evaluation\n{OPENER}\nok\n{CLOSER} \\boxed{{1}}")
            results.append(GenerationResult(tuple(Completion(t, "stop", 3) for t in texts), 10, 3 * request.n, 0.0))
        return results

    def close(self) -> None:
        pass


def test_search_refines_the_top_k_and_records_every_round(tmp_path: Path) -> None:
    engine = PoolEngine(lambda proof: "0")
    config = SearchConfig(pool=3, verify_samples=2, top_k=2, samples_per_pair=2, rounds=2)
    pool = search(engine, "Prove it.", config, SamplingConfig(), tmp_path)
    assert [sum(1 for c in pool if c.round == r) for r in range(3)] == [3, 4, 4]
    assert all(len(c.parents) == 1 for c in pool if c.round > 0)
    records = [json.loads(line) for line in (tmp_path / "pool.jsonl").read_text().splitlines()]
    assert len(records) == 11 and json.loads((tmp_path / "state.json").read_text()) == {"completed_rounds": 3}
    refine_prompts = [p for p in engine.prompts if "Earlier attempt" in p]
    # one one-sample request per refinement: 2 rounds x 2 parents x 2 samples, every one quoting a 0
    assert len(refine_prompts) == 8 and all("score 0" in p for p in refine_prompts)


def test_search_stops_at_the_first_full_pass(tmp_path: Path) -> None:
    engine = PoolEngine(lambda proof: "1" if proof == "proof number 2" else "0")
    pool = search(engine, "Prove it.", SearchConfig(pool=3, verify_samples=2, top_k=1, rounds=5), SamplingConfig(), tmp_path)
    assert {c.round for c in pool} == {0} and best(pool).proof == "proof number 2"


def test_resume_keeps_complete_rounds_and_redoes_the_one_in_flight(tmp_path: Path) -> None:
    config = SearchConfig(pool=2, verify_samples=1, top_k=1, rounds=1)
    first = search(PoolEngine(lambda proof: "0"), "Prove it.", SearchConfig(pool=2, verify_samples=1, top_k=1, rounds=0), SamplingConfig(), tmp_path)
    with open(tmp_path / "pool.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({**first[0].to_record(), "id": "in-flight", "round": 1}) + "\n" + '{"id": "cut')
    assert [c.id for c in SearchState(tmp_path).load()[0]] == [c.id for c in first]
    engine = PoolEngine(lambda proof: "0")
    pool = search(engine, "Prove it.", config, SamplingConfig(), tmp_path)
    assert [c.id for c in pool[:2]] == [c.id for c in first] and len(pool) == 3
    assert engine.generated == 1  # only round 1 ran again


class SeededEngine:
    """Answers that depend on the request alone (its seed and prompt), never on the order of calls."""

    name = "seeded"
    model = "script"

    def __init__(self, empty_seed: int) -> None:
        self.empty_seed, self.sent = empty_seed, []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        results = []
        for request in requests:
            self.sent.append(request)
            prompt = request.messages[-1].content
            if prompt.startswith("You are grading a proof"):
                proof = prompt.split("<proof>\n", 1)[1].split("\n</proof>", 1)[0]
                verdict = "0.5" if int(proof.rsplit(" ", 1)[1]) % 2 else "1"
                completions = tuple(Completion(f"{OPENER}\nnote {request.seed + j}\n{CLOSER} \\boxed{{{verdict}}}", "stop", 3)
                                    for j in range(request.n))
            elif request.seed == self.empty_seed:
                completions = (Completion("", "length", 3),)  # holds no proof text: joins the pool unverified
            else:
                completions = (Completion(f"## Solution\nproof seeded {request.seed}\n## Self Evaluation\n{OPENER}\nok\n"
                                          f"{CLOSER} \\boxed{{1}}", "stop", 3),)
            results.append(GenerationResult(completions, 10, 3 * request.n, 0.0))
        return results

    def close(self) -> None:
        pass


def test_a_round_verified_slot_by_slot_in_any_order_sends_the_same_requests_and_builds_the_same_pool(tmp_path: Path) -> None:
    config = SearchConfig(pool=4, verify_samples=3, top_k=2, samples_per_pair=2, rounds=2, stop_at_full_pass=False)
    sampling = SamplingConfig(seed=3)
    at_once_engine = SeededEngine(empty_seed=3 + 2)  # round 0, slot 2
    at_once = search(at_once_engine, "Prove it.", config, sampling, tmp_path / "at-once")

    engine = SeededEngine(empty_seed=3 + 2)
    run = ProblemSearch("Prove it.", config, sampling, tmp_path / "reversed")
    while not run.finished:
        generated = engine.generate(run.generation_requests())
        checks = {slot: run.verification_request(slot, generated[slot]) for slot in reversed(range(len(generated)))}
        run.finish_round({slot: engine.generate([request])[0] for slot, request in checks.items() if request is not None})

    assert [c.to_record() for c in run.pool] == [c.to_record() for c in at_once]
    assert len(at_once) == 4 + 4 + 4 and [c.analyses for c in at_once][2] == ()
    assert sorted((r.seed, r.messages) for r in engine.sent) == sorted((r.seed, r.messages) for r in at_once_engine.sent)
    # Every sample of the search, proofs and verifications, has a seed of its own (vLLM seeds sample j with seed + j).
    seeds = [seed for request in engine.sent for seed in sample_seeds(request)]
    assert len(set(seeds)) == len(seeds) == 12 + 11 * 3


def test_a_slot_outside_the_round_or_a_verification_for_no_slot_is_refused(tmp_path: Path) -> None:
    run = ProblemSearch("Prove it.", SearchConfig(pool=2, verify_samples=1, rounds=0), SamplingConfig(), tmp_path)
    engine = PoolEngine(lambda proof: "1")
    generated = engine.generate(run.generation_requests())
    with pytest.raises(ValueError, match="slots 0..1, not -1"):
        run.verification_request(-1, generated[0])
    checks = run.verification_requests(generated)
    answers = {slot: engine.generate([request])[0] for slot, request in checks.items()}
    with pytest.raises(ValueError, match=r"verifications for slots \[5\]"):
        run.finish_round({**answers, 5: answers[0]})
    assert not (tmp_path / "state.json").exists()
    assert len(run.finish_round(answers)) == 2


def test_a_round_too_large_for_its_seed_block_is_refused() -> None:
    with pytest.raises(ValueError, match="verify_samples must be <= 500,000"):
        SearchConfig(pool=1_000, verify_samples=501)


def test_finishing_a_round_needs_a_verification_for_each_proof_and_only_for_proofs(tmp_path: Path) -> None:
    run = ProblemSearch("Prove it.", SearchConfig(pool=2, verify_samples=1, rounds=0), SamplingConfig(), tmp_path)
    engine = PoolEngine(lambda proof: "1")
    checks = run.verification_requests(engine.generate(run.generation_requests()))
    with pytest.raises(ValueError, match="slot 1: a verification for each proof"):
        run.finish_round({0: engine.generate([checks[0]])[0]})
    assert not (tmp_path / "state.json").exists()
