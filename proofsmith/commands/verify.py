"""``proofsmith verify``: score one proof with n verifier samples."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from data.inputs import read_text
from engine.base import ChatMessage, Engine
from proofsmith.commands.common import config_from_args, engine_record, open_engine, print_dry_run
from proofsmith.commands.goal_check import checker_lines, checker_verdict, read_goal
from proofsmith.config import Config
from proofsmith.options import VERIFY_FLAGS
from proofsmith.workloads import verify_workload

if TYPE_CHECKING:
    from verifier.verification import Verification


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args, VERIFY_FLAGS)
    goal = read_goal(args.goal)
    if args.dry_run:
        print_dry_run(config)
        return 0
    problem = read_text(args.problem, "problem")
    proof = read_text(args.proof, "proof")
    from verifier.prompt import verification_messages
    from verifier.verification import verify_proofs

    samples = config.verify.samples
    return score_and_report(
        args, config, samples, "score",
        lambda engine: verify_proofs(engine, [(problem, proof)], samples, config.sampling, config.prompts_dir or None)[0],
        verification_messages(problem, proof, config.prompts_dir or None),
        (lambda analyses: checker_verdict(goal, proof, analyses)) if goal else None,
    )


def score_and_report(
    args: argparse.Namespace, config: Config, samples: int, label: str, score: Callable[[Engine], Verification],
    prompt: Sequence[ChatMessage], checker: Callable[[list[str]], dict[str, Any]] | None = None,
) -> int:
    """Check ``prompt`` fits, open the engine, get one ``Verification`` from ``score``, print it as JSON or text;
    ``checker`` (``--goal``) adds the world checker's verdict on the proof, given the analyses."""
    engine = open_engine(config, verify_workload(samples, config.sampling.max_tokens), [prompt])
    try:
        verification = score(engine)
    finally:
        engine.close()
    report: dict[str, Any] = {label: verification.mean_score, **verification.to_dict(), **engine_record(engine)}
    if checker is not None:
        report["checker"] = checker([analysis.text for analysis in verification.analyses])
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        print_verification(report, label)
    return 0


def print_verification(report: dict[str, Any], label: str) -> None:
    """Human-readable summary: the mean, then each sample with its analysis."""
    mean = report["mean_score"]
    samples = report["samples"]
    failures = report["format_failures"]
    shown = "none (every sample failed the format)" if mean is None else f"{mean:g}"
    print(f"{label}: {shown}  (mean of {len(samples) - failures} of {len(samples)} samples; {failures} format failures)")
    print(f"engine: {report['engine']}  model: {report['model']}")
    if "checker" in report:
        print("\n".join(checker_lines(report["checker"], mean, f"verifier {label}")))
    for number, sample in enumerate(samples, start=1):
        sample_score = "format failure" if sample["score"] is None else f"{sample['score']:g}"
        print(f"\n--- sample {number}: {label} {sample_score} ---")
        if sample["format_errors"]:
            print(f"(format: {'; '.join(sample['format_errors'])})")
        print(sample["analysis"].strip())
