"""Which rows GRPO trains on: verifier rows balanced across true scores, problems and proofs at the edge of competence.

- :func:`balanced_by_score`: GRPO on graded proofs where most proofs are flawed rewards
  "always 0" nearly as well as verifying; repeating the rarer scores' rows (in a seeded
  order, each row once before any row twice) until every score has as many rows as the
  commonest makes every score equally worth getting right.
- :func:`at_the_edge`: a generator problem whose rollouts all pass or all fail gives a group
  with no reward spread, so no gradient; a calibration run (``proofsmith world calibrate``)
  measures each problem's pass rate, and only those strictly between 0 and 1 are kept (or, with
  ``data.calibration_unit = "group"``, every problem of the (family, level) groups whose pass@1
  lies in the edge band: on 31 kept problems the checker-rewarded generator's rollouts improved
  and fresh problems did not; benchmarks/world_generator_arms.py). The
  same for a verifier proof whose analyses all give its true score or all miss it (on the tiny
  test model, one seed of verifier GRPO on every proof lost 0.02-0.05 of greedy balanced
  accuracy; on the proofs with a spread, each of 5 seeds gained: ``benchmarks/tiny_verifier_learning.py``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

from data.errors import InputError
from training.config import DataSettings
from training.role_data.rows import TrainingRow

SCORES = (0.0, 0.5, 1.0)


def balanced_by_score(rows: Sequence[TrainingRow], seed: int) -> list[TrainingRow]:
    """Rows with a reference score, each score topped up to the commonest's count by repeats; others kept as they are."""
    graded = {score: [row for row in rows if row.score == score and not row.task] for score in SCORES}
    present = {score: group for score, group in graded.items() if group}
    if len(present) < 2:
        return list(rows)
    largest = max(len(group) for group in present.values())
    rng = random.Random(f"{seed}/balance")
    balanced = [row for row in rows if row.task or row.score is None]
    for group in present.values():
        extra = []
        while len(group) + len(extra) < largest:
            order = list(group)
            rng.shuffle(order)
            extra.extend(order[: largest - len(group) - len(extra)])
        balanced.extend([*group, *extra])
    rng.shuffle(balanced)
    return balanced


EDGE_LISTS = {"generator": ("problems_with_spread", "problems", "pass rate lies strictly between 0 and 1"),
              "generator group": ("problems_in_groups", "problems", "group's pass@1 lies in the edge band"),
              "verifier": ("proofs_with_spread", "proofs", "share of analyses giving the true score lies strictly between 0 and 1")}
"""Per selection: the calibration.json list of ids at the edge, what the ids name, and what was measured of them."""


def with_spread(calibration: str | Path, role: str = "generator") -> set[str]:
    """The ids a calibration selected for ``role`` (``problems_with_spread``, ``problems_in_groups`` for
    ``generator group``, or ``proofs_with_spread`` of its ``edge_of_competence``)."""
    path, key = Path(calibration), EDGE_LISTS[role][0]
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        edge = document["edge_of_competence"]
    except FileNotFoundError:
        raise InputError(f"data.calibration: {path} not found (the calibration.json of proofsmith world calibrate)") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InputError(f"data.calibration: {path} is not the calibration.json of proofsmith world calibrate "
                         f"({type(error).__name__}: {error})") from None
    if not isinstance(edge, dict) or key not in edge:
        raise InputError(f"data.calibration: {path} has no {key} (written by an older proofsmith: rerun the same "
                         f"world calibrate command, which reads its records back and rewrites calibration.json)")
    return set(edge[key])


def at_the_edge(rows: Sequence[TrainingRow], calibration: str | Path, role: str = "generator") -> list[TrainingRow]:
    """The rows whose problem (generator), problem's group (generator group) or proof (verifier) the calibration
    selected; none left is an input error."""
    wanted = with_spread(calibration, role)
    kept = [row for row in rows if row.id in wanted]
    if not kept:
        _, named, measured = EDGE_LISTS[role]
        raise InputError(f"data.calibration: none of the {len(rows)} training {named} is among the {len(wanted)} whose "
                         f"measured {measured} in {calibration} (are they the same {named}?)")
    return kept


def selected(role: str, rows: Sequence[TrainingRow], data: DataSettings,
             unmeasured: Sequence[TrainingRow] = ()) -> list[TrainingRow]:
    """The rows a GRPO stage of ``role`` trains on under ``data``'s selection options (``train ROLE`` and
    every ``train loop`` iteration alike): verifier rows balanced by score, generator problems at the edge.

    A calibration measures graded proofs only, so it never drops a verifier's rated-analysis tasks, nor
    ``unmeasured``: graded proofs no calibration could have seen (a loop iteration's auto-labelled proofs),
    which join the rest before the scores are balanced."""
    if role == "verifier":
        kept = list(rows)
        if data.calibration:
            edge = {row.id for row in at_the_edge([row for row in rows if not row.task], data.calibration, role)}
            kept = [row for row in rows if row.task or row.id in edge]
        kept += unmeasured
        return balanced_by_score(kept, data.seed) if data.balance_scores else kept
    if role == "generator" and data.calibration:
        return at_the_edge(rows, data.calibration, "generator group" if data.calibration_unit == "group" else role)
    return list(rows)
