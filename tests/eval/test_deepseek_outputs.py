"""The DeepSeekMath-V2 output writer: the release's keys in its order, ratings, and a round trip through its reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.benchmark_problems import BenchmarkProblem, read_benchmark_problems
from data.errors import InputError
from eval.deepseek_outputs import FinalRecord, human_rating, output_row, read_outputs, write_outputs
from eval.human_grades import read_human_grades

SAMPLE = Path(__file__).with_name("deepseek_math_v2_inputs.json")
PROOFBENCH = BenchmarkProblem("PB-Basic-001", "Show that 1 + 1 = 2.", reference_solution="Count.", guidelines="(Partial) x",
                              short_answer="2", level="pre-IMO", category="Algebra", source="Set A")


def test_rows_keep_the_release_keys_in_its_order() -> None:
    contest = read_benchmark_problems(SAMPLE)[0]
    row = output_row(FinalRecord(contest, "Odd times odd is odd.", 0.75))
    assert list(row) == ["question", "problem_idx", "model_prediction"]
    assert row["model_prediction"] == {"proof": "Odd times odd is odd.", "average_automatic_rating": 0.75, "human_rating": None}
    row = output_row(FinalRecord(PROOFBENCH, "1 + 1 = 2.", None, 6))
    assert list(row) == ["solution", "grading guidelines", "level", "source", "question", "problem_idx", "type", "model_prediction"]
    assert (row["type"], row["solution"], row["model_prediction"]["human_rating"]) == ("Algebra", "Count.", 6)


@pytest.mark.parametrize("problem_idx, points, rating", [("PB-Basic-001", 7, 7), ("CMO2024-3", 6, 18), ("Putnam2024-B5", 7, 10),
                                                         ("Putnam2024-A1", 1, 1.43), ("TOY-1", 6, 6), ("IMO2025-1", None, None)])
def test_grader_points_go_to_the_contest_scale(problem_idx: str, points: int | None, rating: float | None) -> None:
    assert human_rating(problem_idx, points) == rating


def test_bad_records_are_refused() -> None:
    with pytest.raises(ValueError, match="verifier mean"):
        FinalRecord(PROOFBENCH, "p", 1.5)
    with pytest.raises(ValueError, match="grader points"):
        FinalRecord(PROOFBENCH, "p", 1.0, 8)


def test_what_we_write_reads_back_through_the_release_reader(tmp_path: Path) -> None:
    cmo = BenchmarkProblem("CMO2024-1", "Prove the inequality.")
    records = [FinalRecord(PROOFBENCH, "1 + 1 = 2 by counting.", 1.0, 7), FinalRecord(cmo, "By AM-GM.", 0.5, 6)]
    path = write_outputs(tmp_path / "deepseek_outputs.jsonl", records)
    assert [json.loads(line)["problem_idx"] for line in path.read_text(encoding="utf-8").splitlines()] == ["PB-Basic-001", "CMO2024-1"]
    grades = read_human_grades(path)  # format detected as deepseek-math-v2
    assert [(grade.id, grade.proof, grade.human_score, grade.raw_grade) for grade in grades] == [
        ("PB-Basic-001", "1 + 1 = 2 by counting.", 1.0, "7/7"), ("CMO2024-1", "By AM-GM.", 0.5, "18/21")]
    assert grades[0].source_fields["average_automatic_rating"] == 1.0 and grades[0].reference_solution == "Count."


def test_what_we_write_reads_back_whole_with_null_ratings(tmp_path: Path) -> None:
    contest = read_benchmark_problems(SAMPLE)[0]
    records = [FinalRecord(contest, "Odd times odd is odd.", None), FinalRecord(PROOFBENCH, "1 + 1 = 2.", 0.25, 6)]
    rows = read_outputs(write_outputs(tmp_path / "out.jsonl", records))
    assert [(row.problem, row.proof, row.average_automatic_rating, row.human_rating) for row in rows] == [
        (BenchmarkProblem(contest.id, contest.problem), "Odd times odd is odd.", None, None),
        (BenchmarkProblem("PB-Basic-001", "Show that 1 + 1 = 2.", reference_solution="Count.", guidelines="(Partial) x",
                          level="pre-IMO", category="Algebra", source="Set A"), "1 + 1 = 2.", 0.25, 6)]


@pytest.mark.parametrize("line, reason", [
    ({"question": "Q", "problem_idx": "A-1"}, "model_prediction"),
    ({"question": "Q", "problem_idx": "A-1", "model_prediction": {"proof": " "}}, "empty field 'proof'"),
    ({"question": "Q", "model_prediction": {"proof": "p"}}, "missing field 'problem_idx'"),
    ({"question": "Q", "problem_idx": "A-1", "model_prediction": {"proof": "p", "average_automatic_rating": 2}}, "not in [0, 1]"),
    ({"question": "Q", "problem_idx": "A-1", "model_prediction": {"proof": "p", "human_rating": "seven"}}, "not a number"),
])
def test_a_bad_output_line_is_refused_with_its_line(tmp_path: Path, line: dict, reason: str) -> None:
    good = {"question": "Q", "problem_idx": "A-0", "model_prediction": {"proof": "p", "human_rating": None}}
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 2") as error:
        read_outputs(path)
    assert reason in str(error.value)
