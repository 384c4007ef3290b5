"""Refinement control flow, with a scripted engine at the one seam (the real model cannot
be steered to a given score); tests/proofsmith/test_cli.py runs the same path on the real
embedded model."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from data.errors import PromptTooLongError
from engine.base import Completion, GenerationRequest, GenerationResult, raise_if_too_long
from engine.config import SamplingConfig
from generator.config import RefineConfig
from verifier.prompt import verification_messages
from generator.refine import refine

OPENER = "Here is my evaluation of the solution:"
CLOSER = "Based on my evaluation, the final overall score should be:"
SAMPLING = SamplingConfig(max_tokens=64, seed=0)


def generation(proof: str, self_score: str) -> str:
    return f"## Solution\n{proof}\n\n## Self Evaluation\n{OPENER}\nChecked.\n{CLOSER} \\boxed{{{self_score}}}"


def analysis(score: str, note: str) -> str:
    return f"{OPENER}\n{note}\n{CLOSER} \\boxed{{{score}}}"


class ScriptedEngine:
    """Answers each request with ``script(prompt_text, call_number)``; records every prompt."""

    name = "scripted"
    model = "script"

    def __init__(self, script: Callable[[str, int], str]) -> None:
        self.script = script
        self.prompts: list[str] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        results = []
        for request in requests:
            prompt = request.messages[-1].content
            self.prompts.append(prompt)
            texts = [self.script(prompt, len(self.prompts)) for _ in range(request.n)]
            completions = tuple(Completion(text, "stop", 10) for text in texts)
            results.append(GenerationResult(completions, 100, 10 * request.n, 0.01))
        return results

    def close(self) -> None:
        pass


def is_verification(prompt: str) -> bool:
    return prompt.startswith("You are grading a proof")


def test_a_thread_stops_once_it_grades_itself_1() -> None:
    engine = ScriptedEngine(lambda prompt, call: generation("n = 2k + 1.", "1" if call >= 2 else "0"))
    result = refine(engine, "Prove it.", RefineConfig(max_rounds=5), SAMPLING)
    assert result.rounds_used == 2 and result.best.parsed.self_score == 1.0
    assert "Earlier attempt" in engine.prompts[1] and "n = 2k + 1." in engine.prompts[1]


def test_a_malformed_self_evaluation_that_boxes_1_does_not_end_the_thread() -> None:
    # No opening phrase: the verdict parses, the format does not.
    malformed = f"## Solution\nn = 2k + 1.\n\n## Self Evaluation\nLooks right.\n{CLOSER} \\boxed{{1}}"
    engine = ScriptedEngine(lambda prompt, call: malformed if call == 1 else generation("n = 2k + 1.", "1"))
    rounds = []
    result = refine(engine, "Prove it.", RefineConfig(max_rounds=3), SAMPLING, on_round=rounds.append)
    assert rounds[0].parsed.self_score == 1.0 and not rounds[0].parsed.self_evaluation.format_ok
    assert [round_.feedback_score for round_ in rounds] == [None, 1.0]
    assert result.rounds_used == 2 and "Earlier attempt" in engine.prompts[1]


def test_a_round_without_a_proof_has_no_score_and_restarts_the_thread() -> None:
    empty = f"## Solution\n\n## Self Evaluation\n{OPENER}\nPerfect.\n{CLOSER} \\boxed{{1}}"
    engine = ScriptedEngine(lambda prompt, call: empty)
    rounds = []
    result = refine(engine, "Prove it.", RefineConfig(max_rounds=3), SAMPLING, on_round=rounds.append)
    assert [round_.feedback_score for round_ in rounds] == [None, None, None]
    assert result.rounds_used == 3
    assert all("Earlier attempt" not in prompt for prompt in engine.prompts)


def test_verifier_feedback_quotes_issue_finding_analyses_first_and_picks_the_best_thread() -> None:
    verdicts = iter(["1", "0", "0.5", "1", "1", "1", "0", "0", "0"])

    def script(prompt: str, call: int) -> str:
        if is_verification(prompt):
            score = next(verdicts)
            return analysis(score, f"critique giving {score}")
        return generation("a proof", "1")

    engine = ScriptedEngine(script)
    config = RefineConfig(max_rounds=2, samples=2, feedback="verifier", verify_samples=3)
    result = refine(engine, "Prove it.", config, SAMPLING)
    thread_zero, thread_one = result.threads
    assert thread_zero[0].verification.mean_score == 0.5 and thread_one[0].feedback_score == 1.0
    assert len(thread_one) == 1 and len(thread_zero) == 2  # thread 1 passed all verifications
    refine_prompt = next(prompt for prompt in engine.prompts if "Earlier attempt" in prompt)
    assert refine_prompt.index("critique giving 0") < refine_prompt.index("critique giving 0.5") < refine_prompt.index("critique giving 1")
    assert result.best.thread == 1


def test_ties_keep_the_earlier_thread_and_every_round_is_reported() -> None:
    engine = ScriptedEngine(lambda prompt, call: generation(f"proof {call}", "0.5"))
    seen = []
    result = refine(engine, "Prove it.", RefineConfig(max_rounds=2, samples=3), SAMPLING, on_round=seen.append)
    assert result.best.thread == 0 and len(seen) == 6
    assert {(round_.thread, round_.round) for round_ in seen} == {(t, r) for t in range(3) for r in (1, 2)}


def test_the_final_proof_is_the_best_threads_last_round_with_the_tokens_of_every_round() -> None:
    engine = ScriptedEngine(lambda prompt, call: generation("n = 2k + 1.", "1" if call >= 3 else "0"))
    result = refine(engine, "Prove it.", RefineConfig(max_rounds=4, samples=2), SAMPLING)
    final = result.final_proof()
    assert (final.proof, final.self_score, final.verifier_mean) == ("n = 2k + 1.", 1.0, None)
    assert final.self_evaluation == "Checked." and final.format_errors == ()
    assert (final.rounds, final.stopped) == (result.rounds_used, "score 1")
    assert final.completion_tokens == 10 * sum(len(thread) for thread in result.threads)  # 10 per scripted round
    stuck = refine(ScriptedEngine(lambda prompt, call: generation("p", "0.5")), "Prove it.", RefineConfig(max_rounds=2), SAMPLING)
    assert (stuck.final_proof().stopped, stuck.final_proof().rounds) == ("round limit", 2)


def test_proof_after_fewer_rounds_is_what_refine_would_have_returned_then() -> None:
    # Round 1: thread 0 says 0 (call 1), thread 1 says 0.5 (call 2). Round 2: thread 0 says 1 and stops (call 3),
    # thread 1 says 0 (call 4). Round 3: thread 1 alone says 0 (call 5).
    scores = {1: "0", 2: "0.5", 3: "1", 4: "0", 5: "0"}
    engine = ScriptedEngine(lambda prompt, call: generation(f"proof {call}", scores[call]))
    result = refine(engine, "Prove it.", RefineConfig(max_rounds=3, samples=2), SAMPLING)
    assert [len(thread) for thread in result.threads] == [2, 3]
    assert [result.proof_after(rounds) for rounds in (1, 2, 3, 4)] == ["proof 2", "proof 3", "proof 3", "proof 3"]
    assert result.proof_after(3) == result.final_proof().proof
    with pytest.raises(ValueError):
        result.proof_after(0)


def test_threads_whose_verification_samples_overrun_their_seed_block_are_refused() -> None:
    with pytest.raises(ValueError, match="samples × verify_samples must be <= 50,000"):
        RefineConfig(samples=1_000, verify_samples=51, feedback="verifier")


class SmallContextEngine(ScriptedEngine):
    """A scripted engine whose context holds ``context`` characters of prompt, refusing longer prompts as backends do."""

    def __init__(self, script: Callable[[str, int], str], context: int) -> None:
        super().__init__(script)
        self.context = context
        self.refused: list[str] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        prompts = [request.messages[-1].content for request in requests]
        self.refused += [prompt for prompt in prompts if len(prompt) >= self.context]
        raise_if_too_long([len(prompt) for prompt in prompts], self.context)
        return super().generate(requests)


def verifier_feedback_script(long_critique: str, critical: str = "critique giving 0") -> Callable[[str, int], str]:
    """Proofs "a proof"; their analyses score 0, 0 (``critical``), then 1 (``long_critique``), again and again."""
    verdicts = iter(["0", "0", "1"] * 10)

    def script(prompt: str, call: int) -> str:
        if is_verification(prompt):
            score = next(verdicts)
            return analysis(score, long_critique if score == "1" else critical)
        return generation("a proof", "1")
    return script


def test_a_refinement_too_long_for_the_context_quotes_only_the_most_critical_evaluation() -> None:
    config = RefineConfig(max_rounds=2, feedback="verifier", verify_samples=3)
    engine = SmallContextEngine(verifier_feedback_script("x" * 3000), context=2500)
    result = refine(engine, "Prove it.", config, SAMPLING)
    assert len(engine.refused) == 1 and "x" * 3000 in engine.refused[0]  # all three evaluations did not fit
    assert result.rounds_used == 2  # the second round was sent, quoting the most critical evaluation alone
    refinement = result.threads[0][1].prompt[-1].content
    assert "critique giving 0" in refinement and "x" * 3000 not in refinement and "Evaluation 2" not in refinement
    assert refinement in engine.prompts


def test_a_thread_whose_refinement_never_fits_ends_on_its_last_proof_and_a_first_prompt_that_does_not_fit_is_refused() -> None:
    config = RefineConfig(max_rounds=3, feedback="verifier", verify_samples=3)
    verification = len(verification_messages("Prove it.", "a proof")[-1].content)  # the longest prompt that must fit
    engine = SmallContextEngine(verifier_feedback_script("x" * 3000, "y" * verification), context=verification + 1)
    result = refine(engine, "Prove it.", config, SAMPLING)
    assert len(engine.refused) == 2  # three evaluations, then one
    assert result.rounds_used == 1 and result.final_proof().proof == "a proof"
    with pytest.raises(PromptTooLongError):
        refine(SmallContextEngine(verifier_feedback_script(""), context=20), "Prove it.", config, SAMPLING)
