"""``proofsmith world``: write the ground-truth world's splits, with their checked truth, as JSONL files.

``OUT/`` gets, per split (``train``, ``test_in``, ``test_out``; ``data.world.splits``):

    SPLIT.jsonl        proofs: problem, proof, score (the columns label, eval verifier and
                       train read), first_bad_step, defect, family, template, goal,
                       difficulty (the level, above 1 only), and critique (the analysis a
                       verifier should write; taught by train sft)
    SPLIT_meta.jsonl   critiques of those proofs under review, with rating and assessment
                       (the columns train meta-verifier reads)
    SPLIT_problems.jsonl  the split's problems once each, with their goal (what eval prover
                       reads: the checker holds each generated proof to the goal) and
                       difficulty (above level 1 only; ``level`` is the template's name)

and ``config.toml`` (the resolved settings) and ``summary.json`` (counts per split, score,
family and defect, and per level when levels other than [1] are drawn; the overlap between
train and each test split). Every file is written
whole and atomically; the same settings always write the same bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from data.errors import InputError
from data.world.config import WorldConfig
from proofsmith.commands.common import print_dry_run
from proofsmith.config import Config, resolve_config, to_toml
from proofsmith.options import WORLD_FLAGS, overrides_from


def run(args: argparse.Namespace) -> int:
    config: Config = resolve_config(args.config, overrides_from(args, WORLD_FLAGS), args.set)
    if args.dry_run:
        print_dry_run(config)
        return 0
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out must be a directory, and {out} is a file")
    if not out.parent.is_dir():
        raise InputError(f"output directory does not exist: {out.parent}")
    summary = write_world(config.world, out, to_toml(config))[0]
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        for name, numbers in summary["splits"].items():
            scores = ", ".join(f"{score}: {count}" for score, count in numbers["scores"].items())
            shared = numbers.get("overlap_with_train")
            shared_text = f"; 8-gram overlap with train {shared['mean_8gram_overlap']:.1%}" if shared else ""
            print(f"{name}: {numbers['proofs']} proofs of {numbers['problems']} problems (scores {scores}), "
                  f"{numbers['meta_rows']} rated critiques{shared_text}")
        print(f"wrote {out}/{{train,test_in,test_out}}{{,_meta,_problems}}.jsonl, config.toml, summary.json")
    return 0


def write_world(world: WorldConfig, out: Path, config_text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Write ``world``'s splits into ``out`` (see the module docstring); returns (the summary, the splits)."""
    from data.atomic import write_text_atomic
    from data.jsonl import write_jsonl
    from data.world.splits import make_splits, overlap
    from training.role_data.world_rows import world_rows

    splits = make_splits(world)
    out.mkdir(exist_ok=True)
    write_text_atomic(out / "config.toml", config_text)
    summary: dict[str, Any] = {"out": str(out), "splits": {}}
    for name, split in splits.items():
        proof_rows, rated = world_rows(split.proofs, world.seed)
        write_jsonl(out / f"{name}.jsonl", proof_rows)
        write_jsonl(out / f"{name}_meta.jsonl", rated)
        write_jsonl(out / f"{name}_problems.jsonl", problem_rows(split.proofs, world.seed))
        summary["splits"][name] = {
            **counts(split.proofs), "meta_rows": len(rated), "redraw_failures": split.redraw_failures,
            **({} if name == "train" else {"overlap_with_train": overlap(splits["train"].proofs, split.proofs)}),
            **({"levels": level_counts(split)} if world.levels != [1] else {}),
        }
    write_text_atomic(out / "summary.json", json.dumps(summary, indent=2) + "\n")
    return summary, splits


def problem_rows(proofs: Any, seed: int) -> list[dict[str, Any]]:
    """One row per problem, in order of first appearance, in the columns of ``eval.benchmark_problems``."""
    rows: dict[str, dict[str, Any]] = {}
    for proof in proofs:
        problem = proof.problem
        rows.setdefault(problem.id, {"id": problem.id, "problem": problem.statement,
                                     "goal": [claim.render() for claim in problem.goal], "category": problem.family,
                                     "level": problem.template, "source": f"proofsmith world, seed {seed}",
                                     **({"difficulty": problem.level} if problem.level != 1 else {})})
    return list(rows.values())


def level_counts(split: Any) -> dict[str, Any]:
    """Per difficulty level of ``split``: its proofs, problems, scores and families, and the problems left out."""
    failures = dict(split.failures_by_level)
    return {str(level): {**counts([proof for proof in split.proofs if proof.problem.level == level]),
                         "redraw_failures": failures[level]} for level in failures}


def counts(proofs: Any) -> dict[str, Any]:
    return {
        "proofs": len(proofs),
        "problems": len({proof.problem.id for proof in proofs}),
        "scores": {f"{score:g}": count for score, count in sorted(Counter(proof.score for proof in proofs).items())},
        "families": dict(Counter(proof.problem.family for proof in proofs)),
        "defects": dict(Counter(proof.defect or "none" for proof in proofs)),
    }
