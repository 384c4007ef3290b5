"""Agreement of a verifier or meta-verifier checkpoint with held-out reference scores, measured
before and after a training run.

One greedy sample per held-out row (temperature 0, so before/after compare the models, not
the dice), scored exactly like ``proofsmith verify`` / ``meta-verify`` parse it. A sample
without a score counts as a disagreement and is also reported as a format failure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from engine.config import EngineConfig, SamplingConfig
from meta_verifier.meta_verify import MetaItem, meta_verify
from training.role_data.rows import TrainingRow
from verifier.verification import verify_proofs


def agreements(model: str, role: str, sets: dict[str, Sequence[TrainingRow]], max_tokens: int,
               prompts_dir: str | None = None) -> dict[str, dict[str, Any]]:
    """``agreement`` of ``model`` on each named row set: one model load and one batched engine call for all sets."""
    from engine.transformers_backend import TransformersEngine

    rows = [row for rows_of_set in sets.values() for row in rows_of_set]
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
    measured, start = {}, 0
    for name, rows_of_set in sets.items():
        end = start + len(rows_of_set)
        measured[name] = agreement(predicted[start:end], references[start:end])
        start = end
    return measured


def agreement(predicted: Sequence[float | None], references: Sequence[float]) -> dict[str, Any]:
    """{'rows', 'exact', 'format_failure_rate', 'mean_abs_error', 'predicted'} of greedy scores against the references.

    ``predicted`` counts the greedy scores given (``"none"``: format failure): a model that
    gives every row the same score shows up there, whatever its exact agreement.
    """
    parsed = [(score, reference) for score, reference in zip(predicted, references) if score is not None]
    return {
        "rows": len(predicted),
        "exact": round(fmean(score == reference for score, reference in zip(predicted, references)), 4),
        "format_failure_rate": round(fmean(score is None for score in predicted), 4),
        "mean_abs_error": round(fmean(abs(score - reference) for score, reference in parsed), 4) if parsed else None,  # type: ignore[operator]
        "predicted": {("none" if score is None else f"{score:g}"): list(predicted).count(score)
                      for score in sorted(set(predicted), key=lambda value: -1 if value is None else value)},
    }


MEASURED_TRAINING_ROWS = 32
"""Training rows scored before and after a verifier or meta-verifier run (the first ones)."""
AGREEMENT_SETS = ("holdout", "training_rows")
"""Row sets measured before and after: ``RUN/<name>_before.json`` and ``RUN/<name>_after.json``."""


def measured_sets(rows: Sequence[TrainingRow], held_out: Sequence[TrainingRow]) -> dict[str, list[TrainingRow]]:
    """The held-out rows (does it generalise?) and the first training rows (did it learn what it was rewarded for?);
    rows of another task (the rated analyses of an enhanced verifier run) are not the role's and are not measured."""
    own = [row for row in rows if not row.task]
    return {"holdout": list(held_out), "training_rows": own[:MEASURED_TRAINING_ROWS]}


def write_agreements(run_dir: Path, when: str, model: str, role: str, sets: dict[str, list[TrainingRow]],
                     max_tokens: int, prompts_dir: str | None) -> None:
    """``RUN/<set>_<when>.json`` for each set; a 'before' file already there (a resumed run) is kept.

    The model is loaded once for all sets, not once per set."""
    paths = {name: run_dir / f"{name}_{when}.json" for name in sets}
    todo = {name: rows for name, rows in sets.items() if rows and not (when == "before" and paths[name].exists())}
    if not todo:
        return
    for name, measured in agreements(model, role, todo, max_tokens, prompts_dir).items():
        paths[name].write_text(json.dumps({"model": model, **measured}), encoding="utf-8")


def agreement_summary(run_dir: Path) -> dict[str, Any]:
    """{set: {'before', 'after'}} for every set measured at both ends of the run."""
    summary = {}
    for name in AGREEMENT_SETS:
        before, after = run_dir / f"{name}_before.json", run_dir / f"{name}_after.json"
        if before.exists() and after.exists():
            summary[name] = {"before": json.loads(before.read_text()), "after": json.loads(after.read_text())}
    return summary
