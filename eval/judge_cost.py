"""What a judgement costs: completion tokens per verifier sample (and per meta rating), from the records.

Read from ``items.jsonl`` records (``eval.verifier_eval``): every analysis and meta rating
carries its ``completion_tokens`` and ``finish_reason``. ``tokens_per_judgement`` is the
mean completion tokens of one verifier sample (one judgement, as graders are priced);
``hit_max_tokens`` the share of samples cut off at ``max_tokens`` (``finish_reason``
"length"); the meta figures likewise per meta rating (None when none ran). Prompt tokens
are not per sample (one prompt serves the n samples) and are left out. Records written
without per-sample token counts give None for the affected figures, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class JudgeCost:
    proofs: int
    judgements: int
    """Verifier samples over the proofs."""
    tokens_per_judgement: float | None
    hit_max_tokens: float | None
    meta_ratings: int
    tokens_per_meta_rating: float | None
    tokens_per_proof: float | None
    """Verifier and meta completion tokens of one proof, on average."""

    def __post_init__(self) -> None:
        if min(self.proofs, self.judgements, self.meta_ratings) < 0:
            raise ValueError("counts cannot be negative")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _tokens(entries: Sequence[Mapping[str, Any]]) -> int | None:
    counts = [entry.get("completion_tokens") for entry in entries]
    return None if any(count is None for count in counts) else sum(counts)  # type: ignore[misc]


def judge_cost(records: Sequence[Mapping[str, Any]]) -> JudgeCost:
    """Token costs over ``records`` (each with ``analyses``, each with ``meta``)."""
    analyses = [analysis for record in records for analysis in record.get("analyses") or []]
    ratings = [rating for analysis in analyses for rating in analysis.get("meta") or []]
    verifier, meta = _tokens(analyses), _tokens(ratings)
    both = None if verifier is None or meta is None else verifier + meta
    return JudgeCost(
        proofs=len(records), judgements=len(analyses),
        tokens_per_judgement=verifier / len(analyses) if analyses and verifier is not None else None,
        hit_max_tokens=sum(1 for analysis in analyses if analysis.get("finish_reason") == "length") / len(analyses)
        if analyses else None,
        meta_ratings=len(ratings), tokens_per_meta_rating=meta / len(ratings) if ratings and meta is not None else None,
        tokens_per_proof=both / len(records) if records and both is not None else None,
    )
