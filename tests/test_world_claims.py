"""benchmarks/world_claims.py: the reproduce-everything command's steps, markers and refusals, and its report's verdicts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark_modules import BENCHMARKS, load_benchmark

claims = load_benchmark("world_claims")
report = load_benchmark("world_claims_report")
RESULTS = BENCHMARKS / "results"


def test_every_claim_of_the_issue_has_a_step_whose_script_exists():
    assert {claim for step in claims.STEPS for claim in step.claims} == set(claims.CLAIMS)
    assert len({step.name for step in claims.STEPS}) == len(claims.STEPS)
    assert [step.name for step in claims.chosen(["e"])] == ["loop", "loop-checker-labels"]
    with pytest.raises(ValueError, match="no script"):
        claims.Step("missing", ("a",), "no_such_script.py", (), 1)
    with pytest.raises(ValueError, match="claims must be"):
        claims.Step("odd", ("z",), "world_claims.py", (), 1)


def test_the_fast_profile_measures_every_claim_and_changes_only_the_steps_it_must():
    assert {claim for step in claims.FAST_STEPS for claim in step.claims} == set(claims.CLAIMS)
    full = {step.name: step for step in claims.STEPS}
    for step in claims.FAST_STEPS:
        if step.claims in (("f",), ("ci",)):
            assert step == full[step.name]  # the same runs: whatever one profile ran, the other reads back
        elif "--set" in step.arguments:  # a changed config trains into runs of its own, never into the full profile's
            assert any(argument.startswith(claims.FAST_RUNS) for argument in step.arguments), step.name
    assert sum(step.minutes for step in claims.FAST_STEPS) < sum(step.minutes for step in claims.STEPS) / 2


def test_the_fast_profile_has_its_own_results_and_markers():
    command = [sys.executable, str(BENCHMARKS / "world_claims.py"), "--dry-run", "--profile", "fast", "--only", "a"]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "--out benchmarks/results/fast" in result.stdout and "grpo.max_steps=40" in result.stdout
    assert "generator" not in result.stdout


def test_dry_run_lists_the_steps_and_their_cost_and_runs_nothing(tmp_path):
    result = subprocess.run([sys.executable, str(BENCHMARKS / "world_claims.py"), "--dry-run", "--runs", str(tmp_path / "runs"),
                             "--only", "f"], capture_output=True, text=True, check=True)
    assert "test-time" in result.stdout and "loop" not in result.stdout
    assert "40 minutes to run here" in result.stdout
    assert not (tmp_path / "runs").exists()


def test_a_failing_step_is_a_one_line_error_and_leaves_no_marker(tmp_path):
    failing = claims.Step("failing", ("f",), "world_claims.py", ("--no-such-flag",), 1)
    with pytest.raises(SystemExit, match=r"^error: step failing failed \(exit 2\).*rerun this command to resume$"):
        claims.run(failing, tmp_path, tmp_path)
    assert not (tmp_path / "failing.done").exists()


def test_a_step_that_ends_leaves_its_marker_and_is_skipped_after(tmp_path):
    dry = claims.Step("listing", ("f",), "world_claims.py", ("--dry-run", "--runs", str(tmp_path / "elsewhere")), 1)
    assert claims.state(dry, tmp_path) == "to run"
    claims.run(dry, tmp_path, tmp_path)
    assert json.loads((tmp_path / "listing.done").read_text())["seconds"] >= 0
    assert claims.state(dry, tmp_path).startswith("done")


def test_the_report_of_the_published_results_judges_every_claim_offline():
    assert [build(RESULTS).verdict != report.NOT_MEASURED for build in report.SECTIONS] == [True] * len(report.SECTIONS)
    page = report.page(RESULTS, "", "a machine")
    for title in ("(a)", "(b)", "(c)", "(d)", "(e)", "(f)", "A learning test in CI"):
        assert title in page
    assert not re.search(r"(src|href)=['\"]https?:", page)  # loads nothing: plots are data URIs
    assert page.count("data:image/png;base64,") >= 4


def test_the_report_is_written_beside_the_results_it_reads(tmp_path):
    path = claims.write_report(tmp_path, tmp_path / "runs")
    assert path == tmp_path / claims.REPORT
    assert "How to reproduce" in path.read_text(encoding="utf-8")


def write(results: Path, name: str, data: dict) -> None:
    (results / name).write_text(json.dumps(data), encoding="utf-8")


def test_test_time_is_met_only_when_the_pick_and_the_rounds_beat_their_baselines(tmp_path):
    def runs(pick_interval, last_interval):
        rounds = {"true_pass_rate_by_round": {"1": 0.1, "2": 0.2},
                  "intervals": {"last round minus round 1": {"value": 0.1, "interval": last_interval}}}
        return {"runs": {"search_selection": {"true_pass_rate": 0.3, "true_pool_pass_rate": 0.2, "intervals": {
            "pick": {"value": 0.3, "interval": [0.2, 0.4]},
            "pick minus random pool proof": {"value": 0.1, "interval": pick_interval}}},
            "refine_verifier": rounds, "refine_self": rounds}}

    write(tmp_path, "world_model_test_time.json", runs([0.05, 0.15], [0.02, 0.2]))
    assert report.test_time(tmp_path).verdict == report.MET
    write(tmp_path, "world_model_test_time.json", runs([-0.01, 0.15], [0.02, 0.2]))
    assert report.test_time(tmp_path).verdict == report.NOT_MET
    write(tmp_path, "world_model_test_time.json", runs([0.05, 0.15], [-0.02, 0.2]))
    assert report.test_time(tmp_path).verdict == report.NOT_MET


def test_missing_or_foreign_results_are_not_measured_never_a_crash(tmp_path):
    page = report.page(tmp_path, "", "a machine")
    assert page.count(f"class='not-measured'>{report.NOT_MEASURED}<") == len(report.SECTIONS)
    write(tmp_path, "world_model_test_time.json", {"runs": {"search_selection": {"intervals": {}}}})
    page = report.page(tmp_path, "", "a machine")
    assert "its results could not be read: KeyError" in page


def test_a_section_refuses_a_verdict_it_does_not_know():
    with pytest.raises(ValueError, match="verdict must be"):
        report.Section("x", "goal", "maybe", "")


# Each verdict on the published results' own shapes: made to meet its goal, then broken one condition at a time.

def published(name: str) -> dict:
    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


def good_gain(metrics: dict, name: str, interval: list[float]) -> None:
    metrics[f"{name} gain"] = {"value": sum(interval) / 2, "interval": interval}


def test_the_verifier_claim_needs_both_gains_above_0_and_both_baselines_beaten_on_every_seed(tmp_path):
    data = published("world_verifier_rl.json")
    seeds = data["arms"]["reference"]
    for entry in seeds.values():
        metrics = entry["comparison"]["test_in"]["metrics"]
        good_gain(metrics, "balanced_accuracy", [0.02, 0.06])
        good_gain(metrics, "localisation", [0.01, 0.05])
        metrics["balanced_accuracy after"]["value"], metrics["localisation after"]["value"] = 0.8, 0.6
    write(tmp_path, "world_verifier_rl.json", data)
    assert report.verifier_learns(tmp_path).verdict == report.MET
    last = seeds[max(seeds)]["comparison"]["test_in"]["metrics"]
    good_gain(last, "localisation", [-0.01, 0.05])
    write(tmp_path, "world_verifier_rl.json", data)
    assert report.verifier_learns(tmp_path).verdict == report.NOT_MET
    good_gain(last, "localisation", [0.01, 0.05])
    last["localisation after"]["value"] = 0.3  # below a random step's 0.37
    write(tmp_path, "world_verifier_rl.json", data)
    assert report.verifier_learns(tmp_path).verdict == report.NOT_MET


def test_the_meta_claim_needs_fewer_invented_defects_more_localised_and_a_meta_verifier_that_reads_the_defect(tmp_path):
    data = published("world_verifier_rl.json")
    assert data["meta_check"]["defect_split"]["rates_by_defect"] is True  # the published meta-check passed
    for groups in data["reference_vs_none"].values():
        good_gain(groups["test_in"]["metrics"], "invented_defect_rate", [-0.06, -0.01])
        good_gain(groups["test_in"]["metrics"], "localisation", [0.01, 0.05])
    data["meta_check"]["defect_split"]["rates_by_defect"] = True
    write(tmp_path, "world_verifier_rl.json", data)
    assert report.meta_earns_its_place(tmp_path).verdict == report.MET
    data["meta_check"]["defect_split"]["rates_by_defect"] = False
    write(tmp_path, "world_verifier_rl.json", data)
    assert report.meta_earns_its_place(tmp_path).verdict == report.NOT_MET
    data["meta_check"]["defect_split"]["rates_by_defect"] = True
    good_gain(data["reference_vs_none"]["0"]["test_in"]["metrics"], "invented_defect_rate", [-0.06, 0.01])
    write(tmp_path, "world_verifier_rl.json", data)
    assert report.meta_earns_its_place(tmp_path).verdict == report.NOT_MET


def test_more_verification_is_met_only_when_every_n_of_the_trained_verifier_beats_n_random_steps(tmp_path):
    data = published("world_verifier_rl.json")
    trained = [name for name in data["scaling"] if name != "start"]
    by_n = data["scaling"][trained[0]]["truth_by_n"]
    for entry in by_n.values():
        entry["localised_by_any"] = min(1.0, entry["random_step"]["localised_by_any"] + 0.05)
        entry["random_step"]["localised_by_any"] = entry["localised_by_any"] - 0.05
    write(tmp_path, "world_verifier_rl.json", data)
    assert report.more_verification(tmp_path).verdict == report.MET
    largest = by_n[max(by_n, key=int)]
    largest["localised_by_any"] = largest["random_step"]["localised_by_any"]  # level, not above
    write(tmp_path, "world_verifier_rl.json", data)
    assert report.more_verification(tmp_path).verdict == report.NOT_MET


def test_the_generator_claim_needs_every_learned_verifier_seed_above_0_and_half_the_checker_gain(tmp_path):
    data = published(report.GENERATOR_ARMS_FILE)

    def set_gains(arm: str, value: float, interval: list[float]) -> None:
        for name, entry in data["arms"].items():
            if name.startswith(arm):
                edge = entry["test_in pass@1"]["edge groups (seen)"]
                edge["gain"], edge["intervals"]["gain"] = value, interval
        write(tmp_path, report.GENERATOR_ARMS_FILE, data)

    set_gains("reference", 0.05, [0.01, 0.09])
    set_gains("checker", 0.08, [0.04, 0.12])
    assert report.generator_improves(tmp_path).verdict == report.MET
    set_gains("checker", 0.2, [0.15, 0.25])  # the learned verifier's 0.05 is under half of it
    assert report.generator_improves(tmp_path).verdict == report.NOT_MET
    set_gains("checker", 0.08, [0.04, 0.12])
    data["arms"]["reference-group-lr1e-5-seed1"]["test_in pass@1"]["edge groups (seen)"]["intervals"]["gain"] = [-0.01, 0.09]
    write(tmp_path, report.GENERATOR_ARMS_FILE, data)
    assert report.generator_improves(tmp_path).verdict == report.NOT_MET


def test_the_loop_claim_needs_precise_labels_and_an_iteration_2_never_worse(tmp_path):
    data = published("world_model_loop.json")
    for entry in data["seeds"].values():
        entry["labels"]["metrics"]["precision_of_1"] = 0.95
        for name in ("balanced_accuracy", "localisation"):
            good_gain(entry["verifier"]["iter1 verifier -> iter2 verifier"]["test_in"]["metrics"], name, [-0.02, 0.03])
        entry["generator"]["iter1 generator -> iter2 generator"]["edge groups (seen)"]["intervals"]["gain"] = [-0.01, 0.04]
    write(tmp_path, "world_model_loop.json", data)
    assert report.loop_and_labels(tmp_path).verdict == report.MET
    first = data["seeds"]["0"]
    first["labels"]["metrics"]["precision_of_1"] = 0.85
    write(tmp_path, "world_model_loop.json", data)
    assert report.loop_and_labels(tmp_path).verdict == report.NOT_MET
    first["labels"]["metrics"]["precision_of_1"] = 0.95
    first["generator"]["iter1 generator -> iter2 generator"]["edge groups (seen)"]["intervals"]["gain"] = [-0.07, -0.01]
    write(tmp_path, "world_model_loop.json", data)
    assert report.loop_and_labels(tmp_path).verdict == report.NOT_MET


def test_the_learning_tests_claim_needs_every_learning_seed_to_gain_more_than_the_frozen_runs(tmp_path):
    generator, verifier = published("tiny_generator_learning.json"), published("tiny_verifier_learning.json")
    for run in verifier["runs"]:
        if "test_in" in run["after"]:
            run["after"]["test_in"]["balanced_accuracy"] = verifier["before"]["test_in"]["balanced_accuracy"] + (
                0.05 if run["learning_rate"] > 1e-20 else 0.0)
    write(tmp_path, "tiny_generator_learning.json", generator)
    write(tmp_path, "tiny_verifier_learning.json", verifier)
    assert report.learning_tests(tmp_path).verdict == report.MET
    frozen = [run for run in generator["runs"] if run["learning_rate"] <= 1e-20]
    assert frozen, "the published generator runs include one at learning rate ~0"
    frozen[0]["gain"] = max(run["gain"] for run in generator["runs"]) + 0.01  # learning broken: a frozen run gains most
    write(tmp_path, "tiny_generator_learning.json", generator)
    assert report.learning_tests(tmp_path).verdict == report.NOT_MET
    assert report.learns_beyond_frozen([(True, 0.02), (True, 0.05), (False, 0.0)])
    assert not report.learns_beyond_frozen([(True, -0.01), (True, 0.05)])
    assert not report.learns_beyond_frozen([(False, 0.03)])
