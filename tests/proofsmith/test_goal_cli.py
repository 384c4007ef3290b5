"""``--goal``: the world checker's verdict beside the bundled world model's, in prove and verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_checks import NO_MODEL, assert_clean_error

from data.world.blame import blamed_step
from data.world.checker import check_goal
from engine.model_store import bundled_world_model
from proofsmith.commands.verify import print_verification

EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "bundled" / "examples"
PROBLEM = "Prove that 3x^2 + 60x + 303 = 3 exactly when x = -10."
GOAL = "3x^2 + 60x + 303 = 3 exactly when x = -10"
FLAWED_GOAL = "(4a - 7b)^2 - (4a + 7b)^2 = -112ab"
WORLD = ("--model", "world-model", "--engine", "transformers", "--seed", "0")


@pytest.mark.slow
def test_prove_prints_the_checkers_verdict_of_the_final_proof(cli, tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    result = cli("prove", PROBLEM, "--goal", GOAL, "--max-rounds", "2", "--out", str(out), *WORLD)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    summary = records[-1]
    verdict = check_goal([GOAL], summary["proof"])
    assert summary["checker"] == {"goal": [GOAL], "score": verdict.score, "first_bad_step": verdict.first_bad_step,
                                  "reason": verdict.reason}
    assert summary["proof"].count("Step ") >= 2  # the world model writes numbered steps in its own prompts
    assert Path(records[0]["config"]["prompts_dir"]) == bundled_world_model() / "prompts"  # the prompts it carries, unasked
    shown = "format failure" if summary["self_score"] is None else f"{summary['self_score']:g}"
    assert f"\nchecker: {verdict.score:g}" in result.stdout and f"\nself-evaluation: {shown}\n" in result.stdout


@pytest.mark.slow
def test_verify_sets_the_first_bad_step_beside_the_steps_the_analyses_blame(cli, capsys: pytest.CaptureFixture[str]) -> None:
    files = ("--problem", str(EXAMPLES / "world_problem.txt"), "--proof", str(EXAMPLES / "world_flawed_proof.txt"))
    result = cli("verify", *files, "--goal", FLAWED_GOAL, "--samples", "2", "--json", *WORLD)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    checker = report["checker"]
    assert checker["score"] == 0.0 and checker["first_bad_step"] == 1 and "is false" in checker["reason"]
    assert checker["blamed_steps"] == [blamed_step(sample["analysis"]) for sample in report["samples"]]
    print_verification(report, "score")  # the text the command prints without --json
    text = capsys.readouterr().out
    blamed = ", ".join("none" if step is None else str(step) for step in checker["blamed_steps"])
    assert "\nchecker: 0, first bad step 1 (step 1: " in text and f"\nsteps the analyses blame: {blamed}\n" in text


@pytest.mark.parametrize(("arguments", "fragment"), [
    (("prove", PROBLEM, "--goal", "nothing to check here"), "is not a claim the world's checker reads"),
    (("prove", PROBLEM, "--goal", " "), "--goal is empty"),
    (("prove", PROBLEM, "--goal", GOAL, "--search"), "--goal works with sequential prove, not with --search"),
    (("prove", "--search", "--problems", "problems.jsonl", "--goal", GOAL), "not of a --problems file"),
    (("verify", "--problem", "p.txt", "--proof", "q.txt", "--goal", "x +"), "is not a claim the world's checker reads"),
])
def test_a_goal_the_checker_cannot_use_is_refused_before_a_model_loads(cli, arguments: tuple[str, ...], fragment: str) -> None:
    assert_clean_error(cli(*arguments, *NO_MODEL), fragment)
