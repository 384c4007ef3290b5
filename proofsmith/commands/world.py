"""``proofsmith world``: write the ground-truth world's problems and proofs, with their checked truth, as JSONL.

The file is written whole and atomically (it takes seconds): a rerun with the same
settings writes the same bytes. Its rows carry ``problem``, ``proof`` and ``score``, the
columns ``label`` and ``eval verifier`` read, so either command runs on it as it is;
``first_bad_step``, ``defect``, ``family`` and ``template`` come along for the truth
metrics, and ``critique``, the analysis a verifier should write, for the SFT cold start.
``--meta-out`` also writes meta-verifier rows: critiques under review with their ratings.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import Any

from proofsmith.commands.common import print_dry_run
from proofsmith.config import Config, resolve_config
from proofsmith.options import WORLD_FLAGS, overrides_from
from proofsmith.run_files import check_output_path


def run(args: argparse.Namespace) -> int:
    config: Config = resolve_config(args.config, overrides_from(args, WORLD_FLAGS), args.set)
    if args.dry_run:
        print_dry_run(config)
        return 0
    out = check_output_path(args.out)
    meta_out = check_output_path(args.meta_out) if args.meta_out else None
    from data.jsonl import write_jsonl
    from data.world.proofs import world_proofs
    from training.role_data.world_rows import world_rows

    settings = config.world
    proofs = list(world_proofs(settings.seed, settings.problems_per_template, settings.families, settings.defects))
    proof_rows, rated = world_rows(proofs, settings.seed)
    write_jsonl(out, proof_rows)
    if meta_out is not None:
        write_jsonl(meta_out, rated)
    summary = {**summarize(proofs, str(out)), "meta_rows": len(rated) if meta_out else 0,
               "meta_ratings": dict(Counter(f"{row['rating']:g}" for row in rated)) if meta_out else {}}
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        scores = ", ".join(f"{score}: {count}" for score, count in summary["scores"].items())
        print(f"wrote {summary['proofs']} proofs of {summary['problems']} problems to {out}  (scores {scores})")
        print(f"families: {', '.join(f'{name} {count}' for name, count in summary['families'].items())}")
        print(f"defects: {', '.join(f'{name} {count}' for name, count in summary['defects'].items())}")
        if meta_out is not None:
            ratings = ", ".join(f"{rating}: {count}" for rating, count in sorted(summary["meta_ratings"].items()))
            print(f"meta-verifier rows: {summary['meta_rows']} in {meta_out}  (ratings {ratings})")
    return 0


def summarize(proofs: list[Any], out: str) -> dict[str, Any]:
    return {
        "out": out,
        "proofs": len(proofs),
        "problems": len({proof.problem.id for proof in proofs}),
        "scores": {f"{score:g}": count for score, count in sorted(Counter(proof.score for proof in proofs).items())},
        "families": dict(Counter(proof.problem.family for proof in proofs)),
        "defects": dict(Counter(proof.defect or "none" for proof in proofs)),
    }
