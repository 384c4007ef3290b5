"""``divisibility``: an integer polynomial is a multiple of ``k``, proved by factoring it into consecutive factors.

Level 1 draws shifts up to 5 (the original world). Level 2 shifts the run of consecutive
factors anywhere in -15..15, scales it, asks for any divisor the run guarantees, and gives
``shifted_pair`` a third, unrelated factor; level 3 widens the shifts to 25 and the scales
to 12. The divisor is always one the checker's elementary fact covers (a divisor of the
coefficient times ``m!`` for a run of ``m`` consecutive factors), and never one of the
polynomial's common factor (``3n^2 + 3n`` is not asked to be a multiple of 3: that needs no
consecutive integers).
"""

from __future__ import annotations

import random

from data.world.claims import Claim
from data.world.families.text import expanded, new_divisors, pick, plus, product, statement
from data.world.problems import Blueprint, problem
from data.world.steps import Step

TEMPLATES = ("consecutive_pair", "shifted_pair", "consecutive_triple", "consecutive_four", "odd_square")
Shape = tuple[str, str, int]
"""(the polynomial, its factored form, the modulus)."""


def first_level(rng: random.Random, template: str) -> Shape:
    c = rng.randint(1, 5)
    if template == "consecutive_pair":
        k = rng.randint(1, 6)
        factored, modulus = ("n(n + 1)" if k == 1 else f"{k}n(n + 1)"), 2 * k
        return expanded(factored), factored, modulus
    if template == "shifted_pair":
        factored = f"(n + {c})(n + {c + 1})"
        return expanded(factored), factored, 2
    if template == "consecutive_triple":
        shift = rng.randint(0, 3)
        factored = "(n - 1)n(n + 1)" if shift == 0 else f"({plus('n', str(shift - 1))})(n + {shift})(n + {shift + 1})"
        factored = factored.replace("(n + 0)", "n")
        modulus = int(pick(rng, "6", "3", "2"))
        return expanded(factored), factored, modulus
    if template == "consecutive_four":
        factored = f"(n + {c})(n + {c + 1})(n + {c + 2})(n + {c + 3})"
        return expanded(factored), factored, 24
    shift = rng.randint(0, 4)  # odd_square
    return f"(2n + {2 * shift + 1})^2 - 1", ("4n(n + 1)" if shift == 0 else f"4(n + {shift})(n + {shift + 1})"), 8


def wider_level(rng: random.Random, template: str, level: int) -> Shape:
    reach, most = (15, 9) if level == 2 else (25, 12)
    c = rng.randint(-reach, reach)
    if template == "shifted_pair":
        d = rng.choice([value for value in range(-reach, reach + 1) if value not in (c, c + 1)])
        factored = product(1, "n", (c, c + 1, d))
        return expanded(factored), factored, 2
    if template == "odd_square":
        k = rng.randint(1, most // 2 + 1)
        square = f"(2n + {2 * c + 1})^2" if c >= 0 else f"(2n - {-2 * c - 1})^2"
        left = f"{square} - 1" if k == 1 else f"{k}{square} - {k}"
        return left, product(4 * k, "n", (c, c + 1)), rng.choice(new_divisors(8 * k, 4 * k))
    run = {"consecutive_pair": 2, "consecutive_triple": 3, "consecutive_four": 4}[template]
    k = rng.randint(2 if run == 2 else 1, most if run == 2 else most // run + 1)
    factored = product(k, "n", range(c, c + run))
    whole = k * (1, 1, 2, 6, 24)[run]
    modulus = rng.choice(new_divisors(whole, k))
    return expanded(factored), factored, modulus


def divisibility(rng: random.Random, template: str, level: int = 1) -> Blueprint:
    left, factored, modulus = first_level(rng, template) if level == 1 else wider_level(rng, template, level)
    goal = Claim("divisible", left, str(modulus))
    text = statement(rng, goal.render(rng.randrange(4)), "n", "integer")
    reason = pick(rng, "one of any two consecutive integers is even" if modulus <= 2 or template == "odd_square"
                  else f"a product of consecutive integers is divisible by {modulus}",
                  "it is a product of consecutive integers", "consecutive integers include a multiple of every smaller count")
    steps = []
    if template == "odd_square":
        middle = expanded(left)
        steps.append(Step(1, Claim("equal", left, middle), pick(rng, "expanding the square", "multiplying out")))
        steps.append(Step(2, Claim("equal", middle, factored), pick(rng, "factoring out 4", "taking out the common factor 4",
                                                                     "factoring")))
    else:
        steps.append(Step(1, Claim("equal", left, factored), pick(rng, "factoring", "factoring the polynomial", "factorising")))
    steps.append(Step(len(steps) + 1, Claim("divisible", factored, str(modulus)), reason))
    steps.append(Step(len(steps) + 1, goal, pick(rng, "", "", "the previous steps")))
    return Blueprint(problem("divisibility", template, text, (goal,), level), tuple(steps))
