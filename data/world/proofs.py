"""World proofs: correct and flawed proofs of generated problems, each with the truth the checker decides.

For every problem (``data.world.families``) the generator writes one correct proof and,
for each defect kind that applies (``data.world.defects``), one flawed proof, each in its
own wording. The score and first bad step of every proof are what
``data.world.checker.check`` says of its text, never what the injector meant; the
injected kind and step are kept beside them, and the tests check that the two agree.

Each (family, template, level) draws from its own seeded stream (:func:`stream`), so adding
a level or a family never changes the problems of another, and level 1 draws exactly what
the world drew before levels existed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from data.records import check_score, stable_id
from data.world.checker import check
from data.world.config import DEFECTS, FAMILIES
from data.world.defects import inject
from data.world.families import Blueprint, Problem, blueprint, templates
from data.world.steps import render_steps

OPENINGS = ("", "", "Proof.", "We argue step by step.", "Here is a proof.", "Proof:")


@dataclass(frozen=True)
class WorldProof:
    id: str
    problem: Problem
    proof: str
    """The proof text: an optional opening line, then ``Step N:`` lines."""
    score: float
    """0, 0.5 or 1, decided by the checker from ``proof``."""
    first_bad_step: int | None
    """The checker's first bad step (None for a score of 1)."""
    defect: str | None
    """The flaw injected at construction (None: the proof was written correct)."""
    defect_step: int | None
    """The step the flaw was injected at."""

    def __post_init__(self) -> None:
        check_score(self.score)
        if self.defect is not None and self.defect not in DEFECTS:
            raise ValueError(f"unknown defect {self.defect!r}")
        if (self.defect is None) != (self.defect_step is None):
            raise ValueError("a defect comes with the step it was injected at, and only then")

    def to_record(self) -> dict[str, Any]:
        """One JSONL row; ``problem``, ``proof`` and ``score`` are the columns ``label`` and ``eval verifier`` read.

        ``difficulty`` is the problem's level, written only above 1: a missing one is level 1, so a world of level 1
        alone keeps the bytes it had before levels existed.
        """
        return {
            "id": self.id, "problem": self.problem.statement, "proof": self.proof, "score": self.score,
            "first_bad_step": self.first_bad_step, "defect": self.defect, "defect_step": self.defect_step,
            "family": self.problem.family, "template": self.problem.template, "problem_id": self.problem.id,
            "goal": [claim.render() for claim in self.problem.goal],
            **({"difficulty": self.problem.level} if self.problem.level != 1 else {}),
        }


def write_proof(plan: Blueprint, rng: random.Random, defect: str | None = None) -> WorldProof | None:
    """One proof of ``plan``'s problem, flawed by ``defect`` when given (None where that kind does not apply)."""
    steps, at = plan.steps, None
    if defect is not None:
        injected = inject(defect, plan.steps, rng)
        if injected is None:
            return None
        steps, at = injected
    opening = rng.choice(OPENINGS)
    text = "\n".join(part for part in (opening, render_steps(steps, style=rng.randrange(1, 10_000))) if part)
    verdict = check(plan.problem.goal, text)
    return WorldProof(stable_id(plan.problem.id, text), plan.problem, text, verdict.score, verdict.first_bad_step, defect, at)


def stream(*parts: object, level: int = 1) -> str:
    """The name of a seeded stream, ``0/train/identity/square_sum``; above level 1 it ends in ``/level 2``."""
    name = "/".join(str(part) for part in parts)
    return name if level == 1 else f"{name}/level {level}"


def world_proofs(seed: int, problems_per_template: int, families: Sequence[str] = FAMILIES,
                 defects: Sequence[str] = DEFECTS, levels: Sequence[int] = (1,)) -> Iterator[WorldProof]:
    """Per level, family and template, ``problems_per_template`` problems, each with its correct proof and a flawed one per
    defect kind (problems are not deduplicated here; ``data.world.splits`` does that).

    The same arguments always give the same proofs, in the same order.
    """
    for level in levels:
        for family in families:
            for template in templates(family):
                rng = random.Random(stream(seed, family, template, level=level))
                for _ in range(problems_per_template):
                    plan = blueprint(family, template, rng, level)
                    for defect in (None, *defects):
                        proof = write_proof(plan, rng, defect)
                        if proof is not None:
                            yield proof
