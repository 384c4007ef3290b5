"""training.loop.schedule.rejection_set: what rejection fine-tuning imitates, by the labels."""

from __future__ import annotations

from data.records import stable_id
from training.loop.schedule import rejection_set


def draft(proof: str, self_score: float | None, verifier_score: float | None = None) -> dict:
    return {"problem": "Prove P.", "proof": proof, "completion": f"## Solution\n{proof}", "self_score": self_score,
            "verifier_score": verifier_score}


def labeled(proof: str, label: float | None, *analyses: tuple[float | None, str | None]) -> dict:
    return {"id": stable_id("Prove P.", proof), "problem": "Prove P.", "proof": proof, "label": label,
            "analyses": [{"score": score, "critique": critique, "analysis": f"{proof}-{score}-{critique}"}
                         for score, critique in analyses]}


def completions(records: list[dict]) -> list[str]:
    return [record["completion"][0]["content"] for record in records]


def test_with_labels_only_proofs_labelled_1_with_an_agreeing_self_score_and_confirmed_analyses() -> None:
    drafts = [draft("good", 1.0, 0.0), draft("good-but-doubted", 0.5, 1.0), draft("flawed", 1.0, 1.0), draft("unsure", 1.0)]
    labels = [
        labeled("good", 1.0, (1.0, None), (0.0, "refuted")),
        labeled("good-but-doubted", 1.0, (1.0, None)),
        labeled("flawed", 0.0, (0.0, "confirmed"), (0.0, "unknown"), (0.5, "confirmed"), (1.0, None)),
        labeled("unsure", None, (0.0, "confirmed")),
    ]
    kept = completions(rejection_set(drafts, labels, 1.0, None))
    # the single verification's score no longer decides (it scored "good" 0 and "flawed" 1)
    assert kept == ["## Solution\ngood", "flawed-0.0-confirmed"]


def test_without_labels_the_one_verification_must_agree_with_the_self_score() -> None:
    drafts = [draft("a", 1.0, 1.0), draft("b", 0.5, 1.0), draft("c", 1.0, 0.5), draft("d", None, None)]
    assert completions(rejection_set(drafts, None, 1.0, None)) == ["## Solution\na"]
