"""World critiques: analyses that name the flawed step, critiques with meta ratings, rows every role trains on."""

from __future__ import annotations

import random
import re

import pytest

from data.world.blame import blamed_step
from data.world.proofs import world_proofs
from training.role_data.records import sft_records
from training.role_data.rows import TrainingRow
from training.role_data.world_critiques import meta_critiques, verifier_analysis, worked_analysis, worked_meta_critiques
from training.role_data.world_rows import world_rows
from meta_verifier.meta_verify import META_FORMAT
from verifier.parse import VERIFIER_FORMAT, parse_verdict

PROOFS = list(world_proofs(seed=11, problems_per_template=2))


def test_every_analysis_blames_exactly_the_checker_s_first_bad_step() -> None:
    for index, proof in enumerate(PROOFS):
        analysis = verifier_analysis(proof, random.Random(index))
        assert blamed_step(analysis) == proof.first_bad_step, (proof.proof, analysis)
        if proof.first_bad_step is not None:
            assert f"Step {proof.first_bad_step}" in analysis


def test_a_worked_analysis_shows_its_work_before_each_verdict_and_blames_the_first_bad_step() -> None:
    for proof in PROOFS:
        analysis = worked_analysis(proof)
        assert blamed_step(analysis) == proof.first_bad_step, (proof.proof, analysis)
        assert worked_analysis(proof) == analysis
        for sentence in analysis.split(". "):  # a verdict comes after the step is restated and worked
            if sentence.startswith(("They agree", "They differ")):
                assert "Expanded, the left side is" in analysis[: analysis.index(sentence)]
    flawed = next(proof for proof in PROOFS if proof.defect == "wrong_expansion")
    assert f"They differ, so Step {flawed.first_bad_step} is wrong." in worked_analysis(flawed)


@pytest.mark.parametrize("write", [meta_critiques, worked_meta_critiques], ids=["varied", "worked"])
def test_meta_critiques_follow_the_rubric(write) -> None:
    kinds = set()
    for index, proof in enumerate(PROOFS):
        for critique in write(proof, random.Random(index)):
            kinds.add(critique.kind)
            assert blamed_step(critique.analysis) == critique.blamed_step
            if critique.kind == "true":
                assert (critique.rating, critique.score, critique.blamed_step) == (1.0, proof.score, proof.first_bad_step)
            elif critique.kind == "invented_defect":  # blames a step that is fine: every reported defect is unreasonable
                assert critique.rating == 0.0 and critique.score == 0.0
                assert proof.first_bad_step is None or critique.blamed_step < proof.first_bad_step
            else:  # the right findings, a score that does not match them
                assert critique.kind == "wrong_score" and critique.rating == 0.5 and critique.score != proof.score
    assert kinds == {"true", "invented_defect", "wrong_score"}


def test_rows_teach_the_written_critique_in_every_role_format() -> None:
    proof_rows, meta = world_rows(PROOFS[:20], seed=0)
    assert proof_rows == world_rows(PROOFS[:20], seed=0)[0]  # reproducible
    row = next(item for item in proof_rows if item["score"] == 0.0)
    training_row = TrainingRow(row["id"], row["problem"], row["proof"], row["score"], critique=row["critique"])
    verifier, generator = sft_records([training_row], ("verifier", "generator"))
    for record in (verifier, generator):
        answer = record["completion"][0]["content"]
        assert row["critique"] in answer
        verdict = parse_verdict(answer.split("## Self Evaluation")[-1], VERIFIER_FORMAT)
        assert verdict.score == row["score"]
    rated = meta[0]
    assert parse_verdict(rated["analysis"], VERIFIER_FORMAT).score in (0.0, 0.5, 1.0)
    meta_row = TrainingRow(rated["id"], rated["problem"], rated["proof"], rated["score"], rated["analysis"],
                           rated["rating"], assessment=rated["assessment"])
    (record,) = sft_records([meta_row], ("meta-verifier",))
    answer = record["completion"][0]["content"]
    assert rated["assessment"] in answer and parse_verdict(answer, META_FORMAT).score == rated["rating"]


def test_a_misworked_analysis_slips_now_and_then_and_its_verdict_always_follows_the_sides_it_wrote() -> None:
    from data.world.work import worked_steps
    from training.role_data.world_critiques import misworked_analysis

    rng = random.Random(0)
    assert all(misworked_analysis(proof, rng, 0.0) == (worked_analysis(proof), proof.score) for proof in PROOFS)
    outcomes = set()
    for proof in PROOFS:
        analysis, score = misworked_analysis(proof, rng, 0.5)
        assert all(step.verdict_follows for step in worked_steps(analysis, proof.proof)), analysis
        if analysis == worked_analysis(proof):
            assert score == proof.score
            continue
        blamed = blamed_step(analysis)
        if score == 0.0:  # a correct step written with a wrong side: blamed, before the true first bad step
            assert blamed is not None and (proof.first_bad_step is None or blamed < proof.first_bad_step)
            assert not next(step for step in worked_steps(analysis, proof.proof) if step.step == blamed).expansions_right
        else:  # the proof's last step, false, written with agreeing sides: passed
            assert score == 1.0 and blamed is None and proof.first_bad_step == max(
                step.step for step in worked_steps(analysis, proof.proof))
        outcomes.add(score)
    assert outcomes == {0.0, 1.0}  # both slips occur


def test_the_difference_form_writes_left_minus_right_from_the_sides_before_each_verdict() -> None:
    from training.role_data.world_critiques import misworked_analysis

    flawed = next(proof for proof in PROOFS if proof.defect == "wrong_expansion")
    for proof in PROOFS:
        analysis = worked_analysis(proof, difference=True)
        assert blamed_step(analysis) == proof.first_bad_step, (proof.proof, analysis)
        assert analysis.count("They agree") == analysis.count("left minus right is 0. They agree")
        if proof is flawed:
            assert "They differ" in analysis and "left minus right is 0. They differ" not in analysis
        # the same analysis with the difference taken out is the worked form's, word for word
        assert re.sub(r", and left minus right is [^.]+\.", ".", analysis) == worked_analysis(proof)
    rng = random.Random(0)
    slipped = [misworked_analysis(proof, rng, 0.5, difference=True) for proof in PROOFS]
    assert any(score != proof.score for (_, score), proof in zip(slipped, PROOFS, strict=True))
    assert all(", and left minus right is" in analysis for analysis, _ in slipped if "Expanded," in analysis)
