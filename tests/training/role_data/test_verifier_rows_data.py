"""Verifier rows (a reference critique and score per proof) as training data: the cold start's verifier target,
and rated analyses for the meta-verifier under the assumption that a reference critique is reasonable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data.errors import InputError
from training.config import DataSettings
from training.role_data.answers import critique_body
from training.role_data.records import sft_records
from training.role_data.rows import REFERENCE_CRITIQUE_RATING, read_rows
from verifier.parse import VERIFIER_FORMAT, parse_verdict

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "verifier_rows.jsonl"


def test_sft_teaches_the_reference_critique_in_the_verifier_format() -> None:
    rows = read_rows(DataSettings(path=str(SAMPLE)), "sft", ("verifier",))
    assert [row.score for row in rows] == [1.0, 0.5, 0.0]
    records = sft_records(rows, ("verifier",))
    for row, record in zip(rows, records):
        answer = record["completion"][0]["content"]
        assert answer.startswith(VERIFIER_FORMAT.opener + "\n") and answer.count(VERIFIER_FORMAT.opener) == 1
        assert answer.endswith(f"{VERIFIER_FORMAT.closers[0]} \\boxed{{{row.score:g}}}")
        assert answer.count("\\boxed{") == 1
        assert parse_verdict(answer, VERIFIER_FORMAT).score == row.score
    assert "4mn + 2m + 2n + 1 is odd" in records[1]["completion"][0]["content"]
    # a critique written as a whole verifier answer is unwrapped, not nested
    assert records[2]["completion"][0]["content"].startswith(VERIFIER_FORMAT.opener + "\nChecking one value of n")


def test_configured_columns_win_over_the_verifier_row_columns(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"problem": "P", "proof": "Q", "score": 1, "critique": "Mine.",
                                "ground_truth_judgement": "Theirs.", "ground_truth_verify_score": 0}) + "\n", encoding="utf-8")
    (row,) = read_rows(DataSettings(path=str(path)), "sft", ("verifier",))
    assert (row.score, row.critique) == (1.0, "Mine.")
    renamed = DataSettings(path=str(path), score_column="ground_truth_verify_score", critique_column="ground_truth_judgement")
    (row,) = read_rows(renamed, "sft", ("verifier",))
    assert (row.score, row.critique) == (0.0, "Theirs.")


def test_reference_critiques_are_rated_analyses_assumed_reasonable() -> None:
    rows = read_rows(DataSettings(path=str(SAMPLE)), "meta-verifier")
    assert {row.rating for row in rows} == {REFERENCE_CRITIQUE_RATING} == {1.0}
    for row, score in zip(rows, (1.0, 0.5, 0.0)):
        verdict = parse_verdict(row.analysis, VERIFIER_FORMAT)
        assert verdict.score == score and row.analysis.count(VERIFIER_FORMAT.opener) == 1


def test_a_bad_verifier_row_stops_training_data_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    good = {"problem": "P", "proof": "Q", "ground_truth_judgement": "J", "ground_truth_verify_score": 1}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "proof": "R", "ground_truth_verify_score": 2}) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match="row at line 2: score 2 is not one of 0, 0.5, 1"):
        read_rows(DataSettings(path=str(path)), "sft", ("verifier",))
    with pytest.raises(InputError, match="row at line 2: score 2 is not one of 0, 0.5, 1"):
        read_rows(DataSettings(path=str(path)), "meta-verifier")


@pytest.mark.parametrize("text, body", [
    ("Step 2 is wrong.", "Step 2 is wrong."),
    ("Here is my evaluation of the solution:\nStep 2 is wrong.", "Step 2 is wrong."),
    ("Here is my evaluation of the solution:\nStep 2 is wrong.\n\nBased on my evaluation, the final overal score should be: "
     "\\boxed{0}", "Step 2 is wrong."),
    ("Based on my evaluation, the final overall score should be: fine", "Based on my evaluation, the final overall score "
     "should be: fine"),
])
def test_critique_body_unwraps_a_whole_verifier_answer(text: str, body: str) -> None:
    assert critique_body(text) == body


@pytest.mark.slow
def test_train_sft_runs_on_verifier_rows_with_a_real_model(cli, tmp_path: Path, tiny_world_model: str) -> None:
    """One real SFT step on the verifier-row sample, read as it is (no column mapping), through the chat template of a
    real checkpoint (the tiny world model: the rows are the subject, not the model)."""
    run_dir = tmp_path / "sft"
    result = cli("train", "sft", "--data", str(SAMPLE), "--run-dir", str(run_dir), "--model", tiny_world_model, "--sft-steps", "1",
                 "--set", "sft.batch_size=2", "--set", "sft.max_length=1024", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["steps"] == 1 and summary["loss"]["first"] > 0
    assert (run_dir / "COMPLETE").exists() and (run_dir / "final" / "config.json").exists()
