"""One proof's share of auto-labeling: its requests (with seeds tied to its input position), its
record, and the k rule applied to its verifications and meta ratings.

The pipeline (``training.auto_labeling.pipeline``) dispatches these pieces in chunks
(``chunked``) or proof by proof against a server (``streaming``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from data.records import ProofItem
from engine.base import GenerationRequest, GenerationResult
from engine.config import SamplingConfig
from engine.sampling import make_requests
from meta_verifier.meta_verify import META_FORMAT, MetaItem, meta_verification_messages
from training.auto_labeling.config import LabelConfig
from training.auto_labeling.rule import TOO_LONG_RULE, CritiqueStatus, LabelDecision, critique_status, decide
from verifier.prompt import verification_messages
from verifier.verification import Verification, verification_from


@dataclass(frozen=True)
class LabeledProof:
    item: ProofItem
    verification: Verification
    meta: dict[int, Verification]
    """Meta-verifications by analysis index; only analyses that report issues have one."""
    statuses: tuple[CritiqueStatus | None, ...]
    """Per analysis: its critique status (``training.auto_labeling.rule``); None for an analysis giving 1 or none."""
    decision: LabelDecision
    meta_errors: dict[int, str] = field(default_factory=dict)
    """Analyses whose meta-verification prompt did not fit the model's context (their critique is unknown)."""
    error: str | None = None
    """Why the proof could not be verified at all (its prompt is longer than the context)."""

    def to_record(self) -> dict[str, Any]:
        analyses = []
        for index, analysis in enumerate(self.verification.analyses):
            meta = self.meta.get(index)
            entry = {
                **analysis.to_dict(),
                "critique": self.statuses[index],
                "valid": None if self.statuses[index] in (None, "unchecked") else self.statuses[index] == "confirmed",
                "meta": [rating.to_dict() for rating in meta.analyses] if meta is not None else [],
            }
            if index in self.meta_errors:
                entry["meta_error"] = self.meta_errors[index]
            analyses.append(entry)
        meta_tokens = sum(meta.completion_tokens for meta in self.meta.values())
        record = {
            "id": self.item.id,
            "problem": self.item.problem,
            "proof": self.item.proof,
            "human_score": self.item.human_score,
            "label": self.decision.label,
            "rule": self.decision.rule,
            "lowest_score": self.decision.lowest,
            "confirmed_at_lowest": self.decision.confirmed_at_lowest,
            "analyses": analyses,
            "completion_tokens": self.verification.completion_tokens + meta_tokens,
        }
        if self.error is not None:
            record["error"] = self.error
        return record


def unverifiable(item: ProofItem, reason: str) -> LabeledProof:
    """The record of a proof whose verification prompt does not fit: left for a human."""
    return LabeledProof(item, Verification((), 0, 0, 0.0), {}, (), LabelDecision(None, TOO_LONG_RULE, None, 0), error=reason)


def seed_offset(position: int, config: LabelConfig) -> int:
    """Seeds are tied to the proof's place in the input, not to chunking, order or resumes.

    Proof ``position`` owns the n·(1 + m) sample seeds from this offset (``make_requests``
    gives each sample its own): its verification's n samples, then m for each analysis's meta
    request (analysis j: offset + n + j·m).
    """
    return position * config.n * (1 + config.m)


def verification_request(item: ProofItem, position: int, config: LabelConfig, sampling: SamplingConfig,
                         prompts_dir: str | None) -> GenerationRequest:
    return make_requests([verification_messages(item.problem, item.proof, prompts_dir)], sampling, n=config.n,
                         seed_offset=seed_offset(position, config))[0]


def flagged_analyses(verification: Verification) -> list[int]:
    """Analyses that report issues: these are meta-verified."""
    return [index for index, analysis in enumerate(verification.analyses) if analysis.score is not None and analysis.score < 1.0]


def meta_requests(item: ProofItem, position: int, verification: Verification, flagged: Sequence[int], config: LabelConfig,
                  sampling: SamplingConfig, prompts_dir: str | None) -> list[GenerationRequest]:
    if config.m == 0:
        return []  # meta-verification is off: no flagged analysis gets a request
    first = seed_offset(position, config) + config.n
    return [make_requests([meta_verification_messages(MetaItem(item.problem, item.proof, verification.analyses[j].text),
                                                      prompts_dir)],
                          sampling, n=config.m, seed_offset=first + j * config.m)[0]
            for j in flagged]


def meta_rating(item: ProofItem, verification: Verification, index: int, result: GenerationResult) -> Verification:
    return verification_from(result, META_FORMAT, (item.proof, verification.analyses[index].text))


def assemble(item: ProofItem, verification: Verification, meta: dict[int, Verification], meta_errors: dict[int, str],
             config: LabelConfig) -> LabeledProof:
    """Critique statuses from the meta ratings, then the k rule, for one proof's verifications.

    With ``config.m == 0`` nothing is meta-verified and every critique is ``unchecked``
    (taken at its word by the k rule; the record's ``valid`` stays None).
    """
    statuses: list[CritiqueStatus | None] = []
    for index, analysis in enumerate(verification.analyses):
        if analysis.score is None or analysis.score >= 1.0:
            statuses.append(None)
        elif config.m == 0:
            statuses.append("unchecked")
        elif index in meta:
            statuses.append(critique_status([a.score for a in meta[index].analyses], config.confirm_rating, config.majority))
        else:
            statuses.append("unknown")  # its meta prompt did not fit the context
    decision = decide([analysis.score for analysis in verification.analyses], statuses, config.k)
    return LabeledProof(item, verification, meta, tuple(statuses), decision, meta_errors)
