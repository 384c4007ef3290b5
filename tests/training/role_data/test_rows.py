"""Reading training rows per role: formats, column mapping, score maps, every refusal with its line."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from data.errors import InputError
from data.records import stable_id
from training.role_data.records import grpo_records, sft_records
from training.role_data.rows import TrainingRow, read_rows, read_sft_rows, rows_of, split_holdout, verifier_rows
from training.config import DataSettings

FULL = {"id": "r1", "problem": "Prove P.", "proof": "Because Q.", "score": 1, "analysis": "Looks right.", "rating": 0.5}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


WRITERS = {"jsonl": write_jsonl, "csv": write_csv, "parquet": write_parquet}


def write(tmp_path: Path, rows: list[dict[str, Any]], kind: str = "jsonl", name: str = "data") -> str:
    return str(WRITERS[kind](tmp_path / f"{name}.{kind}", rows))


def without(row: dict[str, Any], *columns: str) -> dict[str, Any]:
    return {key: value for key, value in row.items() if key not in columns}


# --- each role reads its columns, from every file format ---------------------------------------

EXPECTED = {
    "verifier": TrainingRow("r1", "Prove P.", "Because Q.", 1.0, "", None),
    "meta-verifier": TrainingRow("r1", "Prove P.", "Because Q.", None, "Looks right.", 0.5),
    "generator": TrainingRow("r1", "Prove P.", "", None, "", None),
    "sft": TrainingRow("r1", "Prove P.", "Because Q.", 1.0, "", None),  # default formats: verifier, generator
}


@pytest.mark.parametrize("kind", sorted(WRITERS))
@pytest.mark.parametrize("role", sorted(EXPECTED))
def test_every_role_reads_its_fields_from_every_format(tmp_path: Path, kind: str, role: str) -> None:
    second = {**FULL, "id": "r2", "problem": "Prove R.", "score": 0, "rating": 0}
    rows = read_rows(DataSettings(path=write(tmp_path, [FULL, second], kind)), role)
    assert len(rows) == 2
    assert rows[0] == EXPECTED[role]
    assert rows[1].id == "r2" and rows[1].problem == "Prove R."


@pytest.mark.parametrize(
    ("role", "missing"),
    [
        ("verifier", "problem"), ("verifier", "proof"), ("verifier", "score"),
        ("meta-verifier", "problem"), ("meta-verifier", "proof"), ("meta-verifier", "analysis"),
        ("meta-verifier", "rating"),
        ("generator", "problem"),
        ("sft", "problem"), ("sft", "proof"), ("sft", "score"),
    ],
)
def test_a_required_column_missing_names_the_row(tmp_path: Path, role: str, missing: str) -> None:
    path = write(tmp_path, [FULL, without(FULL, missing) | {"id": "r2"}])
    with pytest.raises(InputError) as error:
        read_rows(DataSettings(path=path), role)
    assert "row at line 2" in str(error.value)
    assert f"missing column {missing!r}" in str(error.value)


@pytest.mark.parametrize(
    ("formats", "missing"),
    [
        (("verifier",), "score"), (("generator",), "score"), (("generator",), "proof"),
        (("meta-verifier",), "analysis"), (("meta-verifier",), "rating"), (("meta-verifier",), "proof"),
        (("verifier", "meta-verifier"), "score"), (("verifier", "meta-verifier"), "rating"),
    ],
)
def test_sft_requires_what_its_formats_need(tmp_path: Path, formats: tuple[str, ...], missing: str) -> None:
    path = write(tmp_path, [FULL, without(FULL, missing) | {"id": "r2"}])
    with pytest.raises(InputError) as error:
        read_rows(DataSettings(path=path), "sft", formats)
    assert "row at line 2" in str(error.value)
    assert f"missing column {missing!r}" in str(error.value)


@pytest.mark.parametrize(
    ("role", "columns"),
    [
        ("generator", ("proof", "score", "analysis", "rating")),
        ("verifier", ("analysis", "rating")),
        ("meta-verifier", ("score",)),
        ("sft", ("analysis", "rating")),
    ],
)
def test_columns_a_role_does_not_use_may_be_absent(tmp_path: Path, role: str, columns: tuple[str, ...]) -> None:
    [row] = read_rows(DataSettings(path=write(tmp_path, [without(FULL, *columns)])), role)
    assert row.problem == "Prove P."
    if role == "sft":
        assert row.analysis == "" and row.score == 1.0


@pytest.mark.parametrize(
    ("formats", "columns", "expected"),
    [
        (("verifier", "generator"), ("analysis", "rating"), TrainingRow("r1", "Prove P.", "Because Q.", 1.0)),
        (("verifier", "generator"), (), TrainingRow("r1", "Prove P.", "Because Q.", 1.0)),
        (("meta-verifier",), ("score",), TrainingRow("r1", "Prove P.", "Because Q.", None, "Looks right.", 0.5)),
        (("verifier", "meta-verifier"), (), TrainingRow("r1", "Prove P.", "Because Q.", 1.0, "Looks right.", 0.5)),
    ],
)
def test_sft_reads_what_its_formats_need(tmp_path: Path, formats: tuple[str, ...], columns: tuple[str, ...],
                                         expected: TrainingRow) -> None:
    assert read_rows(DataSettings(path=write(tmp_path, [without(FULL, *columns)])), "sft", formats) == [expected]


def test_column_names_come_from_data_settings(tmp_path: Path) -> None:
    raw = {"uid": "x7", "question": "Prove P.", "solution": "Since Q.", "grade": 0.5, "critique": "Gap.", "verdict": 1}
    settings = DataSettings(path=write(tmp_path, [raw]), problem_column="question", proof_column="solution",
                            score_column="grade", analysis_column="critique", rating_column="verdict", id_column="uid",
                            critique_column="review")
    assert read_rows(settings, "verifier") == [TrainingRow("x7", "Prove P.", "Since Q.", 0.5)]
    assert read_rows(settings, "meta-verifier") == [TrainingRow("x7", "Prove P.", "Since Q.", None, "Gap.", 1.0)]
    assert read_rows(settings, "sft") == [TrainingRow("x7", "Prove P.", "Since Q.", 0.5)]
    assert read_rows(settings, "sft", ("verifier", "meta-verifier")) == [
        TrainingRow("x7", "Prove P.", "Since Q.", 0.5, "Gap.", 1.0)
    ]
    with pytest.raises(InputError, match="missing column 'problem'"):  # default names do not see the mapped columns
        read_rows(DataSettings(path=settings.path), "generator")


def test_sft_rows_carry_a_written_critique_and_assessment_when_the_data_has_them(tmp_path: Path) -> None:
    raw = {"id": "w1", "problem": "Prove P.", "proof": "Step 1: Q.", "score": 0.0, "analysis": "A.", "rating": 0.5,
           "critique": "Step 1 is false.", "assessment": "The score does not match."}
    settings = DataSettings(path=write(tmp_path, [raw]))
    (row,) = read_rows(settings, "sft", ("verifier", "meta-verifier"))
    assert (row.critique, row.assessment) == ("Step 1 is false.", "The score does not match.")
    (verifier_row,) = read_rows(settings, "verifier")
    assert (verifier_row.critique, verifier_row.assessment) == ("", "")  # only the cold start teaches written answers


def test_sft_takes_the_meta_verifier_answers_from_meta_path_when_set(tmp_path: Path) -> None:
    proofs = [{"id": "p1", "problem": "Prove P.", "proof": "Step 1: Q.", "score": 0.0, "critique": "Step 1 is false."}]
    rated = [{**proof, "id": f"m{rating}", "analysis": "A.", "rating": rating, "assessment": "Right."} for proof in proofs
             for rating in (0.0, 1.0)]
    formats = ("verifier", "generator", "meta-verifier")
    data = DataSettings(path=write(tmp_path, proofs), meta_path=write(tmp_path, rated, name="meta"))
    rows = read_sft_rows(data, formats)
    assert [(row.id, row.score, row.rating) for row in rows] == [("p1", 0.0, None), ("m0.0", None, 0.0), ("m1.0", None, 1.0)]
    answers = [record["completion"][0]["content"] for record in sft_records(rows, formats)]
    assert len(answers) == 4  # verifier + generator from the proof row, one meta answer per rated row
    assert "Step 1 is false." in answers[0] and answers[1].startswith("## Solution") and "Right." in answers[2]
    # Without meta_path, every format comes from path: the proof rows lack the meta columns.
    with pytest.raises(InputError, match="missing column 'analysis'"):
        read_sft_rows(DataSettings(path=data.path), formats)
    assert [row.id for row in read_sft_rows(data, ("verifier",))] == ["p1"]  # meta_path unused without its format


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_score_map_turns_grades_into_scores(tmp_path: Path, kind: str) -> None:
    grades = [7, 6, 1, 0, 7.0]
    rows = [{"id": f"g{i}", "problem": "P", "proof": f"proof {i}", "score": grade} for i, grade in enumerate(grades)]
    settings = DataSettings(path=write(tmp_path, rows, kind), score_map="7=1,6=0.5,1=0,0=0")
    assert [row.score for row in read_rows(settings, "verifier")] == [1.0, 0.5, 0.0, 0.0, 1.0]


def test_a_grade_outside_the_score_map_is_refused(tmp_path: Path) -> None:
    rows = [{"id": "a", "problem": "P", "proof": "x", "score": 7}, {"id": "b", "problem": "P", "proof": "y", "score": 3}]
    with pytest.raises(InputError, match=r"row at line 2: grade 3 is not in the score map"):
        read_rows(DataSettings(path=write(tmp_path, rows), score_map="7=1,6=0.5,1=0,0=0"), "verifier")


def test_the_rating_column_is_not_mapped_by_the_score_map(tmp_path: Path) -> None:
    [row] = read_rows(DataSettings(path=write(tmp_path, [FULL]), score_map="7=1,0=0"), "meta-verifier")
    assert row.rating == 0.5


@pytest.mark.parametrize(
    ("kind", "role", "column", "value", "line", "message"),
    [
        ("jsonl", "verifier", "score", 0.7, 2, "not one of 0, 0.5, 1"),
        ("jsonl", "verifier", "score", "high", 2, "is not a number"),
        ("jsonl", "sft", "score", 2, 2, "not one of 0, 0.5, 1"),
        ("jsonl", "meta-verifier", "rating", 0.25, 2, "not one of 0, 0.5, 1"),
        ("csv", "verifier", "score", "0.7", 3, "not one of 0, 0.5, 1"),  # the header is line 1
        ("parquet", "verifier", "score", 0.7, 2, "not one of 0, 0.5, 1"),
    ],
)
def test_a_bad_score_stops_the_run_naming_its_row(
    tmp_path: Path, kind: str, role: str, column: str, value: Any, line: int, message: str
) -> None:
    good = {**FULL, "score": "1" if kind != "jsonl" else 1}
    if kind == "parquet":
        good = {**FULL, "score": 1.0}
    path = write(tmp_path, [good, {**good, "id": "r2", column: value}], kind)
    with pytest.raises(InputError) as error:
        read_rows(DataSettings(path=path), role)
    assert f"row at line {line}:" in str(error.value)
    assert message in str(error.value)
    assert path in str(error.value)


@pytest.mark.parametrize(("column", "role"), [("problem", "generator"), ("proof", "verifier"), ("analysis", "meta-verifier")])
def test_empty_text_is_refused(tmp_path: Path, column: str, role: str) -> None:
    path = write(tmp_path, [{**FULL, column: "  \n "}])
    with pytest.raises(InputError, match=rf"row at line 1: empty {column} in column '{column}'"):
        read_rows(DataSettings(path=path), role)


@pytest.mark.parametrize("score", [None, "", "   "])
def test_an_empty_score_counts_as_missing(tmp_path: Path, score: Any) -> None:
    with pytest.raises(InputError, match="row at line 1: missing column 'score'"):
        read_rows(DataSettings(path=write(tmp_path, [{**FULL, "score": score}])), "verifier")


def test_an_unreadable_line_is_refused_with_its_number(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(FULL) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"row at line 2: not valid JSON"):
        read_rows(DataSettings(path=str(path)), "verifier")


def test_a_duplicate_id_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, [FULL, {**FULL, "proof": "Another proof."}])
    with pytest.raises(InputError, match=r"row at line 2: duplicate id 'r1'"):
        read_rows(DataSettings(path=path), "verifier")


def test_rows_without_ids_get_a_content_hash_and_identical_content_is_a_duplicate(tmp_path: Path) -> None:
    raw = without(FULL, "id")
    [row] = read_rows(DataSettings(path=write(tmp_path, [raw])), "verifier")
    assert row.id == stable_id("Prove P.", "Because Q.", "")
    [rated] = read_rows(DataSettings(path=write(tmp_path, [raw], name="meta")), "meta-verifier")
    assert rated.id == stable_id("Prove P.", "Because Q.", "Looks right.")
    both = read_rows(DataSettings(path=write(tmp_path, [raw, {**raw, "proof": "Other."}], name="two")), "verifier")
    assert len({row.id for row in both}) == 2
    with pytest.raises(InputError, match="row at line 2: duplicate id"):
        read_rows(DataSettings(path=write(tmp_path, [raw, raw], name="dup")), "verifier")


@pytest.mark.parametrize(
    ("role", "limit", "kept"),
    [
        ("verifier", 10, ["short", "long-analysis"]),  # the verifier does not read the analysis
        ("verifier", 0, ["short", "long-proof", "long-analysis"]),
        ("meta-verifier", 10, ["short"]),
        ("sft", 10, ["short", "long-analysis"]),  # default formats do not read the analysis
        ("sft+meta", 10, ["short"]),  # a meta-verifier answer does, so its length counts
        ("generator", 10, ["short", "long-proof", "long-analysis"]),  # a generator row has no proof
    ],
)
def test_max_proof_chars_skips_long_rows(tmp_path: Path, role: str, limit: int, kept: list[str]) -> None:
    rows = [
        {"id": "short", "problem": "P1", "proof": "p" * 10, "score": 1, "analysis": "a" * 10, "rating": 1},
        {"id": "long-proof", "problem": "P2", "proof": "p" * 11, "score": 1, "analysis": "a", "rating": 1},
        {"id": "long-analysis", "problem": "P3", "proof": "p", "score": 1, "analysis": "a" * 11, "rating": 1},
    ]
    settings = DataSettings(path=write(tmp_path, rows), max_proof_chars=limit)
    if role == "sft+meta":
        read = read_rows(settings, "sft", ("verifier", "meta-verifier"))
    else:
        read = read_rows(settings, role)
    assert [row.id for row in read] == kept


def test_nothing_left_after_filtering_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, [{**FULL, "proof": "x" * 50}])
    with pytest.raises(InputError, match=r"no usable rows in .*max_proof_chars=20"):
        read_rows(DataSettings(path=path, max_proof_chars=20), "verifier")


def test_an_empty_file_has_no_usable_rows(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="no usable rows"):
        read_rows(DataSettings(path=str(path)), "generator")


@pytest.mark.parametrize(("max_rows", "expected"), [(0, 5), (2, 2), (5, 5), (9, 5)])
def test_max_rows_caps_the_rows_in_file_order(tmp_path: Path, max_rows: int, expected: int) -> None:
    rows = [{"id": f"r{i}", "problem": f"P{i}"} for i in range(5)]
    read = read_rows(DataSettings(path=write(tmp_path, rows), max_rows=max_rows), "generator")
    assert [row.id for row in read] == [f"r{i}" for i in range(expected)]


def test_max_rows_counts_rows_left_after_max_proof_chars(tmp_path: Path) -> None:
    rows = [{"id": "a", "problem": "P", "proof": "x" * 30, "score": 1}] + [
        {"id": f"r{i}", "problem": "P", "proof": f"ok {i}", "score": 1} for i in range(3)
    ]
    read = read_rows(DataSettings(path=write(tmp_path, rows), max_proof_chars=10, max_rows=2), "verifier")
    assert [row.id for row in read] == ["r0", "r1"]


def test_a_datasets_folder_is_read(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "saved"
    datasets.Dataset.from_list([FULL, {**FULL, "id": "r2", "score": 0.0}]).save_to_disk(str(folder))
    rows = read_rows(DataSettings(path=str(folder)), "verifier")
    assert [(row.id, row.score) for row in rows] == [("r1", 1.0), ("r2", 0.0)]


# --- where the data comes from --------------------------------------------------------------------


def test_no_path_is_an_error() -> None:
    with pytest.raises(InputError, match="no training data"):
        list(rows_of(DataSettings()))


@pytest.mark.parametrize("path", ["{tmp}/missing.jsonl", "someone/data.jsonl", "a/b/c", "./x/y", "~/x", "nothing"])
def test_a_path_that_does_not_exist_is_not_found(tmp_path: Path, path: str) -> None:
    path = path.format(tmp=tmp_path)
    with pytest.raises(InputError, match="training data not found"):
        list(rows_of(DataSettings(path=path)))


def test_a_hub_id_that_cannot_be_loaded_is_an_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)  # so "someone/nothing" is not a local folder
    import datasets.config
    import huggingface_hub.constants

    # both libraries read these at import time; another test may have imported them first
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True, raising=False)
    with pytest.raises(InputError) as error:
        list(rows_of(DataSettings(path="someone/nothing")))
    assert "'someone/nothing'" in str(error.value)
    assert "could not be loaded from the Hub" in str(error.value)
    assert str(error.value).endswith("(proofsmith works offline by default: set HF_HUB_OFFLINE=0 to download it)")
    assert "\n" not in str(error.value)


# --- held-out rows --------------------------------------------------------------------------------

ROWS = [TrainingRow(f"r{i}", f"P{i}") for i in range(10)]


@pytest.mark.parametrize(("holdout", "seed"), [(0, 0), (1, 0), (3, 0), (3, 1), (9, 7)])
def test_split_holdout_sizes_and_partition(holdout: int, seed: int) -> None:
    train, held = split_holdout(ROWS, holdout, seed)
    assert len(held) == holdout and len(train) == len(ROWS) - holdout
    assert sorted(row.id for row in train + held) == sorted(row.id for row in ROWS)
    assert not {row.id for row in train} & {row.id for row in held}
    # both parts keep the original order
    assert train == sorted(train, key=ROWS.index) and held == sorted(held, key=ROWS.index)


def test_split_holdout_is_deterministic_per_seed() -> None:
    assert split_holdout(ROWS, 3, 5) == split_holdout(ROWS, 3, 5)
    picks = {tuple(row.id for row in split_holdout(ROWS, 3, seed)[1]) for seed in range(6)}
    assert len(picks) > 1  # the seed matters


@pytest.mark.parametrize(("holdout", "count"), [(10, 10), (11, 10), (1, 1)])
def test_split_holdout_must_leave_training_rows(holdout: int, count: int) -> None:
    with pytest.raises(InputError, match=rf"data.holdout={holdout} leaves no training rows out of {count}"):
        split_holdout(ROWS[:count], holdout, 0)


def test_verifier_rows_hold_out_graded_proofs_only_and_add_the_rated_analyses_as_meta_tasks(tmp_path: Path) -> None:
    graded = write_jsonl(tmp_path / "graded.jsonl", [{**FULL, "id": f"g{index}"} for index in range(4)])
    rated = write_jsonl(tmp_path / "rated.jsonl", [{**FULL, "id": f"m{index}"} for index in range(3)])
    plain, held = verifier_rows(DataSettings(path=str(graded)), held_out=1)
    assert len(plain) == 3 and len(held) == 1 and all(row.task == "" for row in plain + held)
    rows, held_with_meta = verifier_rows(DataSettings(path=str(graded), meta_path=str(rated)), held_out=1)
    assert held_with_meta == held and rows[:3] == plain
    assert [(row.id, row.task, row.rating) for row in rows[3:]] == [(f"m{index}", "meta-verifier", 0.5) for index in range(3)]
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"id": "x", "problem": "P", "proof": "Q", "rating": 1}])
    with pytest.raises(InputError, match="line 1: missing column 'analysis'"):
        verifier_rows(DataSettings(path=str(graded), meta_path=str(bad)))


# --- a checkable goal (the ground-truth world's problems) ----------------------------------------


def test_generator_rows_carry_the_worlds_goal_and_grpo_records_pass_it_on() -> None:
    world = Path(__file__).resolve().parents[3] / "data" / "bundled" / "world" / "train_problems.jsonl"
    first = json.loads(world.read_text(encoding="utf-8").splitlines()[0])
    rows = read_rows(DataSettings(path=str(world)), "generator")
    assert rows[0].goal == tuple(first["goal"]) and all(row.goal for row in rows)
    assert grpo_records("generator", rows[:1])[0]["goal"] == first["goal"]


def test_rows_without_a_goal_have_none(tmp_path: Path) -> None:
    [row] = read_rows(DataSettings(path=write(tmp_path, [FULL])), "generator")
    assert row.goal == ()


@pytest.mark.parametrize(
    "goal, message",
    [("a = b", "must be a list of claims"), (["a = b", ""], "must be a list of claims"),
     (["this is not a claim"], "does not parse")],
)
def test_a_bad_goal_is_refused_naming_its_row(tmp_path: Path, goal: Any, message: str) -> None:
    path = write(tmp_path, [FULL, {**FULL, "id": "r2", "goal": goal}])
    with pytest.raises(InputError, match=rf"row at line 2: .*{message}"):
        read_rows(DataSettings(path=path), "generator")


def test_verifier_rows_say_the_first_bad_step_where_the_data_does(tmp_path: Path) -> None:
    """World proofs carry first_bad_step (null for a correct proof): rewards.meta = 'checker' needs it."""
    rows = [{**FULL, "id": "flawed", "score": 0, "first_bad_step": 2}, {**FULL, "id": "correct", "first_bad_step": None},
            {**FULL, "id": "other"}]
    read = read_rows(DataSettings(path=str(write_jsonl(tmp_path / "w.jsonl", rows))), "verifier")
    assert [(row.first_bad_step, row.step_known) for row in read] == [(2, True), (None, True), (None, False)]
    records = grpo_records("verifier", read)
    assert [(record["first_bad_step"], record["step_known"]) for record in records] == [(2, True), (0, True), (0, False)]
    bad = write_jsonl(tmp_path / "bad.jsonl", [{**FULL, "first_bad_step": "two"}])
    with pytest.raises(InputError, match="line 1: first_bad_step must be a step number >= 1 or null, not 'two'"):
        read_rows(DataSettings(path=str(bad)), "verifier")
