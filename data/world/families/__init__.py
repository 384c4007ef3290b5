"""Problem families of the ground-truth world, each with correct proofs written several ways, at several levels.

Six statement families, one module each, each with a few templates whose coefficients are
drawn from a seeded ``random.Random``:

- ``identity``: a polynomial identity, proved by expanding and collecting.
- ``inequality``: a polynomial inequality, proved by writing the difference as a sum of squares.
- ``divisibility``: an integer polynomial is a multiple of ``k``, proved by factoring into consecutive factors.
- ``equation``: the solution set of an equation, proved by factoring into linear factors.
- ``induction``: a closed form of a finite sum, proved by a base case and the inductive step.
- ``arithmetic``: the value of an integer expression, proved by evaluating it step by step.

A template fixes the shape of the statement and of its proof; the **level** (1, 2, 3) how
hard it is: level 1 is the original world, draw for draw (the same ``random.Random`` gives the
same problems and proofs as before levels existed); higher levels widen the coefficients
and add terms, factors or steps (each family module says how). The proof's wording (lead-ins,
connectors, reasons, the form of each claim, an opening sentence) is drawn per proof, so no
two proofs of a template need read alike. A template's correct proof is checked by
``data.world.checker`` where it is built: a proof is only ever *claimed* correct when the
checker says so (see ``data.world.proofs``).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from data.world.config import LEVELS
from data.world.families import arithmetic, divisibility, equation, identity, induction, inequality
from data.world.problems import Blueprint, Problem

__all__ = ["BUILDERS", "Blueprint", "Problem", "blueprint", "templates"]

Builder = Callable[..., Blueprint]
"""``builder(rng, template, level)``; those of ``FINE_FAMILIES`` also take ``fine=True``."""
BUILDERS: dict[str, tuple[Builder, tuple[str, ...]]] = {
    "identity": (identity.identity, identity.TEMPLATES),
    "inequality": (inequality.inequality, inequality.TEMPLATES),
    "divisibility": (divisibility.divisibility, divisibility.TEMPLATES),
    "equation": (equation.equation, equation.TEMPLATES),
    "induction": (induction.induction, induction.TEMPLATES),
    "arithmetic": (arithmetic.arithmetic, arithmetic.TEMPLATES),
}


def templates(family: str) -> tuple[str, ...]:
    return BUILDERS[family][1]


FINE_FAMILIES = ("identity",)
"""Families whose proofs change with ``fine`` steps; the others' steps are one operation each already."""


def blueprint(family: str, template: str, rng: random.Random, level: int = 1, fine: bool = False) -> Blueprint:
    """A problem of ``family``/``template`` at ``level`` with coefficients from ``rng``, and one correct proof of it
    (with ``fine``: one product a step, each written by its formula first, where the family has such steps)."""
    builder, known = BUILDERS[family]
    if template not in known:
        raise ValueError(f"family {family!r} has no template {template!r}; it has {', '.join(known)}")
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; known: {', '.join(map(str, LEVELS))}")
    return builder(rng, template, level, **({"fine": True} if fine and family in FINE_FAMILIES else {}))
