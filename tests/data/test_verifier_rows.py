"""The verifier-row reader on the hand-written samples in tests/data/samples: good rows, column renames, bad rows by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from data.errors import InputError
from data.row_checks import renamed
from data.verifier_rows import VerifierRowColumns, is_verifier_rows, read_verifier_rows

SAMPLES = Path(__file__).resolve().parent / "samples"
GOOD = {"problem": "Prove P.", "proof": "Because Q.", "ground_truth_judgement": "Q does not imply P.",
        "ground_truth_verify_score": 0}


def write_rows(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8")
    return path


def test_the_jsonl_sample_reads_with_its_ids_scores_and_critiques() -> None:
    rows = read_verifier_rows(SAMPLES / "verifier_rows.jsonl")
    assert [(row.id, row.score) for row in rows] == [("v1", 1.0), ("v2", 0.5), ("v3", 0.0)]
    assert rows[1].judgement.startswith("The expansion is right")
    assert "\\boxed{0}" in rows[2].judgement  # read as written; role formats are decided above the ground floor


def test_the_csv_sample_reads_a_multi_line_proof_and_hashes_missing_ids() -> None:
    rows = read_verifier_rows(SAMPLES / "verifier_rows.csv")
    assert [row.score for row in rows] == [1.0, 0.0]
    assert rows[0].proof == "Let a = 2m and b = 2n.\nThen a + b = 2(m + n), which is even."
    assert len(rows[0].id) == 16 and rows[0].id != rows[1].id


def test_parquet_reads_the_same_rows_as_jsonl(tmp_path: Path) -> None:
    import pyarrow as arrow
    import pyarrow.parquet as parquet

    records = [json.loads(line) for line in (SAMPLES / "verifier_rows.jsonl").read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["ground_truth_verify_score"] = float(record["ground_truth_verify_score"])
    parquet.write_table(arrow.Table.from_pylist(records), tmp_path / "rows.parquet")
    assert read_verifier_rows(tmp_path / "rows.parquet") == read_verifier_rows(SAMPLES / "verifier_rows.jsonl")


def test_columns_with_other_names_are_mapped(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "rows.jsonl", [{"question": "Prove P.", "response": "Because Q.", "critique": "Wrong.",
                                                 "grade": "0.5", "key": 7}])
    columns = renamed(VerifierRowColumns(), ["problem=question", "proof=response", "judgement=critique", "score=grade",
                                             "id=key"])
    (row,) = read_verifier_rows(path, columns)
    assert (row.id, row.problem, row.proof, row.judgement, row.score) == ("7", "Prove P.", "Because Q.", "Wrong.", 0.5)
    assert is_verifier_rows(["question", "critique", "grade"], columns)
    assert not is_verifier_rows(["problem", "proof", "score"])


@pytest.mark.parametrize("entry, fragment", [("proof", "not FIELD=COLUMN"), ("proof=", "not FIELD=COLUMN"),
                                             ("answer=x", "unknown field 'answer'")])
def test_a_malformed_rename_is_refused(entry: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        renamed(VerifierRowColumns(), [entry])


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ({key: value for key, value in GOOD.items() if key != "ground_truth_judgement"}, "missing field 'ground_truth_judgement'"),
        ({key: value for key, value in GOOD.items() if key != "ground_truth_verify_score"}, "missing field 'ground_truth_verify_score'"),
        ({**GOOD, "proof": "  "}, "empty field 'proof'"),
        ({**GOOD, "ground_truth_verify_score": 0.7}, "ground_truth_verify_score 0.7 is not one of 0, 0.5, 1"),
        ({**GOOD, "ground_truth_verify_score": "high"}, "'high' is not one of 0, 0.5, 1"),
        ({**GOOD, "ground_truth_verify_score": True}, "True is not one of 0, 0.5, 1"),
        ({**GOOD, "proof": ["a list"]}, "field 'proof' is not text"),
        ('{"problem": "Prove P.", "proof": ', "not valid JSON"),
        ([1, 2], "not a JSON object"),
        ({**GOOD, "id": "v0"}, "duplicate id 'v0'"),
    ],
    ids=["no-judgement", "no-score", "empty-proof", "score-0.7", "score-text", "score-bool", "proof-list", "bad-json",
         "not-object", "duplicate-id"],
)
def test_each_bad_row_is_refused_with_its_line(tmp_path: Path, bad: Any, fragment: str) -> None:
    path = write_rows(tmp_path / "rows.jsonl", [{**GOOD, "id": "v0"}, "", bad])
    with pytest.raises(InputError) as error:
        read_verifier_rows(path)
    assert str(error.value).startswith(f"{path}: row at line 3: ") and fragment in str(error.value)


def test_a_bad_csv_row_is_named_by_the_line_it_starts_on(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text('problem,proof,ground_truth_judgement,ground_truth_verify_score\nP,"two\nlines",J,1\nP,Q,J,2\n',
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"row at line 4: ground_truth_verify_score '2' is not one of 0, 0.5, 1"):
        read_verifier_rows(path)


def test_an_empty_or_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read_verifier_rows(tmp_path / "nothing.jsonl")
    with pytest.raises(InputError, match="no rows"):
        read_verifier_rows(write_rows(tmp_path / "empty.jsonl", [""]))
