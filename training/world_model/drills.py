"""Comparison drills: many worked-step verdicts in one example, half of them "They differ".

A worked analysis decides a step by comparing the two sides it wrote ("Expanded, the left side is A
and the right side is B. They agree" or "differ"). In the world's analyses that verdict is one token
of a ~170-token answer and says "differ" about one time in ten, and every world model trained on
them wrote "differ" with that base rate whatever its sides said. On the verdict alone, half the
pairs differing, the bundled model learns it: 0.89-0.94 of held-out pairs in 350-400 steps
(``benchmarks/world_verdict_drill.py``). A drill is that signal as an example among the others, so
the comparison is learned without the rest being forgotten (``examples.comparison_drills``).

The pairs are the sides of the training proofs' own worked steps (``worked_analysis``): a false
step's sides differ the way proofs go wrong (a digit, a sign, a term), never by construction here.
Deliberate simplification: a drill's pairs come from random training problems, so a drill has no
problem of its own (``role`` "comparison", no ``problem_id``).

With ``claims`` (``examples.drill_claims``) each line first restates the claim its sides came from,
``Step k: L = R. Expanded, the left side is A and the right side is B. They differ.``: the sides are
then computed from what is written, not drawn, and half the claims are flawed. Why: in the analyses a
step's right side equals its left nine times in ten, and the world models write a flawed step's right
side as the left side's value instead of expanding R (teacher-forced, whole 0.22-0.52;
docs/results/world-model.md); here the value R expands to is the only thing that predicts B.

``lines`` (``examples.drill_lines``) writes each drill's comparisons as several shorter examples, the same
pairs in the same order, each numbered from step 1: eight claim lines are ~700 tokens, and one claim
drill in five (the long identity claims, whose expansions are the hard ones) ran past
``training.max_length`` 768 and was left out of training.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from data.world.proofs import WorldProof
from data.world.work import WORKED_STEP, expanded_sides
from training.role_data.world_critiques import worked_analysis
from training.world_model.config import PAIRS_PER_DRILL

DRILL_PROMPT = Path(__file__).with_name("drill.md")
CLAIM_DRILL_PROMPT = Path(__file__).with_name("drill_claims.md")

Sides = dict[tuple[str, str], str]
"""Pairs of sides (left, right), each once, with the claim of the first worked step that wrote them."""


def worked_sides(proofs: Iterable[WorldProof]) -> tuple[Sides, Sides]:
    """(sides that agree, sides that differ) of every worked step of ``proofs``' analyses, in order of appearance."""
    agree: Sides = {}
    differ: Sides = {}
    for proof in proofs:
        for match in WORKED_STEP.finditer(worked_analysis(proof)):
            sides = agree if match.group(6) == "agree" else differ
            sides.setdefault((match.group(3), match.group(4)), match.group(2).strip().removesuffix("."))
    return agree, differ


def side_pairs(proofs: Iterable[WorldProof]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(pairs of sides that agree, pairs that differ) of every worked step of ``proofs``' analyses, each pair once."""
    agree, differ = worked_sides(proofs)
    return list(agree), list(differ)


def comparison(left: str, right: str, verdict: str) -> str:
    return f"{expanded_sides(left, right)}. They {verdict}."


def drill_examples(proofs: Iterable[WorldProof], count: int, seed: int, claims: bool = False,
                   lines: int = PAIRS_PER_DRILL) -> list[dict[str, Any]]:
    """``count`` drills of :data:`PAIRS_PER_DRILL` comparisons from ``proofs``' worked steps (none when they have no
    pair that differs), each line after its claim with ``claims``, written as examples of ``lines`` lines (a divisor
    of :data:`PAIRS_PER_DRILL`); the same inputs always give the same drills, and the same pairs in the same order
    with or without claims, whatever ``lines``."""
    if lines < 1 or PAIRS_PER_DRILL % lines:
        raise ValueError(f"drill lines must divide a drill's {PAIRS_PER_DRILL} comparisons, got {lines}")
    agree, differ = worked_sides(proofs)
    if not count or not agree or not differ:
        return []
    pairs = {"agree": list(agree), "differ": list(differ)}
    claim_of = {"agree": agree, "differ": differ}
    rng = random.Random(f"{seed}/world-model-drills")
    prompt = [{"role": "user", "content": (CLAIM_DRILL_PROMPT if claims else DRILL_PROMPT).read_text(encoding="utf-8").strip()}]
    drills = []
    for _ in range(count):
        first = rng.randrange(2)
        chosen = []
        for index in range(PAIRS_PER_DRILL):
            verdict = "differ" if (index + first) % 2 == 1 else "agree"
            chosen.append((rng.choice(pairs[verdict]), verdict))
        for start in range(0, PAIRS_PER_DRILL, lines):
            written = []
            for step, (pair, verdict) in enumerate(chosen[start:start + lines], 1):
                line = comparison(*pair, verdict)
                written.append(f"Step {step}: {claim_of[verdict][pair]}. {line}" if claims else line)
            drills.append({"role": "comparison", "prompt": prompt, "answer": "\n".join(written)})
    return drills
