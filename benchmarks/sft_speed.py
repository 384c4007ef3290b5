"""`train sft` on SmolLM2-135M before and after its speed-up: trained tokens/s and the loss curve, in ABBA order.

  before   today's settings: float32 on the CPU, a random batch order
           (``sft.precision = "fp32"``, ``sft.group_by_length = false``)
  after    the new defaults: bf16 autocast where the CPU has native bf16 matmuls, batches grouped by
           length window by window (``sft.precision = "auto"``, ``sft.group_by_length = true``)

Both are ``configs/sft_cpu.toml`` (the bundled world's train split, all three formats, full weights,
max_length 1024) built by ``training.trainers.sft.sft_trainer``, with the same batch size, seed and
steps, in the order before, after, after, before, each leg from the embedded checkpoint (checkpoints
off). With ``--steps`` a multiple of 4, every grouping window trains on the same examples on both
sides, only grouped differently (checked: ``same_examples_per_window``). Reported: tokens/s
(non-padding tokens) per leg and pooled, the pooled ratio and those of neighbouring legs (2/1, 3/4),
padding fractions, per-step losses side by side with their largest difference, the loss per window
weighted by answer tokens, and whether legs of the same settings repeated their losses exactly.
``--isolate`` adds a fifth leg, bf16 in the *random* order: its batches are the before legs' own, so
its per-step loss difference is bf16's alone.

sft_cpu.toml's batch is 8, but on this 24 GB machine, beside another training run, an fp32 forward and
backward on 8 of these examples (8 x 617 positions) grew to 16 GB resident and was killed for memory,
so the results here use ``--batch-size 4``.

    python benchmarks/sft_speed.py --steps 8 --batch-size 4 --isolate --out benchmarks/results/sft_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from world_model_speed import REPO, machine, pooled, smol_config, smol_leg  # noqa: E402

SETTINGS = {"before": ("fp32", False), "after": ("auto", True), "bf16_random_order": ("auto", False)}
WINDOW = 4


def cold_start_records(config: Any) -> list[dict[str, Any]]:
    """The records `train sft --config configs/sft_cpu.toml` trains on."""
    from training.role_data.records import sft_records
    from training.role_data.rows import read_sft_rows

    rows = read_sft_rows(config.data, tuple(config.sft.formats))
    return sft_records(rows, config.sft.formats, config.prompts_dir or None)


def window_losses(leg: dict[str, Any]) -> list[float]:
    """The leg's loss per window of ``WINDOW`` steps: each step's mean loss weighted by its answer tokens."""
    losses, weights = leg["losses"], leg["answer_tokens"][:len(leg["losses"])]
    return [round(sum(loss * weight for loss, weight in zip(losses[at:at + WINDOW], weights[at:at + WINDOW]))
                  / sum(weights[at:at + WINDOW]), 4) for at in range(0, len(losses), WINDOW)]


def same_windows(first: dict[str, Any], second: dict[str, Any]) -> list[bool]:
    """Per window of ``WINDOW`` steps: did both legs train on the same examples?"""
    def windows(leg: dict[str, Any]) -> list[list[int]]:
        return [sorted(ids for batch in leg["batches"][at:at + WINDOW] for ids in batch)
                for at in range(0, len(leg["batches"]), WINDOW)]

    return [one == other for one, other in zip(windows(first), windows(second))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4, help="timed steps per leg (4: one grouping window)")
    parser.add_argument("--warmup", type=int, default=0, help="untimed steps first in every leg (a 135M step takes tens of seconds)")
    parser.add_argument("--batch-size", type=int, default=8, help="examples per step (configs/sft_cpu.toml: 8)")
    parser.add_argument("--isolate", action="store_true", help="add a bf16 leg in the random order (bf16's own loss difference)")
    parser.add_argument("--note", default="", help="a word on the machine's state, kept in the results")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "sft_speed.json")
    args = parser.parse_args()
    started = time.time()
    about = machine(args.note)
    legs: list[dict[str, Any]] = []
    order = ["before", "after", "after", "before"] + (["bf16_random_order"] if args.isolate else [])
    with tempfile.TemporaryDirectory() as scratch:
        records: list[dict[str, Any]] = []
        for index, side in enumerate(order):
            precision, grouped = SETTINGS[side]
            config = smol_config(Path(scratch) / f"{index}-{side}", args.batch_size, args.warmup + args.steps, precision, grouped)
            records = records or cold_start_records(config)
            leg = smol_leg(config, records, args.warmup, args.steps)
            legs.append({"leg": index + 1, "side": side, **leg})
            print(f"leg {index + 1} {side}: {leg['tokens_per_second']} tokens/s, padding {leg['padding_fraction']:.1%}, "
                  f"losses {leg['losses']}, {leg['precision']}", file=sys.stderr)
    before = [leg for leg in legs if leg["side"] == "before"]
    after = [leg for leg in legs if leg["side"] == "after"]
    old, new = pooled(before), pooled(after)
    steps = min(len(before[0]["losses"]), len(after[0]["losses"]))
    losses: dict[str, Any] = {
        "before": before[0]["losses"], "after": after[0]["losses"],
        "max_abs_step_difference": round(max(abs(a - b) for a, b in zip(before[0]["losses"][:steps], after[0]["losses"][:steps])), 4),
        "window_losses_before": window_losses(before[0]), "window_losses_after": window_losses(after[0]),
        "same_examples_per_window": same_windows(before[0], after[0]),
        "repeat_legs_identical": {"before": before[0]["losses"] == before[1]["losses"],
                                  "after": after[0]["losses"] == after[1]["losses"]},
        "before_step_spread": round(max(before[0]["losses"]) - min(before[0]["losses"]), 4),
    }
    isolated = [leg for leg in legs if leg["side"] == "bf16_random_order"]
    if isolated:
        losses["bf16_random_order"] = isolated[0]["losses"]
        losses["bf16_same_batches_as_before"] = [one == other for one, other in zip(isolated[0]["batches"], before[0]["batches"])]
        losses["max_abs_step_difference_bf16_only"] = round(max(
            abs(a - b) for a, b in zip(before[0]["losses"], isolated[0]["losses"])), 4)
    for leg in legs:
        del leg["batches"]
    about["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    summary = {
        "machine": about,
        "settings": {"config": "configs/sft_cpu.toml (full weights, lora = false)", "records": len(records),
                     "batch_size": args.batch_size, "warmup_steps": args.warmup, "timed_steps": args.steps,
                     "order": " ".join(order), "before": "sft.precision=fp32, sft.group_by_length=false (today's train sft)",
                     "after": "sft.precision=auto, sft.group_by_length=true"},
        "before": old, "after": new,
        "tokens_per_second_ratio": round(new["tokens_per_second"] / old["tokens_per_second"], 2),
        "paired_tokens_per_second_ratios": [round(after[0]["tokens_per_second"] / before[0]["tokens_per_second"], 2),
                                            round(after[1]["tokens_per_second"] / before[1]["tokens_per_second"], 2)],
        "examples_per_second_ratio": round(new["examples_per_second"] / old["examples_per_second"], 2),
        "losses": losses, "legs": legs, "wall_minutes": round((time.time() - started) / 60, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print("| settings | tokens/s | examples/s | padding | loss per step |")
    print("|---|---|---|---|---|")
    for name, figures, leg in (("before (fp32, random order)", old, before[0]), ("after (auto, grouped)", new, after[0])):
        print(f"| {name} | {figures['tokens_per_second']} | {figures['examples_per_second']} | "
              f"{figures['padding_fraction']:.1%} | {leg['losses']} |")
    print(f"\nafter / before: {summary['tokens_per_second_ratio']}x tokens/s (neighbouring legs: "
          f"{summary['paired_tokens_per_second_ratios']}); loss per window {losses['window_losses_before']} -> "
          f"{losses['window_losses_after']}, largest step difference {losses['max_abs_step_difference']} -> {args.out}")


if __name__ == "__main__":
    main()
