"""The world model's teaching examples: the three roles' prompts and answers, drawn from world proofs.

Per training problem (``ExampleSettings``):

- verifier: a proof under review -> the analysis that names its first bad step, and the score,
  drawn in turn from each true score the problem has (1, then 0.5, then 0, again), so the
  classes are taught about equally although a problem has one correct proof and several flawed;
- generator: the problem -> a numbered proof and its honest self-evaluation, a correct proof
  except for a ``generator_flawed_share`` of flawed ones whose evaluation admits the flaw;
- meta-verifier: a critique of one of its proofs (true, invented defect, wrong score) -> the rating;
- refiner (``refine_per_problem``, 0 by default): the refine prompt quoting a flawed proof and the evaluation that
  names its first bad step -> a correct proof of the problem and its self-evaluation, what ``prove --max-rounds``
  asks of the generator after a failed round;
- and ``comparison_drills`` per problem of ``drills.py``'s drills (no role's format: many verdicts, half "differ").

The answers are the ones the cold start teaches (``training.role_data``), with the same output
formats and parsers as every role; the prompts are the templates of ``prompts_dir``. An example is
a JSON-ready dict: ``role``, ``prompt`` (chat messages), ``answer`` and what it was drawn from.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from data.world.proofs import WorldProof
from generator.prompt import generation_messages, refinement_messages
from meta_verifier.meta_verify import MetaItem, meta_verification_messages
from training.role_data.answers import generator_answer, meta_answer, verifier_answer
from training.role_data.records import as_dicts
from training.role_data.world_critiques import meta_assessment, worked_analysis, worked_meta_critiques
from training.role_data.world_rows import meta_rows, proof_row
from training.world_model.config import ExampleSettings
from training.world_model.drills import drill_examples
from verifier.parse import parse_verdict
from verifier.prompt import verification_messages

WORLD_PROMPTS = Path(__file__).parent / "prompts"
"""The short world prompt set: the same placeholders and output formats as the built-in templates, fewer tokens."""
SCORE_ORDER = (1.0, 0.5, 0.0)


def by_problem(proofs: Iterable[WorldProof]) -> dict[str, list[WorldProof]]:
    """Proofs grouped by problem, problems in order of first appearance."""
    groups: dict[str, list[WorldProof]] = {}
    for proof in proofs:
        groups.setdefault(proof.problem.id, []).append(proof)
    return groups


def drawn_in_turn(group: Sequence[WorldProof], count: int, rng: random.Random) -> list[WorldProof]:
    """``count`` proofs taking each true score in turn (1, 0.5, 0, 1, ... from a score drawn at random, so that over many
    problems every score is taught equally even when ``count`` is not a multiple of the scores); within a score, without
    repeats while any are left."""
    pools = {score: [proof for proof in group if proof.score == score] for score in SCORE_ORDER}
    for pool in pools.values():
        rng.shuffle(pool)
    present = [score for score in SCORE_ORDER if pools[score]]
    taken: dict[float, int] = dict.fromkeys(present, 0)
    chosen = []
    start = rng.randrange(len(present)) if present else 0
    for index in range(count if present else 0):
        score = present[(start + index) % len(present)]
        pool = pools[score]
        chosen.append(pool[taken[score] % len(pool)])
        taken[score] += 1
    return chosen


def correct_and_flawed(group: Sequence[WorldProof]) -> tuple[list[WorldProof], list[WorldProof]]:
    """A problem's proofs of true score 1, and the others, each in their order."""
    return [proof for proof in group if proof.score == 1.0], [proof for proof in group if proof.score != 1.0]


def origin(proof: WorldProof) -> dict[str, Any]:
    return {"problem_id": proof.problem.id, "family": proof.problem.family, "template": proof.problem.template,
            "level": getattr(proof.problem, "level", 1)}


def analysis_of(proof: WorldProof, settings: ExampleSettings, world_seed: int) -> str:
    """The analysis taught for ``proof``: worked or difference (``world_critiques.worked_analysis``) or the world's varied
    critique."""
    if settings.analysis == "varied":
        return proof_row(proof, world_seed)["critique"]
    return worked_analysis(proof, difference=settings.analysis == "difference")


def rated_critique(proof: WorldProof, settings: ExampleSettings, world_seed: int, rng: random.Random) -> dict[str, Any]:
    """One critique of ``proof`` to rate, in the style of the run's analyses: analysis (verifier format), rating, assessment."""
    if settings.analysis == "varied":
        return rng.choice(meta_rows(proof, world_seed))
    critique = rng.choice(worked_meta_critiques(proof, rng, difference=settings.analysis == "difference"))
    return {"analysis": verifier_answer(critique.score, critique.analysis), "rating": critique.rating,
            "assessment": meta_assessment(critique, proof, rng), "critique_kind": critique.kind}


def problem_examples(group: Sequence[WorldProof], settings: ExampleSettings, world_seed: int, prompts_dir: str,
                     rng: random.Random) -> list[dict[str, Any]]:
    """The examples one problem teaches (module docstring)."""
    examples = []
    problem = group[0].problem.statement
    for proof in drawn_in_turn(group, settings.verifier_per_problem, rng):
        examples.append({"role": "verifier", **origin(proof), "score": proof.score, "first_bad_step": proof.first_bad_step,
                         "prompt": as_dicts(verification_messages(problem, proof.proof, prompts_dir)),
                         "answer": verifier_answer(proof.score, analysis_of(proof, settings, world_seed))})
    correct, flawed = correct_and_flawed(group)
    for _ in range(settings.generator_per_problem):
        pool = flawed if flawed and (not correct or rng.random() < settings.generator_flawed_share) else correct
        if not pool:
            break
        proof = rng.choice(pool)
        examples.append({"role": "generator", **origin(proof), "score": proof.score, "first_bad_step": proof.first_bad_step,
                         "prompt": as_dicts(generation_messages(problem, prompts_dir)),
                         "answer": generator_answer(proof.proof, proof.score, analysis_of(proof, settings, world_seed))})
    for _ in range(settings.meta_per_problem):
        proof = rng.choice(list(group))
        rated = rated_critique(proof, settings, world_seed, rng)
        item = MetaItem(problem, proof.proof, rated["analysis"])
        examples.append({"role": "meta-verifier", **origin(proof), "rating": rated["rating"],
                         "critique_kind": rated["critique_kind"],
                         "prompt": as_dicts(meta_verification_messages(item, prompts_dir)),
                         "answer": meta_answer(rated["rating"], rated["assessment"])})
    return examples


def refinement_examples(group: Sequence[WorldProof], settings: ExampleSettings, world_seed: int, prompts_dir: str,
                        rng: random.Random) -> list[dict[str, Any]]:
    """``refine_per_problem`` refinements of one problem's flawed proofs into its correct ones (none without both)."""
    correct, flawed = correct_and_flawed(group)
    examples = []
    for _ in range(settings.refine_per_problem if flawed and correct else 0):
        before, after = rng.choice(flawed), rng.choice(correct)
        evaluation = quoted_evaluation(before, settings, world_seed)
        examples.append({"role": "refiner", **origin(before), "score": before.score, "first_bad_step": before.first_bad_step,
                         "prompt": as_dicts(refinement_messages(group[0].problem.statement, before.proof, [evaluation],
                                                                prompts_dir)),
                         "answer": generator_answer(after.proof, after.score, analysis_of(after, settings, world_seed))})
    return examples


def quoted_evaluation(proof: WorldProof, settings: ExampleSettings, world_seed: int) -> tuple[str, float]:
    """The evaluation a refinement prompt quotes for ``proof``: its analysis as the refine loop reads it back from a
    verdict (``Verdict.analysis``: the opener and the boxed score stripped), and its true score."""
    verdict = parse_verdict(verifier_answer(proof.score, analysis_of(proof, settings, world_seed)))
    return verdict.analysis, proof.score


def world_examples(proofs: Iterable[WorldProof], settings: ExampleSettings, world_seed: int,
                   prompts_dir: str = "") -> list[dict[str, Any]]:
    """Every example of ``proofs``' problems, shuffled; the same inputs always give the same list."""
    folder = prompts_dir or str(WORLD_PROMPTS)
    rng = random.Random(f"{settings.seed}/world-model-examples")
    examples = []
    groups = by_problem(proofs)
    for group in groups.values():
        examples.extend(problem_examples(group, settings, world_seed, folder, rng))
    rng.shuffle(examples)
    # drills are placed by a generator of their own, so the role examples and their order are the same with or without them
    drills = drill_examples([proof for group in groups.values() for proof in group],
                            round(settings.comparison_drills * len(groups)), settings.seed, settings.drill_claims,
                            settings.drill_lines)
    placement = random.Random(f"{settings.seed}/world-model-drill-places")
    for drill in drills:
        examples.insert(placement.randrange(len(examples) + 1), drill)
    # refinements too have generators of their own: with refine_per_problem 0 the list is the one drawn before they existed
    refine_rng = random.Random(f"{settings.seed}/world-model-refine")
    refine_placement = random.Random(f"{settings.seed}/world-model-refine-places")
    for group in groups.values():
        for refinement in refinement_examples(group, settings, world_seed, folder, refine_rng):
            examples.insert(refine_placement.randrange(len(examples) + 1), refinement)
    return examples


def example_text(example: dict[str, Any]) -> str:
    """Every word an example shows the model (what the tokenizer is trained on)."""
    return "\n".join([*(message["content"] for message in example["prompt"]), example["answer"]])
