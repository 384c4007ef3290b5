"""Chunked labeling for in-process engines: one engine call for a chunk's verifications, one for
all their meta-verifications; each proof's record is assembled once its chunk is done."""

from __future__ import annotations

from collections.abc import Sequence

from data.records import ProofItem
from engine.base import Engine
from engine.config import SamplingConfig
from engine.fitting import generate_fitting
from training.auto_labeling.config import LabelConfig
from training.auto_labeling.proofs import (
    LabeledProof,
    assemble,
    flagged_analyses,
    meta_rating,
    meta_requests,
    unverifiable,
    verification_request,
)
from verifier.parse import VERIFIER_FORMAT
from verifier.verification import Verification, verification_from


def label_chunk(
    engine: Engine, items: Sequence[tuple[int, ProofItem]], config: LabelConfig, sampling: SamplingConfig,
    prompts_dir: str | None = None,
) -> list[LabeledProof]:
    """Label (position, proof) pairs with two engine calls: all verifications, then all meta-verifications."""
    answers, refused = generate_fitting(
        engine, [verification_request(item, position, config, sampling, prompts_dir) for position, item in items]
    )
    verifications = {
        slot: verification_from(answer, VERIFIER_FORMAT, (items[slot][1].proof,))
        for slot, answer in enumerate(answers) if answer is not None
    }
    flagged = [(slot, index) for slot, verification in verifications.items() for index in flagged_analyses(verification)]
    requests = [
        request
        for slot, verification in verifications.items()
        for request in meta_requests(items[slot][1], items[slot][0], verification, flagged_analyses(verification), config,
                                     sampling, prompts_dir)
    ]
    ratings, meta_refused = generate_fitting(engine, requests) if requests else ([], {})
    meta: dict[int, dict[int, Verification]] = {}
    meta_errors: dict[int, dict[int, str]] = {}
    for number, ((slot, index), rating) in enumerate(zip(flagged, ratings)):
        if rating is None:
            meta_errors.setdefault(slot, {})[index] = meta_refused[number]
        else:
            meta.setdefault(slot, {})[index] = meta_rating(items[slot][1], verifications[slot], index, rating)
    return [
        unverifiable(item, refused[slot]) if slot in refused
        else assemble(item, verifications[slot], meta.get(slot, {}), meta_errors.get(slot, {}), config)
        for slot, (_, item) in enumerate(items)
    ]
