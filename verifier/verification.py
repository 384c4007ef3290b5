"""n-sample verification and its aggregation.

A proof's score is the mean over the samples that produced a score; samples whose format
failed are kept, counted and reported, never averaged in as 0. All proofs of a call go to
the engine as one batch, one request per proof with ``n`` samples, so a backend can share
each prompt's prefill across its samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data.records import mean_score
from engine.base import Completion, Engine, GenerationRequest, GenerationResult
from engine.config import SamplingConfig
from engine.sampling import make_requests
from verifier.parse import VERIFIER_FORMAT, Verdict, VerdictFormat, parse_verdict
from verifier.prompt import verification_messages


@dataclass(frozen=True)
class Analysis:
    """One sampled analysis: the raw completion and what was parsed from it."""

    text: str
    verdict: Verdict
    finish_reason: str
    completion_tokens: int | None
    tokens_estimated: bool = False
    """True when ``completion_tokens`` is a share of the request's total (see ``engine.token_counts``)."""

    @property
    def score(self) -> float | None:
        return self.verdict.score

    def to_dict(self) -> dict[str, Any]:
        record = {
            "score": self.verdict.score,
            "analysis": self.text,
            "format_errors": list(self.verdict.format_errors),
            "finish_reason": self.finish_reason,
            "completion_tokens": self.completion_tokens,
        }
        return {**record, "tokens_estimated": True} if self.tokens_estimated else record


@dataclass(frozen=True)
class Verification:
    """All samples for one proof (or one analysis, for the meta-verifier)."""

    analyses: tuple[Analysis, ...]
    prompt_tokens: int
    completion_tokens: int
    latency_s: float

    @property
    def scores(self) -> list[float]:
        return [analysis.score for analysis in self.analyses if analysis.score is not None]

    @property
    def mean_score(self) -> float | None:
        return mean_score(self.scores)

    @property
    def tokens_estimated(self) -> bool:
        """Whether some sample's count is an estimate (the total, ``completion_tokens``, is the server's own)."""
        return any(analysis.tokens_estimated for analysis in self.analyses)

    @property
    def format_failures(self) -> int:
        return sum(1 for analysis in self.analyses if analysis.score is None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean_score": self.mean_score,
            "scores": [analysis.score for analysis in self.analyses],
            "format_failures": self.format_failures,
            "samples": [analysis.to_dict() for analysis in self.analyses],
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": round(self.latency_s, 3),
        }


def analysis_from(completion: Completion, role_format: VerdictFormat, quoted: Sequence[str] = ()) -> Analysis:
    verdict = parse_verdict(completion.text, role_format, completion.finish_reason, quoted)
    return Analysis(completion.text, verdict, completion.finish_reason, completion.completion_tokens, completion.tokens_estimated)


def verification_from(result: GenerationResult, role_format: VerdictFormat, quoted: Sequence[str] = ()) -> Verification:
    """Parse every sample of one request; ``quoted`` is the material the prompt put under review."""
    return Verification(
        tuple(analysis_from(completion, role_format, quoted) for completion in result.completions),
        result.prompt_tokens,
        result.completion_tokens,
        result.latency_s,
    )


def verification_requests(
    items: Sequence[tuple[str, str]], samples: int, sampling: SamplingConfig, prompts_dir: str | Path | None = None,
    seed_offset: int = 0,
) -> list[GenerationRequest]:
    """One request per (problem, proof) with ``samples`` completions: what :func:`verify_proofs` sends."""
    prompts = [verification_messages(problem, proof, prompts_dir) for problem, proof in items]
    return make_requests(prompts, sampling, n=samples, seed_offset=seed_offset)


def verifications_from(results: Sequence[GenerationResult], items: Sequence[tuple[str, str]]) -> list[Verification]:
    """Parse the answers to :func:`verification_requests` (result *i* answers item *i*)."""
    return [verification_from(result, VERIFIER_FORMAT, (proof,)) for result, (_, proof) in zip(results, items)]


def verify_proofs(
    engine: Engine,
    items: Sequence[tuple[str, str]],
    samples: int,
    sampling: SamplingConfig,
    prompts_dir: str | Path | None = None,
    seed_offset: int = 0,
) -> list[Verification]:
    """Verify each (problem, proof) ``samples`` times, all in one engine call."""
    results = engine.generate(verification_requests(items, samples, sampling, prompts_dir, seed_offset))
    return verifications_from(results, items)
