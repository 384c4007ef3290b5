"""Sequential refinement: generate a proof with a self-evaluation, then revise it.

``samples`` threads run side by side; each round sends every live thread's prompt to the
engine in one batch (and, with verifier feedback, every new proof's verifications in a
second batch). A thread stops once its feedback score is 1 (the self-score, or the mean
verifier score with ``feedback='verifier'``) or after ``max_rounds``. A round whose
completion has no usable proof restarts that thread from the first-attempt prompt. The
final proof of the run is the last proof of the thread with the best feedback score
(ties: the earlier thread); a missing score ranks below 0, and a round without a proof
has no score, whatever its self-evaluation says.

A refinement prompt quotes a whole proof and its evaluations, and can outgrow a small model's
context (the world model's 1,024 tokens): it is then sent quoting only the most critical
evaluation, and a thread whose refinement still does not fit ends on its last proof, so one
long proof never stops a run. A first-attempt prompt that does not fit is refused as ever.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data.errors import PromptTooLongError
from engine.base import ChatMessage, Engine, GenerationResult
from engine.fitting import generate_fitting
from engine.config import SamplingConfig
from engine.sampling import make_requests
from generator.config import REFINE_ROUND_SEED_STRIDE, REFINE_VERIFICATION_SEED_OFFSET, RefineConfig
from generator.parse import GeneratedProof, parse_generation
from generator.final_proof import FinalProof
from generator.prompt import generation_messages, issues_first, refinement_messages
from verifier.verification import Verification, verify_proofs

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Round:
    """One generation in one thread, with everything needed to audit or replay it."""

    thread: int
    round: int
    prompt: tuple[ChatMessage, ...]
    completion: str
    finish_reason: str
    parsed: GeneratedProof
    prompt_tokens: int
    completion_tokens: int
    generate_s: float
    verification: Verification | None = None

    @property
    def feedback_score(self) -> float | None:
        """The score that steers refinement; None when the round produced no proof to score.

        Self feedback counts only a well-formed self-evaluation: a verdict that parses from a malformed one (no opening
        phrase, say) would otherwise end the thread on a "score 1" the format never vouched for.
        """
        if not self.parsed.proof:
            return None
        if self.verification is not None:
            return self.verification.mean_score
        return self.parsed.self_score if self.parsed.self_evaluation.format_ok else None

    def evaluations(self, limit: int) -> list[tuple[str, float | None]]:
        """What the next refinement prompt quotes: verifier analyses, issue-finding first, or the self-evaluation."""
        if self.verification is None:
            verdict = self.parsed.self_evaluation
            return [(verdict.analysis, verdict.score)] if verdict.analysis else []
        quoted = [(analysis.verdict.analysis or analysis.text, analysis.score) for analysis in self.verification.analyses]
        return issues_first(quoted)[:limit]

    def to_record(self) -> dict[str, Any]:
        return {
            "type": "round",
            "thread": self.thread,
            "round": self.round,
            "prompt": [message.to_dict() for message in self.prompt],
            "completion": self.completion,
            "finish_reason": self.finish_reason,
            "proof": self.parsed.proof,
            "self_evaluation": self.parsed.self_evaluation.analysis,
            "self_score": self.parsed.self_score,
            "format_errors": list(self.parsed.all_format_errors),
            "verification": self.verification.to_dict() if self.verification else None,
            "feedback_score": self.feedback_score,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "generate_s": round(self.generate_s, 3),
        }


@dataclass
class Thread:
    index: int
    rounds: list[Round] = field(default_factory=list)
    done: bool = False

    @property
    def last(self) -> Round | None:
        return self.rounds[-1] if self.rounds else None


@dataclass(frozen=True)
class RefineResult:
    best: Round
    threads: tuple[tuple[Round, ...], ...]

    @property
    def rounds_used(self) -> int:
        return len(self.threads[self.best.thread])

    def final_proof(self) -> FinalProof:
        """The best thread's last proof, its rounds, and the tokens of every round of every thread."""
        best = self.best
        return FinalProof(
            best.parsed.proof, best.parsed.self_evaluation.analysis, best.parsed.self_score,
            best.verification.mean_score if best.verification else None, best.parsed.all_format_errors,
            self.rounds_used, "score 1" if best.feedback_score == 1.0 else "round limit",
            sum(round_.completion_tokens for thread in self.threads for round_ in thread),
        )

    def proof_after(self, rounds: int) -> str:
        """The final proof had the run stopped after ``rounds`` rounds: the best of each thread's last round
        within them, chosen as ``refine`` chooses (a thread that stopped earlier keeps its last proof).

        One run at ``max_rounds`` thereby answers every smaller round budget, as test-time compute curves need.
        """
        if rounds < 1:
            raise ValueError("rounds must be >= 1")
        lasts = [thread[:rounds][-1] for thread in self.threads if thread]
        return max(lasts, key=_rank).parsed.proof  # max keeps the first of equals, as refine does


def _rank(round_: Round) -> float:
    score = round_.feedback_score
    return -1.0 if score is None else score


def refine(
    engine: Engine,
    problem: str,
    config: RefineConfig,
    sampling: SamplingConfig,
    prompts_dir: str | Path | None = None,
    on_round: Callable[[Round], None] | None = None,
) -> RefineResult:
    """Run sequential refinement; ``on_round`` sees each round as soon as it is complete."""
    threads = [Thread(index) for index in range(config.samples)]
    for round_number in range(1, config.max_rounds + 1):
        live = [thread for thread in threads if not thread.done]
        if not live:
            break
        prompts = [_next_prompt(problem, thread, config, prompts_dir) for thread in live]
        started = time.perf_counter()
        fitted = _generate_fitting_prompts(engine, problem, live, prompts, config, sampling, prompts_dir,
                                           round_number * REFINE_ROUND_SEED_STRIDE)
        generate_s = time.perf_counter() - started
        for position in sorted(set(range(len(live))) - set(fitted)):
            live[position].done = True  # its refinement does not fit the context: the thread keeps its last proof
        live = [live[position] for position in fitted]
        prompts = [prompts[position] for position in fitted]
        results = list(fitted.values())
        parsed = [parse_generation(result.completions[0].text, result.completions[0].finish_reason) for result in results]
        verifications: dict[int, Verification] = {}
        if config.feedback == "verifier":
            checkable = [position for position, item in enumerate(parsed) if item.proof]
            found = verify_proofs(
                engine,
                [(problem, parsed[position].proof) for position in checkable],
                config.verify_samples,
                sampling,
                prompts_dir,
                seed_offset=round_number * REFINE_ROUND_SEED_STRIDE + REFINE_VERIFICATION_SEED_OFFSET,
            )
            verifications = dict(zip(checkable, found))
        for position, (thread, prompt, result, item) in enumerate(zip(live, prompts, results, parsed)):
            completion = result.completions[0]
            round_ = Round(
                thread=thread.index,
                round=round_number,
                prompt=prompt,
                completion=completion.text,
                finish_reason=completion.finish_reason,
                parsed=item,
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
                generate_s=generate_s,
                verification=verifications.get(position),
            )
            thread.rounds.append(round_)
            thread.done = round_.feedback_score == 1.0
            if on_round is not None:
                on_round(round_)
    finals = [thread.last for thread in threads if thread.last is not None]
    best = max(finals, key=_rank)  # max keeps the first of equals: the earlier thread wins ties
    return RefineResult(best, tuple(tuple(thread.rounds) for thread in threads))


def _next_prompt(problem: str, thread: Thread, config: RefineConfig, prompts_dir: str | Path | None,
                 evaluations: int | None = None) -> tuple[ChatMessage, ...]:
    last = thread.last
    if last is None or not last.parsed.proof:
        return generation_messages(problem, prompts_dir)
    return refinement_messages(problem, last.parsed.proof, last.evaluations(evaluations or config.max_evaluations), prompts_dir)


def _generate_fitting_prompts(engine: Engine, problem: str, live: list[Thread], prompts: list[tuple[ChatMessage, ...]],
                              config: RefineConfig, sampling: SamplingConfig, prompts_dir: str | Path | None,
                              seed_offset: int) -> dict[int, GenerationResult]:
    """Each live thread's completion by position, for the threads whose prompt fits the model's context.

    A refinement prompt quotes a whole proof and its evaluations and can outgrow a small model's context: it is
    sent again quoting only the most critical evaluation, and a thread whose refinement still does not fit is
    left out (it ends on its last proof). A first-attempt prompt that does not fit is the problem's own size:
    that is refused, as for any prompt. ``prompts`` is updated to the prompts sent.
    """
    requests = make_requests(prompts, sampling, n=1, seed_offset=seed_offset)
    results, refused = generate_fitting(engine, requests)
    shorter = {position: _next_prompt(problem, live[position], config, prompts_dir, evaluations=1) for position in refused}
    retry = [position for position in refused if shorter[position] != prompts[position]]
    if retry:
        # the same seeds as the first try: a position's request differs only in what it quotes
        again = make_requests([shorter.get(position, prompt) for position, prompt in enumerate(prompts)], sampling, n=1,
                              seed_offset=seed_offset)
        answers, _ = generate_fitting(engine, [again[position] for position in retry])
        for position, answer in zip(retry, answers):
            if answer is not None:
                prompts[position] = shorter[position]
                results[position] = answer
    for position in refused:
        if live[position].last is None or not live[position].last.parsed.proof:
            raise PromptTooLongError(refused[position], (position,))
        if results[position] is None:
            logger.warning("thread %d: the refinement prompt does not fit the model's context; it keeps its last proof",
                           live[position].index)
    return {position: result for position, result in enumerate(results) if result is not None}
