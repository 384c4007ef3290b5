"""A problem of the world and a blueprint (the problem with the steps of one correct proof), shared by every family."""

from __future__ import annotations

from dataclasses import dataclass

from data.records import stable_id
from data.world.claims import Claim
from data.world.config import FAMILIES, LEVELS
from data.world.steps import Step


@dataclass(frozen=True)
class Problem:
    id: str
    family: str
    template: str
    statement: str
    goal: tuple[Claim, ...]
    """What a proof must establish (the induction family: the base case and the inductive step)."""
    level: int = 1
    """The difficulty level it was drawn at (``data.world.config.LEVELS``)."""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown family {self.family!r}")
        if not self.goal:
            raise ValueError("a problem needs a goal")
        if self.level not in LEVELS:
            raise ValueError(f"unknown level {self.level!r}")


@dataclass(frozen=True)
class Blueprint:
    """A problem with the steps of one correct proof (reasons as the template words them)."""

    problem: Problem
    steps: tuple[Step, ...]


def problem(family: str, template: str, text: str, goal: tuple[Claim, ...], level: int = 1) -> Problem:
    """The problem, its id a hash of its family, template and statement (and its level above 1)."""
    parts = (family, template, text) if level == 1 else (family, template, text, f"level {level}")
    return Problem(stable_id(*parts), family, template, text, goal, level)
