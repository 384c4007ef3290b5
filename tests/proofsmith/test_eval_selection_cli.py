"""``proofsmith eval selection`` and verifier rows in ``eval verifier``: bad input fails before a model loads, dry run,
resume, settings that differ; real-model runs on the hand-written samples."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cli_checks import NO_MODEL, assert_clean_error, assert_other_settings_refused_untouched

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
PAIR = {"problem": "Prove P.", "proof_1": "Because Q.", "proof_2": "Because R.", "correct_index": 1}
VERIFIER_ROW = {"problem": "Prove P.", "proof": "Because Q.", "ground_truth_judgement": "Q is not enough.",
                "ground_truth_verify_score": 0}


def write_rows(tmp_path: Path, rows: list[Any], name: str = "pairs.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8")
    return path


def selection_record(pair_id: str, correct: int, scores_1: list, scores_2: list) -> dict[str, Any]:
    return {"id": pair_id, "correct_index": correct, "scores_1": scores_1, "scores_2": scores_2, "completion_tokens": 4}


@pytest.mark.parametrize(
    "make_data, extra, fragment",
    [
        (lambda tmp: tmp / "missing.jsonl", (), "input not found"),
        (lambda tmp: write_rows(tmp, [PAIR, '{"problem": "P",']), (), "row at line 2: not valid JSON"),
        (lambda tmp: write_rows(tmp, [PAIR, {**PAIR, "proof_2": "S", "correct_index": 0}]), (),
         "row at line 2: correct_index 0 is not 1 or 2"),
        (lambda tmp: write_rows(tmp, [{**PAIR, "correct_index": 3}]), (), "row at line 1: correct_index 3 is not 1 or 2"),
        (lambda tmp: write_rows(tmp, ["", {**PAIR, "proof_1": " "}]), (), "row at line 2: empty field 'proof_1'"),
        (lambda tmp: write_rows(tmp, [{key: value for key, value in PAIR.items() if key != "problem"}]), (),
         "row at line 1: missing field 'problem'"),
        (lambda tmp: write_rows(tmp, [PAIR]), ("--samples", "0"), "samples must be >= 1"),
        (lambda tmp: write_rows(tmp, [PAIR]), ("--column", "proof_3=x"), "unknown field 'proof_3'"),
        (lambda tmp: write_rows(tmp, []), (), "no rows in"),
    ],
    ids=["missing-file", "bad-json", "index-0", "index-3", "empty-proof", "missing-problem", "zero-samples", "bad-column",
         "empty-file"],
)
def test_bad_input_fails_before_a_model_loads_and_writes_nothing(cli, tmp_path: Path, make_data, extra, fragment) -> None:
    out = tmp_path / "run"
    assert_clean_error(cli("eval", "selection", str(make_data(tmp_path)), "--out", str(out), *extra, *NO_MODEL), fragment)
    assert not out.exists()


def test_dry_run_writes_and_prints_the_config_and_stops(cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = cli("eval", "selection", str(SAMPLES / "pairs.csv"), "--out", str(out), "--samples", "3", "--column",
                 "proof_1=first", "--column", "proof_2=second", "--column", "correct_index=winner", "--dry-run", *NO_MODEL)
    assert result.returncode == 0, result.stderr
    printed = tomllib.loads(result.stdout)
    assert printed == tomllib.loads((out / "config.toml").read_text(encoding="utf-8"))
    assert printed["eval_selection"]["samples"] == 3
    assert printed["eval_selection"]["columns"] == ["proof_1=first", "proof_2=second", "correct_index=winner"]
    assert sorted(path.name for path in out.iterdir()) == ["config.toml"]


def test_an_out_dir_from_different_settings_is_refused_untouched(cli, tmp_path: Path) -> None:
    base = ("eval", "selection", str(SAMPLES / "pairs.jsonl"), "--out", str(tmp_path / "run"))
    assert_other_settings_refused_untouched(cli, base, selection_record("p1", 1, [1.0], [0.0]),
                                            (*base, "--samples", "2", "--max-tokens", "9"),
                                            ("eval_selection.samples 4 -> 2", "sampling.max_tokens"))


def test_a_finished_run_reruns_without_a_model_and_rewrites_the_metrics(cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    base = ("eval", "selection", str(SAMPLES / "pairs.jsonl"), "--out", str(out), "--samples", "2")
    assert cli(*base, "--dry-run", *NO_MODEL).returncode == 0
    records = [selection_record("p1", 1, [1.0, 0.5], [0.0, 0.0]), selection_record("p2", 2, [0.5, 0.5], [1.0, 0.0]),
               {"id": "p3", "correct_index": 1, "error": "prompt does not fit"}]
    (out / "items.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    result = cli(*base, "--json", *NO_MODEL)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["pairs"], summary["correct"], summary["tie"], summary["prompt_too_long"]) == (2, 1, 1, 1)
    assert summary["selection_accuracy"] == 0.5 and summary["accuracy_ties_as_half"] == 0.75
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"]["scored_now"] == 0 and metrics["counts"]["data_items"] == 3
    assert metrics["metrics"]["selection_accuracy"]["interval"] == [0.0, 1.0]
    text = cli(*base, "--max-items", "1", *NO_MODEL)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("1 pairs, n = 2 verifications per proof") and "selection accuracy 1.000" in text.stdout


def test_eval_verifier_refuses_a_bad_verifier_row_before_a_model_loads(cli, tmp_path: Path) -> None:
    data = write_rows(tmp_path, [VERIFIER_ROW, {**VERIFIER_ROW, "proof": "R.", "ground_truth_verify_score": 0.25}],
                      "rows.jsonl")
    out = tmp_path / "run"
    assert_clean_error(cli("eval", "verifier", str(data), "--out", str(out), *NO_MODEL),
                       "rows.jsonl line 2: ground_truth_verify_score 0.25 is not one of 0, 0.5, 1")
    assert_clean_error(cli("eval", "verifier", str(data), "--out", str(out), "--column", "score", *NO_MODEL),
                       "is not FIELD=COLUMN")
    assert not out.exists()


def test_eval_verifier_detects_verifier_rows_and_maps_their_columns(cli, tmp_path: Path) -> None:
    renamed = {"question": "Prove P.", "proof": "Because Q.", "critique": "Fine.", "verdict": 1}
    data, out = write_rows(tmp_path, [renamed], "rows.jsonl"), tmp_path / "run"
    result = cli("eval", "verifier", str(data), "--out", str(out), "--column", "problem=question", "--column",
                 "judgement=critique", "--column", "score=verdict", "--dry-run", *NO_MODEL)
    assert result.returncode == 0, result.stderr
    assert tomllib.loads(result.stdout)["eval_verifier"]["columns"] == ["problem=question", "judgement=critique",
                                                                       "score=verdict"]


@pytest.mark.slow
def test_eval_selection_on_the_embedded_model_then_resume(cli, tmp_path: Path, embedded_checkpoint: str) -> None:
    """Real verifications of two sample pairs; the rerun finds both done and opens no model."""
    out = tmp_path / "run"
    args = ("eval", "selection", str(SAMPLES / "pairs.jsonl"), "--out", str(out), "--engine", "transformers",
            "--samples", "1", "--max-tokens", "8", "--seed", "0", "--max-items", "2", "--json")
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [record["id"] for record in records] == ["p1", "p2"]
    for record in records:
        assert len(record["scores_1"]) == len(record["scores_2"]) == len(record["samples_1"]) == 1
        assert record["outcome"] in ("correct", "wrong", "tie", "no_pick") and record["completion_tokens"] > 0
    summary = json.loads(result.stdout)
    assert summary["pairs"] == 2 and summary["engine"] == "transformers"
    assert sum(summary[name] for name in ("correct", "wrong", "tie", "no_pick")) == 2
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["counts"]["scored_now"] == 2 and metrics["settings"]["n"] == 1

    before = (out / "items.jsonl").read_bytes()
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    assert (out / "items.jsonl").read_bytes() == before
    resumed = json.loads(again.stdout)
    assert resumed["selection_accuracy"] == summary["selection_accuracy"] and resumed["engine"] == "transformers"
    assert json.loads((out / "metrics.json").read_text(encoding="utf-8"))["counts"]["scored_now"] == 0


@pytest.mark.slow
def test_eval_verifier_on_verifier_rows_with_the_embedded_model(cli, tmp_path: Path, embedded_checkpoint: str) -> None:
    out = tmp_path / "run"
    result = cli("eval", "verifier", str(SAMPLES / "verifier_rows.jsonl"), "--out", str(out), "--engine", "transformers",
                 "--samples", "1", "--max-tokens", "8", "--seed", "0", "--max-items", "2", "--json")
    assert result.returncode == 0, result.stderr
    records = {record["id"]: record for record in map(json.loads, (out / "items.jsonl").read_text(encoding="utf-8").splitlines())}
    assert {item: record["human_score"] for item, record in records.items()} == {"v1": 1.0, "v2": 0.5}
    summary = json.loads(result.stdout)
    assert summary["counts"]["evaluated"] == 2 and summary["counts"]["data_items"] == 3
    assert summary["engine"] == "transformers"
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["settings"]["format"] == "verifier-rows (detected)"


def test_eval_meta_verifier_reads_verifier_rows_and_refuses_a_bad_one(cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("eval", "meta-verifier", str(SAMPLES / "verifier_rows.csv"), "--out", str(out), "--dry-run",
               *NO_MODEL).returncode == 0
    data = write_rows(tmp_path, [VERIFIER_ROW, {**VERIFIER_ROW, "proof": "R.", "ground_truth_judgement": ""}], "rows.jsonl")
    assert_clean_error(cli("eval", "meta-verifier", str(data), "--out", str(tmp_path / "other"), *NO_MODEL),
                       "row at line 2: empty critique in column 'ground_truth_judgement'")
    assert not (tmp_path / "other").exists()
