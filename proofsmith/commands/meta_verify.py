"""``proofsmith meta-verify``: rate whether a verifier's analysis of a proof is trustworthy."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from data.inputs import read_text
from engine.auto import Workload
from proofsmith.commands.common import engine_record, open_engine, print_dry_run, resolve
from proofsmith.commands.verify import print_verification
from proofsmith.options import META_VERIFY_FLAGS


def run(args: argparse.Namespace) -> int:
    config = resolve(args, META_VERIFY_FLAGS)
    if args.dry_run:
        print_dry_run(config)
        return 0
    problem = read_text(args.problem, "problem")
    proof = read_text(args.proof, "proof")
    analysis = read_text(args.analysis, "analysis")
    from meta_verifier.meta_verify import MetaItem, meta_verify

    samples = config.meta_verify.samples
    engine = open_engine(config, Workload(samples, samples * config.sampling.max_tokens))
    try:
        (rating,) = meta_verify(
            engine, [MetaItem(problem, proof, analysis)], samples, config.sampling, config.prompts_dir or None
        )
    finally:
        engine.close()
    report: dict[str, Any] = {"rating": rating.mean_score, **rating.to_dict(), **engine_record(engine)}
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        print_verification(report, "rating")
    return 0
