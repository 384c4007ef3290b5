"""DeepSeekMath-V2's own verifier against its human grades, from the released outputs on disk (no model runs).

Each released proof carries ``average_automatic_rating`` (the release's verifier mean) and a
human rating. The mean is rounded to 0 / 0.5 / 1 (``eval.reference_verifier.rounded_reference``)
and scored like one sample of a verifier with ``eval verifier``'s own metric functions, on the
proofs graded out of 7 for the point metrics; ``mae_points_7x_release_mean`` reads the unrounded
mean linearly (|7 x mean - points|; ``points.mae_points_mean_score`` is that of the rounded
score, since the rounded score is the one sample here). It prints the anchors table's "release
verifier" figures as JSON:

    python benchmarks/release_verifier_anchor.py ../shared/datasets/deepseek-math-v2/outputs
    python benchmarks/release_verifier_anchor.py ../shared/datasets/deepseek-math-v2/outputs/IMO-ProofBench-Advanced.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval.binary_metrics import binary_report  # noqa: E402
from eval.human_grades import read_human_grades  # noqa: E402
from eval.point_metrics import point_report  # noqa: E402
from eval.reference_verifier import rounded_reference  # noqa: E402
from eval.verifier_eval import grade_facts  # noqa: E402
from eval.votes import VerifiedItem  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outputs", type=Path, help="a released outputs/*.jsonl file or the folder of them")
    args = parser.parse_args()
    items = []
    for grade in read_human_grades(args.outputs, "deepseek-math-v2"):
        facts = grade_facts(grade)
        if facts.reference_score is None:
            continue
        items.append(VerifiedItem(grade.human_score, (rounded_reference(facts.reference_score),), grade.id,
                                  facts.human_points, facts.max_points, facts.reference_score))
    linear = [abs(7 * item.reference_score - item.human_points) for item in items if item.max_points == 7]  # type: ignore[operator]
    print(json.dumps({"proofs": len(items), "mae_points_7x_release_mean": sum(linear) / len(linear) if linear else None,
                      "points": point_report(items).to_dict(),
                      "binary": binary_report(items).to_dict()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
