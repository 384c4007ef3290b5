"""proofsmith.workloads: each command's engine sizing, and the search-mode --verify-samples remap."""

from __future__ import annotations

from pathlib import Path

from engine.auto import Workload
from eval.config import GraderConfig
from generator.config import RefineConfig, SearchConfig
from proofsmith.cli import build_parser
from proofsmith.commands.common import config_from_args
from proofsmith.commands.eval_prover import resolve_prover_config
from proofsmith.options import PROVE_FLAGS, SEARCH_FLAGS, SEARCH_MODE_PATHS
from proofsmith.workloads import grader_workload, label_workload, refine_workload, search_workload, verify_workload
from training.auto_labeling.config import LabelConfig


def test_verify_decodes_its_samples_together() -> None:
    assert verify_workload(4, 100) == Workload(4, 400)


def test_refine_counts_threads_rounds_and_verifier_feedback() -> None:
    self_feedback = RefineConfig(max_rounds=3, samples=2, feedback="self")
    assert refine_workload(self_feedback, 100) == Workload(2, 2 * 3 * 100)
    verifier = RefineConfig(max_rounds=3, samples=2, feedback="verifier", verify_samples=4)
    assert refine_workload(verifier, 100, problems=5) == Workload(2 * 4, 5 * 2 * 3 * (1 + 4) * 100)


def test_search_counts_the_larger_round_and_every_proof_verified() -> None:
    settings = SearchConfig(pool=4, verify_samples=3, top_k=2, samples_per_pair=3, rounds=2)
    generated = 4 + 2 * 2 * 3
    assert search_workload(settings, 10, problems=2) == Workload(2 * max(4, 2 * 3) * 3, 2 * generated * (1 + 3) * 10)


def test_label_counts_a_chunk_and_meta_verifications() -> None:
    assert label_workload(LabelConfig(n=2, m=1, k=1, chunk_size=4), proofs=6, max_tokens=10) == Workload(8, 6 * 2 * 2 * 10)


def test_the_grader_marks_its_samples_per_problem() -> None:
    assert grader_workload(GraderConfig(samples=3, max_tokens=50), problems=4) == Workload(3, 4 * 3 * 50)


def test_prove_search_sends_verify_samples_to_the_pools_n() -> None:
    args = build_parser().parse_args(["prove", "p", "--search", "--verify-samples", "5"])
    config = config_from_args(args, PROVE_FLAGS + SEARCH_FLAGS, SEARCH_MODE_PATHS)
    assert (config.search.verify_samples, config.prove.verify_samples) == (5, RefineConfig().verify_samples)
    plain = config_from_args(build_parser().parse_args(["prove", "p", "--verify-samples", "5"]), PROVE_FLAGS)
    assert (plain.search.verify_samples, plain.prove.verify_samples) == (SearchConfig().verify_samples, 5)


def test_eval_prover_remaps_verify_samples_whether_the_mode_came_from_a_flag_or_the_toml(tmp_path: Path) -> None:
    toml = tmp_path / "search.toml"
    toml.write_text('[eval_prover]\nmode = "search"\n', encoding="utf-8")
    for extra in (["--mode", "search"], ["--config", str(toml)], ["--set", "eval_prover.mode=search"]):
        args = build_parser().parse_args(["eval", "prover", "d.jsonl", "--out", "o", "--verify-samples", "3", *extra])
        config = resolve_prover_config(args)
        assert (config.search.verify_samples, config.prove.verify_samples) == (3, RefineConfig().verify_samples), extra
    args = build_parser().parse_args(["eval", "prover", "d.jsonl", "--out", "o", "--verify-samples", "3"])
    assert resolve_prover_config(args).prove.verify_samples == 3
