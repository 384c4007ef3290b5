"""Train and test splits of the world that no held-out proof text crosses.

Three splits, drawn from separate seeded streams (one per split, family, template and
level; ``data.world.proofs.stream``), level by level in the order of ``WorldConfig.levels``:

- ``train``: the training families' training templates.
- ``test_in`` (in distribution): the training families' held-out templates, and the
  training templates with fresh coefficients.
- ``test_out`` (out of distribution): the held-out families, every template.

A problem is its goal (the claims to prove), not its wording, whatever its level: a
training problem is drawn once across all levels, and a test problem whose goal occurs in
training (at any level) or earlier in its split is redrawn (up to a limit, then left out and counted; a template with
no coefficients, such as ``three_squares``, has one problem only), so no problem, no
problem statement and no proof text of a test split appears in ``train``; :func:`overlap` measures what is shared below that: the fraction of a test
proof's word 8-grams that also occur in some training proof (steps of one template share
their shape, so in-distribution overlap is expected to be high and out-of-distribution
overlap low; it is reported, not hidden).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from data.world.config import WorldConfig
from data.world.families import Problem, blueprint, templates
from data.world.proofs import WorldProof, stream, write_proof

SPLITS = ("train", "test_in", "test_out")
NGRAM = 8
REDRAWS = 20


@dataclass(frozen=True)
class Split:
    name: str
    proofs: tuple[WorldProof, ...]
    redraw_failures: int = 0
    """Problems left out because every redraw repeated a problem already drawn (for a test split: a training one)."""
    failures_by_level: tuple[tuple[int, int], ...] = ()
    """``redraw_failures`` per level, as (level, failures) in the order drawn."""


def training_templates(family: str, held_out: int) -> tuple[str, ...]:
    names = templates(family)
    return names[: max(1, len(names) - held_out)]


def goal_key(proof_or_problem: WorldProof | Problem) -> tuple[str, ...]:
    problem = proof_or_problem.problem if isinstance(proof_or_problem, WorldProof) else proof_or_problem
    return tuple(claim.render() for claim in problem.goal)


def proofs_of(family: str, template: str, count: int, rng: random.Random, defects: Sequence[str],
              avoid: set[tuple[str, ...]], level: int = 1, fine: bool = False) -> tuple[list[WorldProof], int]:
    """``count`` distinct problems of one template at ``level``, each with its correct and flawed proofs (``fine``:
    ``WorldConfig.fine_steps``); goals in ``avoid`` are redrawn (and the new ones added to it)."""
    written, failures = [], 0
    for _ in range(count):
        for _attempt in range(REDRAWS):
            plan = blueprint(family, template, rng, level, fine)
            if goal_key(plan.problem) not in avoid:
                break
        else:
            failures += 1
            continue
        avoid.add(goal_key(plan.problem))
        ids: set[str] = set()
        for defect in (None, *defects):
            proof = write_proof(plan, rng, defect)
            # two defects can write the same text (dropping a term that another defect also miswrites): one proof,
            # one id, kept once; every defect is still drawn, so the rest of the world does not move
            if proof is not None and proof.id not in ids:
                ids.add(proof.id)
                written.append(proof)
    return written, failures


def make_splits(config: WorldConfig) -> dict[str, Split]:
    """The three splits of ``config`` (see the module docstring); the same config always gives the same proofs."""
    training_families = [family for family in config.families if family not in config.held_out_families]
    seen: set[tuple[str, ...]] = set()
    train: list[WorldProof] = []
    train_failures: dict[int, int] = {}
    for level in config.levels:
        train_failures[level] = 0
        for family in training_families:
            for template in training_templates(family, config.held_out_templates):
                rng = random.Random(stream(config.seed, "train", family, template, level=level))
                written, failed = proofs_of(family, template, config.problems_per_template, rng, config.defects, seen, level,
                                            config.fine_steps)
                train += written
                train_failures[level] += failed
    splits = {"train": Split("train", tuple(train), sum(train_failures.values()), tuple(train_failures.items()))}
    held_out = [family for family in config.families if family in config.held_out_families]
    for name, families in (("test_in", training_families), ("test_out", held_out)):
        proofs: list[WorldProof] = []
        failures: dict[int, int] = {}
        drawn: set[tuple[str, ...]] = set()  # problems differ within a split too, and never repeat a training problem
        for level in config.levels:
            failures[level] = 0
            for family in families:
                for template in templates(family):
                    rng = random.Random(stream(config.seed, name, family, template, level=level))
                    avoid = seen | drawn
                    written, failed = proofs_of(family, template, config.test_problems_per_template, rng, config.defects,
                                                avoid, level, config.fine_steps)
                    drawn |= avoid - seen
                    proofs += written
                    failures[level] += failed
        splits[name] = Split(name, tuple(proofs), sum(failures.values()), tuple(failures.items()))
    return splits


def ngrams(text: str, size: int = NGRAM) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[start: start + size]) for start in range(len(words) - size + 1)}


def overlap(train: Iterable[WorldProof], test: Iterable[WorldProof]) -> dict[str, float | int]:
    """Repeats of ``train`` in ``test`` (proof texts, statements, problems) and the mean 8-gram overlap of test proofs."""
    train = list(train)
    test = list(test)
    texts = {proof.proof for proof in train}
    statements = {proof.problem.statement for proof in train}
    goals = {goal_key(proof) for proof in train}
    known: set[tuple[str, ...]] = set()
    for proof in train:
        known |= ngrams(proof.proof)
    shares = []
    for proof in test:
        grams = ngrams(proof.proof)
        if grams:
            shares.append(len(grams & known) / len(grams))
    return {
        "verbatim_proofs": sum(proof.proof in texts for proof in test),
        "verbatim_statements": sum(proof.problem.statement in statements for proof in test),
        "repeated_problems": sum(goal_key(proof) in goals for proof in test),
        "mean_8gram_overlap": round(sum(shares) / len(shares), 4) if shares else 0.0,
    }
