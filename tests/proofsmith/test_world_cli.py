"""``proofsmith world``: the world's splits as JSONL that label, eval verifier and train read as they are."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from data.world.blame import blamed_step
from data.world.checker import check
from data.world.claims import parse_claim
from eval.benchmark_problems import read_benchmark_problems
from eval.human_grades import read_human_grades
from training.config import DataSettings
from training.role_data.rows import read_rows

REPO = Path(__file__).resolve().parents[2]
SMALL = ("--problems-per-template", "1", "--test-problems-per-template", "1", "--family", "inequality",
         "--family", "equation", "--family", "induction")


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_world_writes_checked_splits_reproducibly(cli, tmp_path: Path) -> None:
    out = tmp_path / "world"
    result = cli("world", "--out", str(out), *SMALL, "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert json.loads((out / "summary.json").read_text(encoding="utf-8")) == summary
    assert "[world]" in (out / "config.toml").read_text(encoding="utf-8")
    splits = {name: rows_of(out / f"{name}.jsonl") for name in ("train", "test_in", "test_out")}
    assert {row["family"] for row in splits["train"]} == {"inequality", "equation"}
    assert {row["family"] for row in splits["test_out"]} == {"induction"}
    for name, rows in splits.items():
        assert summary["splits"][name]["proofs"] == len(rows)
        for row in rows:  # the recorded truth is the checker's verdict on the recorded text
            verdict = check([parse_claim(claim) for claim in row["goal"]], row["proof"])
            assert (row["score"], row["first_bad_step"]) == (verdict.score, verdict.first_bad_step)
            assert blamed_step(row["critique"]) == row["first_bad_step"]
    for name in ("test_in", "test_out"):
        shared = summary["splits"][name]["overlap_with_train"]
        assert shared["verbatim_proofs"] == shared["verbatim_statements"] == shared["repeated_problems"] == 0
    again = tmp_path / "again"
    assert cli("world", "--out", str(again), *SMALL).returncode == 0
    for name in ("train.jsonl", "test_in_meta.jsonl", "summary.json"):
        assert (again / name).read_text(encoding="utf-8") == (out / name).read_text(encoding="utf-8").replace(str(out), str(again))
    grades = read_human_grades(out / "test_in.jsonl")  # eval verifier's reader takes a split as it is
    assert [grade.human_score for grade in grades] == [row["score"] for row in splits["test_in"]]
    meta = DataSettings(path=str(out / "train_meta.jsonl"))
    assert len(read_rows(meta, "meta-verifier")) == len(rows_of(out / "train_meta.jsonl"))
    assert all(row.assessment for row in read_rows(meta, "sft", ("meta-verifier",)))
    assert all(row.critique for row in read_rows(DataSettings(path=str(out / "train.jsonl")), "sft"))


def test_bad_world_settings_are_one_line_errors(cli, tmp_path: Path) -> None:
    result = cli("world", "--out", str(tmp_path / "world"), "--family", "geometry")
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        "proofsmith: error: world: unknown family 'geometry'; known: identity, inequality, divisibility, equation, induction, arithmetic"
    ]
    result = cli("world", "--out", str(tmp_path / "world"), "--family", "induction")
    assert result.returncode == 2 and "nothing is left to train on" in result.stderr
    assert not (tmp_path / "world").exists()


@pytest.mark.slow
def test_eval_verifier_and_eval_prover_against_the_checker(cli, tmp_path: Path, tiny_world_model: str) -> None:
    """The CI pass of the world: eval verifier and eval prover with a model trained on a world (the session's tiny
    world model, on its own world), whose truth metrics must come from this run (no thresholds: the model is tiny).
    (The world's rows in training: tests/training/test_multi_process.py trains on data/bundled/world.)"""
    run, proved = tmp_path / "eval", tmp_path / "prover"
    world, model = Path(tiny_world_model).parent / "world", tiny_world_model
    prompts = ("--prompts", str(Path(model) / "prompts"), "--set", "engine.max_model_len=1024")
    result = cli("eval", "verifier", str(world / "test_in.jsonl"), "--out", str(run), "--engine", "transformers",
                 "--model", model, "--max-items", "3", "--samples", "2", "--meta", "0", "--max-tokens", "200",
                 "--seed", "0", "--json", *prompts)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert sorted(metrics["truth_by_n"], key=int) == ["1", "2"]
    truth = metrics["truth_by_n"]["2"]
    rows = rows_of(world / "test_in.jsonl")[:3]
    assert truth["items"] == 3 and truth["flawed"] == sum(row["score"] < 1 for row in rows)
    assert summary["truth"] == truth and summary["model"] == model
    records = [json.loads(line) for line in (run / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    analyses = [analysis for record in records for analysis in record["analyses"]]
    failures = sum(analysis["score"] is None for analysis in analyses) / len(analyses)
    assert truth["format_failure_rate"] == pytest.approx(failures)  # computed from this run's analyses
    for name in ("localisation", "invented_defect_rate", "balanced_accuracy", "kappa"):
        assert truth[name] is None or -1.0 <= truth[name] <= 1.0
    assert truth["majority_class"]["accuracy"] == max(Counter(row["score"] for row in rows).values()) / 3
    page = (run / "report.html").read_text(encoding="utf-8")
    assert '<table id="truth-vs-n">' in page and page.count("data:image/png;base64,") >= 4
    result = cli("eval", "prover", str(world / "test_in_problems.jsonl"), "--out", str(proved), "--engine", "transformers",
                 "--model", model, "--max-items", "1", "--max-rounds", "2", "--max-tokens", "200",
                 "--grader-max-tokens", "16", "--seed", "0", "--json", *prompts)
    assert result.returncode == 0, result.stderr
    (record,) = [json.loads(line) for line in (proved / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    goal = rows_of(world / "test_in_problems.jsonl")[0]["goal"]
    verdict = check([parse_claim(claim) for claim in goal], record["proof"])  # the checker's verdict on this run's proof
    assert (record["truth"]["score"], record["truth"]["first_bad_step"]) == (verdict.score, verdict.first_bad_step)
    total = json.loads(result.stdout)["total"]
    assert total["truth_checked"] == 1 and total["true_pass"] == (verdict.score == 1.0)
    # the proof each round budget would have returned, judged too: the last budget's is the final proof
    assert len(record["true_score_by_round"]) == 2 and record["true_score_by_round"][-1] == verdict.score
    assert set(total["true_pass_rate_by_round"]) == {"1", "2"}
    searched = tmp_path / "searched"
    result = cli("eval", "prover", str(world / "test_in_problems.jsonl"), "--out", str(searched), "--engine", "transformers",
                 "--model", model, "--max-items", "1", "--mode", "search", "--pool", "2", "--verify-samples", "1",
                 "--rounds", "0", "--max-tokens", "200", "--grader-max-tokens", "16", "--seed", "0", "--json", *prompts)
    assert result.returncode == 0, result.stderr
    (record,) = [json.loads(line) for line in (searched / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    pool = [json.loads(line) for line in next(searched.glob("search/*/pool.jsonl")).read_text(encoding="utf-8").splitlines()]
    # every pool proof judged by the checker, beside the verifier's pick
    assert record["pool_true_scores"] == [check([parse_claim(claim) for claim in goal], entry["proof"]).score for entry in pool]
    total = json.loads(result.stdout)["total"]
    assert total["pool_proofs"] == len(pool) and total["true_pool_pass_rate"] == sum(
        score == 1.0 for score in record["pool_true_scores"]) / len(pool)


def test_the_bundled_world_is_what_the_default_settings_write(cli, tmp_path: Path) -> None:
    """data/bundled/world, which the shipped configs train on, is `proofsmith world` at its defaults, byte for byte."""
    bundled, out = REPO / "data" / "bundled" / "world", tmp_path / "world"
    assert cli("world", "--out", str(out)).returncode == 0
    names = sorted(path.name for path in bundled.iterdir())
    assert names == sorted(path.name for path in out.iterdir())
    for name in names:
        expected = (bundled / name).read_text(encoding="utf-8")
        written = (out / name).read_text(encoding="utf-8")
        assert written == expected.replace('"out": "data/bundled/world"', f'"out": "{out}"'), name
    problems = rows_of(bundled / "test_out_problems.jsonl")
    assert len({row["id"] for row in problems}) == len(problems) == len({row["problem_id"] for row in rows_of(bundled / "test_out.jsonl")})
    assert read_benchmark_problems(bundled / "test_out_problems.jsonl")[0].goal == tuple(problems[0]["goal"])
