"""``proofsmith world calibrate DATA --out DIR``: where a model stands on the world, per family and level.

Order of work: resolve the config; check ``--out`` (a directory holding records must have been
made with the same settings); read the world directory's splits (a missing split or a row
without a goal is one input error); ``--dry-run`` writes ``OUT/config.toml`` and stops. Then k
proofs per problem and k analyses per proof (``eval.calibration_run``, resumable), judged by
the checker, and the results:

    OUT/calibration.json   the table (``eval.calibration``), the groups at the edge of competence
                           (generator pass@1 strictly inside [pass_rate_low, pass_rate_high]),
                           and the ids of the problems whose own pass rate lies strictly
                           between 0 and 1 (what GRPO should draw from)
    OUT/calibration.md     the table in Markdown, with 95 % intervals and the baselines
    OUT/calibration.png    pass@1 and pass@k, and the verifier's per-sample balanced accuracy,
                           per group
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from data.atomic import write_text_atomic
from data.errors import InputError
from proofsmith.commands.common import eval_config_from_args, eval_engine
from proofsmith.options import CALIBRATE_FLAGS
from proofsmith.run_files import check_out_dir, write_dry_run

CALIBRATE_IDENTITY = ("calibrate.data", "calibrate.splits", "calibrate.samples", "calibrate.max_problems_per_group",
                      "engine.backend", "engine.model", "sampling.temperature", "sampling.top_p", "sampling.max_tokens",
                      "sampling.seed", "prompts_dir")
"""Settings that shape the records: a run directory resumes only under the same values."""


def run(args: argparse.Namespace) -> int:
    config = eval_config_from_args(args, CALIBRATE_FLAGS, "calibrate")
    settings = config.calibrate
    out = Path(args.out)
    check_out_dir(out, config, CALIBRATE_IDENTITY, "generations.jsonl")
    from eval.calibration_run import split_problems

    data = Path(settings.data)
    if not data.is_dir():
        raise InputError(f"DATA must be a world directory (proofsmith world --out DIR), and {args.data} is not a directory")
    problems = split_problems(settings)  # read once: the sizes below and the edge groups' problems
    sizes = {split: sum(problem["split"] == split for problem in problems) for split in settings.splits}
    if args.dry_run:
        return write_dry_run(out, config)
    from eval.calibration import (calibration_table, edge_groups, markdown_table, problems_at_the_edge, problems_in_groups,
                                  proofs_at_the_edge)
    from eval.calibration_run import run_calibration
    from proofsmith.workloads import verify_workload

    with eval_engine(out, config, verify_workload(settings.samples, config.sampling.max_tokens)) as engine:
        generations, verifications = run_calibration(engine, settings, config.sampling, config.prompts_dir or None, out)
    rows = calibration_table(generations, verifications)
    groups = edge_groups(rows, settings.pass_rate_low, settings.pass_rate_high)
    document = {
        "settings": {"data": settings.data, "splits": settings.splits, "roles": settings.roles, "samples": settings.samples,
                     "model": config.engine.model, "prompts": config.prompts_dir, "temperature": config.sampling.temperature,
                     "max_tokens": config.sampling.max_tokens, "seed": config.sampling.seed, "problems": sizes},
        "table": rows,
        "edge_of_competence": {"pass_rate_low": settings.pass_rate_low, "pass_rate_high": settings.pass_rate_high,
                               "groups": groups,
                               "problems_in_groups": problems_in_groups(problems, groups),
                               "problems_with_spread": problems_at_the_edge(generations),
                               "proofs_with_spread": proofs_at_the_edge(verifications)},
    }
    write_text_atomic(out / "calibration.json", json.dumps(document, indent=2) + "\n")
    table = markdown_table(rows)
    write_text_atomic(out / "calibration.md", table)
    (out / "calibration.png").write_bytes(calibration_png(rows, settings.samples))
    if args.json:
        sys.stdout.write(json.dumps(document) + "\n")
    else:
        sys.stdout.write(table)
        edge = document["edge_of_competence"]
        print(f"edge of competence (pass@1 in ({settings.pass_rate_low}, {settings.pass_rate_high})): "
              + (", ".join(f"{group['split']} {group['family']} level {group['level']}"
                           + (f" ({group['templates']} templates)" if group["templates"] else "") for group in edge["groups"]) or "none")
              + f" ({len(edge['problems_in_groups'])} problems in them)"
              + f"; {len(edge['problems_with_spread'])} problems with 0 < pass rate < 1"
              + f", {len(edge['proofs_with_spread'])} proofs whose analyses sometimes give the true score")
        print(f"wrote {out}/calibration.json, calibration.md, calibration.png")
    return 0


def calibration_png(rows: list[dict[str, Any]], samples: int) -> bytes:
    """Two panels over the groups: the generator's pass@1 and pass@k; the verifier's per-sample balanced accuracy."""
    from eval.plots import figure_png_bytes, pyplot

    plt = pyplot()
    groups = [row for row in rows if row["family"] != "all"]
    labels = [f"{row['split']}\n{row['family']} L{row['level']}" + (f"\n{row['templates']}" if row.get("templates") else "")
              for row in groups]
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(max(6.0, 0.7 * len(groups) + 2), 6.5), sharex=True)
    positions = range(len(groups))
    for offset, (name, shown) in enumerate((("pass@1", "pass@1"), ("pass@k", f"pass@{samples}"))):
        values = [(row.get("generator") or {}).get(name) or 0.0 for row in groups]
        top.bar([position + (offset - 0.5) * 0.4 for position in positions], values, width=0.4, label=shown)
    top.set_ylabel("generator, true pass rate")
    top.set_ylim(0, 1)
    top.legend(fontsize=8)
    values = [(row.get("verifier") or {}).get("sample_balanced_accuracy") or 0.0 for row in groups]
    bottom.bar(list(positions), values, width=0.5, color="C2")
    bottom.axhline(1 / 3, color="#888888", linestyle="--", linewidth=1, label="chance (3 classes)")
    bottom.set_ylabel("verifier, balanced accuracy")
    bottom.set_ylim(0, 1)
    bottom.legend(fontsize=8)
    bottom.set_xticks(list(positions), labels, fontsize=7)
    top.set_title("Against the checker, per split, family and level", fontsize=10)
    return figure_png_bytes(figure)
