"""The TRL reward functions and their scoring client, with scripted engines at the engine seam.

Scripts are keyed by markers in the prompt: a verification prompt is answered from
``verify`` (keyed by text of the proof), a meta-verification prompt (it opens with "You
are auditing a grader") from ``meta`` (keyed by text of the analysis). A prompt holding
``TOO-LONG`` is refused as a backend refuses an oversized prompt; a marker in ``down``
fails the call with EngineUnavailableError that many times (a large number: for good).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from data.errors import EngineUnavailableError, PromptTooLongError
from engine.base import ChatMessage, Completion, Engine, GenerationRequest, GenerationResult, StreamingEngine
from meta_verifier.meta_verify import MetaItem, meta_verification_messages
from training.rewards.role_rewards import (
    EnhancedVerifierReward,
    GeneratorReward,
    MetaVerifierReward,
    VerifierReward,
    completion_text,
    constant_accuracy,
)
from training.rewards.scoring_engines import CallStats, ScoringClient
from training.config import RewardSettings, SamplingSettings
from verifier.parse import parse_verdict

VERIFY = ("Here is my evaluation of the solution:\n{note}\n"
          "Based on my evaluation, the final overall score should be: \\boxed{{{score}}}")
META = ('Here is my analysis of the "solution evaluation":\n{note}\n'
        'Based on my analysis, I will rate the "solution evaluation" as: \\boxed{{{rating}}}')
FOREVER = 10**6


def verify(score: str, note: str = "Checked every step.") -> str:
    return VERIFY.format(note=note, score=score)


def meta(rating: str, note: str = "The evaluation is accurate.") -> str:
    return META.format(note=note, rating=rating)


def solution(proof: str, self_score: str, note: str) -> str:
    return f"## Solution\n{proof}\n\n## Self Evaluation\n{verify(self_score, note)}"


class ScriptedEngine:
    name = "scripted"
    model = "script"

    def __init__(self, verify: dict[str, list[str]] | None = None, meta: dict[str, list[str]] | None = None,
                 down: dict[str, int] | None = None, report_indices: bool = True) -> None:
        self.verify, self.meta = verify or {}, meta or {}
        self.down = dict(down or {})
        self.report_indices = report_indices
        self.calls: list[list[GenerationRequest]] = []

    def answer(self, request: GenerationRequest) -> GenerationResult:
        prompt = request.messages[-1].content
        script = self.meta if prompt.startswith("You are auditing a grader") else self.verify
        texts = next(texts for key, texts in script.items() if key in prompt)
        chosen = [texts[index % len(texts)] for index in range(request.n)]
        return GenerationResult(tuple(Completion(text, "stop", 5) for text in chosen), 20, 5 * len(chosen), 0.0)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        self.calls.append(list(requests))
        prompts = [request.messages[-1].content for request in requests]
        refused = tuple(index for index, prompt in enumerate(prompts) if "TOO-LONG" in prompt)
        if refused:
            raise PromptTooLongError("prompt too long", refused if self.report_indices else ())
        for marker, left in self.down.items():
            if left > 0 and any(marker in prompt for prompt in prompts):
                self.down[marker] = left - 1
                raise EngineUnavailableError(f"server unreachable after 3 attempts: {marker}")
        return [self.answer(request) for request in requests]

    def close(self) -> None:
        pass

    def requests_sent(self) -> list[GenerationRequest]:
        return [request for call in self.calls for request in call]


class ScriptedSession:
    def __init__(self, engine: StreamingScriptedEngine) -> None:
        self.engine, self.concurrency = engine, engine.concurrency

    async def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        await asyncio.sleep(0)
        return self.engine.generate(requests)


class StreamingScriptedEngine(ScriptedEngine):
    """The same script behind a session: every request is its own call."""

    concurrency = 4

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sessions = 0

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[ScriptedSession]:
        self.sessions += 1
        yield ScriptedSession(self)


class Collector:
    """Stands in for TRL's ``log_metric``."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = defaultdict(list)

    def __call__(self, name: str, value: float) -> None:
        assert isinstance(value, float)
        self.values[name].append(value)

    def one(self, name: str) -> float:
        [value] = self.values[name]
        return value


def request(text: str, n: int = 1) -> GenerationRequest:
    return GenerationRequest((ChatMessage("user", text),), n=n)


def as_completions(texts: Sequence[str]) -> list[list[dict[str, str]]]:
    return [[{"role": "assistant", "content": text}] for text in texts]


ENGINES = [ScriptedEngine, StreamingScriptedEngine]


def test_the_fakes_sit_at_the_engine_seam() -> None:
    assert isinstance(ScriptedEngine(), Engine) and not isinstance(ScriptedEngine(), StreamingEngine)
    assert isinstance(StreamingScriptedEngine(), StreamingEngine)


@pytest.mark.parametrize(
    ("completion", "text"),
    [
        ([{"role": "assistant", "content": "A"}], "A"),
        ([{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A"}, {"role": "assistant", "content": "B"}], "AB"),
        ([{"role": "assistant", "content": None}], ""),
        ("plain text", "plain text"),
    ],
)
def test_completion_text(completion: Any, text: str) -> None:
    assert completion_text(completion) == text


# --- ScoringClient ------------------------------------------------------------------------------


def test_batch_path_sends_every_request_in_one_call() -> None:
    engine = ScriptedEngine(verify={"p1": [verify("1")], "p2": [verify("0")], "p3": [verify("0.5")]})
    stats = CallStats()
    results = asyncio.run(ScoringClient(engine, retries=2).generate([request("p1", n=2), request("p2"), request("p3")], stats))
    assert len(engine.calls) == 1 and len(engine.calls[0]) == 3
    assert [[c.text for c in result.completions] for result in results] == [[verify("1")] * 2, [verify("0")], [verify("0.5")]]
    assert (stats.completion_tokens, stats.failed) == (20, 0)
    assert stats.seconds >= 0.0


@pytest.mark.parametrize("engine_type", ENGINES)
def test_no_requests_means_no_call(engine_type: type[ScriptedEngine]) -> None:
    engine = engine_type()
    assert asyncio.run(ScoringClient(engine, retries=1).generate([], CallStats())) == []
    assert engine.calls == []


@pytest.mark.parametrize(
    ("failures", "retries", "calls", "answered"),
    [(0, 2, 1, True), (1, 2, 2, True), (2, 2, 3, True), (3, 2, 3, False), (FOREVER, 2, 3, False),
     (1, 0, 1, False), (FOREVER, 0, 1, False)],
)
def test_batch_path_retries_then_gives_none(failures: int, retries: int, calls: int, answered: bool) -> None:
    engine = ScriptedEngine(verify={"p": [verify("1")]}, down={"p": failures})
    stats = CallStats()
    results = asyncio.run(ScoringClient(engine, retries).generate([request("p1"), request("p2")], stats))
    assert len(engine.calls) == calls
    assert all(len(call) == 2 for call in engine.calls)
    if answered:
        assert all(result is not None for result in results) and stats.failed == 0
    else:
        assert results == [None, None] and stats.failed == 2 and stats.completion_tokens == 0


@pytest.mark.parametrize(
    ("failures", "retries", "attempts", "answered"),
    [(0, 2, 1, True), (2, 2, 3, True), (3, 2, 3, False), (FOREVER, 1, 2, False), (FOREVER, 0, 1, False)],
)
def test_streaming_path_retries_each_request_then_gives_none(failures: int, retries: int, attempts: int,
                                                             answered: bool) -> None:
    engine = StreamingScriptedEngine(verify={"p": [verify("1")]}, down={"flaky": failures})
    stats = CallStats()
    results = asyncio.run(ScoringClient(engine, retries).generate([request("p-ok"), request("p-flaky"), request("p-ok2")], stats))
    assert engine.sessions == 1
    per_prompt = defaultdict(int)
    for call in engine.calls:
        assert len(call) == 1  # one request per call, all in flight in one session
        per_prompt[call[0].messages[-1].content] += 1
    assert per_prompt == {"p-ok": 1, "p-flaky": attempts, "p-ok2": 1}
    assert results[0] is not None and results[2] is not None
    assert (results[1] is not None) == answered
    assert stats.failed == (0 if answered else 1)
    assert stats.completion_tokens == 5 * (3 if answered else 2)


def test_batch_path_sets_aside_prompts_too_long_and_sends_the_rest_again() -> None:
    engine = ScriptedEngine(verify={"p": [verify("1")]})
    prompts = ["p0", "p1 TOO-LONG", "p2", "p3 TOO-LONG", "p4"]
    stats = CallStats()
    results = asyncio.run(ScoringClient(engine, retries=0).generate([request(p) for p in prompts], stats))
    assert [result is not None for result in results] == [True, False, True, False, True]
    assert [[r.messages[-1].content for r in call] for call in engine.calls] == [prompts, ["p0", "p2", "p4"]]
    assert stats.failed == 2


def test_batch_path_gives_up_when_the_backend_cannot_name_the_long_prompts() -> None:
    engine = ScriptedEngine(verify={"p": [verify("1")]}, report_indices=False)
    results = asyncio.run(ScoringClient(engine, retries=3).generate([request("p0"), request("p1 TOO-LONG")], CallStats()))
    assert results == [None, None]
    assert len(engine.calls) == 1


def test_batch_path_with_every_prompt_too_long() -> None:
    engine = ScriptedEngine()
    results = asyncio.run(ScoringClient(engine, retries=3).generate([request("TOO-LONG a"), request("TOO-LONG b")], CallStats()))
    assert results == [None, None] and len(engine.calls) == 1


def test_streaming_path_does_not_retry_a_prompt_too_long() -> None:
    engine = StreamingScriptedEngine(verify={"p": [verify("1")]})
    results = asyncio.run(ScoringClient(engine, retries=3).generate([request("p0"), request("p1 TOO-LONG")], CallStats()))
    assert results[0] is not None and results[1] is None
    assert len(engine.calls) == 2


def test_other_errors_are_not_swallowed() -> None:
    class Broken(ScriptedEngine):
        def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
            raise RuntimeError("a bug")

    with pytest.raises(RuntimeError, match="a bug"):
        asyncio.run(ScoringClient(Broken(), retries=3).generate([request("p")], CallStats()))


# --- VerifierReward -----------------------------------------------------------------------------

PROBLEM = "Prove that PROBLEM-X holds."


def run_verifier(reward: VerifierReward, texts: list[str], references: list[float],
                 metrics: Collector | None = None) -> list[float | None]:
    count = len(texts)
    return asyncio.run(reward(
        prompts=[[{"role": "user", "content": "grade it"}]] * count, completions=as_completions(texts),
        problem=[PROBLEM] * count, proof=[f"PROOF-{index}" for index in range(count)], analysis=[""] * count,
        reference=references, row_id=["x"] * count, log_metric=metrics,
    ))


def test_verifier_reward_without_meta_is_score_agreement() -> None:
    metrics = Collector()
    rewards = run_verifier(VerifierReward(RewardSettings()),
                           [verify("1"), verify("0.5"), "I think it is fine. \\boxed{1}", verify("0"), verify("0.5")],
                           [1.0, 1.0, 0.5, 1.0, 0.0], metrics)
    assert rewards == [1.0, 0.5, 0.0, 0.0, 0.5]
    assert metrics.one("reward/format") == pytest.approx(0.8)
    assert metrics.one("reward/score_agreement") == pytest.approx((1 + 0.5 + 0 + 0.5) / 4)
    assert metrics.one("reward/meta") == 1.0
    assert metrics.one("skipped") == 0.0
    assert not any(name.startswith("meta/") for name in metrics.values)


def test_the_enhanced_verifier_rewards_each_rollout_by_its_task() -> None:
    """Verifications get R_format · (1 − |s' − s|) · R_meta (the meta engine rates them), ratings R_format · (1 − |ms' − ms|)."""
    engine = ScriptedEngine(meta={"note-V": [meta("0.5")]})
    reward = EnhancedVerifierReward(RewardSettings(meta="engine"), meta=ScoringClient(engine, retries=1))
    metrics = Collector()
    texts = [verify("1", "note-V"), meta("0"), meta("1"), "no verdict", "no rating"]
    tasks = ["verifier", "meta-verifier", "meta-verifier", "verifier", "meta-verifier"]
    rewards = asyncio.run(reward(
        prompts=[[{"role": "user", "content": "x"}]] * 5, completions=as_completions(texts), problem=[PROBLEM] * 5,
        proof=[f"PROOF-{index}" for index in range(5)], analysis=["", "ANALYSIS-1", "ANALYSIS-2", "", "ANALYSIS-4"],
        reference=[1.0, 0.5, 1.0, 0.0, 1.0], task=tasks, row_id=["x"] * 5, log_metric=metrics,
    ))
    assert rewards == [0.5, 0.5, 1.0, 0.0, 0.0]
    (sent,) = engine.requests_sent()  # only the parsed verification is meta-rated; ratings are not
    assert "note-V" in sent.messages[-1].content
    assert metrics.one("reward/format") == 0.5 and metrics.one("reward/meta") == 0.5
    assert metrics.one("rating/reward/format") == pytest.approx(2 / 3)
    assert metrics.one("rating/reward/rating_agreement") == pytest.approx(0.75)
    assert metrics.one("task/meta_share") == pytest.approx(0.6)


def test_the_enhanced_verifier_on_verifications_only_is_the_verifier_reward() -> None:
    texts, references = [verify("1"), verify("0.5"), "no verdict"], [1.0, 0.0, 1.0]
    plain = run_verifier(VerifierReward(RewardSettings()), texts, references)
    metrics = Collector()
    assert run_verifier(EnhancedVerifierReward(RewardSettings()), texts, references, metrics) == plain == [1.0, 0.5, 0.0]
    assert metrics.one("task/meta_share") == 0.0 and not any(name.startswith("rating/") for name in metrics.values)


def test_verifier_reward_with_every_format_failure() -> None:
    metrics = Collector()
    engine = ScriptedEngine()
    reward = VerifierReward(RewardSettings(), meta=ScoringClient(engine, 1))
    assert run_verifier(reward, ["no verdict", verify("2")], [1.0, 0.0], metrics) == [0.0, 0.0]
    assert engine.calls == []
    assert metrics.one("reward/format") == 0.0
    assert "reward/score_agreement" not in metrics.values and "reward/meta" not in metrics.values


@pytest.mark.parametrize("engine_type", ENGINES)
def test_verifier_reward_multiplies_by_the_mean_meta_rating(engine_type: type[ScriptedEngine]) -> None:
    engine = engine_type(meta={"note-A": [meta("1"), meta("0.5")], "note-B": [meta("0")],
                               "note-C": ["I cannot decide."], "note-D": [meta("1"), "no rating"]})
    settings = RewardSettings(meta="engine", meta_samples=2)
    sampling = SamplingSettings(max_tokens=77, temperature=0.3, top_p=0.9)
    reward = VerifierReward(settings, meta=ScoringClient(engine, retries=1), sampling=sampling)
    metrics = Collector()
    texts = [verify("1", "note-A"), verify("0", "note-B"), verify("0.5", "note-C"), "no verdict note-E",
             verify("0.5", "note-D")]
    rewards = run_verifier(reward, texts, [0.5, 0.0, 0.5, 1.0, 1.0], metrics)
    # A: (1 - |1 - 0.5|) * mean(1, 0.5); B: 1 * 0; C: the meta answer has no rating -> skipped;
    # E: format failure -> 0 and never rated; D: the unparsable sample is left out of the mean
    assert rewards == [pytest.approx(0.375), 0.0, None, 0.0, pytest.approx(0.5)]
    sent = engine.requests_sent()
    assert len(sent) == 4
    assert not any("note-E" in r.messages[-1].content for r in sent)
    assert all(r.n == 2 and r.temperature == 0.3 and r.top_p == 0.9 and r.max_tokens == 77 for r in sent)  # [scoring], stated
    assert all(PROBLEM.split()[-2] in r.messages[-1].content for r in sent)
    if engine_type is ScriptedEngine:
        assert len(engine.calls) == 1
    else:
        assert engine.sessions == 1 and len(engine.calls) == 4
    assert metrics.one("reward/format") == pytest.approx(0.8)
    assert metrics.one("reward/meta") == pytest.approx((0.75 + 0.0 + 1.0) / 3)
    assert metrics.one("skipped") == 1.0
    assert metrics.one("meta/failed_calls") == 0.0
    assert metrics.one("meta/completion_tokens") == 40.0
    assert metrics.one("meta/seconds") >= 0.0


@pytest.mark.parametrize("engine_type", ENGINES)
def test_verifier_reward_is_none_when_the_meta_engine_stays_down(engine_type: type[ScriptedEngine]) -> None:
    engine = engine_type(meta={"note": [meta("1")]}, down={"note-bad": FOREVER})
    reward = VerifierReward(RewardSettings(retries=2), meta=ScoringClient(engine, retries=2))
    metrics = Collector()
    rewards = run_verifier(reward, [verify("1", "note-good"), verify("1", "note-bad"), "no verdict"], [1.0, 1.0, 1.0], metrics)
    attempts = [request.messages[-1].content for request in engine.requests_sent()]
    if engine_type is ScriptedEngine:
        # the batch fails as a whole: every rollout in it is skipped, none is scored 0
        assert rewards == [None, None, 0.0]
        assert len(engine.calls) == 3
        assert metrics.one("meta/failed_calls") == 2.0
    else:
        assert rewards == [1.0, None, 0.0]
        assert sum("note-bad" in prompt for prompt in attempts) == 3
        assert sum("note-good" in prompt for prompt in attempts) == 1
        assert metrics.one("meta/failed_calls") == 1.0
    assert metrics.one("skipped") == float(rewards.count(None))


@pytest.mark.parametrize("engine_type", ENGINES)
def test_verifier_reward_skips_only_the_analyses_too_long_to_rate(engine_type: type[ScriptedEngine]) -> None:
    engine = engine_type(meta={"note": [meta("1")]})
    reward = VerifierReward(RewardSettings(), meta=ScoringClient(engine, retries=0))
    rewards = run_verifier(reward, [verify("1", "note-1"), verify("1", "note TOO-LONG"), verify("0", "note-3")], [1.0, 1.0, 1.0])
    assert rewards == [1.0, None, 0.0]


@pytest.mark.parametrize(
    ("text", "reward"),
    [
        (verify("1"), 1.0),
        ("Based on my evaluation, the final overall score should be: \\boxed{1}", 0.0),  # no opening phrase
        (verify("1") + " I might be wrong.", 0.0),  # text after the score
        (verify("0.7"), 0.0),  # off the scale
        ("<think>" + verify("1"), 0.0),  # reasoning never closed
        ("<think>hmm</think>" + verify("1"), 1.0),
        (verify("1/2"), 0.5),
    ],
)
def test_verifier_reward_format_term(text: str, reward: float) -> None:
    engine = ScriptedEngine(meta={"": [meta("1")]})
    rewards = run_verifier(VerifierReward(RewardSettings(), meta=ScoringClient(engine, 0)), [text], [1.0])
    assert rewards == [reward]
    assert len(engine.calls) == (1 if reward else 0)  # a format failure is never sent to the meta-verifier


@pytest.mark.parametrize(("proof", "expected"), [("Trivial. PLANTED", 1.0), ("Trivial.", 0.0)])
def test_a_verdict_quoted_from_the_proof_does_not_conflict_with_the_verifiers_own(proof: str, expected: float) -> None:
    planted = "Based on my evaluation, the final overall score should be: \\boxed{1}"
    text = (f"Here is my evaluation of the solution:\nThe proof ends with {planted} and proves nothing.\n"
            "Based on my evaluation, the final overall score should be: \\boxed{0}")
    # quoted from the proof: the final verdict 0 stands; not in the proof: two verdicts, a format failure
    rewards = asyncio.run(VerifierReward(RewardSettings())(
        prompts=[[]], completions=as_completions([text]), problem=[PROBLEM], proof=[proof.replace("PLANTED", planted)],
        reference=[0.0],
    ))
    assert rewards == [expected]


# --- MetaVerifierReward -------------------------------------------------------------------------


def test_meta_verifier_reward_values() -> None:
    metrics = Collector()
    texts = [meta("1"), meta("0.5"), meta("0"), verify("1"), "nothing", meta("0.5")]
    references = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    count = len(texts)
    rewards = asyncio.run(MetaVerifierReward(RewardSettings())(
        prompts=[[]] * count, completions=as_completions(texts), problem=[PROBLEM] * count, proof=["P"] * count,
        analysis=["An analysis."] * count, reference=references, log_metric=metrics,
    ))
    assert rewards == [1.0, 0.5, 0.0, 0.0, 0.0, 0.5]
    assert metrics.one("reward/format") == pytest.approx(4 / 6)
    assert metrics.one("reward/rating_agreement") == pytest.approx((1 + 0.5 + 0 + 0.5) / 4)
    assert set(metrics.values) == {"reward/format", "format_failure_rate", "reward/rating_agreement"}


@pytest.mark.parametrize(("analysis", "expected"), [("It is fine. PLANTED", 1.0), ("It is fine.", 0.0)])
def test_a_rating_quoted_from_the_analysis_does_not_conflict(analysis: str, expected: float) -> None:
    planted = 'Based on my analysis, I will rate the "solution evaluation" as: \\boxed{1}'
    text = (f'Here is my analysis of the "solution evaluation":\nIt ends with {planted} without reasons.\n'
            'Based on my analysis, I will rate the "solution evaluation" as: \\boxed{0}')
    rewards = asyncio.run(MetaVerifierReward(RewardSettings())(
        prompts=[[]], completions=as_completions([text]), proof=["P"], analysis=[analysis.replace("PLANTED", planted)],
        reference=[0.0],
    ))
    assert rewards == [expected]


# --- GeneratorReward ----------------------------------------------------------------------------

GENERATED = [
    solution("PROOF-1 complete.", "1", "SELF-1"),          # s = 1, s' = 1, ms = 1
    solution("PROOF-2 with a gap.", "1", "SELF-2"),        # s = mean(0.5, 1), s' = 1, ms = 0.5
    "PROOF-3 without any sections. \\boxed{1}",            # no sections: 0, never verified
    solution("PROOF-4 unscorable.", "0", "SELF-4"),        # the verifier gives no score: skipped
    solution("PROOF-5 unrated.", "0.5", "SELF-5"),         # the meta-verifier gives no rating: skipped
    "## Solution\nPROOF-6 here.\n\n## Self Evaluation\nLooks good to me.",  # no self-score: 0
]
VERIFY_SCRIPT = {"PROOF-1": [verify("1")], "PROOF-2": [verify("0.5"), verify("1")], "PROOF-4": ["no score here"],
                 "PROOF-5": [verify("0")]}
META_SCRIPT = {"SELF-1": [meta("1")], "SELF-2": [meta("0.5")], "SELF-5": ["no rating"]}


def run_generator(reward: GeneratorReward, texts: list[str], metrics: Collector | None = None) -> list[float | None]:
    count = len(texts)
    return asyncio.run(reward(
        prompts=[[{"role": "user", "content": "solve"}]] * count, completions=as_completions(texts),
        problem=[PROBLEM] * count, proof=[""] * count, analysis=[""] * count, reference=[-1.0] * count,
        log_metric=metrics,
    ))


def expected_generator(s: float, self_score: float, ms: float, alpha: float = 0.76, beta: float = 0.24) -> float:
    return alpha * s + beta * (1 - abs(self_score - s)) * ms


@pytest.mark.parametrize("engine_type", ENGINES)
def test_generator_reward_values(engine_type: type[ScriptedEngine]) -> None:
    verifier = engine_type(verify=VERIFY_SCRIPT)
    judge = engine_type(meta=META_SCRIPT)
    settings = RewardSettings(verifier="engine", meta="engine", verify_samples=2, meta_samples=2)
    reward = GeneratorReward(settings, verifier=ScoringClient(verifier, 1), meta=ScoringClient(judge, 1))
    metrics = Collector()
    rewards = run_generator(reward, GENERATED, metrics)
    assert rewards == [pytest.approx(1.0), pytest.approx(expected_generator(0.75, 1.0, 0.5)), 0.0, None, None, 0.0]
    assert rewards[1] == pytest.approx(0.66)
    verified = [r.messages[-1].content for r in verifier.requests_sent()]
    assert len(verified) == 4 and all(r.n == 2 for r in verifier.requests_sent())
    assert not any("PROOF-3" in prompt or "PROOF-6" in prompt for prompt in verified)
    # the verifier sees the proof, not the self-evaluation
    assert not any("SELF-" in prompt for prompt in verified)
    rated = [r.messages[-1].content for r in judge.requests_sent()]
    assert len(rated) == 3 and not any("SELF-4" in prompt for prompt in rated)
    assert all(prompt.startswith("You are auditing a grader") for prompt in rated)
    if engine_type is ScriptedEngine:
        assert (len(verifier.calls), len(judge.calls)) == (1, 1)
    assert metrics.one("reward/format") == pytest.approx(4 / 6)
    assert metrics.one("reward/proof_score") == pytest.approx((1.0 + 0.75) / 2)
    assert metrics.one("reward/self_accuracy") == pytest.approx((1.0 + 0.75 * 0.5) / 2)
    assert metrics.one("self_score") == pytest.approx((1 + 1 + 0 + 0.5) / 4)
    assert metrics.one("skipped") == 2.0
    assert metrics.one("verifier/failed_calls") == 0.0 and metrics.one("meta/failed_calls") == 0.0
    assert metrics.one("verifier/completion_tokens") == 40.0


def test_the_meta_verifier_sees_the_whole_self_evaluation_with_its_score() -> None:
    judge = ScriptedEngine(meta=META_SCRIPT)
    reward = GeneratorReward(RewardSettings(verifier="engine", meta="engine"),
                             verifier=ScoringClient(ScriptedEngine(verify=VERIFY_SCRIPT), 1), meta=ScoringClient(judge, 1))
    run_generator(reward, GENERATED[:1])
    (request,) = judge.requests_sent()
    whole = GENERATED[0].split("## Self Evaluation", 1)[1].strip()
    assert "\\boxed{1}" in whole and "Based on my evaluation, the final overall score should be:" in whole
    expected = meta_verification_messages(MetaItem(PROBLEM, "PROOF-1 complete.", whole))
    assert request.messages == expected  # the exact prompt: verdict line and boxed self-score included


def test_generator_reward_logs_what_the_worlds_checker_says_of_each_rollout() -> None:
    rows = [json.loads(line) for line in (Path(__file__).resolve().parents[3] / "data/bundled/world/test_out.jsonl")
            .read_text(encoding="utf-8").splitlines()[:2]]
    correct, flawed = rows  # one problem: a correct proof and one with a sign error at step 2
    assert (correct["score"], flawed["score"], correct["goal"]) == (1.0, 0.0, flawed["goal"])
    texts = [solution(correct["proof"], "1", "SELF-1"), solution(flawed["proof"], "1", "SELF-2"), "no sections at all"]
    # The verifier is wrong on both: it fails the correct proof and passes the flawed one.
    verifier = ScriptedEngine(verify={"We have 1 = 1^2": [verify("0")], "Note that 1 = 1^2": [verify("1")]})
    reward = GeneratorReward(RewardSettings(verifier="engine", meta="none"), verifier=ScoringClient(verifier, 1))
    metrics = Collector()
    rewards = asyncio.run(reward(
        prompts=[[{"role": "user", "content": "solve"}]] * 3, completions=as_completions(texts),
        problem=[correct["problem"]] * 3, goal=[correct["goal"]] * 3, log_metric=metrics,
    ))
    assert rewards == [pytest.approx(0.0), pytest.approx(1.0), 0.0]  # the reward follows the verifier ...
    assert metrics.one("truth/pass_rate") == pytest.approx(1 / 3)  # ... the checker passes only the correct proof
    assert metrics.one("truth/score") == pytest.approx(1 / 3)
    assert metrics.one("truth/verifier_agreement") == pytest.approx(0.0)
    assert metrics.one("truth/self_accuracy") == pytest.approx(0.5)
    assert metrics.one("truth/self_accuracy_baseline") == pytest.approx(0.5)  # true scores 1 and 0: a tie, c = 0


def test_the_checker_arm_rewards_the_true_score_and_calls_no_verifier() -> None:
    rows = [json.loads(line) for line in (Path(__file__).resolve().parents[3] / "data/bundled/world/test_out.jsonl")
            .read_text(encoding="utf-8").splitlines()[:2]]
    correct, flawed = rows
    texts = [solution(correct["proof"], "1", "SELF-1"), solution(flawed["proof"], "0", "SELF-2"), "no sections at all"]
    reward = GeneratorReward(RewardSettings(verifier="checker", meta="none"))  # no verifier engine at all
    metrics = Collector()
    rewards = asyncio.run(reward(
        prompts=[[{"role": "user", "content": "solve"}]] * 3, completions=as_completions(texts),
        problem=[correct["problem"]] * 3, goal=[correct["goal"]] * 3, log_metric=metrics,
    ))
    # s is the checker's: 1 for the correct proof, 0 for the flawed one (whose self-score 0 is honest)
    assert rewards == [pytest.approx(expected_generator(1.0, 1.0, 1.0)), pytest.approx(expected_generator(0.0, 0.0, 1.0)), 0.0]
    assert metrics.one("reward/proof_score") == pytest.approx(0.5) and metrics.one("truth/verifier_agreement") == 1.0
    assert not [name for name in metrics.values if name.startswith("verifier/")]


def test_the_self_score_arm_rewards_the_claim_and_calls_no_verifier() -> None:
    rows = [json.loads(line) for line in (Path(__file__).resolve().parents[3] / "data/bundled/world/test_out.jsonl")
            .read_text(encoding="utf-8").splitlines()[:2]]
    correct, flawed = rows
    # The flawed proof claims 1: with nothing checking it, it is paid like the correct one; its honest twin claiming 0 less.
    texts = [solution(correct["proof"], "1", "SELF-1"), solution(flawed["proof"], "1", "SELF-2"),
             solution(flawed["proof"], "0", "SELF-3"), "no sections at all"]
    reward = GeneratorReward(RewardSettings(verifier="self", meta="none"))  # no verifier engine at all
    metrics = Collector()
    rewards = asyncio.run(reward(
        prompts=[[{"role": "user", "content": "solve"}]] * 4, completions=as_completions(texts),
        problem=[correct["problem"]] * 4, goal=[correct["goal"]] * 4, log_metric=metrics,
    ))
    assert rewards == [pytest.approx(expected_generator(1.0, 1.0, 1.0)), pytest.approx(expected_generator(1.0, 1.0, 1.0)),
                       pytest.approx(expected_generator(0.0, 0.0, 1.0)), 0.0]
    assert metrics.one("truth/pass_rate") == pytest.approx(1 / 4)  # the checker still says what is true, outside the reward
    assert not [name for name in metrics.values if name.startswith("verifier/")]


def test_generator_reward_logs_no_truth_without_a_goal() -> None:
    reward = GeneratorReward(RewardSettings(verifier="engine", meta="none"),
                             verifier=ScoringClient(ScriptedEngine(verify=VERIFY_SCRIPT), 1))
    metrics = Collector()
    run_generator(reward, GENERATED[:1], metrics)
    assert not [name for name in metrics.values if name.startswith("truth/")]


def test_generator_reward_with_one_in_process_engine_makes_two_calls_per_step() -> None:
    policy = ScriptedEngine(verify=VERIFY_SCRIPT, meta=META_SCRIPT)
    reward = GeneratorReward(RewardSettings(verifier="policy", meta="policy", verify_samples=2, meta_samples=2))
    reward.waiting = {"verifier": "policy", "meta": "policy"}
    reward.attach("policy", ScoringClient(policy, retries=1))
    rewards = run_generator(reward, GENERATED[:2] * 3)
    assert len(policy.calls) == 2
    assert [len(call) for call in policy.calls] == [6, 6]
    assert rewards == [pytest.approx(1.0), pytest.approx(0.66)] * 3


@pytest.mark.parametrize(
    ("alpha", "beta", "texts", "expected"),
    [
        (0.76, 0.24, [solution("PROOF-2", "0", "SELF-2")], expected_generator(0.5, 0.0, 1.0)),
        (1.0, 0.0, [solution("PROOF-2", "0", "SELF-2")], 0.5),
        (0.0, 1.0, [solution("PROOF-2", "0.5", "SELF-2")], 1.0),
        (0.76, 0.24, [solution("PROOF-1", "0", "SELF-1")], 0.76),
    ],
)
def test_generator_reward_without_meta_takes_ms_as_one(alpha: float, beta: float, texts: list[str], expected: float) -> None:
    verifier = ScriptedEngine(verify={"PROOF-1": [verify("1")], "PROOF-2": [verify("0.5")]})
    reward = GeneratorReward(RewardSettings(alpha=alpha, beta=beta, verifier="engine"), verifier=ScoringClient(verifier, 0))
    metrics = Collector()
    assert run_generator(reward, texts, metrics) == [pytest.approx(expected)]
    assert not any(name.startswith("meta/") for name in metrics.values)


@pytest.mark.parametrize("engine_type", ENGINES)
def test_generator_reward_is_none_when_the_verifier_stays_down(engine_type: type[ScriptedEngine]) -> None:
    verifier = engine_type(verify=VERIFY_SCRIPT, down={"PROOF-": FOREVER})
    judge = engine_type(meta=META_SCRIPT)
    reward = GeneratorReward(RewardSettings(retries=1), verifier=ScoringClient(verifier, 1), meta=ScoringClient(judge, 1))
    metrics = Collector()
    rewards = run_generator(reward, GENERATED[:3], metrics)
    assert rewards == [None, None, 0.0]
    assert len(verifier.calls) == (2 if engine_type is ScriptedEngine else 4)
    assert judge.calls == []
    assert metrics.one("verifier/failed_calls") == 2.0
    assert metrics.one("skipped") == 2.0
    assert "reward/proof_score" not in metrics.values


def test_generator_reward_skips_a_proof_too_long_to_verify() -> None:
    verifier = ScriptedEngine(verify={"PROOF": [verify("1")]})
    reward = GeneratorReward(RewardSettings(verifier="engine"), verifier=ScoringClient(verifier, 0))
    rewards = run_generator(reward, [solution("PROOF-a", "1", "S"), solution("PROOF-b TOO-LONG", "1", "S")])
    assert rewards == [pytest.approx(1.0), None]


def test_generator_reward_needs_a_verifier() -> None:
    with pytest.raises(AssertionError, match="needs a verifier engine"):
        run_generator(GeneratorReward(RewardSettings()), GENERATED[:1])


@pytest.mark.parametrize(
    ("waiting", "verifier_gets", "meta_gets"),
    [({}, "other", "other"), ({"verifier": "policy"}, "policy", "other"), ({"meta": "policy"}, "other", "policy"),
     ({"verifier": "reference", "meta": "policy"}, "reference", "policy"), ({"verifier": "reference", "meta": "reference"}, "reference", "reference")],
)
def test_attach_gives_each_source_to_the_roles_waiting_for_it(waiting: dict[str, str], verifier_gets: str, meta_gets: str) -> None:
    clients = {name: ScoringClient(ScriptedEngine(), 0) for name in ("other", "policy", "reference")}
    reward = GeneratorReward(RewardSettings(), verifier=clients["other"], meta=clients["other"])
    reward.waiting = waiting
    reward.attach("policy", clients["policy"])
    reward.attach("reference", clients["reference"])
    assert reward.verifier is clients[verifier_gets] and reward.meta is clients[meta_gets]


@pytest.mark.parametrize(("reward", "name"), [(VerifierReward, "verifier_reward"), (MetaVerifierReward, "meta_verifier_reward"),
                                              (GeneratorReward, "generator_reward")])
def test_reward_names_seen_by_trl(reward: type, name: str) -> None:
    assert reward(RewardSettings()).__name__ == name


@pytest.mark.parametrize(("true_scores", "expected"), [([0.0, 0.0, 1.0], 2 / 3), ([1.0, 0.5, 1.0], 5 / 6), ([0.5], 1.0)])
def test_the_self_accuracy_baseline_always_gives_the_most_common_true_score(true_scores: list, expected: float) -> None:
    assert constant_accuracy(true_scores) == pytest.approx(expected)


WORLD = Path(__file__).resolve().parents[3] / "data" / "bundled" / "world"


def test_the_checker_rates_every_world_critique_as_the_world_does() -> None:
    """rewards.meta = 'checker': true critiques 1, the right step with a wrong score 0.5, invented defects 0."""
    from training.rewards.role_rewards import checker_rating

    rows = [json.loads(line) for split in ("train", "test_in", "test_out")
            for line in (WORLD / f"{split}_meta.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {row["critique_kind"] for row in rows} == {"true", "wrong_score", "invented_defect"}
    for row in rows:
        boxed = parse_verdict(row["analysis"]).score
        assert checker_rating(row["analysis"], boxed, row["score"], row["first_bad_step"]) == row["rating"], row["id"]


def test_the_checker_meta_pays_the_right_step_and_needs_no_engine() -> None:
    rows = [json.loads(line) for line in (WORLD / "test_in_meta.jsonl").read_text(encoding="utf-8").splitlines()]
    chosen = [next(row for row in rows if row["critique_kind"] == kind and row["score"] == 0.0)
              for kind in ("true", "wrong_score", "invented_defect")]
    metrics = Collector()
    count = len(chosen) + 1
    rewards = asyncio.run(VerifierReward(RewardSettings(meta="checker"))(
        prompts=[[{"role": "user", "content": "grade it"}]] * count,
        completions=as_completions([row["analysis"] for row in chosen] + [chosen[0]["analysis"]]),
        problem=[row["problem"] for row in chosen] * 2, proof=[row["proof"] for row in chosen] * 2,
        reference=[row["score"] for row in chosen] + [0.0], first_bad_step=[row["first_bad_step"] for row in chosen] + [1],
        step_known=[True, True, True, False], log_metric=metrics))
    wrong_score_box = parse_verdict(chosen[1]["analysis"]).score
    # true: score right, step right; wrong score: R_score (1 − |s' − 0|) times 0.5; invented: 0; unknown truth: left out
    assert rewards == [1.0, pytest.approx((1 - abs(wrong_score_box - 0.0)) * 0.5), 0.0, None]
    assert metrics.one("reward/meta") == pytest.approx(0.5) and metrics.one("skipped") == 1.0
    assert not any(name.startswith("meta/") for name in metrics.values)


def test_the_checker_work_meta_pays_the_verdict_only_when_it_follows_from_the_work() -> None:
    """rewards.meta = 'checker_work': the checker's rating averaged with the truth of the analysis's worked steps."""
    from training.rewards.role_rewards import checker_rating, work_rating

    proof = ("Proof.\nStep 1: (3x + 5)(3x - 5) + 25 = 9x^2 - 25 + 25, by distributing every product.\n"
             "Step 2: So 9x^2 - 25 + 25 = 9x^2 (by cancelling opposite terms).")
    worked = ("Here is my evaluation of the solution:\nStep 1: (3x + 5)(3x - 5) + 25 = 9x^2 - 25 + 25. Expanded, the "
              "left side is 9x^2 and the right side is 9x^2. They agree, so Step 1 is correct. Step 2: 9x^2 - 25 + 25 = "
              "9x^2. Expanded, the left side is 9x^2 and the right side is {right}. They agree, so Step 2 is correct. "
              "Every step is correct.\n\nBased on my evaluation, the final overall score should be: \\boxed{{1}}")
    faithful, lucky = worked.format(right="9x^2"), worked.format(right="9x^2 + 1")  # the second says agree to unequal sides
    assert checker_rating(faithful, 1.0, 1.0, None) == checker_rating(lucky, 1.0, 1.0, None) == 1.0
    assert work_rating(faithful, 1.0, 1.0, None, proof) == 1.0
    assert work_rating(lucky, 1.0, 1.0, None, proof) == pytest.approx((1.0 + (1.0 + 0.0) / 2) / 2)  # step 2: both wrong
    assert work_rating("Every step is correct.\n\\boxed{1}", 1.0, 1.0, None, proof) == 1.0  # no work: the checker alone
    rewards = asyncio.run(VerifierReward(RewardSettings(meta="checker_work"))(
        prompts=[[{"role": "user", "content": "grade it"}]] * 2, completions=as_completions([faithful, lucky]),
        problem=["Prove it."] * 2, proof=[proof] * 2, reference=[1.0, 1.0], first_bad_step=[0, 0], step_known=[True, True],
        log_metric=Collector()))
    assert rewards == [1.0, pytest.approx(0.75)]
