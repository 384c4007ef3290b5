"""``proofsmith meta-verify``: rate whether a verifier's analysis of a proof is trustworthy."""

from __future__ import annotations

import argparse

from data.inputs import read_text
from proofsmith.commands.common import config_from_args, print_dry_run
from proofsmith.commands.verify import score_and_report
from proofsmith.options import META_VERIFY_FLAGS


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args, META_VERIFY_FLAGS)
    if args.dry_run:
        print_dry_run(config)
        return 0
    item_texts = (read_text(args.problem, "problem"), read_text(args.proof, "proof"), read_text(args.analysis, "analysis"))
    from meta_verifier.meta_verify import MetaItem, meta_verification_messages, meta_verify

    samples = config.meta_verify.samples
    item = MetaItem(*item_texts)
    return score_and_report(
        args, config, samples, "rating",
        lambda engine: meta_verify(engine, [item], samples, config.sampling, config.prompts_dir or None)[0],
        meta_verification_messages(item, config.prompts_dir or None),
    )
