"""data.world.splits: no held-out problem, statement or proof text crosses into training."""

from __future__ import annotations

from data.world.config import WorldConfig
from data.world.families import templates
from data.world.splits import goal_key, make_splits, overlap, training_templates


def test_splits_are_disjoint_and_the_overlap_is_measured() -> None:
    config = WorldConfig(problems_per_template=2, test_problems_per_template=2)
    splits = make_splits(config)
    train, test_in, test_out = (splits[name].proofs for name in ("train", "test_in", "test_out"))
    assert {proof.problem.family for proof in test_out} == {"induction"}
    assert "induction" not in {proof.problem.family for proof in train}
    held_templates = {(family, name) for family in ("identity", "inequality", "divisibility", "equation")
                      for name in templates(family)[len(training_templates(family, 1)):]}
    assert held_templates and not held_templates & {(proof.problem.family, proof.problem.template) for proof in train}
    assert held_templates <= {(proof.problem.family, proof.problem.template) for proof in test_in}
    train_goals = {goal_key(proof) for proof in train}
    for test in (test_in, test_out):
        assert not train_goals & {goal_key(proof) for proof in test}
        report = overlap(train, test)
        assert report["verbatim_proofs"] == report["verbatim_statements"] == report["repeated_problems"] == 0
        assert 0.0 <= report["mean_8gram_overlap"] < 1.0
    assert overlap(train, test_out)["mean_8gram_overlap"] < overlap(train, test_in)["mean_8gram_overlap"]
    again = make_splits(config)
    assert [proof.id for proof in again["test_in"].proofs] == [proof.id for proof in test_in]


def test_two_defects_that_write_the_same_proof_give_one_proof() -> None:
    """Miswriting a coefficient and a false conclusion can produce the same text for some draws (13 of 56,023
    training proofs of configs/world_model.toml's world did): the proof is kept once, so ids stay unique."""
    import random

    from data.world.config import WorldConfig
    from data.world.splits import proofs_of, stream

    defects = WorldConfig().defects
    # the first such draw of this template's training stream is its 31st problem (found with the pre-fix loop)
    written, _ = proofs_of("identity", "square_difference", 32, random.Random(stream(0, "train", "identity", "square_difference",
                                                                                  level=2)), defects, set(), level=2)
    ids = [proof.id for proof in written]
    assert len(ids) == len(set(ids))
    assert {proof.defect for proof in written} >= {None, "wrong_coefficient", "false_conclusion"}
