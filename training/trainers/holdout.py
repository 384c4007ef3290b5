"""Agreement of a verifier or meta-verifier checkpoint with held-out reference scores.

One greedy sample per held-out row (temperature 0, so before/after compare the models, not
the dice), scored exactly like ``proofsmith verify`` / ``meta-verify`` parse it. A sample
without a score counts as a disagreement and is also reported as a format failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from engine.config import EngineConfig, SamplingConfig
from meta_verifier.meta_verify import MetaItem, meta_verify
from training.role_data.rows import TrainingRow
from verifier.verification import verify_proofs


def agreement(model: str, role: str, rows: Sequence[TrainingRow], max_tokens: int, prompts_dir: str | None = None) -> dict[str, Any]:
    """{'rows', 'exact', 'format_failure_rate', 'mean_abs_error', 'predicted'} of ``model`` on ``rows`` for ``role``.

    ``predicted`` counts the greedy scores given (``"none"``: format failure): a model that
    gives every row the same score shows up there, whatever its exact agreement.
    """
    from engine.transformers_backend import TransformersEngine

    engine = TransformersEngine(EngineConfig(backend="transformers", model=model, dtype="float32"))
    sampling = SamplingConfig(temperature=0.0, max_tokens=max_tokens, seed=0)
    try:
        if role == "verifier":
            results = verify_proofs(engine, [(row.problem, row.proof) for row in rows], 1, sampling, prompts_dir)
            references = [row.score for row in rows]
        else:
            items = [MetaItem(row.problem, row.proof, row.analysis) for row in rows]
            results = meta_verify(engine, items, 1, sampling, prompts_dir)
            references = [row.rating for row in rows]
    finally:
        engine.close()
    predicted = [result.analyses[0].score for result in results]
    parsed = [(score, reference) for score, reference in zip(predicted, references) if score is not None]
    return {
        "rows": len(rows),
        "exact": round(fmean(score == reference for score, reference in zip(predicted, references)), 4),
        "format_failure_rate": round(fmean(score is None for score in predicted), 4),
        "mean_abs_error": round(fmean(abs(score - reference) for score, reference in parsed), 4) if parsed else None,  # type: ignore[operator]
        "predicted": {("none" if score is None else f"{score:g}"): predicted.count(score)
                      for score in sorted(set(predicted), key=lambda value: -1 if value is None else value)},
    }
