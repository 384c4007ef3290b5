"""World proofs as training rows for every role: the proof rows with a written critique, and meta-verifier rows.

Proof rows (verifier, generator and SFT data) are ``WorldProof.to_record()`` plus
``critique``, the analysis a verifier should write (``world_critiques.verifier_analysis``).
Meta rows put one critique of a proof under review as ``analysis`` (in the verifier's full
output format, as the meta-verifier sees it), with its reference ``rating`` and the
written ``assessment`` the meta-verifier should give. Wording is drawn from a
``random.Random`` seeded per proof, so the same world always gives the same rows.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from data.records import stable_id
from data.world.proofs import WorldProof
from training.role_data.records import verifier_answer
from training.role_data.world_critiques import meta_assessment, meta_critiques, verifier_analysis


def proof_row(proof: WorldProof, seed: int) -> dict[str, Any]:
    return {**proof.to_record(), "critique": verifier_analysis(proof, random.Random(f"{seed}/critique/{proof.id}"))}


def meta_rows(proof: WorldProof, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(f"{seed}/meta/{proof.id}")
    rows = []
    for critique in meta_critiques(proof, rng):
        analysis = verifier_answer(critique.score, critique.analysis)
        rows.append({
            "id": stable_id(proof.id, critique.kind, analysis), "problem": proof.problem.statement, "proof": proof.proof,
            "score": proof.score, "analysis": analysis, "rating": critique.rating,
            "assessment": meta_assessment(critique, proof, rng), "critique_kind": critique.kind,
            "blamed_step": critique.blamed_step, "first_bad_step": proof.first_bad_step, "proof_id": proof.id,
            "family": proof.problem.family, "template": proof.problem.template,
        })
    return rows


def world_rows(proofs: Iterable[WorldProof], seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(proof rows, meta rows) of ``proofs``; see the module docstring."""
    proof_rows, rated = [], []
    for proof in proofs:
        proof_rows.append(proof_row(proof, seed))
        rated.extend(meta_rows(proof, seed))
    return proof_rows, rated
