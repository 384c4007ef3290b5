"""Meta-verification prompts, format and batched n-sample rating of analyses.

The output format and scoring mirror the verifier's (``verifier.parse``), with the
meta-verifier's own phrases; a rating is one of {0, 0.5, 1} or a recorded format failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.base import ChatMessage, Engine
from engine.config import SamplingConfig
from engine.sampling import make_requests
from verifier.parse import VerdictFormat
from verifier.templates import fence, load_template
from verifier.verification import Verification, verification_from

PROMPTS_DIR = Path(__file__).parent / "prompts"

META_FORMAT = VerdictFormat(
    opener='Here is my analysis of the "solution evaluation":',
    closers=('Based on my analysis, I will rate the "solution evaluation" as:',),
)


@dataclass(frozen=True)
class MetaItem:
    """An analysis to rate, with the problem and proof it is about."""

    problem: str
    proof: str
    analysis: str


def meta_verification_messages(item: MetaItem, prompts_dir: str | Path | None = None) -> tuple[ChatMessage, ...]:
    template = load_template("meta_verify", PROMPTS_DIR, prompts_dir)
    return template.render(
        {
            "problem": fence(item.problem, "problem"),
            "proof": fence(item.proof, "proof"),
            "analysis": fence(item.analysis, "evaluation"),
        }
    )


def meta_verify(
    engine: Engine,
    items: Sequence[MetaItem],
    samples: int,
    sampling: SamplingConfig,
    prompts_dir: str | Path | None = None,
    seed_offset: int = 0,
) -> list[Verification]:
    """Rate each analysis ``samples`` times, all in one engine call."""
    prompts = [meta_verification_messages(item, prompts_dir) for item in items]
    results = engine.generate(make_requests(prompts, sampling, n=samples, seed_offset=seed_offset))
    return [verification_from(result, META_FORMAT, (item.proof, item.analysis)) for result, item in zip(results, items)]
