"""``proofsmith eval meta-verifier``: bad input fails before a model loads, dry run, resume; a real-model run."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cli_checks import NO_MODEL, assert_clean_error, assert_other_settings_refused_untouched

WORLD_META = Path(__file__).resolve().parents[2] / "data" / "bundled" / "world" / "test_out_meta.jsonl"


def write_critiques(tmp_path: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    path = tmp_path / "critiques.jsonl"
    rows = rows if rows is not None else [
        {"id": f"c{index}", "problem": "Prove that 2 + 2 = 4.", "proof": "Step 1: 2 + 2 = 4 by adding.",
         "analysis": "Here is my evaluation of the solution:\nStep 1 is wrong.", "rating": [0, 0.5, 1][index]}
        for index in range(3)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "make_data, extra, fragment",
    [
        (lambda tmp: tmp / "missing.jsonl", (), "not found"),
        (write_critiques, ("--samples", "0"), "samples must be >= 1"),
        (write_critiques, ("--max-items", "-1"), "max_items must be >= 0"),
        (lambda tmp: write_critiques(tmp, [{"id": "a", "problem": "P", "proof": "Q", "rating": 1}]), (),
         "line 1: missing column 'analysis'"),
        (lambda tmp: write_critiques(tmp, [{"id": "a", "problem": "P", "proof": "Q", "analysis": "A", "rating": 0.7}]), (),
         "line 1:"),
        (lambda tmp: write_critiques(tmp, [{"id": "a", "problem": "P", "proof": "Q", "analysis": "A", "rating": 1}] * 2), (),
         "duplicate id 'a'"),
    ],
    ids=["missing-file", "zero-samples", "negative-max-items", "missing-analysis", "bad-rating", "duplicate-id"],
)
def test_bad_input_fails_before_a_model_loads_and_writes_nothing(cli, tmp_path: Path, make_data, extra, fragment) -> None:
    out = tmp_path / "run"
    assert_clean_error(cli("eval", "meta-verifier", str(make_data(tmp_path)), "--out", str(out), *extra, *NO_MODEL), fragment)
    assert not out.exists()


def test_dry_run_writes_and_prints_the_config_and_stops(cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = cli("eval", "meta-verifier", str(write_critiques(tmp_path)), "--out", str(out), "--samples", "3", "--dry-run",
                 *NO_MODEL)
    assert result.returncode == 0, result.stderr
    printed = tomllib.loads(result.stdout)
    assert printed == tomllib.loads((out / "config.toml").read_text(encoding="utf-8"))
    assert printed["eval_meta_verifier"]["samples"] == 3
    assert printed["eval_meta_verifier"]["data"] == str(tmp_path / "critiques.jsonl")
    assert sorted(path.name for path in out.iterdir()) == ["config.toml"]


def test_an_out_dir_from_different_settings_is_refused_untouched(cli, tmp_path: Path) -> None:
    base = ("eval", "meta-verifier", str(write_critiques(tmp_path)), "--out", str(tmp_path / "run"))
    assert_other_settings_refused_untouched(cli, base, {"id": "c0", "reference": 0.0, "ratings": [0.0]},
                                            (*base, "--samples", "2"), ("eval_meta_verifier.samples 1 -> 2",))


def test_a_finished_run_reruns_without_a_model_and_rewrites_the_metrics(cli, tmp_path: Path) -> None:
    data, out = write_critiques(tmp_path), tmp_path / "run"
    assert cli("eval", "meta-verifier", str(data), "--out", str(out), "--dry-run", *NO_MODEL).returncode == 0
    records = [{"id": "c0", "reference": 0.0, "ratings": [0.0], "completion_tokens": 7},
               {"id": "c1", "reference": 0.5, "ratings": [1.0], "completion_tokens": 9},
               {"id": "c2", "reference": 1.0, "error": "prompt does not fit"}]
    (out / "items.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    result = cli("eval", "meta-verifier", str(data), "--out", str(out), "--json", *NO_MODEL)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["critiques"], summary["accuracy"], summary["recall_0"], summary["recall_half"]) == (2, 0.5, 1.0, 0.0)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"]["prompt_too_long"] == 1 and metrics["counts"]["rated_now"] == 0


def test_world_critiques_get_the_rating_by_defect_check(cli, tmp_path: Path) -> None:
    """The world's critiques say their kind: metrics.json gains whether true ones are rated above invented ones at the
    same boxed score (here a rater that reads only the box: every critique rated 1)."""
    rows = [json.loads(line) for line in WORLD_META.read_text(encoding="utf-8").splitlines()]
    data, out = tmp_path / "world_meta.jsonl", tmp_path / "run"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert cli("eval", "meta-verifier", str(data), "--out", str(out), "--dry-run", *NO_MODEL).returncode == 0
    records = [{"id": row["id"], "reference": row["rating"], "ratings": [1.0]} for row in rows]
    (out / "items.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    result = cli("eval", "meta-verifier", str(data), "--out", str(out), *NO_MODEL)
    assert result.returncode == 0, result.stderr
    assert "by defect: does not split true from invented critiques: boxed 0: true +0.00 over invented" in result.stdout
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    kinds = {row["critique_kind"] for row in rows}
    assert {key.split(",")[0] for key in metrics["rating_by_critique"]} == kinds
    assert metrics["defect_split"]["rates_by_defect"] is False
    assert metrics["defect_split"]["by_boxed_score"]["0"]["invented"] == sum(
        row["critique_kind"] == "invented_defect" and "boxed{0}" in row["analysis"].replace(" ", "") for row in rows)


@pytest.mark.slow
def test_eval_meta_verifier_on_the_embedded_model_resumes_after_the_rated_critiques(cli, tmp_path: Path,
                                                                                    embedded_checkpoint: str) -> None:
    """Real ratings of the world's critiques; a critique already in items.jsonl is not rated again."""
    out = tmp_path / "run"
    base = ("eval", "meta-verifier", str(WORLD_META), "--out", str(out), "--engine", "transformers", "--samples", "2",
            "--max-tokens", "8", "--seed", "0", "--max-items", "3")
    assert cli(*base, "--dry-run").returncode == 0
    rows = [json.loads(line) for line in WORLD_META.read_text(encoding="utf-8").splitlines()[:3]]
    done = {"id": rows[0]["id"], "reference": rows[0]["rating"], "ratings": [1.0, 1.0], "completion_tokens": 3}
    (out / "items.jsonl").write_text(json.dumps(done) + "\n", encoding="utf-8")
    result = cli(*base, "--json")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert records[0] == done and [record["id"] for record in records] == [row["id"] for row in rows]
    for record, row in zip(records[1:], rows[1:]):
        assert record["reference"] == row["rating"] and len(record["ratings"]) == len(record["samples"]) == 2
        assert record["completion_tokens"] == sum(sample["completion_tokens"] for sample in record["samples"]) > 0
    summary = json.loads(result.stdout)
    assert summary["critiques"] == 3 and summary["engine"] == "transformers"
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"]["rated_now"] == 2
    assert metrics["tokens"]["completion"] == sum(record["completion_tokens"] for record in records)
