"""Input readers: every format, column mapping, bad rows with their line numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data.errors import InputError
from data.readers import ColumnMap, read_items

ROWS = [
    {"id": "a", "problem": "Prove 1 + 1 = 2.", "proof": "By definition.", "score": 1},
    {"id": "b", "problem": "Prove 2 + 2 = 4.", "proof": "Count.", "score": 0.5},
    {"id": "c", "problem": "Prove 3 > 2.", "proof": "Obvious.", "score": None},
]


def write(tmp_path: Path, kind: str, rows: list[dict]) -> Path:
    if kind == "jsonl":
        path = tmp_path / "rows.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        return path
    import pandas

    frame = pandas.DataFrame(rows)
    if kind == "csv":
        path = tmp_path / "rows.csv"
        frame.to_csv(path, index=False)
    elif kind == "parquet":
        path = tmp_path / "rows.parquet"
        frame.to_parquet(path)
    else:
        import datasets

        path = tmp_path / "rows_dataset"
        datasets.Dataset.from_pandas(frame).save_to_disk(str(path))
    return path


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet", "datasets"])
def test_every_format_reads_the_same_items(tmp_path: Path, kind: str) -> None:
    items, bad = read_items(write(tmp_path, kind, ROWS))
    assert bad == []
    assert [(item.id, item.proof, item.human_score) for item in items] == [
        ("a", "By definition.", 1.0), ("b", "Count.", 0.5), ("c", "Obvious.", None)
    ]


def test_column_mapping_and_generated_ids(tmp_path: Path) -> None:
    path = tmp_path / "mapped.jsonl"
    path.write_text(json.dumps({"statement": "Prove x.", "response": "Done.", "grade": 0}) + "\n", encoding="utf-8")
    items, bad = read_items(path, ColumnMap(problem="statement", proof="response", score="grade"))
    assert bad == [] and items[0].human_score == 0.0 and len(items[0].id) == 16
    assert read_items(path, ColumnMap(problem="statement", proof="response", score="grade"))[0][0].id == items[0].id


def test_bad_rows_name_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    lines = [
        json.dumps(ROWS[0]),
        json.dumps({"id": "x", "problem": "P"}),
        json.dumps({"id": "y", "problem": "P", "proof": "  "}),
        json.dumps({"id": "z", "problem": "P", "proof": "Q", "score": 0.7}),
        "{not json",
        json.dumps(ROWS[0]),
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8") + b'{"id": "w", "problem": "\xff", "proof": "q"}\n')
    items, bad = read_items(path)
    assert [item.id for item in items] == ["a"]
    assert [(row.line, row.reason.split(" (")[0]) for row in bad] == [
        (2, "missing field 'proof'"),
        (3, "empty field 'proof'"),
        (4, "score 0.7 is not one of 0, 0.5, 1"),
        (5, "not valid JSON"),
        (6, "duplicate id 'a'"),
        (7, "not UTF-8 text"),
    ]


def test_csv_lines_count_multiline_fields(tmp_path: Path) -> None:
    path = tmp_path / "multi.csv"
    path.write_text('id,problem,proof\n1,"Prove\nthis.",ok\n2,P,\n', encoding="utf-8")
    items, bad = read_items(path)
    assert [item.id for item in items] == ["1"]
    assert [(row.line, row.reason) for row in bad] == [(4, "empty field 'proof'")]


def test_the_first_csv_row_is_its_physical_line(tmp_path: Path) -> None:
    path = tmp_path / "first.csv"
    path.write_text("id,problem,proof\n1,P,\n2,P,ok\n", encoding="utf-8")
    _, bad = read_items(path)
    assert [(row.line, row.reason) for row in bad] == [(2, "empty field 'proof'")]


def test_unusable_inputs_raise(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="input not found"):
        read_items(tmp_path / "missing.jsonl")
    (tmp_path / "rows.txt").write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="cannot tell the format"):
        read_items(tmp_path / "rows.txt")
    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match="cannot read"):
        read_items(tmp_path / "broken.parquet")


def test_a_score_map_turns_points_into_scores(tmp_path: Path) -> None:
    from data.readers import parse_score_map

    path = tmp_path / "points.csv"
    path.write_text("id,problem,proof,points\na,P,Q,7\nb,P,Q,6.0\nc,P,Q,1\nd,P,Q,3\n", encoding="utf-8")
    columns = ColumnMap(score="points", score_map=parse_score_map("7=1, 6=0.5, 1=0, 0=0"))
    items, bad = read_items(path, columns)
    assert [item.human_score for item in items] == [1.0, 0.5, 0.0]
    assert [(row.line, row.reason) for row in bad] == [(5, "grade '3' is not in the score map")]
    with pytest.raises(InputError):
        parse_score_map("7=2")
