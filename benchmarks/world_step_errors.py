"""Where does the world model's arithmetic break? A step's truth against how much multiplying it packs.

Generator RL on the world model gains little and the learned verifier cannot rank its proofs; both
notes trace it to the arithmetic inside one step. This measures it on proofs the model wrote (a
``world calibrate`` folder's ``generations.jsonl``, which the checker already judged) and, beside
them, on the world's own correct proofs of the same problems' split (what the model was taught):

- every equality step ``L = R`` a proof writes is decided by the checker's claim logic (``L - R``
  expands to 0) and binned by what it asks (``data.world.step_kinds``: collecting terms, expanding
  1, 2, 3+ bracketed products, factorising), with the share that is true, and the share of the
  world's correct steps of the same problems in each bin (what the model was shown);
- every square of a binomial multiplied out: whether its square terms (``p^2``, ``q^2``) and its
  cross term (``2pq``) are right.

Only proofs of the problems asked (``--families``, ``--levels``, seen templates by default: the
groups RL trains on) count; a step that does not parse is left out of the bins and counted apart.
0.95 intervals: Wilson's, over steps (steps of one proof are not independent, so they are a little
narrow). Writes ``OUT/world_step_errors.json`` (an entry per ``--name``).

    python benchmarks/world_step_errors.py --calibration runs/world-generator/start-generator \\
        --name "start, test_in" --out benchmarks/results
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from data.jsonl import read_jsonl  # noqa: E402
from data.world.step_kinds import KINDS, TERMS, equality_steps, square_terms  # noqa: E402


def wilson(successes: int, total: int) -> list[float]:
    if total == 0:
        return [0.0, 0.0]
    z, share = 1.96, successes / total
    centre = (share + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return [round(centre - half, 4), round(centre + half, 4)]


def chosen(record: dict[str, Any], families: set[str], levels: set[int], templates: str) -> bool:
    return (record["family"] in families and int(record["level"]) in levels
            and (templates == "all" or record.get("templates") == templates))


def measure(calibration: Path, world: Path, families: set[str], levels: set[int], templates: str) -> dict[str, Any]:
    records = [record for record in read_jsonl(calibration / "generations.jsonl")
               if chosen(record, families, levels, templates)]
    wanted = {record["id"] for record in records}
    splits = {record["split"] for record in records}
    written: dict[str, Counter[bool]] = defaultdict(Counter)
    by_family: dict[tuple[str, str], Counter[bool]] = defaultdict(Counter)
    unreadable = 0
    squares: Counter[tuple[str, bool]] = Counter()
    for record in records:
        for proof in record["proofs"]:
            squares.update(square_terms(proof))
            for step in equality_steps(proof):
                if step is None:
                    unreadable += 1
                    continue
                written[step[0]][step[1]] += 1
                by_family[(f"{record['family']} {record['level']}", step[0])][step[1]] += 1
    taught: Counter[str] = Counter()
    for split in sorted(splits):
        for row in read_jsonl(world / f"{split}.jsonl"):
            if row["score"] == 1.0 and row["problem_id"] in wanted:
                taught.update(step[0] for step in equality_steps(row["proof"]) if step is not None)
    taught_total = sum(taught.values()) or 1

    def row(counts: Counter[bool]) -> dict[str, Any]:
        total = counts[True] + counts[False]
        return {"steps": total, "true": round(counts[True] / total, 4) if total else None,
                "interval": wilson(counts[True], total)}

    return {
        "calibration": str(calibration), "families": sorted(families), "levels": sorted(levels), "templates": templates,
        "problems": len(records), "proofs": sum(len(record["proofs"]) for record in records),
        "unreadable equality steps": unreadable,
        "by step kind": {name: {**row(written[name]), "share of the world's correct steps": round(taught[name] / taught_total, 4)}
                        for name in KINDS},
        "squares multiplied out": {kind: row(Counter({truth: squares[(kind, truth)] for truth in (True, False)}))
                                   for kind in TERMS},
        "by family and step kind": {f"{group}, {name}": row(counts) for (group, name), counts in sorted(by_family.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calibration", required=True, help="a world calibrate output folder with generations.jsonl")
    parser.add_argument("--world", default="runs/world-lm-long/world", help="the world the calibration measured")
    parser.add_argument("--families", nargs="+", default=["equation", "identity"])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--templates", default="seen", choices=("seen", "held-out", "all"))
    parser.add_argument("--name", required=True, help="the entry's name in the results")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    result = measure(Path(args.calibration), Path(args.world), set(args.families), set(args.levels), args.templates)
    path = Path(args.out) / "world_step_errors.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results[args.name] = result
    path.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({key: result[key] for key in ("by step kind", "squares multiplied out")}, indent=1))


if __name__ == "__main__":
    main()
