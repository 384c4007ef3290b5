"""``proofsmith eval verifier`` and ``eval prover``: bad input fails before a model loads, dry run, resume; real-model runs."""

from __future__ import annotations

import csv
import json
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cli_checks import NO_MODEL, assert_clean_error, assert_other_settings_refused_untouched

def write_grades(tmp_path: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    path = tmp_path / "grades.jsonl"
    rows = rows if rows is not None else [
        {"id": f"p{index}", "problem": f"Prove that {index} + {index} is even.", "proof": f"{index} + {index} = 2 * {index}.",
         "score": [1, 0, 0.5][index]}
        for index in range(3)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def label_record(item_id: str, human: float, scores: list[float | None], ratings: Sequence[float] = ()) -> dict:
    """A record as the label pipeline writes it; ``ratings``: one meta rating per flagged analysis (score < 1), in order."""
    analyses, pending = [], list(ratings)
    for score in scores:
        rating = pending.pop(0) if score is not None and score < 1 else None
        analyses.append({"score": score, "analysis": "...", "format_errors": [], "finish_reason": "stop",
                         "completion_tokens": 5, "valid": None if rating is None else rating == 1,
                         "meta": [] if rating is None else [{"score": rating}]})
    return {"id": item_id, "problem": "P", "proof": "Q", "human_score": human, "label": None, "rule": "needs-human",
            "lowest_score": None, "valid_at_lowest": 0, "analyses": analyses, "completion_tokens": 10}


@pytest.mark.parametrize(
    "make_data, extra, fragment",
    [
        (lambda tmp: tmp / "missing.jsonl", (), "human grades not found"),
        (write_grades, ("--format", "xml"), "unknown format 'xml'"),
        (write_grades, ("--mapping", "generous"), "unknown grade mapping 'generous'"),
        (write_grades, ("--samples", "0"), "samples must be >= 1"),
        (write_grades, ("--meta", "-1"), "meta must be >= 0"),
        (lambda tmp: write_grades(tmp, [{"id": "a", "problem": "P", "proof": "Q", "score": 2}]), (),
         "line 1: score 2 is not one of 0, 0.5, 1"),
        (lambda tmp: write_grades(tmp, [{"id": "a", "problem": "P", "proof": "", "score": 1}]), (), "field 'proof' is empty"),
        (lambda tmp: write_grades(tmp, []), (), "cannot tell which human-grade format"),
        (lambda tmp: write_grades(tmp, []), ("--format", "jsonl"), "no graded proofs"),
    ],
    ids=["missing-file", "unknown-format", "unknown-mapping", "zero-samples", "negative-meta", "bad-score", "empty-proof",
         "empty-file", "empty-file-with-format"],
)
def test_bad_input_fails_before_a_model_loads_and_writes_nothing(cli, tmp_path: Path, make_data, extra, fragment) -> None:
    out = tmp_path / "run"
    assert_clean_error(cli("eval", "verifier", str(make_data(tmp_path)), "--out", str(out), *extra, *NO_MODEL), fragment)
    assert not out.exists()


def test_bad_out_paths(cli, tmp_path: Path) -> None:
    data = write_grades(tmp_path)
    result = cli("eval", "verifier", str(data), "--out", str(tmp_path / "no" / "run"), *NO_MODEL)
    assert_clean_error(result, "output directory does not exist")
    assert_clean_error(cli("eval", "verifier", str(data), "--out", str(data), *NO_MODEL), "exists and is not a directory")


def test_dry_run_writes_and_prints_the_config_and_stops(cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = cli("eval", "verifier", str(write_grades(tmp_path)), "--out", str(out), "--samples", "2", "--meta", "1",
                 "--mapping", "partial-half", "--dry-run", *NO_MODEL)
    assert result.returncode == 0, result.stderr
    printed = tomllib.loads(result.stdout)
    assert printed == tomllib.loads((out / "config.toml").read_text(encoding="utf-8"))
    section = printed["eval_verifier"]
    assert (section["samples"], section["meta"], section["mapping"]) == (2, 1, "partial-half")
    assert section["data"] == str(tmp_path / "grades.jsonl")
    assert sorted(path.name for path in out.iterdir()) == ["config.toml"]


def test_an_out_dir_from_different_settings_is_refused_untouched(cli, tmp_path: Path) -> None:
    base = ("eval", "verifier", str(write_grades(tmp_path)), "--out", str(tmp_path / "run"))
    assert_other_settings_refused_untouched(cli, (*base, "--samples", "2"), label_record("p0", 1, [1, 1]),
                                            (*base, "--samples", "4", "--temperature", "0"),
                                            ("eval_verifier.samples 2 -> 4", "sampling.temperature 0.7 -> 0.0"))


def test_a_finished_run_reruns_without_a_model_and_rewrites_the_metrics(cli, tmp_path: Path) -> None:
    data, out = write_grades(tmp_path), tmp_path / "run"
    base = ("eval", "verifier", str(data), "--out", str(out), "--samples", "2", "--meta", "1", *NO_MODEL)
    assert cli(*base, "--dry-run").returncode == 0
    records = [label_record("p0", 1, [1, 0], [0]), label_record("p1", 0, [0, None], [1]),
               {**label_record("p2", 0.5, []), "rule": "prompt-too-long", "error": "too long"}]
    (out / "items.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    result = cli(*base, "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["counts"] == {"data_items": 3, "selected": 3, "resumed": 3, "verified_now": 0, "records": 3,
                                 "evaluated": 2, "prompt_too_long": 1, "without_human_score": 0}
    # p0: raw (1, 0) ties low -> 0, wrong; filtered drops the invalid 0 -> 1, right. p1: 0, right either way.
    assert (summary["n"], summary["accuracy_majority"], summary["meta_filtered"]["accuracy_majority"]) == (2, 0.5, 1.0)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert list(metrics["metrics_by_n"]) == ["1", "2"] and metrics["settings"]["n"] == 2
    assert (out / "report.html").read_text(encoding="utf-8").count('id="headline') == 2

    text = cli("eval", "verifier", str(data), "--out", str(out), "--samples", "2", "--meta", "1", "--max-items", "1",
               *NO_MODEL)
    assert text.returncode == 0, text.stderr
    assert "evaluated 1 of 1 proofs (3 in the data" in text.stdout
    assert json.loads((out / "metrics.json").read_text(encoding="utf-8"))["counts"]["selected"] == 1


@pytest.mark.slow
def test_eval_verifier_on_the_embedded_model_then_resume(cli, tmp_path: Path, embedded_checkpoint: str) -> None:
    data, out = write_grades(tmp_path), tmp_path / "run"
    args = ("eval", "verifier", str(data), "--out", str(out), "--samples", "2", "--meta", "1", "--max-tokens", "24",
            "--engine", "transformers", "--seed", "0", "--json")
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    records = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(record["id"] for record in records) == ["p0", "p1", "p2"]
    for record in records:
        assert "error" not in record and len(record["analyses"]) == 2
        assert record["human_score"] == {"p0": 1, "p1": 0, "p2": 0.5}[record["id"]]
        for analysis in record["analyses"]:
            flagged = analysis["score"] is not None and analysis["score"] < 1
            assert len(analysis["meta"]) == (1 if flagged else 0)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert list(metrics["metrics_by_n"]) == ["1", "2"] and list(metrics["meta_filtered"]["by_n"]) == ["1", "2"]
    assert metrics["counts"]["evaluated"] == 3 and metrics["counts"]["verified_now"] == 3
    assert metrics["metrics_by_n"]["2"]["samples"] == 6
    assert metrics["metrics_by_n"]["2"]["format_failures"] == sum(
        analysis["score"] is None for record in records for analysis in record["analyses"])
    assert summary["n"] == 2 and summary["accuracy_majority"] == metrics["metrics_by_n"]["2"]["accuracy_majority"]
    assert summary["engine"] == "transformers" == metrics["settings"]["engine"]
    assert metrics["cost"]["judgements"] == 6 and metrics["cost"]["tokens_per_judgement"] <= 24
    assert summary["binary_accuracy_majority"] == metrics["metrics_by_n"]["2"]["binary"]["accuracy_majority"]
    assert summary["points_reason"] and "reason" in metrics["reference_verifier"]  # plain JSONL: no points, no reference
    assert (out / "report.html").exists() and (out / "config.toml").exists()

    before = (out / "items.jsonl").read_bytes()
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    resumed = json.loads(again.stdout)
    assert (out / "items.jsonl").read_bytes() == before
    assert resumed["counts"]["resumed"] == 3 and resumed["counts"]["verified_now"] == 0
    assert resumed["engine"] == "transformers" and resumed["accuracy_majority"] == summary["accuracy_majority"]


# eval prover
COLUMNS = ("Problem ID", "Problem", "Solution", "Grading guidelines", "Category", "Level", "Short Answer", "Source")


def write_benchmark(tmp_path: Path, rows: list[dict[str, str]] | None = None) -> Path:
    """A small IMO-ProofBench-style CSV of our own problems."""
    rows = rows if rows is not None else [
        {"Problem ID": "PB-Basic-001", "Problem": "Find all integers $n$ with $n^2 = 4$.", "Solution": "$n = 2$ or $n = -2$.",
         "Grading guidelines": "(Partial) finds one root.\n(Almost) forgets to check.", "Category": "Algebra",
         "Level": "pre-IMO", "Short Answer": "$\\{-2, 2\\}$", "Source": "own"},
        {"Problem ID": "PB-Basic-002", "Problem": "Prove that the sum of two even integers is even.",
         "Solution": "$2a + 2b = 2(a + b)$.", "Grading guidelines": "(Partial) sets up $2a, 2b$.", "Category": "Number theory",
         "Level": "IMO-easy", "Short Answer": "", "Source": "own"},
        {"Problem ID": "PB-Advanced-001", "Problem": "Compute $2 + 3$.", "Solution": "$5$.", "Grading guidelines": "",
         "Category": "Algebra", "Level": "IMO-hard", "Short Answer": "$5$", "Source": "own"},
    ]
    path = tmp_path / "bench.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def problem_record(problem_id: str, points: int | None, level: str, category: str, **extra: Any) -> dict[str, Any]:
    """A record as ``eval prover`` writes it."""
    return {
        "id": problem_id, "level": level, "category": category, "source": "own", "points": points,
        "graded": points is not None, "proof": "A proof.", "self_score": 1.0, "verifier_mean": None, "format_errors": [],
        "rounds": 1, "completion_tokens": 50, "prove_s": 1.0,
        "grade": {"points": points, "samples": [points], "refused": None, "markings": []}, "grade_s": 1.0,
        "short_answer": None, "answer_check": None, "disagreement": None,
        "prover": {"engine": "transformers", "model": "m"}, "grader": {"engine": "transformers", "model": "m"}, **extra,
    }


@pytest.mark.parametrize(
    "make_data, extra, fragment",
    [
        (lambda tmp: tmp / "missing.csv", (), "benchmark file not found"),
        (write_benchmark, ("--format", "xml"), "unknown format 'xml'"),
        (write_benchmark, ("--mode", "beam"), "unknown mode 'beam'"),
        (write_benchmark, ("--grader-samples", "0"), "samples must be >= 1"),
        (write_benchmark, ("--grader-engine", "magic"), "unknown engine 'magic'"),
        (write_benchmark, ("--select", "PB-Nothing"), "no problems whose id starts with PB-Nothing"),
        (lambda tmp: write_benchmark(tmp, [{column: "PB-1" if column == "Problem ID" else "x" for column in COLUMNS}] * 2),
         (), "line 3: duplicate id 'PB-1'"),
        (lambda tmp: write_benchmark(tmp, [{**{column: "x" for column in COLUMNS}, "Problem": ""}]), (),
         "has an empty statement"),
    ],
    ids=["missing-file", "unknown-format", "unknown-mode", "zero-grader-samples", "unknown-grader-engine", "select-nothing",
         "duplicate-id", "empty-problem"],
)
def test_prover_bad_input_fails_before_a_model_loads_and_writes_nothing(cli, tmp_path: Path, make_data, extra, fragment) -> None:
    out = tmp_path / "run"
    assert_clean_error(cli("eval", "prover", str(make_data(tmp_path)), "--out", str(out), *extra, *NO_MODEL), fragment)
    assert not out.exists()


def test_prover_dry_run_writes_and_prints_the_config_and_stops(cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = cli("eval", "prover", str(write_benchmark(tmp_path)), "--out", str(out), "--mode", "search",
                 "--verify-samples", "3", "--select", "PB-Basic", "--grader-model", "judge", "--grader-samples", "2",
                 "--dry-run", *NO_MODEL)
    assert result.returncode == 0, result.stderr
    printed = tomllib.loads(result.stdout)
    assert printed == tomllib.loads((out / "config.toml").read_text(encoding="utf-8"))
    assert printed["eval_prover"]["mode"] == "search" and printed["eval_prover"]["select"] == ["PB-Basic"]
    # In search mode --verify-samples is the pool's N, as in `prove --search`.
    assert printed["search"]["verify_samples"] == 3 and printed["prove"]["verify_samples"] == 4
    assert (printed["grader"]["model"], printed["grader"]["samples"]) == ("judge", 2)
    assert sorted(path.name for path in out.iterdir()) == ["config.toml"]


def test_prover_an_out_dir_from_different_settings_is_refused_untouched(cli, tmp_path: Path) -> None:
    base = ("eval", "prover", str(write_benchmark(tmp_path)), "--out", str(tmp_path / "run"))
    assert_other_settings_refused_untouched(cli, base, problem_record("PB-Basic-001", 7, "pre-IMO", "Algebra"),
                                            (*base, "--grader-max-tokens", "64"), ("grader.max_tokens 1024 -> 64",))


def test_prover_a_finished_run_reruns_without_a_model_and_rewrites_the_metrics(cli, tmp_path: Path) -> None:
    data, out = write_benchmark(tmp_path), tmp_path / "run"
    base = ("eval", "prover", str(data), "--out", str(out), *NO_MODEL)
    assert cli(*base, "--dry-run").returncode == 0
    wrong = {"equivalent": False, "answer": "3", "method": "math", "reason": "", "answer_form": "3", "reference_form": "5"}
    records = [
        problem_record("PB-Basic-001", 7, "pre-IMO", "Algebra"),
        problem_record("PB-Basic-002", None, "IMO-easy", "Number theory"),
        problem_record("PB-Advanced-001", 6, "IMO-hard", "Algebra", short_answer="$5$", answer_check=wrong,
                       disagreement="wrong answer, marked 6-7"),
    ]
    (out / "items.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    result = cli(*base, "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["counts"] == {"data_problems": 3, "selected": 3, "evaluated": 3, "resumed": 3, "proved_now": 0}
    total = summary["total"]
    # 7 + 6 points over the 2 graded problems; the ungraded one is counted, not scored 0.
    assert (total["points"], total["max_points"], total["percent"], total["ungraded"]) == (13, 14, 92.86, 1)
    assert (total["answer_checked"], total["answer_correct"], total["disagreements"]) == (1, 0, 1)
    assert [row["category"] for row in summary["by_category"]] == ["Algebra", "Number theory"]
    assert summary["by_category"][1]["percent"] is None
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["disagreements"] == [{"id": "PB-Advanced-001", "kind": "wrong answer, marked 6-7", "points": 6,
                                         "answer": "3", "short_answer": "$5$"}]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert all(f'id="{table}"' in page for table in ("summary-total", "summary-by-level", "summary-by-category", "rows"))

    text = cli(*base, "--select", "PB-Basic")
    assert text.returncode == 0, text.stderr
    assert "evaluated 2 of 2 problems (3 in the data" in text.stdout and "score: 7 / 7 points (100.0 %)" in text.stdout


@pytest.mark.slow
def test_eval_prover_on_the_embedded_model_then_resume(cli, tmp_path: Path, embedded_checkpoint: str) -> None:
    data, out = write_benchmark(tmp_path), tmp_path / "run"
    args = ("eval", "prover", str(data), "--out", str(out), "--select", "PB-Basic", "--max-rounds", "1",
            "--max-tokens", "48", "--grader-max-tokens", "24", "--engine", "transformers", "--seed", "0", "--json")
    result = cli(*args, "--max-items", "1")
    assert result.returncode == 0, result.stderr
    first = json.loads(result.stdout)
    assert first["counts"]["proved_now"] == 1 and first["prover_engine"] == "transformers"
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["counts"] == {"data_problems": 3, "selected": 2, "evaluated": 2, "resumed": 1, "proved_now": 1}
    records = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [record["id"] for record in records] == ["PB-Basic-001", "PB-Basic-002"]
    for record in records:
        assert record["rounds"] == 1 and record["completion_tokens"] > 0
        assert record["points"] in (None, 0, 1, 6, 7) and record["grader"]["engine"] == "transformers"
        if record["proof"].strip():
            # A real marking ran: one sample, its text kept, points parsed or a format failure named.
            (marking,) = record["grade"]["markings"]
            assert marking["text"] and (marking["points"] is not None or marking["format_errors"])
    assert records[0]["short_answer"] == "$\\{-2, 2\\}$" and records[0]["answer_check"] is not None
    assert records[1]["short_answer"] is None and records[1]["answer_check"] is None
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["total"][0]["problems"] == 2 and [row["level"] for row in metrics["by_level"]] == ["pre-IMO", "IMO-easy"]
    assert (out / "report.html").exists()


def test_the_grader_shares_the_prover_engine_unless_it_names_another() -> None:
    from proofsmith.commands.eval_prover import grader_engine_config
    from proofsmith.config import resolve_config

    assert grader_engine_config(resolve_config(None, {})) is None
    assert grader_engine_config(resolve_config(None, {"grader": {"model": "embedded"}})) is None  # same as the prover's
    served = resolve_config(None, {"engine": {"base_urls": ["http://a/v1"]},
                                   "grader": {"backend": "openai", "model": "judge", "api_key_env": "JUDGE_KEY"}})
    grader = grader_engine_config(served)
    assert grader is not None
    assert (grader.backend, grader.model, grader.base_urls, grader.api_key_env) == ("openai", "judge", ["http://a/v1"], "JUDGE_KEY")
    assert served.engine.model == "embedded"  # the prover's settings are untouched


def test_points_and_the_reference_verifier_reach_the_summary(cli, tmp_path: Path) -> None:
    """DeepSeekMath-V2 outputs carry points and the release's verifier mean: a finished run reports both."""
    data, out = tmp_path / "IMO2025.jsonl", tmp_path / "run"
    rows = [{"problem_idx": f"IMO2025-{index}", "question": "Prove it.", "model_prediction": {
        "proof": "Proof.", "human_rating": points, "average_automatic_rating": rating}}
            for index, (points, rating) in enumerate([(7, 1.0), (0, 1.0)], start=1)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    base = ("eval", "verifier", str(data), "--out", str(out), "--samples", "2", *NO_MODEL)
    assert cli(*base, "--dry-run").returncode == 0
    records = [label_record("IMO2025-1", 1, [1, 1]), label_record("IMO2025-2", 0, [0, None], [1])]
    (out / "items.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    result = cli(*base, "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    # ours: 1 -> 7 points (human 7), 0 -> 0 (human 0); the release's verifier says 1 -> 7 for both (one false pass)
    assert summary["points_mae_points"] == 0 and summary["points_four_class_accuracy"] == 1.0
    assert summary["binary_accuracy_majority"] == 1.0 and summary["binary_accuracy_one_sample"] == 1.0
    assert summary["tokens_per_judgement"] == 5
    reference = summary["reference_verifier"]
    assert reference["items"] == 2 and reference["reference"]["points_mae_points"] == 3.5
    assert reference["reference"]["binary_accuracy_majority"] == 0.5 and reference["ours_vs_reference_mae"] == 0.5
    text = cli(*base)
    assert "0-7 points: four_class_accuracy 1.000" in text.stdout and "reference verifier (2 proofs)" in text.stdout
