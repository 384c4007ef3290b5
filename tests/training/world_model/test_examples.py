"""The world model's examples: every role taught, true scores taken in turn, answers in the roles' formats."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from data.world.proofs import world_proofs
from generator.parse import parse_generation
from meta_verifier.meta_verify import META_FORMAT
from training.world_model.config import ExampleSettings
from training.world_model.examples import by_problem, drawn_in_turn, world_examples
from verifier.parse import parse_verdict

PROOFS = list(world_proofs(seed=0, problems_per_template=2, families=("identity", "equation")))


def test_scores_are_taken_in_turn_and_repeat_only_when_a_score_runs_out() -> None:
    group = next(iter(by_problem(PROOFS).values()))
    counts = Counter(proof.score for proof in group)
    assert counts[1.0] == 1 and counts[0.5] == 1 and counts[0.0] >= 3  # one correct, one leap, several false
    chosen = drawn_in_turn(group, 7, random.Random(0))
    scores = [proof.score for proof in chosen]
    cycle = [1.0, 0.5, 0.0]
    start = cycle.index(scores[0])
    assert scores == [cycle[(start + index) % 3] for index in range(7)]  # in turn, from a score drawn at random
    starts = Counter(drawn_in_turn(group, 2, random.Random(seed))[0].score for seed in range(300))
    assert set(starts) == set(cycle) and min(starts.values()) > 70  # two per problem still teach every score
    zeros = [proof.id for proof in chosen if proof.score == 0.0]
    assert len(set(zeros)) == len(zeros)  # no flawed proof twice while others are left


def test_a_problem_without_some_score_alternates_the_scores_it_has() -> None:
    group = [proof for proof in next(iter(by_problem(PROOFS).values())) if proof.score != 0.5]
    scores = [proof.score for proof in drawn_in_turn(group, 4, random.Random(0))]
    assert scores in ([1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0])
    assert drawn_in_turn([], 3, random.Random(0)) == []


def test_every_role_is_taught_in_its_format_with_the_checker_truth() -> None:
    settings = ExampleSettings(verifier_per_problem=3, generator_per_problem=2, generator_flawed_share=0.5, meta_per_problem=1)
    examples = world_examples(PROOFS, settings, world_seed=0)
    problems = len(by_problem(PROOFS))
    roles = Counter(example["role"] for example in examples)
    assert roles == {"verifier": 3 * problems, "generator": 2 * problems, "meta-verifier": problems}
    verifier = [example for example in examples if example["role"] == "verifier"]
    assert Counter(example["score"] for example in verifier) == {1.0: problems, 0.5: problems, 0.0: problems}  # 3 a problem
    for example in examples:
        assert example["prompt"][-1]["role"] == "user" and example["problem_id"]
        if example["role"] == "verifier":
            assert parse_verdict(example["answer"]).score == example["score"]
        elif example["role"] == "generator":
            generation = parse_generation(example["answer"])
            assert generation.self_score == example["score"] and "Step 1" in generation.proof
        else:
            assert parse_verdict(example["answer"], META_FORMAT).score == example["rating"]
    generator_scores = Counter(example["score"] == 1.0 for example in examples if example["role"] == "generator")
    assert generator_scores[True] and generator_scores[False]  # correct proofs, and flawed ones admitted honestly
    assert world_examples(PROOFS, settings, world_seed=0) == examples


def test_the_world_prompts_are_short_and_keep_every_placeholder() -> None:
    from training.world_model.examples import WORLD_PROMPTS
    from verifier.templates import load_template

    for name, placeholders in (("verify", {"problem", "proof"}), ("generate", {"problem"}),
                               ("meta_verify", {"problem", "proof", "analysis"}),
                               ("refine", {"problem", "previous_proof", "evaluations"})):
        template = load_template(name, WORLD_PROMPTS)
        assert template.placeholders() == placeholders
        assert len(template.user) < 300


def test_the_difference_style_teaches_left_minus_right_in_every_role_that_writes_an_analysis() -> None:
    worked = world_examples(PROOFS, ExampleSettings(), world_seed=0)
    difference = world_examples(PROOFS, ExampleSettings(analysis="difference"), world_seed=0)
    assert [example["role"] for example in difference] == [example["role"] for example in worked]
    for role, where in (("verifier", "answer"), ("generator", "answer"), ("meta-verifier", "prompt")):  # meta: the critique
        texts = [str(example[where]) for example in difference if example["role"] == role]
        assert any(", and left minus right is " in text for text in texts), role
    assert not any(", and left minus right is " in example["answer"] for example in worked)


def test_refinement_examples_quote_a_flawed_proof_as_the_refine_loop_does_and_answer_with_a_correct_proof() -> None:
    from generator.prompt import refinement_messages
    from generator.refine import Round
    from training.role_data.answers import generator_answer
    from training.role_data.world_critiques import worked_analysis
    from training.world_model.examples import WORLD_PROMPTS

    without = world_examples(PROOFS, ExampleSettings(), world_seed=0)
    examples = world_examples(PROOFS, ExampleSettings(refine_per_problem=2), world_seed=0)
    refiner = [example for example in examples if example["role"] == "refiner"]
    assert len(refiner) == 2 * len(by_problem(PROOFS))  # every problem here has a correct and a flawed proof
    assert [example for example in examples if example["role"] != "refiner"] == without  # the other roles' draw is unchanged
    group = by_problem(PROOFS)
    for example in refiner:
        proofs = group[example["problem_id"]]
        flawed = next(proof for proof in proofs if proof.first_bad_step == example["first_bad_step"] and proof.score == example["score"]
                      and proof.proof in example["prompt"][-1]["content"])
        assert flawed.score != 1.0
        answer = parse_generation(example["answer"])
        assert answer.self_score == 1.0 and answer.proof in {proof.proof for proof in proofs if proof.score == 1.0}
        # the prompt the refine loop writes after a round whose own self-evaluation admitted the flaw
        admitted = parse_generation(generator_answer(flawed.proof, flawed.score, worked_analysis(flawed)))
        loop_round = Round(thread=0, round=1, prompt=(), completion="", finish_reason="stop", parsed=admitted,
                           prompt_tokens=0, completion_tokens=0, generate_s=0.0)
        statement = flawed.problem.statement
        assert as_text(refinement_messages(statement, admitted.proof, loop_round.evaluations(4), WORLD_PROMPTS)) == as_text(example["prompt"])


def as_text(messages: Sequence[Any]) -> list[str]:
    """The contents of chat messages, as records (``ChatMessage``) or as the JSON dicts an example stores."""
    return [message.content if hasattr(message, "content") else message["content"] for message in messages]
