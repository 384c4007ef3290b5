"""Does a proof's final answer match a reference short answer? sympy decides, within a time limit.

* The final answer is the last brace-matched ``\\boxed{...}`` of the visible text (after any
  ``</think>``); a proof without one has no answer, and the check is undecided (None).
* Both answers are read by :func:`eval.answer_parse.parse_answer` (expression, relation,
  set, tuple, interval, union). Sets and unions ignore order, tuples keep it; a pair of
  items in matching brackets, ``(0, 1)`` or ``[0, 1]``, is compared as an interval when the
  other side is one; a one-element set equals its element.
* Expressions are equal when exactly equal, or when their values agree to 1e-9 (relative):
  constants evaluated to 30 digits; with variables, at five positive sample points
  (olympiad answers are about positive quantities, so sqrt(x^2) equals x here).
* Text (an answer with words) is compared after normalization (case, spacing, ``\\text``,
  ``$``). Equal is True; two different texts are False; text against math is None, and so
  is an answer too large to evaluate (it reads as not math).
* Parsing and comparing run under ``time_limit`` seconds (SIGALRM, main thread only; in
  other threads the size guards of :mod:`eval.latex_math` are the only protection); past
  it the result is None.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sympy

from eval.answer_parse import Answer, parse_answer
from verifier.parse import boxed_spans, visible_text

TOLERANCE = 1e-9
_SAMPLE_POINTS = [[sympy.Rational(137 + 61 * point + 89 * symbol, 97) for symbol in range(8)] for point in range(5)]


@dataclass(frozen=True)
class AnswerCheck:
    """The verdict on one answer, with the forms that were compared."""

    equivalent: bool | None
    """None when it could not be decided (no answer, text against math, too slow)."""
    answer: str | None
    reference: str
    answer_form: str | None
    reference_form: str | None
    method: str
    """"math", "text", or "none" (no answer found)."""
    reason: str = ""


def extract_final_answer(text: str) -> str | None:
    """The content of the last brace-matched ``\\boxed{}`` after any reasoning block; None if there is none."""
    visible, _ = visible_text(text)
    spans = boxed_spans(visible)
    return max(spans, key=lambda span: span[1])[2].strip() if spans else None


def _squash(text: str) -> str:
    """Without spacing, ``$``, ``\\text{}``-like wrappers or a final period."""
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"\\(?:text|mathrm|textbf|mathbf|emph|textit)\s*\{([^{}]*)\}", r"\1", text)
    return re.sub(r"\\(?:left|right|displaystyle)(?![A-Za-z])|\\[,;:! ]|[$~\s]", "", text).rstrip(".")


def normalize_text(text: str) -> str:
    """The text comparison's form: squashed and lower case ("Yes." is "yes")."""
    return _squash(text).lower()


def _all(results: Iterable[bool | None]) -> bool | None:
    """Three-valued "and", stopping at the first False."""
    undecided = False
    for result in results:
        if result is False:
            return False
        undecided = undecided or result is None
    return None if undecided else True


def _close(first: sympy.Basic, second: sympy.Basic) -> bool | None:
    if not (first.is_number and second.is_number) or not (first.is_finite and second.is_finite):
        return None
    return bool(abs(first - second) <= TOLERANCE * max(1, abs(first), abs(second)))


def same_value(first: sympy.Expr, second: sympy.Expr) -> bool | None:
    """Equal expressions (see the module docstring); None when sympy cannot tell."""
    if first == second:
        return True
    if any(side.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan) for side in (first, second)):
        return False
    symbols = sorted((first - second).free_symbols, key=str)
    if not symbols:
        return _close(first.evalf(30), second.evalf(30))
    agreed = 0
    for point in _SAMPLE_POINTS:
        values = dict(zip(symbols, point * (1 + len(symbols) // len(point))))
        result = _close(first.evalf(30, subs=values), second.evalf(30, subs=values))
        if result is False:
            return False
        agreed += result is True
    return True if agreed >= 3 else (True if sympy.simplify(first - second) == 0 else None)


def _interval(answer: Answer) -> Answer:
    """A two-item tuple read as the interval its brackets spell."""
    if answer.kind == "tuple" and len(answer.value) == 2 and all(item.kind == "expression" for item in answer.value):
        low, high = (item.value for item in answer.value)
        return Answer("interval", (low, high, answer.brackets[0] == "(", answer.brackets[1] == ")"))
    return answer


def answers_equal(first: Answer, second: Answer) -> bool | None:
    """Equal answers under the module's rules; None when some comparison could not be decided."""
    if first.kind == "set" and second.kind != "set" and len(first.value) == 1:
        return answers_equal(first.value[0], second)
    if second.kind == "set" and first.kind != "set" and len(second.value) == 1:
        return answers_equal(first, second.value[0])
    if "interval" in (first.kind, second.kind):
        first, second = _interval(first), _interval(second)
    if first.kind != second.kind:
        return False
    if first.kind == "expression":
        return same_value(first.value, second.value)
    if first.kind == "relation":
        (left, operator, right), (other_left, other_operator, other_right) = first.value, second.value
        if operator != other_operator:
            return False
        difference, other = left - right, other_left - other_right
        # a = b is b = a, but a < b is not b < a.
        same = same_value(difference, other)
        return same if same or operator in ("<", "<=") else same_value(difference, -other)
    if first.kind == "interval":
        if first.value[2:] != second.value[2:]:
            return False
        return _all(same_value(mine, theirs) for mine, theirs in zip(first.value[:2], second.value[:2]))
    if len(first.value) != len(second.value):
        return False
    if first.kind == "tuple":
        return _all(answers_equal(mine, theirs) for mine, theirs in zip(first.value, second.value))
    return _match_unordered(first.value, second.value)


def _match_unordered(mine: tuple[Answer, ...], theirs: tuple[Answer, ...]) -> bool | None:
    unused, undecided = list(theirs), False
    for item in mine:
        results = [answers_equal(item, other) for other in unused]
        if True in results:
            unused.pop(results.index(True))
        elif None in results:
            undecided = True
        else:
            return False
    return None if undecided else True


class _TimeUp(Exception):
    pass


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise _TimeUp after ``seconds``, where a timer can be set: the main thread, and no sooner outer timer."""
    usable = seconds > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    outer = signal.getitimer(signal.ITIMER_REAL)[0] if usable else 0.0
    if not usable or 0 < outer <= seconds:  # an outer timer (pytest-timeout) fires first: leave it alone
        yield
        return

    def ring(signal_number: int, frame: Any) -> None:
        raise _TimeUp

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        remaining = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        signal.signal(signal.SIGALRM, previous)
        if outer:  # give the outer timer back what is left of it
            signal.setitimer(signal.ITIMER_REAL, max(outer - (seconds - remaining), 0.001))


def check_answer(answer: str, reference: str, time_limit: float = 5.0) -> AnswerCheck:
    """Compare one answer with a reference answer (both LaTeX or text)."""
    if _squash(answer) == _squash(reference):  # case kept: in math, N is not n
        return AnswerCheck(True, answer, reference, _squash(answer), _squash(reference), "text")
    try:
        with _time_limit(time_limit):
            return _compare(answer, reference)
    except _TimeUp:
        return AnswerCheck(None, answer, reference, None, None, "math", f"gave up after {time_limit:g} s")
    except (TypeError, ValueError, ArithmeticError, RecursionError) as error:  # sympy's failures on odd input
        return AnswerCheck(None, answer, reference, None, None, "math", f"sympy failed: {type(error).__name__}")


def _compare(answer: str, reference: str) -> AnswerCheck:
    parsed: list[Answer | None] = []
    errors: list[str] = []
    for which, text in (("answer", answer), ("reference", reference)):
        try:
            parsed.append(parse_answer(text))
        except ValueError as error:
            parsed.append(None)
            errors.append(f"{which} is not math ({error})")
    mine, theirs = parsed
    if mine is None or theirs is None:
        forms = [normalize_text(text) if form is None else str(form) for form, text in zip(parsed, (answer, reference))]
        if mine is None and theirs is None:
            return AnswerCheck(forms[0] == forms[1], answer, reference, *forms, "text")
        return AnswerCheck(None, answer, reference, *forms, "text", f"{errors[0]}; the other side is math")
    verdict = answers_equal(mine, theirs)
    reason = "" if verdict is not None else "sympy could not decide"
    return AnswerCheck(verdict, answer, reference, str(mine), str(theirs), "math", reason)


def check_proof_answer(proof: str, reference: str, time_limit: float = 5.0) -> AnswerCheck:
    """Extract the proof's final boxed answer and compare it with ``reference``."""
    answer = extract_final_answer(proof)
    if answer is None:
        return AnswerCheck(None, None, reference, None, None, "none", "no \\boxed{} answer in the proof")
    return check_answer(answer, reference, time_limit)
