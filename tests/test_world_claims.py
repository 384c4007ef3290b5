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
