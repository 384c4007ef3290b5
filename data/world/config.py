"""Settings of ``proofsmith world`` and the names of the world's families, defects and levels. Pure data: no sympy, no torch."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_FAMILIES = ("identity", "inequality", "divisibility", "equation", "induction")
"""The families a world draws from unless told otherwise (the world as it was before levels and arithmetic)."""
FAMILIES = (*DEFAULT_FAMILIES, "arithmetic")
"""Every family the world knows; ``arithmetic`` (evaluating sums of products) is drawn only when asked for."""
DEFECTS = ("wrong_expansion", "sign_error", "dropped_term", "wrong_coefficient", "non_sequitur", "false_conclusion",
           "unjustified_leap")
LEVELS = (1, 2, 3)
"""Difficulty levels: 1 is the original world; each higher level widens coefficients and adds terms, factors or steps."""


@dataclass
class WorldConfig:
    seed: int = 0
    """Seed of the world: the same seed and settings always write the same problems and proofs."""
    problems_per_template: int = 4
    """Problems drawn per template; each gets its correct proof and one flawed proof per defect kind that applies (two defects that write the same text give one proof)."""
    families: list[str] = field(default_factory=lambda: list(DEFAULT_FAMILIES))
    """Statement families to draw from: identity, inequality, divisibility, equation, induction, arithmetic."""
    defects: list[str] = field(default_factory=lambda: list(DEFECTS))
    """Flaws to inject: wrong_expansion, sign_error, dropped_term, wrong_coefficient, non_sequitur, false_conclusion, unjustified_leap."""
    test_problems_per_template: int = 2
    """Problems per template in each test split (fresh coefficients; a statement seen in training is redrawn)."""
    held_out_families: list[str] = field(default_factory=lambda: ["induction"])
    """Families kept out of training entirely: the out-of-distribution test split (those among `families`)."""
    held_out_templates: int = 1
    """Templates of each training family kept out of training (its last ones): part of the in-distribution test split."""
    levels: list[int] = field(default_factory=lambda: [1])
    """Difficulty levels to draw, each with every template (1, 2, 3: wider coefficients, more terms and steps as it rises)."""
    fine_steps: bool = False
    """Identity proofs take one product a step and write it by its formula before its value (`(4a - 7b)^2` → `(4a)^2 + 2(4a)(-7b) + (-7b)^2` → `16a^2 - 56ab + 49b^2`), so no step multiplies more than two single terms; false: one step expands every product."""

    def __post_init__(self) -> None:
        if self.problems_per_template < 1:
            raise ValueError("problems_per_template must be >= 1")
        for name in self.families:
            if name not in FAMILIES:
                raise ValueError(f"unknown family {name!r}; known: {', '.join(FAMILIES)}")
        for name in self.defects:
            if name not in DEFECTS:
                raise ValueError(f"unknown defect {name!r}; known: {', '.join(DEFECTS)}")
        if not self.families:
            raise ValueError("families must name at least one family")
        if self.test_problems_per_template < 1 or self.held_out_templates < 0:
            raise ValueError("test_problems_per_template must be >= 1 and held_out_templates >= 0")
        for name in self.held_out_families:
            if name not in FAMILIES:
                raise ValueError(f"unknown held-out family {name!r}; known: {', '.join(FAMILIES)}")
        if set(self.families) <= set(self.held_out_families):
            raise ValueError("every family is held out: nothing is left to train on")
        if not self.levels or len(set(self.levels)) != len(self.levels) or not set(self.levels) <= set(LEVELS):
            raise ValueError(f"levels must name distinct levels among {', '.join(map(str, LEVELS))}")
