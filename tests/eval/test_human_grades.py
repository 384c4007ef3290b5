"""Human-grade readers on small invented files shaped like each real format, then on the real files if present."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from data.errors import InputError
from eval.human_grades import (
    HumanGrade,
    contest_max_points,
    detect_format,
    points_to_score,
    read_human_grades,
    split_opc_prompt,
)

GRADINGBENCH_COLUMNS = ["Grading ID", "Problem ID", "Problem", "Solution", "Grading guidelines", "Response", "Points", "Reward", "Problem Source"]


def gradingbench_row(grade_id: str, points: Any, response: str = "Since 2 divides 4, done.") -> dict[str, Any]:
    return {
        "Grading ID": grade_id, "Problem ID": "PB-Test-001", "Problem": "Show that 4 is even.",
        "Solution": "4 = 2 * 2.", "Grading guidelines": "(Partial)\n 1. Wrote 4 = 2k.", "Response": response,
        "Points": points, "Reward": {7: "Correct", 6: "Almost", 1: "Partial", 0: "Incorrect"}.get(points, "?"),
        "Problem Source": "Invented",
    }


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=GRADINGBENCH_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8")
    return path


def opc_prompt(problem: str, proof: str) -> str:
    return (
        "You judge a proof.\n\n### Input:\n\nA problem and a proof.\n\n### Scoring instructions\n\n"
        "End with \\boxed{correct} or \\boxed{incorrect}.\n\n"
        f"### Problem Statement:\n{problem}\n\n### Model Solution:\n{proof}"
    )


def opc_row(index: int, verdict: str, prompt: str) -> dict[str, Any]:
    return {
        "problem_id": f"TEST_2020_{index}",
        "metadata": {"competition": "test", "year": 2020},
        "solutions": [{"author": "Human", "solution": "Reference argument."}] if index % 2 else [],
        "model_id": "invented/model",
        "prompt": [{"content": prompt, "role": "user"}],
        "reward_model": {"ground_truth": verdict, "style": "rule"},
        "extra_info": {"index": index, "split": "test"},
    }


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    import pyarrow
    import pyarrow.parquet

    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), path)
    return path


def deepseek_row(problem_idx: str, rating: Any, automatic: float = 1.0) -> dict[str, Any]:
    return {
        "question": f"Invented problem {problem_idx}.",
        "problem_idx": problem_idx,
        "model_prediction": {"proof": "An invented proof.", "average_automatic_rating": automatic, "human_rating": rating},
    }


@pytest.mark.parametrize(
    ("points", "almost_half", "partial_half"),
    [(7, 1.0, 1.0), (6, 0.5, 0.5), (1, 0.0, 0.5), (0, 0.0, 0.0), (2, 0.0, 0.5)],
)
def test_seven_point_grade_mappings(points: int, almost_half: float, partial_half: float) -> None:
    assert points_to_score(points, 7, "almost-half") == almost_half
    assert points_to_score(points, 7, "partial-half") == partial_half


def test_other_contest_scales() -> None:
    assert points_to_score(8, 10) == 0.5  # Putnam's minor-flaw band
    assert points_to_score(9, 21) == 0.0
    assert points_to_score(16, 21) == 0.5
    assert points_to_score(9, 21, "partial-half") == 0.5
    with pytest.raises(ValueError):
        points_to_score(8, 7)
    with pytest.raises(ValueError):
        points_to_score(7, 7, "lenient")


def test_contest_max_points_from_problem_ids() -> None:
    assert [contest_max_points(name) for name in ("IMO2025-6", "CMO2024-3", "Putnam2024-B5", "PB-Basic-007")] == [7, 21, 10, 7]
    assert contest_max_points("USAMO2025-1") is None


def test_gradingbench_csv(tmp_path: Path) -> None:
    rows = [gradingbench_row("GB-1", 7), gradingbench_row("GB-2", 6), gradingbench_row("GB-3", 1), gradingbench_row("GB-4", 0)]
    path = write_csv(tmp_path / "grades.csv", rows)
    assert detect_format(path) == "imo-gradingbench"
    strict = read_human_grades(path)
    assert [grade.human_score for grade in strict] == [1.0, 0.5, 0.0, 0.0]
    assert [grade.raw_grade for grade in strict] == ["7", "6", "1", "0"]
    assert [grade.human_score for grade in read_human_grades(path, mapping="partial-half")] == [1.0, 0.5, 0.5, 0.0]
    first = strict[0]
    assert (first.id, first.problem_id, first.reference_solution, first.source) == ("GB-1", "PB-Test-001", "4 = 2 * 2.", "imo-gradingbench")
    assert first.source_fields["Reward"] == "Correct"
    assert first.to_proof_item().human_score == 1.0


def test_gradingbench_bad_row_names_its_physical_line(tmp_path: Path) -> None:
    # The first row's guidelines span two lines and its response three, so it covers
    # lines 2-5 and the second row starts on line 6.
    rows = [gradingbench_row("GB-1", 7, "Line one.\nLine two.\nLine three."), gradingbench_row("GB-2", "seven")]
    path = write_csv(tmp_path / "grades.csv", rows)
    with pytest.raises(InputError, match=r"grades\.csv line 6: Points 'seven' is not a number"):
        read_human_grades(path)
    write_csv(path, [gradingbench_row("GB-1", 9)])
    with pytest.raises(InputError, match=r"line 2: grade 9 is outside 0\.\.7"):
        read_human_grades(path)
    write_csv(path, [gradingbench_row("GB-1", 7, response="")])
    with pytest.raises(InputError, match=r"line 2: field 'Response' is empty"):
        read_human_grades(path)


def test_split_opc_prompt_keeps_markers_inside_the_proof() -> None:
    proof = "Step 1.\n### Model Solution:\nquoted marker\n### Problem Statement: also quoted"
    assert split_opc_prompt(opc_prompt("Prove that 1 < 2.", proof)) == ("Prove that 1 < 2.", proof)
    with pytest.raises(ValueError, match="Model Solution"):
        split_opc_prompt("### Problem Statement:\nOnly a problem.")
    with pytest.raises(ValueError, match="empty proof"):
        split_opc_prompt(opc_prompt("Prove that 1 < 2.", "   "))


def test_open_proof_corpus_parquet(tmp_path: Path) -> None:
    rows = [
        opc_row(0, "correct", opc_prompt("Prove that 1 < 2.", "Add 1 to both sides of 0 < 1.")),
        opc_row(1, "incorrect", opc_prompt("Prove that 3 is odd.", "3 = 2 + 1, and 2 is even.")),
    ]
    path = write_parquet(tmp_path / "opc.parquet", rows)
    assert detect_format(path) == "open-proof-corpus"
    grades = read_human_grades(path)
    assert [(grade.id, grade.human_score, grade.raw_grade) for grade in grades] == [("opc-0", 1.0, "correct"), ("opc-1", 0.0, "incorrect")]
    assert grades[0].problem == "Prove that 1 < 2." and grades[0].proof == "Add 1 to both sides of 0 < 1."
    assert (grades[0].model, grades[0].problem_id, grades[0].reference_solution) == ("invented/model", "TEST_2020_0", "")
    assert grades[1].reference_solution == "Reference argument."


def test_open_proof_corpus_bad_rows_name_their_row(tmp_path: Path) -> None:
    rows = [opc_row(0, "correct", opc_prompt("Prove that 1 < 2.", "Because.")), opc_row(1, "maybe", opc_prompt("P.", "Q."))]
    with pytest.raises(InputError, match=r"opc\.parquet row 2: ground truth 'maybe'"):
        read_human_grades(write_parquet(tmp_path / "opc.parquet", rows))
    rows = [opc_row(0, "correct", "A prompt without the problem marker.")]
    with pytest.raises(InputError, match=r"row 1: no '### Problem Statement:'"):
        read_human_grades(write_parquet(tmp_path / "opc.parquet", rows))


def test_deepseek_outputs_per_contest_scales(tmp_path: Path) -> None:
    rows = [deepseek_row("IMO2030-1", 7), deepseek_row("CMO2030-2", 9), deepseek_row("Putnam2030-A1", 8, 0.5), deepseek_row("PB-Basic-001", 6)]
    path = write_jsonl(tmp_path / "outputs.jsonl", rows)
    assert detect_format(path) == "deepseek-math-v2"
    grades = read_human_grades(path)
    assert [grade.human_score for grade in grades] == [1.0, 0.0, 0.5, 0.5]
    assert [grade.raw_grade for grade in grades] == ["7/7", "9/21", "8/10", "6/7"]
    assert grades[2].source_fields == {"max_points": 10, "average_automatic_rating": 0.5}
    assert [grade.human_score for grade in read_human_grades(path, mapping="partial-half")] == [1.0, 0.5, 0.5, 0.5]


def test_deepseek_unknown_contest_and_bad_rating(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "outputs.jsonl", [deepseek_row("IMO2030-1", 7), deepseek_row("Mystery-1", 3)])
    with pytest.raises(InputError, match=r"line 2: no known point scale for problem 'Mystery-1'"):
        read_human_grades(path)
    write_jsonl(path, [deepseek_row("IMO2030-1", 8)])
    with pytest.raises(InputError, match=r"line 1: grade 8 is outside 0\.\.7"):
        read_human_grades(path)


def test_generic_jsonl(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "problem": "Show 2 + 2 = 4.", "proof": "Count.", "score": 1, "grader": "me"},
        "",
        {"problem": "Show 1 + 1 = 2.", "proof": "Peano.", "score": 0.5},
    ]
    path = write_jsonl(tmp_path / "grades.jsonl", rows)
    assert detect_format(path) == "jsonl"
    grades = read_human_grades(path)
    assert [(grade.human_score, grade.source) for grade in grades] == [(1.0, "jsonl"), (0.5, "jsonl")]
    assert grades[0].id == "a" and grades[0].source_fields == {"grader": "me"}
    assert len(grades[1].id) == 16  # content hash


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"problem": "P.", "proof": "Q.", "score": 0.7}, r"line 2: score 0\.7 is not one of 0, 0\.5, 1"),
        ({"problem": "P.", "proof": "Q."}, r"line 2: missing field 'score'"),
        ({"problem": "P.", "proof": None, "score": 1}, r"line 2: field 'proof' is empty"),
        ("{not json", r"line 2: not valid JSON"),
        ({"id": "a", "problem": "P.", "proof": "Q.", "score": 1}, r"line 2: duplicate id 'a'"),
    ],
)
def test_generic_jsonl_bad_rows(tmp_path: Path, line: Any, message: str) -> None:
    path = write_jsonl(tmp_path / "grades.jsonl", [{"id": "a", "problem": "P.", "proof": "Q.", "score": 0}, line])
    with pytest.raises(InputError, match=message):
        read_human_grades(path, format_name="jsonl")


def test_folder_reads_every_file_in_name_order(tmp_path: Path) -> None:
    write_csv(tmp_path / "b.csv", [gradingbench_row("GB-2", 0)])
    write_csv(tmp_path / "a.csv", [gradingbench_row("GB-1", 7)])
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")
    assert [grade.id for grade in read_human_grades(tmp_path)] == ["GB-1", "GB-2"]
    write_csv(tmp_path / "c.csv", [gradingbench_row("GB-1", 6)])
    with pytest.raises(InputError, match=r"c\.csv line 2: duplicate id 'GB-1' \(first seen in .*a\.csv line 2\)"):
        read_human_grades(tmp_path)


def test_unclear_format_and_bad_arguments(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "other.jsonl", [{"question": "Q", "answer": "A"}])
    with pytest.raises(InputError, match="cannot tell which human-grade format"):
        read_human_grades(path)
    with pytest.raises(InputError, match="unknown human-grade format"):
        read_human_grades(path, format_name="excel")
    with pytest.raises(InputError, match="unknown grade mapping"):
        read_human_grades(path, mapping="generous")
    with pytest.raises(InputError, match="not found"):
        read_human_grades(tmp_path / "missing.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no .csv, .jsonl or .parquet"):
        read_human_grades(tmp_path / "empty")


def test_human_grade_checks_its_invariants() -> None:
    with pytest.raises(ValueError):
        HumanGrade("x", "P.", "Q.", 0.3, "0.3", "jsonl")
    with pytest.raises(ValueError):
        HumanGrade("x", "P.", " ", 1.0, "1", "jsonl")


# Real data written by others (../shared/datasets); skipped in a clone that does not have it.
DATASETS = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


def real(relative: str) -> Path:
    path = DATASETS / relative
    if not path.exists():
        pytest.skip(f"{path} is not here")
    return path


def test_real_imo_gradingbench_subset() -> None:
    grades = read_human_grades(real("imo-gradingbench-subset"))
    assert len(grades) == 300 and len({grade.problem_id for grade in grades}) == 30
    assert Counter(grade.raw_grade for grade in grades) == {"7": 105, "0": 105, "1": 73, "6": 17}
    assert Counter(grade.human_score for grade in grades) == {1.0: 105, 0.5: 17, 0.0: 178}


def test_real_open_proof_corpus() -> None:
    grades = read_human_grades(real("open-proof-corpus/data/train/discrete/long/test.parquet"))
    assert len(grades) == 434 and len({grade.problem_id for grade in grades}) == 98
    assert Counter(grade.human_score for grade in grades) == {0.0: 273, 1.0: 161}
    assert not any("### Model Solution:" in grade.problem for grade in grades)
    # 16 "proofs" are refusals or one-line outlines, all judged incorrect.
    short = [grade for grade in grades if len(grade.proof) < 200]
    assert len(short) == 16 and all(grade.human_score == 0 for grade in short)


def test_real_deepseek_math_v2_outputs() -> None:
    grades = read_human_grades(real("deepseek-math-v2/outputs"))
    assert len(grades) == 84
    assert Counter(grade.human_score for grade in grades) == {1.0: 65, 0.5: 4, 0.0: 15}
    by_id = {grade.id: grade for grade in grades}
    assert by_id["CMO2024-6"].raw_grade == "9/21" and by_id["Putnam2024-B5"].human_score == 0.5
    assert by_id["IMO2025-6"].source_fields["average_automatic_rating"] == 1.0  # a known verifier false positive


# verifier rows (problem, proof, ground_truth_judgement, ground_truth_verify_score)
SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"


@pytest.mark.parametrize("name", ["verifier_rows.jsonl", "verifier_rows.csv"])
def test_verifier_rows_are_detected_and_their_score_is_the_grade(name: str) -> None:
    path = SAMPLES / name
    assert detect_format(path) == "verifier-rows"
    grades = read_human_grades(path)
    assert {grade.source for grade in grades} == {"verifier-rows"}
    assert [grade.human_score for grade in grades] == ([1.0, 0.5, 0.0] if name.endswith(".jsonl") else [1.0, 0.0])
    assert grades[0].source_fields["reference_critique"].startswith(("The proof writes", "Both integers"))


def test_verifier_rows_from_parquet_and_with_renamed_columns(tmp_path: Path) -> None:
    import pyarrow as arrow
    import pyarrow.parquet as parquet

    from data.row_checks import renamed
    from data.verifier_rows import VerifierRowColumns

    rows = [{"question": "Prove P.", "proof": "Q.", "critique": "Fine.", "verdict": 1.0}]
    parquet.write_table(arrow.Table.from_pylist(rows), tmp_path / "rows.parquet")
    columns = renamed(VerifierRowColumns(), ["problem=question", "judgement=critique", "score=verdict"])
    (grade,) = read_human_grades(tmp_path / "rows.parquet", columns=columns)
    assert (grade.problem, grade.human_score, grade.source) == ("Prove P.", 1.0, "verifier-rows")
    with pytest.raises(InputError, match="cannot tell which human-grade format"):
        read_human_grades(tmp_path / "rows.parquet")


def test_a_file_with_both_score_columns_is_ambiguous_until_the_format_is_given(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "both.jsonl", [{"problem": "P", "proof": "Q", "score": 1, "ground_truth_judgement": "J",
                                                  "ground_truth_verify_score": 0}])
    with pytest.raises(InputError, match="pass --format verifier-rows or jsonl"):
        read_human_grades(path)
    assert read_human_grades(path, "verifier-rows")[0].human_score == 0.0
    assert read_human_grades(path, "jsonl")[0].human_score == 1.0


def test_a_bad_verifier_row_names_its_line(tmp_path: Path) -> None:
    good = {"problem": "P", "proof": "Q", "ground_truth_judgement": "J", "ground_truth_verify_score": 1}
    path = write_jsonl(tmp_path / "rows.jsonl", [good, {**good, "id": "x", "ground_truth_verify_score": 0.3}])
    with pytest.raises(InputError, match=r"rows.jsonl line 2: ground_truth_verify_score 0.3 is not one of 0, 0.5, 1"):
        read_human_grades(path)
