"""The bundled parity sets: their shape, their construction ratings, and that the files match the code."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from training.role_data.rows import read_rows
from training.role_data.parity_sets import BUNDLED, SCORES, construction_rating, graded_rows, main, rated_rows
from training.config import DataSettings
from verifier.parse import VERIFIER_FORMAT, parse_verdict


def read_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("count", [1, 3, 48])
def test_graded_rows_shape(count: int) -> None:
    rows = graded_rows(count)
    assert len(rows) == count * 4 * 3
    assert len({row["id"] for row in rows}) == len(rows)
    by_statement: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        assert set(row) == {"id", "problem", "proof", "score"}
        assert str(row["problem"]).strip() and str(row["proof"]).strip()
        pair, fact, _ = str(row["id"]).split("-")
        by_statement[f"{pair}-{fact}"].append(float(row["score"]))  # type: ignore[arg-type]
    assert len(by_statement) == count * 4
    assert all(sorted(grades) == [0.0, 0.5, 1.0] for grades in by_statement.values())


def test_each_statement_has_three_different_proofs() -> None:
    rows = graded_rows(5)
    for start in range(0, len(rows), 3):
        group = rows[start: start + 3]
        assert len({row["problem"] for row in group}) == 1
        assert len({row["proof"] for row in group}) == 3


def test_graded_rows_are_stable() -> None:
    assert graded_rows(4) == graded_rows(4)
    assert graded_rows(4) == graded_rows(48)[: 4 * 12]


@pytest.mark.parametrize(
    ("claimed", "true", "rating"),
    [(0.0, 0.0, 1.0), (0.5, 0.5, 1.0), (1.0, 1.0, 1.0),
     (0.0, 0.5, 0.0), (0.0, 1.0, 0.0), (0.5, 1.0, 0.0),
     (0.5, 0.0, 0.5), (1.0, 0.0, 0.5), (1.0, 0.5, 0.5)],
)
def test_construction_rating(claimed: float, true: float, rating: float) -> None:
    assert construction_rating(claimed, true) == rating


@pytest.mark.parametrize("count", [1, 2, 16])
def test_rated_rows_follow_the_construction_rating(count: int) -> None:
    graded = {row["id"]: row for row in graded_rows(count, start=0)}
    rows = rated_rows(count)
    assert len(rows) == len(graded) * len(SCORES)
    assert len({row["id"] for row in rows}) == len(rows)
    ratings = Counter()
    for row in rows:
        source_id, _, claimed_part = str(row["id"]).rpartition("-c")
        source = graded[source_id]
        assert (row["problem"], row["proof"], row["score"]) == (source["problem"], source["proof"], source["score"])
        verdict = parse_verdict(str(row["analysis"]), VERIFIER_FORMAT)
        assert verdict.format_ok and verdict.score == float(claimed_part)
        claimed, true = float(verdict.score), float(source["score"])  # type: ignore[arg-type]
        expected = 1.0 if claimed == true else 0.0 if claimed < true else 0.5
        assert row["rating"] == expected
        ratings[row["rating"]] += 1
    assert ratings == {1.0: len(graded), 0.0: len(graded), 0.5: len(graded)}


@pytest.mark.parametrize(("name", "build"), [("graded_parity.jsonl", graded_rows), ("rated_parity.jsonl", rated_rows)])
def test_bundled_files_equal_what_the_code_writes(name: str, build) -> None:  # type: ignore[no-untyped-def]
    assert read_jsonl(BUNDLED / name) == build()


def test_main_writes_both_files_byte_for_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "out")]) == 0
    for name in ("graded_parity.jsonl", "rated_parity.jsonl"):
        assert (tmp_path / "out" / name).read_bytes() == (BUNDLED / name).read_bytes()
    assert "wrote 576 rows" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "role", "formats"),
    [
        ("graded_parity.jsonl", "verifier", ()),
        ("graded_parity.jsonl", "generator", ()),
        ("graded_parity.jsonl", "sft", ("verifier", "generator")),
        ("rated_parity.jsonl", "meta-verifier", ()),
        ("rated_parity.jsonl", "sft", ("verifier", "generator", "meta-verifier")),
    ],
)
def test_bundled_files_are_valid_training_data(name: str, role: str, formats: tuple[str, ...]) -> None:
    settings = DataSettings(path=str(BUNDLED / name))
    rows = read_rows(settings, role, formats) if formats else read_rows(settings, role)
    assert len(rows) == len(read_jsonl(BUNDLED / name))
