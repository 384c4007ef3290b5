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
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from data.world.proofs import WorldProof
from data.world.work import WORKED_STEP, expanded_sides
from training.role_data.world_critiques import worked_analysis

PAIRS_PER_DRILL = 8
"""Comparisons in one drill, alternately agreeing and differing (which comes first is drawn)."""
DRILL_PROMPT = Path(__file__).with_name("drill.md")


def side_pairs(proofs: Iterable[WorldProof]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(pairs of sides that agree, pairs that differ) of every worked step of ``proofs``' analyses, each pair once."""
    agree: dict[tuple[str, str], None] = {}
    differ: dict[tuple[str, str], None] = {}
    for proof in proofs:
        for match in WORKED_STEP.finditer(worked_analysis(proof)):
            (agree if match.group(6) == "agree" else differ)[(match.group(3), match.group(4))] = None
    return list(agree), list(differ)


def comparison(left: str, right: str, verdict: str) -> str:
    return f"{expanded_sides(left, right)}. They {verdict}."


def drill_examples(proofs: Iterable[WorldProof], count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` drills of :data:`PAIRS_PER_DRILL` comparisons from ``proofs``' worked steps (none when they have no
    pair that differs); the same inputs always give the same drills."""
    agree, differ = side_pairs(proofs)
    if not count or not agree or not differ:
        return []
    rng = random.Random(f"{seed}/world-model-drills")
    prompt = [{"role": "user", "content": DRILL_PROMPT.read_text(encoding="utf-8").strip()}]
    drills = []
    for _ in range(count):
        first = rng.randrange(2)
        lines = []
        for index in range(PAIRS_PER_DRILL):
            differs = (index + first) % 2 == 1
            lines.append(comparison(*rng.choice(differ if differs else agree), "differ" if differs else "agree"))
        drills.append({"role": "comparison", "prompt": prompt, "answer": "\n".join(lines)})
    return drills
