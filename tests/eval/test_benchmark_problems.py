"""Reading benchmark problems: the IMO-ProofBench CSV and the JSONL format (fields, aliases,
selection, order, the errors that name a bad row), on small hand-written files, plus a check
of the real IMO-ProofBench file when the shared datasets are present."""

from __future__ import annotations

import hashlib
import re
import json
from pathlib import Path

import pytest

from data.errors import InputError
from eval.benchmark_problems import BenchmarkProblem, read_benchmark_problems

HEADER = "Problem ID,Problem,Solution,Grading guidelines,Category,Level,Short Answer,Source\n"
# Physical lines: header 1, PB-Basic-001 lines 2-3 (quoted two-line cell), PB-Basic-002 4, PB-Advanced-001 5.
ROWS = (
    'PB-Basic-001,Show that 1 + 1 = 2.,"First line.\nSecond line, with a comma.",(Partial) Any start.,Algebra,pre-IMO,,Set A\n'
    'PB-Basic-002,Find all n with n^2 = 4.,n = 2 and n = -2.,(Almost) Misses -2.,Number theory,IMO-easy,"$\\{-2, 2\\}$",Set B\n'
    "PB-Advanced-001,Prove the triangle claim.,By symmetry.,None.,Geometry,IMO-hard,,Set C\n"
)
REAL_FILE = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "imo-bench" / "proofbench_v2.csv"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def write_jsonl(tmp_path: Path, rows: list[object]) -> Path:
    return write(tmp_path, "problems.jsonl", "".join(json.dumps(row) + "\n" for row in rows))


def test_proofbench_csv_fields_and_order(tmp_path: Path) -> None:
    problems = read_benchmark_problems(write(tmp_path, "bench.csv", HEADER + ROWS))
    assert [problem.id for problem in problems] == ["PB-Basic-001", "PB-Basic-002", "PB-Advanced-001"]
    assert problems[0] == BenchmarkProblem(
        id="PB-Basic-001", problem="Show that 1 + 1 = 2.", reference_solution="First line.\nSecond line, with a comma.",
        guidelines="(Partial) Any start.", short_answer="", level="pre-IMO", category="Algebra", source="Set A",
    )
    assert problems[1].short_answer == "$\\{-2, 2\\}$"
    assert problems[1].category == "Number theory"
    assert problems[2].level == "IMO-hard"
    assert problems[2].short_answer == ""


def test_select_keeps_matching_prefixes_in_file_order(tmp_path: Path) -> None:
    path = write(tmp_path, "bench.csv", HEADER + ROWS)
    assert [p.id for p in read_benchmark_problems(path, select=("PB-Basic",))] == ["PB-Basic-001", "PB-Basic-002"]
    assert [p.id for p in read_benchmark_problems(path, select=("PB-Advanced", "PB-Basic-002"))] == [
        "PB-Basic-002", "PB-Advanced-001"]
    assert read_benchmark_problems(path, select=("XX",)) == []


def test_duplicate_id_is_refused_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bench.csv", HEADER + ROWS + "PB-Basic-002,Again.,,,,,,\n")
    with pytest.raises(InputError, match=r"line 6: duplicate id 'PB-Basic-002'"):
        read_benchmark_problems(path)


def test_duplicate_is_refused_even_when_not_selected(tmp_path: Path) -> None:
    path = write(tmp_path, "bench.csv", HEADER + ROWS + "PB-Advanced-001,Again.,,,,,,\n")
    with pytest.raises(InputError, match="line 6"):
        read_benchmark_problems(path, select=("PB-Basic",))


def test_missing_problem_column(tmp_path: Path) -> None:
    path = write(tmp_path, "bench.csv", "Problem ID,Solution\nPB-Basic-001,Done.\n")
    with pytest.raises(InputError, match=r"line 2: missing column 'Problem'"):
        read_benchmark_problems(path)


def test_empty_problem_text(tmp_path: Path) -> None:
    path = write(tmp_path, "bench.csv", HEADER + ROWS + "PB-Basic-003,  ,Sol.,,,,,\n")
    with pytest.raises(InputError, match=r"line 6: problem PB-Basic-003 has an empty statement"):
        read_benchmark_problems(path)


def test_empty_id(tmp_path: Path) -> None:
    path = write(tmp_path, "bench.csv", HEADER + ",A problem.,,,,,,\n")
    with pytest.raises(InputError, match=r"line 2: a problem needs a non-empty id"):
        read_benchmark_problems(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="benchmark file not found"):
        read_benchmark_problems(tmp_path / "absent.csv")


def test_unknown_suffix_and_unknown_format(tmp_path: Path) -> None:
    path = write(tmp_path, "bench.txt", json.dumps({"problem": "P"}) + "\n")
    with pytest.raises(InputError, match="cannot tell the format"):
        read_benchmark_problems(path)
    with pytest.raises(InputError, match="unknown benchmark format 'xml'"):
        read_benchmark_problems(path, format_name="xml")
    assert [p.problem for p in read_benchmark_problems(path, format_name="jsonl")] == ["P"]


def test_jsonl_aliases_and_fields(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path, [
        {"id": "j1", "problem": "P1", "solution": "S1", "guidelines": "G1", "answer": "3",
         "level": "easy", "category": "Algebra", "source": "mine"},
        {"id": "j2", "problem": "P2", "reference_solution": "R2", "grading_guidelines": "GG2", "short_answer": 7},
        {"id": "j3", "problem": "P3", "reference_solution": "R3", "solution": "S3", "answer": ""},
        {"id": "j4", "problem": "P4", "reference_solution": " ", "solution": "S4"},
    ])
    first, second, third, fourth = read_benchmark_problems(path)
    assert first == BenchmarkProblem("j1", "P1", "S1", "G1", "3", "easy", "Algebra", "mine")
    assert (second.reference_solution, second.guidelines, second.short_answer) == ("R2", "GG2", "7")
    assert (second.level, second.category, second.source) == ("", "", "")
    assert third.reference_solution == "R3"  # the canonical name wins over its alias
    assert third.short_answer == ""
    assert fourth.reference_solution == "S4"  # a blank canonical value falls back to the alias


def test_jsonl_row_without_id_gets_a_stable_hash(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path, [{"problem": "Prove that 2 > 1."}, {"problem": "Another one."}])
    first = read_benchmark_problems(path)
    again = read_benchmark_problems(path)
    assert [p.id for p in first] == [p.id for p in again]
    assert first[0].id == hashlib.sha256("Prove that 2 > 1.".encode("utf-8")).hexdigest()[:16]
    assert first[0].id != first[1].id


def test_jsonl_same_problem_twice_without_id_is_a_duplicate(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path, [{"problem": "Same."}, {"problem": "Same."}])
    with pytest.raises(InputError, match="line 2: duplicate id"):
        read_benchmark_problems(path)


@pytest.mark.parametrize(
    "second_line, message",
    [
        pytest.param("[1, 2]", "line 2: not a JSON object", id="array"),
        pytest.param("{not json", "line 2: not valid JSON", id="broken-json"),
        pytest.param(json.dumps({"id": "b", "problem": "P", "level": ["hard"]}), "line 2: 'level' must be text, got list",
                     id="list-field"),
        pytest.param(json.dumps({"id": "b", "problem": "P", "answer": True}), "line 2: 'answer' must be text, got bool",
                     id="bool-field"),
        pytest.param(json.dumps({"id": "b", "statement": "P"}), "line 2: missing field 'problem'", id="no-problem"),
    ],
)
def test_jsonl_bad_rows_name_their_line(tmp_path: Path, second_line: str, message: str) -> None:
    path = write(tmp_path, "problems.jsonl", json.dumps({"id": "a", "problem": "Fine."}) + "\n" + second_line + "\n")
    with pytest.raises(InputError, match=message):
        read_benchmark_problems(path)


def test_real_proofbench_file() -> None:
    if not REAL_FILE.is_file():
        pytest.skip(f"{REAL_FILE} is not present")
    problems = read_benchmark_problems(REAL_FILE)
    assert len(problems) == 60
    basic = read_benchmark_problems(REAL_FILE, select=("PB-Basic",))
    assert len(basic) == 30
    assert all(problem.id.startswith("PB-Basic") for problem in basic)
    assert all(problem.reference_solution and problem.guidelines for problem in problems)
    assert {problem.level for problem in problems} <= {"pre-IMO", "IMO-easy", "IMO-medium", "IMO-hard"}


def test_a_world_problem_carries_its_goal_and_a_bad_goal_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "world.jsonl"
    good = {"id": "w1", "problem": "Prove that (a + b)^2 = a^2 + 2ab + b^2.", "goal": ["(a + b)^2 = a^2 + 2ab + b^2"]}
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert read_benchmark_problems(path)[0].goal == ("(a + b)^2 = a^2 + 2ab + b^2",)
    for goal in ("(a + b)^2 = a^2 + 2ab + b^2", ["the square is nice"]):
        path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "w2", "goal": goal}) + "\n", encoding="utf-8")
        with pytest.raises(InputError, match="line 2"):
            read_benchmark_problems(path)


DEEPSEEK_SAMPLE = Path(__file__).with_name("deepseek_math_v2_inputs.json")
DEEPSEEK_INPUTS = REAL_FILE.parents[1] / "deepseek-math-v2" / "inputs"


def test_deepseek_inputs_are_detected_and_read_with_problem_idx_as_id() -> None:
    problems = read_benchmark_problems(DEEPSEEK_SAMPLE)
    assert [problem.id for problem in problems] == ["IMO2099-1", "IMO2099-2"]
    assert problems[0].short_answer == "" and problems[1].short_answer == "$n = \\pm 2$"  # "null": a pure proof
    assert problems[0].problem.startswith("Prove that") and problems[0].source == "IMO2099"
    assert read_benchmark_problems(DEEPSEEK_SAMPLE, "deepseek-math-v2") == problems


@pytest.mark.parametrize(
    "items, message",
    [
        ([{"id": 1, "question": "Q", "answer": "null", "contest": "C", "problem_idx": "C-1"},
          {"id": 2, "question": " ", "answer": "3", "contest": "C", "problem_idx": "C-2"}], "item 2 (C-2): field 'question'"),
        ([{"id": 1, "question": "Q", "answer": 3, "contest": "C", "problem_idx": "C-1"}], "item 1 (C-1): field 'answer' must be text"),
        ([{"id": 1, "question": "Q", "problem_idx": "C-1"}, {"id": 2, "question": "R", "problem_idx": "C-1"}],
         "item 2 (C-1): duplicate id 'C-1'"),
        ([{"id": 1, "question": "Q", "problem_idx": "C-1"}, "text"], "item 2: not a JSON object"),
    ],
    ids=["empty-question", "answer-not-text", "duplicate", "not-an-object"],
)
def test_bad_deepseek_items_are_named(tmp_path: Path, items: list[object], message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        read_benchmark_problems(write(tmp_path, "inputs.json", json.dumps(items)))


def test_a_json_list_of_plain_rows_and_a_csv_of_plain_rows(tmp_path: Path) -> None:
    listed = read_benchmark_problems(write(tmp_path, "rows.json", json.dumps([{"id": "x", "problem": "Prove P."}])))
    assert [(problem.id, problem.problem) for problem in listed] == [("x", "Prove P.")]
    plain = read_benchmark_problems(write(tmp_path, "rows.csv", "id,problem,answer\ny,Prove Q.,5\n,Prove R.,\n"))
    assert [problem.problem for problem in plain] == ["Prove Q.", "Prove R."] and plain[0].short_answer == "5"
    assert plain[0].id == "y" and plain[1].id  # a row without an id gets a content hash
    with pytest.raises(InputError, match="cannot tell the format of the JSON list"):
        read_benchmark_problems(write(tmp_path, "other.json", json.dumps([{"text": "?"}])))


@pytest.mark.skipif(not DEEPSEEK_INPUTS.is_dir(), reason="the shared datasets are not here")
def test_real_deepseek_inputs() -> None:
    counts = {path.stem: len(read_benchmark_problems(path)) for path in sorted(DEEPSEEK_INPUTS.glob("*.json"))}
    assert counts == {"CMO2024": 6, "CMO2025": 6, "IMO2025": 6, "Putnam2024": 12}
