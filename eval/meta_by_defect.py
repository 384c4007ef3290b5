"""Does a meta-verifier rate a critique by its defect, or only by the score it boxed? The check R_meta must pass.

On the ground-truth world's rated critiques (``SPLIT_meta.jsonl``: ``critique_kind`` true,
invented_defect or wrong_score), a true critique and an invented one can box the same score:
0 for a flawed proof's real first bad step, 0 for a step of a correct proof that is fine. A
meta-verifier that reads only the box rates the two alike, and as a reward (R_meta) it then pays
a verifier for any 0, invented or not. One that checks the named defect rates the true critique
higher. For every boxed score both kinds share, with at least ``MIN_CRITIQUES`` critiques of each,
the gap is the mean rating of the true critiques minus that of the invented ones (a critique's
rating: the mean of its parsed samples; one with none parsed is left out and counted), with a
95 % bootstrap interval over critiques. **It rates by the defect when every such gap's interval
lies above 0**; with no shared boxed score there is nothing to decide on, and the check fails.

``proofsmith eval meta-verifier`` writes ``rating_by_critique`` and ``defect_split`` into its
metrics.json when its data carries ``critique_kind``; ``train`` refuses R_meta from a model whose
check failed or was measured on another model (``rewards.meta_check``, ``refuse_unless_rates_by_defect``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from data.errors import InputError
from eval.intervals import bootstrap_intervals

TRUE, INVENTED = "true", "invented_defect"
MIN_CRITIQUES = 5
"""Fewest critiques of each kind at a boxed score for its gap to count (fewer: reported, not decided on)."""


def critique_rating(record: Mapping[str, Any]) -> float | None:
    """A record's rating: the mean of its parsed samples (None when none parsed or the prompt did not fit)."""
    parsed = [rating for rating in record.get("ratings") or () if rating is not None]
    return sum(parsed) / len(parsed) if parsed else None


def _key(kind: str, boxed: float | None) -> str:
    return f"{kind}, boxed {boxed:g}" if boxed is not None else f"{kind}, no box"


def rating_by_critique(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float | int]]:
    """Mean rating by the critique's kind and the score it boxed (records with ``critique_kind`` and ``boxed``)."""
    groups: dict[str, list[float]] = {}
    for record in records:
        rating = critique_rating(record)
        if record.get("critique_kind") and rating is not None:
            groups.setdefault(_key(record["critique_kind"], record.get("boxed")), []).append(rating)
    return {key: {"critiques": len(values), "mean_rating": sum(values) / len(values)} for key, values in sorted(groups.items())}


def _gap(pairs: Sequence[tuple[str, float]]) -> dict[str, float | None]:
    true = [rating for kind, rating in pairs if kind == TRUE]
    invented = [rating for kind, rating in pairs if kind == INVENTED]
    if not true or not invented:
        return {"gap": None}
    return {"gap": sum(true) / len(true) - sum(invented) / len(invented)}


def defect_split(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The gap per shared boxed score and the verdict (module docstring); None when no record has a kind."""
    kinded = [record for record in records if record.get("critique_kind")]
    if not kinded:
        return None
    by_box: dict[float, list[tuple[str, float]]] = {}
    unrated = 0
    for record in kinded:
        rating = critique_rating(record)
        if rating is None:
            unrated += 1
        elif record["critique_kind"] in (TRUE, INVENTED) and record.get("boxed") is not None:
            by_box.setdefault(float(record["boxed"]), []).append((record["critique_kind"], rating))
    gaps: dict[str, dict[str, Any]] = {}
    for boxed, pairs in sorted(by_box.items()):
        counts = {kind: sum(k == kind for k, _ in pairs) for kind in (TRUE, INVENTED)}
        if min(counts.values()) == 0:
            continue
        decided = min(counts.values()) >= MIN_CRITIQUES
        gap = _gap(pairs)["gap"]
        interval = bootstrap_intervals(pairs, _gap)["gap"] if decided else None
        gaps[f"{boxed:g}"] = {"true": counts[TRUE], "invented": counts[INVENTED], "gap": gap,
                              "interval": list(interval) if interval else None, "decided": decided}
    decided_gaps = [entry for entry in gaps.values() if entry["decided"]]
    rates_by_defect = bool(decided_gaps) and all(entry["interval"] and entry["interval"][0] > 0 for entry in decided_gaps)
    return {"by_boxed_score": gaps, "unrated_critiques": unrated, "rates_by_defect": rates_by_defect}


def describe(split: Mapping[str, Any]) -> str:
    """One line: the verdict and each decided gap with its interval."""
    parts = [f"boxed {boxed}: true {entry['gap']:+.2f} over invented" + (
        f" [{entry['interval'][0]:+.2f}, {entry['interval'][1]:+.2f}]" if entry["interval"] else " (no interval)")
        + f" ({entry['true']} true, {entry['invented']} invented)"
        for boxed, entry in split["by_boxed_score"].items() if entry["decided"]]
    verdict = "rates by the defect" if split["rates_by_defect"] else "does not split true from invented critiques"
    return f"{verdict}: " + ("; ".join(parts) if parts else f"no boxed score with {MIN_CRITIQUES}+ critiques of both kinds")


def refuse_unless_rates_by_defect(metrics_path: str, meta_model: str) -> None:
    """Raise InputError (one line) unless ``metrics_path`` measured ``meta_model`` and found it rates by the defect."""
    path = Path(metrics_path).expanduser()
    if not path.is_file():
        raise InputError(f"rewards.meta_check: {metrics_path} not found (write it with `proofsmith eval meta-verifier "
                         f"WORLD/test_in_meta.jsonl --model {meta_model} --out DIR`, then point at DIR/metrics.json)")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        measured, split = document["settings"]["model"], document.get("defect_split")
    except (ValueError, KeyError, TypeError):
        raise InputError(f"rewards.meta_check: {metrics_path} is not a metrics.json of `proofsmith eval meta-verifier`") from None
    if split is None:
        raise InputError(f"rewards.meta_check: {metrics_path} has no defect_split: its critiques carry no critique_kind "
                         f"(measure on a world's SPLIT_meta.jsonl)")
    if not same_model(measured, meta_model):
        raise InputError(f"rewards.meta_check: {metrics_path} measured {measured}, but R_meta comes from {meta_model}")
    if not split["rates_by_defect"]:
        raise InputError(f"R_meta refused as a reward source: {meta_model} {describe(split)} ({metrics_path}); "
                         f"set rewards.meta = 'none' or rate with another model")


def same_model(first: str, second: str) -> bool:
    """Whether two ``--model`` values name the same weights (a name and its folder match)."""
    from engine.model_store import ModelNotFoundError, locate

    if first == second:
        return True
    try:
        return Path(locate(first).path).resolve() == Path(locate(second).path).resolve()
    except ModelNotFoundError:
        return False
