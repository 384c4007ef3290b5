"""``arithmetic``: an integer expression has a stated value, proved by evaluating it step by step.

``Prove that 3·(4 + 5) - 2·7 = 13``: each step rewrites the expression with operations
evaluated, innermost brackets first, until the number is reached. At level 1 a step does one
operation (``3·9 - 2·7 = 27 - 2·7``); at levels 2 and 3 it does every operation whose operands
are already numbers, on longer expressions with larger numbers (up to 12 and 20) and nested
brackets. Intermediate values may be zero or negative (written in brackets, ``3·(-2)``).

The checker reads these with the rest of the world: a step is true when both sides have
the same value, and it follows only when its left side is the previous expression *as
written* (``data.world.expressions.form``), so a step about another expression with the
same value does not follow. Evaluating needs no reason (like collecting like terms), so a
proof here is never an unjustified leap.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from data.world.claims import Claim
from data.world.families.text import pick
from data.world.problems import Blueprint, problem
from data.world.steps import Step

TEMPLATES = ("sum_of_products", "bracket_product", "nested", "powers")
PRECEDENCE = {"+": 1, "-": 1, "·": 2, "^": 3}


@dataclass(frozen=True)
class Number:
    value: int


@dataclass(frozen=True)
class Operation:
    symbol: str
    """``+``, ``-``, ``·`` or ``^`` (a power's exponent is always a small literal)."""
    left: Node
    right: Node


Node = Number | Operation


def value(node: Node) -> int:
    if isinstance(node, Number):
        return node.value
    left, right = value(node.left), value(node.right)
    if node.symbol == "+":
        return left + right
    if node.symbol == "-":
        return left - right
    return left * right if node.symbol == "·" else left ** right


def written(node: Node, leading: bool = True) -> str:
    """The expression as a person writes it, with the brackets it needs (a negative number is bracketed unless it opens
    the text or a bracket and is a term of a sum: ``-6 + 3``, ``3·(-6)``, ``(-6)·3``); ``leading``: ``node`` opens them."""
    if isinstance(node, Number):
        return str(node.value) if node.value >= 0 or leading else f"({node.value})"
    rank = PRECEDENCE[node.symbol]
    left_bare = isinstance(node.left, Number) or PRECEDENCE[node.left.symbol] >= rank and node.symbol != "^"
    left = written(node.left, leading and rank == 1) if left_bare else f"({written(node.left)})"
    right_bare = isinstance(node.right, Number) or PRECEDENCE[node.right.symbol] > rank
    right = written(node.right, False) if right_bare else f"({written(node.right)})"
    return f"{left} {node.symbol} {right}" if rank == 1 else f"{left}{node.symbol}{right}"


def ready(node: Node) -> bool:
    return isinstance(node, Operation) and isinstance(node.left, Number) and isinstance(node.right, Number)


def evaluate_once(node: Node) -> tuple[Node, bool]:
    """The leftmost innermost operation evaluated; (the new tree, whether one was)."""
    if isinstance(node, Number):
        return node, False
    if ready(node):
        return Number(value(node)), True
    left, done = evaluate_once(node.left)
    if done:
        return Operation(node.symbol, left, node.right), True
    right, done = evaluate_once(node.right)
    return Operation(node.symbol, left, right), done


def evaluate_ready(node: Node) -> Node:
    """Every operation whose operands are numbers evaluated at once."""
    if isinstance(node, Number):
        return node
    if ready(node):
        return Number(value(node))
    return Operation(node.symbol, evaluate_ready(node.left), evaluate_ready(node.right))


def draw(rng: random.Random, template: str, level: int) -> Node:
    """An expression of ``template`` at ``level`` (module docstring)."""
    top = (9, 12, 20)[level - 1]

    def number(high: int = top) -> Number:
        return Number(rng.randint(2, high))

    def sign() -> str:
        return rng.choice("+-")

    def times(left: Node, right: Node) -> Operation:
        return Operation("·", left, right)

    def pair(high: int = top) -> Operation:
        return Operation(sign(), number(high), number(high))

    if template == "sum_of_products":
        tree: Node = times(number(), number())
        for _ in range(level):
            tree = Operation(sign(), tree, times(number(), number()))
        return tree
    if template == "bracket_product":
        if level == 1:
            return Operation(sign(), times(number(), pair()), number())
        tail = times(number(), number()) if level == 2 else times(pair(), pair())
        return Operation(sign(), times(pair(), pair()), tail)
    if template == "nested":
        if level == 1:
            return times(number(), Operation(sign(), number(), times(number(), number())))
        inner = Operation(sign(), number(), times(number(), pair()))
        if level == 2:
            return Operation(sign(), times(number(), inner), number())
        deeper = Operation(sign(), number(9), times(number(9), Operation(sign(), number(9), times(number(9), pair(9)))))
        return Operation(sign(), times(deeper, number(12)), number())
    if level == 1:  # powers
        return Operation(sign(), Operation("^", number(), Number(2)), times(number(), number()))
    if level == 2:
        return Operation(sign(), Operation("^", pair(), Number(2)), Operation("^", number(5), Number(3)))
    return Operation(sign(), Operation("^", pair(9), Number(3)), times(Operation("^", pair(12), Number(2)), number(9)))


def reason(rng: random.Random, before: Node, several: bool) -> str:
    """Why a step holds, in words: the operation it does (or that it does several); sometimes none (none is needed)."""
    if several:
        return pick(rng, "evaluating the innermost operations", "working out what can be computed", "", "computing each part")
    operation = next(node for node in operations(before) if ready(node))
    a, b = written(operation.left), written(operation.right)
    words = {"+": ("adding", f"adding {a} and {b}", "evaluating the sum"),
             "-": ("subtracting", f"subtracting {b} from {a}", "evaluating the difference"),
             "·": ("multiplying", f"multiplying {a} by {b}", "evaluating the product"),
             "^": ("evaluating the power", f"raising {a} to the power {b}", "computing the power")}[operation.symbol]
    return pick(rng, *words, "")


def operations(node: Node) -> list[Operation]:
    """The operations of ``node`` in the order :func:`evaluate_once` takes them (left to right, innermost first)."""
    if isinstance(node, Number):
        return []
    return [*operations(node.left), *operations(node.right), node]


def arithmetic(rng: random.Random, template: str, level: int = 1) -> Blueprint:
    tree = draw(rng, template, level)
    left, result = written(tree), str(value(tree))
    goal = Claim("equal", left, result)
    text = pick(rng, f"Prove that {left} = {result}.", f"Show that {left} = {result}.",
                f"Verify that {left} equals {result}.", f"Compute {left} and prove that it equals {result}.")
    steps: list[Step] = []
    while isinstance(tree, Operation):
        after = evaluate_once(tree)[0] if level == 1 else evaluate_ready(tree)
        several = level > 1 and sum(ready(node) for node in operations(tree)) > 1
        steps.append(Step(len(steps) + 1, Claim("equal", written(tree), written(after)), reason(rng, tree, several)))
        tree = after
    return Blueprint(problem("arithmetic", template, text, (goal,), level), tuple(steps))
