"""Score proof pairs with the verifier: one engine call per chunk of pairs, one record per pair.

Each proof gets its own verification request with ``samples`` (n) completions, seeded by
the pair's position in the data (proof 1: ``2·position·n``, proof 2: ``(2·position + 1)·n``,
so every sample has a seed of its own: ``engine.sampling.make_requests``), so a resumed run
samples what an unbroken one would. A pair either of whose prompts does not fit
the model's context is recorded with ``error`` and no scores. The pick and the metrics are
``eval.selection``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data.pairwise import ProofPair
from engine.base import Engine
from engine.config import SamplingConfig
from engine.fitting import generate_fitting
from engine.sampling import make_requests
from eval.selection import outcome
from verifier.parse import VERIFIER_FORMAT
from verifier.prompt import verification_messages
from verifier.verification import Verification, verification_from


def pair_record(pair: ProofPair, first: Verification, second: Verification) -> dict[str, Any]:
    """The items.jsonl record of a scored pair (``eval.selection`` documents its fields)."""
    scores_1 = [analysis.score for analysis in first.analyses]
    scores_2 = [analysis.score for analysis in second.analyses]
    chosen, result = outcome(pair.correct_index, scores_1, scores_2)
    return {"id": pair.id, "correct_index": pair.correct_index, "scores_1": scores_1, "scores_2": scores_2,
            "mean_1": first.mean_score, "mean_2": second.mean_score, "pick": chosen, "outcome": result,
            "samples_1": [analysis.to_dict() for analysis in first.analyses],
            "samples_2": [analysis.to_dict() for analysis in second.analyses],
            "prompt_tokens": first.prompt_tokens + second.prompt_tokens,
            "completion_tokens": first.completion_tokens + second.completion_tokens}


def score_pairs(engine: Engine, chunk: Sequence[tuple[int, ProofPair]], samples: int, sampling: SamplingConfig,
                prompts_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """One record per (position, pair) of ``chunk``, in order, from one engine call."""
    requests = [request for position, pair in chunk for request in make_requests(
        [verification_messages(pair.problem, pair.proof(index), prompts_dir) for index in (1, 2)],
        sampling, n=samples, seed_offset=2 * position * samples)]
    answers, refused = generate_fitting(engine, requests)
    records = []
    for slot, (_, pair) in enumerate(chunk):
        first, second = answers[2 * slot], answers[2 * slot + 1]
        if first is None or second is None:
            reason = refused.get(2 * slot) or refused.get(2 * slot + 1) or "prompt does not fit the model's context"
            records.append({"id": pair.id, "correct_index": pair.correct_index, "error": reason})
            continue
        records.append(pair_record(pair, verification_from(first, VERIFIER_FORMAT, (pair.proof_1,)),
                                   verification_from(second, VERIFIER_FORMAT, (pair.proof_2,))))
    return records
