"""Written analyses of world proofs: what a verifier should say, and critiques for the meta-verifier to rate.

The world (``data.world``) decides each proof's truth; this module turns that truth into
the role answers the cold start learns from, in varied wording:

- :func:`verifier_analysis`: an analysis that checks the steps before the first bad one,
  names the first bad step and says exactly what is wrong with it (the true expansion, a
  counterexample, the real solution set, the expression that appears from nowhere, the
  missing reason), and ends with what that means for the score. For a correct proof it
  checks every step. The step is always named ``Step N``, the form
  :func:`data.world.blame.blamed_step` reads back from model output.
- :func:`meta_critiques`: for one proof, an analysis to rate with its reference rating,
  following the meta-verification rubric: the true analysis (1); an analysis that blames a
  true step with an invented defect (0: every defect it reports is unreasonable); the right
  defects with the wrong score (0.5).
- :func:`meta_assessment`: the meta-verifier's written judgement of such a critique.

The markers of each role's format are added where answers are assembled
(``training.role_data.records``); this module writes only the prose between them.
"""

from __future__ import annotations

import functools
import itertools
import random
from dataclasses import dataclass

import sympy

from data.world.checker import StepVerdict, Verdict, check
from data.world.claims import Claim, solution_set
from data.world.expressions import parse, render
from data.world.proofs import WorldProof
from data.world.steps import Step, parse_steps
from data.world.work import expanded_sides

SCORES = (0.0, 0.5, 1.0)

CONCLUSIONS = {
    1.0: ("Every step is correct and justified, and together they prove exactly the claim.",
          "The proof is complete and rigorous.", "I found no issues: the argument is complete."),
    0.5: ("Apart from this omission the argument is complete and correct.",
          "The proof is sound overall, but this missing justification is a minor gap.",
          "Everything else is right, so this is a minor issue rather than a fatal one."),
    0.0: ("This is a fatal error, so the proof does not establish the claim.", "Because of this the argument fails.",
          "The proof is therefore invalid."),
}


@dataclass(frozen=True)
class RatedCritique:
    """An analysis of a proof, the score it gives, and how a correct meta-verifier rates it."""

    analysis: str
    score: float
    rating: float
    kind: str
    """``true`` (the checker's analysis), ``invented_defect`` or ``wrong_score``."""
    blamed_step: int | None


@functools.lru_cache(maxsize=65536)
def counterexample(claim: Claim) -> str:
    """Where a false claim fails, in words a reader can check (cached: every critique of a proof asks for it again)."""
    if claim.kind == "equal":
        left, right = sympy.expand(parse(claim.left)), sympy.expand(parse(claim.right))
        return f"the left side expands to {render(left)}, while the right side is {render(right)}"
    if claim.kind == "at_least":
        difference = parse(claim.left) - parse(claim.right)
        variables = sorted(difference.free_symbols, key=str)
        for values in itertools.product(range(-4, 5), repeat=len(variables)):
            point = dict(zip(variables, values))
            if difference.subs(point) < 0:
                where = ", ".join(f"{variable} = {value}" for variable, value in point.items())
                return (f"at {where} the left side is {parse(claim.left).subs(point)} and the right side is "
                        f"{parse(claim.right).subs(point)}")
        return f"the difference {render(sympy.expand(difference))} takes negative values"
    if claim.kind == "divisible":
        expression, modulus = parse(claim.left), int(claim.right)
        variables = sorted(expression.free_symbols, key=str)
        for values in itertools.product(range(modulus), repeat=len(variables)):
            point = dict(zip(variables, values))
            value = int(expression.subs(point))
            if value % modulus:
                where = ", ".join(f"{variable} = {number}" for variable, number in point.items())
                return f"for {where} it equals {value}, which is not a multiple of {modulus}"
        return f"it is not always a multiple of {modulus}"
    roots = sorted(solution_set(parse(claim.left) - parse(claim.right), claim.variable), key=lambda root: float(root))
    named = " and ".join(f"{claim.variable} = {render(root)}" for root in roots) or "no real value"
    return f"the equation is solved by {named}, not by what the step says"


def step_text(step: Step) -> str:
    return step.claim.render() if step.claim is not None else step.text.split(":", 1)[-1].strip().rstrip(".")


def what_is_wrong(step: Step, verdict: StepVerdict, rng: random.Random) -> str:
    claim = step_text(step)
    if verdict.status == "false":
        assert step.claim is not None
        return rng.choice((f"Step {step.number} claims {claim}, which is false: {counterexample(step.claim)}.",
                           f"The error is in Step {step.number}: {claim} does not hold, since {counterexample(step.claim)}.",
                           f"Step {step.number} is wrong. It states {claim}, but {counterexample(step.claim)}."))
    if verdict.status == "does_not_follow":
        return rng.choice((f"Step {step.number} states {claim}, but this does not follow from anything before it: "
                           f"the expression it is about appears nowhere earlier in the argument or in the problem.",
                           f"Step {step.number} is a non sequitur: {claim} may be true, but it is about an expression "
                           f"the proof never reached, so it does not connect to the claim.",
                           f"The argument breaks at Step {step.number}: it asserts {claim} without deriving it from the "
                           f"previous steps."))
    if verdict.status == "unjustified":
        return rng.choice((f"Step {step.number} states {claim} without any justification. The statement is true, but "
                           f"it is not obvious and the proof should say why it holds.",
                           f"Step {step.number} asserts {claim} with no reason given; it needs a justification "
                           f"(an expansion, a factorisation or the fact it relies on).",
                           f"The only gap is Step {step.number}: {claim} is correct, but it is stated without saying why."))
    return rng.choice((f"Step {step.number} does not make a precise mathematical claim that I can check.",
                       f"I cannot verify Step {step.number}: it is not a precise statement."))


def checked(step: Step, rng: random.Random) -> str:
    claim = step_text(step)
    because = f" ({step.reason})" if step.reason else ""
    return rng.choice((f"Step {step.number}: {claim} is correct{because}.", f"Step {step.number} is right: {claim}{because}.",
                       f"I checked Step {step.number}, {claim}; it holds{because}."))


def verifier_analysis(proof: WorldProof, rng: random.Random) -> str:
    """The analysis a verifier should write of ``proof`` (without the format's markers)."""
    steps = parse_steps(proof.proof)
    verdict: Verdict = check(proof.problem.goal, proof.proof)
    if not verdict.readable:
        return "The text contains no numbered step that states a checkable claim, so it does not prove anything."
    verdicts = {item.number: item for item in verdict.steps}
    parts = []
    bad = verdict.first_bad_step
    before = [step for step in steps if bad is None or step.number < bad]
    if before and rng.random() < 0.5 and bad is not None:
        parts.append(f"Steps 1 to {before[-1].number} are correct." if len(before) > 1 else "Step 1 is correct.")
    else:
        parts.extend(checked(step, rng) for step in before)
    if bad is not None:
        step = next(step for step in steps if step.number == bad)
        if verdicts[bad].status == "ok":  # the proof stops before reaching its goal
            goal = " and ".join(claim.render() for claim in proof.problem.goal)
            parts.append(checked(step, rng))
            parts.append(f"But the argument stops at Step {bad}: the steps never establish {goal}.")
        else:
            parts.append(what_is_wrong(step, verdicts[bad], rng))
    parts.append(conclusion(proof.score, rng))
    return " ".join(parts)


def conclusion(score: float, rng: random.Random) -> str:
    return rng.choice(CONCLUSIONS[score])


def invented_defect(proof: WorldProof, rng: random.Random) -> tuple[str, int] | None:
    """An analysis that blames a step that is in fact fine, with a made-up error; None when no step is fine."""
    steps = parse_steps(proof.proof)
    verdict = check(proof.problem.goal, proof.proof)
    fine = [step for step, item in zip(steps, verdict.steps) if item.status == "ok" and step.claim is not None
            and (verdict.first_bad_step is None or step.number < verdict.first_bad_step)]
    if not fine:
        return None
    step = rng.choice(fine)
    assert step.claim is not None
    made_up = rng.choice((f"Step {step.number} claims {step.claim.render()}, but this is false: a term is lost in the algebra.",
                          f"The error is in Step {step.number}: {step.claim.render()} does not hold, the signs are wrong.",
                          f"Step {step.number} is wrong; {step.claim.render()} fails for some values of the variables."))
    earlier = [item for item in steps if item.number < step.number]
    opening = " ".join(checked(item, rng) for item in earlier)
    return " ".join(part for part in (opening, made_up, conclusion(0.0, rng)) if part), step.number


def meta_critiques(proof: WorldProof, rng: random.Random) -> list[RatedCritique]:
    """Critiques of ``proof`` with the ratings the meta-verification rubric gives them."""
    true_analysis = verifier_analysis(proof, rng)
    critiques = [RatedCritique(true_analysis, proof.score, 1.0, "true", proof.first_bad_step)]
    invented = invented_defect(proof, rng)
    if invented is not None:
        critiques.append(RatedCritique(invented[0], 0.0, 0.0, "invented_defect", invented[1]))
    wrong = rng.choice([score for score in SCORES if score != proof.score])
    critiques.append(RatedCritique(replace_conclusion(true_analysis, proof.score, wrong, rng), wrong, 0.5, "wrong_score",
                                   proof.first_bad_step))
    return critiques


def replace_conclusion(analysis: str, true_score: float, wrong_score: float, rng: random.Random) -> str:
    """The same findings, ending with a verdict that does not match them."""
    for sentence in CONCLUSIONS[true_score]:
        if analysis.endswith(sentence):
            return analysis[: -len(sentence)] + conclusion(wrong_score, rng)
    return f"{analysis} {conclusion(wrong_score, rng)}"


def meta_assessment(critique: RatedCritique, proof: WorldProof, rng: random.Random) -> str:
    """What a correct meta-verifier writes about ``critique`` (without the format's markers)."""
    if critique.kind == "invented_defect":
        return rng.choice((f"The evaluation blames Step {critique.blamed_step}, but that step is correct: the defect it "
                           f"describes does not exist in the proof.",
                           f"I checked Step {critique.blamed_step} myself and it holds, so the reported error is invented."))
    if critique.kind == "wrong_score":
        found = (f"the defect it reports in Step {critique.blamed_step} is real" if critique.blamed_step is not None
                 else "its reading of the steps is accurate")
        return rng.choice((f"The evaluation is right about the proof: {found}. But its score, {critique.score:g}, does "
                           f"not match what it found; the proof deserves {proof.score:g}.",
                           f"Its analysis is accurate ({found}), yet the final score {critique.score:g} does not follow "
                           f"from it."))
    if critique.blamed_step is None:
        return rng.choice(("The evaluation reports no defect, and I found none: every step it checks is correct, and "
                           "the score matches.", "It checks each step faithfully, invents nothing, and its score fits."))
    return rng.choice((f"The defect reported in Step {critique.blamed_step} is real and accurately described, and the "
                       f"score matches its severity.",
                       f"I confirmed the problem in Step {critique.blamed_step}; the evaluation describes it accurately "
                       f"and scores the proof accordingly."))


def equality_work(number: int, claim: Claim, left: str, right: str, difference: bool) -> str:
    """An equality step's work with the sides as given (true or not): restated, both sides expanded and, in the
    difference form, left minus right expanded from the sides as written. "They agree" follows exactly when the sides are
    equal, which is exactly when that difference is 0."""
    work = f"Step {number}: {claim.render()}. {expanded_sides(left, right)}"
    if difference:
        work += f", and left minus right is {render(sympy.expand(parse(left) - parse(right)))}"
    return work + "."


def worked_step(step: Step, verdict: StepVerdict, difference: bool = False) -> str:
    """One step checked claim first, work shown, verdict last: what a small model can learn to do step by step.

    ``difference`` adds left minus right (:func:`equality_work`), so the verdict reads one token, the difference's 0,
    instead of comparing two written polynomials (data/world/work.py: the bundled model's verdict does not compare them).
    """
    number = step.number
    if step.claim is None:
        return f"Step {number}: {step_text(step)}. This is not a claim I can check, so Step {number} is wrong."
    claim = step.claim
    if claim.kind == "equal":
        left, right = render(sympy.expand(parse(claim.left))), render(sympy.expand(parse(claim.right)))
        lines = [equality_work(number, claim, left, right, difference)]
        agree = "They agree" if left == right else "They differ"
        lines.append({"ok": f"{agree}, so Step {number} is correct.",
                      "false": f"{agree}, so Step {number} is wrong.",
                      "does_not_follow": f"{agree}, but neither side appears earlier, so Step {number} does not follow.",
                      "unjustified": f"{agree}, but Step {number} gives no reason for it, so Step {number} is unjustified.",
                      }.get(verdict.status, f"So Step {number} is wrong."))
    else:
        lines = [f"Step {number}: {claim.render()}."]
        lines.append({"ok": f"{'It holds, ' + connect_reason(step.reason) if step.reason else 'It follows from the steps before'},"
                            f" so Step {number} is correct.",
                      "false": f"But {counterexample(claim)}, so Step {number} is wrong.",
                      "does_not_follow": f"Its expression appears nowhere earlier, so Step {number} does not follow.",
                      "unjustified": f"It is true, but no reason is given, so Step {number} is unjustified.",
                      }.get(verdict.status, f"So Step {number} is wrong."))
    return " ".join(lines)


def connect_reason(reason: str) -> str:
    first = reason.split()[0].lower()
    return f"by {reason}" if first.endswith("ing") or first in ("the", "steps", "step") else f"since {reason}"


def worked_analysis(proof: WorldProof, difference: bool = False) -> str:
    """The analysis of ``proof`` in one fixed form that shows its work before each verdict (without the format's markers).

    Every step up to the first bad one is written out, then checked: an equality's two sides
    expanded and compared, a fact's reason or counterexample; the verdict comes last, once the
    work that decides it is on the page (``difference``: with left minus right, :func:`worked_step`).
    ``data.world.blame`` reads the blamed step back as from :func:`verifier_analysis`. Deterministic: the same proof
    always gets the same analysis.
    """
    steps = parse_steps(proof.proof)
    verdict: Verdict = check(proof.problem.goal, proof.proof)
    if not verdict.readable:
        return "The text contains no numbered step that states a checkable claim, so it does not prove anything."
    verdicts = {item.number: item for item in verdict.steps}
    bad = verdict.first_bad_step
    parts = [worked_step(step, verdicts[step.number], difference) for step in steps
             if step.number in verdicts and (bad is None or step.number <= bad)]
    if bad is not None and verdicts[bad].status == "ok":  # the proof stops before reaching its goal
        goal = " and ".join(claim.render() for claim in proof.problem.goal)
        parts.append(f"But the argument stops at Step {bad}: the steps never establish {goal}.")
    parts.append(CONCLUSIONS[proof.score][0])
    return " ".join(parts)


def misworked_analysis(proof: WorldProof, rng: random.Random, share: float, difference: bool = False) -> tuple[str, float]:
    """A worked analysis whose arithmetic sometimes slips, every verdict following the sides as written; and its score.

    Each correct equality step before the first bad one has, with probability ``share``, its right side miscomputed
    (:func:`miscomputed`): the sides then differ, so the step is blamed and the proof scored 0 (an invented defect, but
    faithful to its work). A false equality step that is the proof's last has, with the same probability, its right side
    written as the left's expansion: the sides agree, the step is passed and the proof scored 1. Otherwise the analysis
    is :func:`worked_analysis`'s. In the world's own analyses the sides are always the true expansions, so a verdict
    guessed from the step alone fits them as well as one that reads the sides; the bundled world model learned the guess
    (data/world/work.py). These teach the verdict to read the sides (``difference``: in the form with left minus right).
    """
    steps = parse_steps(proof.proof)
    verdict: Verdict = check(proof.problem.goal, proof.proof)
    if not verdict.readable:
        return worked_analysis(proof, difference), proof.score
    verdicts = {item.number: item for item in verdict.steps}
    bad = verdict.first_bad_step
    last = max(verdicts)
    parts = []
    for step in steps:
        if step.number not in verdicts or (bad is not None and step.number > bad):
            continue
        claim, status, number = step.claim, verdicts[step.number].status, step.number
        slips = (claim is not None and claim.kind == "equal" and rng.random() < share
                 and (status == "ok" and number != bad or status == "false" and number == bad == last))
        if not slips:
            parts.append(worked_step(step, verdicts[number], difference))
            continue
        assert claim is not None
        left = render(sympy.expand(parse(claim.left)))
        right = miscomputed(claim.right) if status == "ok" else left
        agree = left == right
        parts.append(equality_work(number, claim, left, right, difference)
                     + (f" They agree, so Step {number} is correct." if agree else f" They differ, so Step {number} is wrong."))
        if not agree:
            return " ".join([*parts, CONCLUSIONS[0.0][0]]), 0.0
        if number == bad:
            return " ".join([*parts, CONCLUSIONS[1.0][0]]), 1.0
    return worked_analysis(proof, difference), proof.score


def miscomputed(expression: str) -> str:
    """A wrong expansion of ``expression``: its constant or first coefficient changed (what an invented defect claims)."""
    value = sympy.expand(parse(expression))
    terms = sympy.Add.make_args(value)
    return render(sympy.expand(value + (terms[0] if value != 0 else 1)))


def worked_invented_defect(proof: WorldProof, difference: bool = False) -> tuple[str, int] | None:
    """A worked analysis that blames a step that is fine, misstating its work; None when no step is fine."""
    steps = parse_steps(proof.proof)
    verdict = check(proof.problem.goal, proof.proof)
    verdicts = {item.number: item for item in verdict.steps}
    bad = verdict.first_bad_step
    fine = [step for step in steps if step.claim is not None and step.number in verdicts
            and verdicts[step.number].status == "ok" and (bad is None or step.number < bad)]
    if not fine:
        return None
    target = fine[-1]
    parts = [worked_step(step, verdicts[step.number], difference) for step in steps if step.number < target.number]
    claim = target.claim
    assert claim is not None
    if claim.kind == "equal":
        left = render(sympy.expand(parse(claim.left)))
        parts.append(equality_work(target.number, claim, left, miscomputed(claim.right), difference)
                     + f" They differ, so Step {target.number} is wrong.")
    else:
        parts.append(f"Step {target.number}: {claim.render()}. But it fails for some values of the variables, so "
                     f"Step {target.number} is wrong.")
    parts.append(CONCLUSIONS[0.0][0])
    return " ".join(parts), target.number


def worked_meta_critiques(proof: WorldProof, rng: random.Random, difference: bool = False) -> list[RatedCritique]:
    """:func:`meta_critiques` in the worked form: the true analysis (1), an invented defect (0), a wrong score (0.5)."""
    true_analysis = worked_analysis(proof, difference)
    critiques = [RatedCritique(true_analysis, proof.score, 1.0, "true", proof.first_bad_step)]
    invented = worked_invented_defect(proof, difference)
    if invented is not None:
        critiques.append(RatedCritique(invented[0], 0.0, 0.0, "invented_defect", invented[1]))
    wrong = rng.choice([score for score in SCORES if score != proof.score])
    ending = CONCLUSIONS[proof.score][0]
    critiques.append(RatedCritique(true_analysis[: -len(ending)] + CONCLUSIONS[wrong][0], wrong, 0.5, "wrong_score",
                                   proof.first_bad_step))
    return critiques
