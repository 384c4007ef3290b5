"""The parity fixture rows (tests/parity_sets.py): their shape, construction ratings, and that training reads them."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from parity_sets import SCORES, construction_rating, graded_rows, rated_rows
from training.config import DataSettings
from training.role_data.rows import read_rows
from verifier.parse import VERIFIER_FORMAT, parse_verdict


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


@pytest.mark.parametrize(
    ("build", "role", "formats"),
    [
        (graded_rows, "verifier", ()),
        (graded_rows, "generator", ()),
        (graded_rows, "sft", ("verifier", "generator")),
        (rated_rows, "meta-verifier", ()),
        (rated_rows, "sft", ("verifier", "generator", "meta-verifier")),
    ],
)
def test_the_rows_are_valid_training_data(tmp_path: Path, build, role: str, formats: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    rows = build()
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    settings = DataSettings(path=str(path))
    read = read_rows(settings, role, formats) if formats else read_rows(settings, role)
    assert len(read) == len(rows)
