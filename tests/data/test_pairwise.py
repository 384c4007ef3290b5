"""The pairwise reader on the hand-written samples in tests/data/samples: good pairs, column renames, bad rows by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from data.errors import InputError
from data.pairwise import PairColumns, ProofPair, read_pairs
from data.row_checks import renamed

SAMPLES = Path(__file__).resolve().parent / "samples"
GOOD = {"problem": "Prove P.", "proof_1": "Because Q.", "proof_2": "Because R.", "correct_index": 2}


def write_rows(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8")
    return path


def test_the_jsonl_sample_reads() -> None:
    pairs = read_pairs(SAMPLES / "pairs.jsonl")
    assert [(pair.id, pair.correct_index) for pair in pairs] == [("p1", 1), ("p2", 2), ("p3", 1)]
    assert pairs[1].proof(2).startswith("n^2 + n = n(n + 1)") and pairs[1].proof(1).startswith("For n = 2")


def test_the_csv_sample_reads_with_its_columns_renamed() -> None:
    columns = renamed(PairColumns(), ["proof_1=first", "proof_2=second", "correct_index=winner"])
    pairs = read_pairs(SAMPLES / "pairs.csv", columns)
    assert [pair.correct_index for pair in pairs] == [1, 2]
    assert all(len(pair.id) == 16 for pair in pairs)
    with pytest.raises(InputError, match="row at line 2: missing field 'proof_1'"):
        read_pairs(SAMPLES / "pairs.csv")


def test_parquet_reads_the_same_pairs_as_jsonl(tmp_path: Path) -> None:
    import pyarrow as arrow
    import pyarrow.parquet as parquet

    records = [json.loads(line) for line in (SAMPLES / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    parquet.write_table(arrow.Table.from_pylist(records), tmp_path / "pairs.parquet")
    assert read_pairs(tmp_path / "pairs.parquet") == read_pairs(SAMPLES / "pairs.jsonl")


@pytest.mark.parametrize("value", [1, 2, 1.0, "2", " 1 "])
def test_correct_index_is_one_or_two_as_number_or_text(tmp_path: Path, value: Any) -> None:
    (pair,) = read_pairs(write_rows(tmp_path / "pairs.jsonl", [{**GOOD, "correct_index": value}]))
    assert pair.correct_index == int(float(value))


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ({key: value for key, value in GOOD.items() if key != "proof_2"}, "missing field 'proof_2'"),
        ({key: value for key, value in GOOD.items() if key != "correct_index"}, "missing field 'correct_index'"),
        ({**GOOD, "proof_1": ""}, "empty field 'proof_1'"),
        ({**GOOD, "correct_index": 0}, "correct_index 0 is not 1 or 2 (1-based"),
        ({**GOOD, "correct_index": 3}, "correct_index 3 is not 1 or 2"),
        ({**GOOD, "correct_index": 1.5}, "correct_index 1.5 is not 1 or 2"),
        ({**GOOD, "correct_index": "first"}, "correct_index 'first' is not 1 or 2"),
        ({**GOOD, "correct_index": True}, "correct_index True is not 1 or 2"),
        ({**GOOD, "proof_2": " Because Q. "}, "proof_1 and proof_2 are the same proof"),
        ("{not json", "not valid JSON"),
        ({**GOOD, "id": "a"}, "duplicate id 'a'"),
    ],
    ids=["no-proof-2", "no-index", "empty-proof", "index-0", "index-3", "index-1.5", "index-text", "index-bool",
         "same-proofs", "bad-json", "duplicate-id"],
)
def test_each_bad_row_is_refused_with_its_line(tmp_path: Path, bad: Any, fragment: str) -> None:
    path = write_rows(tmp_path / "pairs.jsonl", [{**GOOD, "id": "a"}, bad])
    with pytest.raises(InputError) as error:
        read_pairs(path)
    assert str(error.value).startswith(f"{path}: row at line 2: ") and fragment in str(error.value)


def test_a_pair_cannot_be_built_with_another_index() -> None:
    with pytest.raises(ValueError, match="correct_index must be 1 or 2"):
        ProofPair("a", "P", "Q", "R", 0)
