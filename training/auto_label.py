"""Auto-labeling by scaled verification: n verifications, m meta-verifications per flagged
analysis, then the k rule (``training.label_rule``).

Proofs go through in chunks: a chunk's verifications are one engine call (``n`` per
prompt, so prefills are shared) and all meta-verifications of its flagged analyses are a
second one; each finished record is appended to the output and flushed before the next
chunk starts. A rerun with the same output skips the ids already there (a line cut off by
a kill is dropped first), so a killed run loses at most the chunk in flight.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data.records import ProofItem
from engine.base import Engine
from engine.config import SamplingConfig
from meta_verifier.meta_verify import MetaItem, meta_verify
from training.label_config import LabelConfig
from training.label_rule import LabelDecision, decide, is_valid
from verifier.scoring import Verification, verify_proofs


@dataclass(frozen=True)
class LabeledProof:
    item: ProofItem
    verification: Verification
    meta: dict[int, Verification]
    """Meta-verifications by analysis index; only analyses that report issues have one."""
    validity: tuple[bool, ...]
    decision: LabelDecision

    def to_record(self) -> dict[str, Any]:
        analyses = []
        for index, analysis in enumerate(self.verification.analyses):
            meta = self.meta.get(index)
            analyses.append(
                {
                    **analysis.to_dict(),
                    "valid": self.validity[index] if meta is not None else None,
                    "meta": [rating.to_dict() for rating in meta.analyses] if meta is not None else [],
                }
            )
        meta_tokens = sum(meta.completion_tokens for meta in self.meta.values())
        return {
            "id": self.item.id,
            "problem": self.item.problem,
            "proof": self.item.proof,
            "human_score": self.item.human_score,
            "label": self.decision.label,
            "rule": self.decision.rule,
            "lowest_score": self.decision.lowest,
            "valid_at_lowest": self.decision.valid_at_lowest,
            "analyses": analyses,
            "completion_tokens": self.verification.completion_tokens + meta_tokens,
        }


def label_chunk(
    engine: Engine, items: Sequence[ProofItem], config: LabelConfig, sampling: SamplingConfig, prompts_dir: str | None = None
) -> list[LabeledProof]:
    """Label a chunk of proofs with two engine calls: all verifications, then all meta-verifications."""
    verifications = verify_proofs(engine, [(item.problem, item.proof) for item in items], config.n, sampling, prompts_dir)
    flagged = [
        (item_index, analysis_index)
        for item_index, verification in enumerate(verifications)
        for analysis_index, analysis in enumerate(verification.analyses)
        if analysis.score is not None and analysis.score < 1.0
    ]
    ratings = meta_verify(
        engine,
        [MetaItem(items[i].problem, items[i].proof, verifications[i].analyses[j].text) for i, j in flagged],
        config.m,
        sampling,
        prompts_dir,
        seed_offset=len(items),
    ) if flagged else []
    meta_by_item: dict[int, dict[int, Verification]] = {}
    for (item_index, analysis_index), rating in zip(flagged, ratings):
        meta_by_item.setdefault(item_index, {})[analysis_index] = rating
    labeled = []
    for item_index, (item, verification) in enumerate(zip(items, verifications)):
        meta = meta_by_item.get(item_index, {})
        validity = tuple(
            index in meta and is_valid([a.score for a in meta[index].analyses], config.confirm_rating, config.majority)
            for index in range(len(verification.analyses))
        )
        decision = decide([analysis.score for analysis in verification.analyses], validity, config.k)
        labeled.append(LabeledProof(item, verification, meta, validity, decision))
    return labeled


def finished_ids(path: Path) -> set[str]:
    """Ids already labeled in ``path``; a trailing line cut off by a kill is removed first."""
    if not path.exists():
        return set()
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    complete, done = [], set()
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue  # only the interrupted last write can be partial
        if record.get("id") not in done:
            done.add(record["id"])
            complete.append(line)
    rewritten = b"".join(line + b"\n" for line in complete)
    if rewritten != raw:
        path.write_bytes(rewritten)
    return done


def run_labeling(
    engine: Engine,
    items: Sequence[ProofItem],
    out: Path,
    config: LabelConfig,
    sampling: SamplingConfig,
    prompts_dir: str | None = None,
    on_chunk: Callable[[int], None] | None = None,
    done: set[str] | None = None,
) -> int:
    """Label every item not yet in ``out``, appending records as chunks finish; returns how many were labeled now.

    ``done`` is ``finished_ids(out)`` when the caller has already read it.
    """
    done = finished_ids(out) if done is None else done
    pending = [item for item in items if item.id not in done]
    with open(out, "a", encoding="utf-8") as handle:
        for start in range(0, len(pending), config.chunk_size):
            chunk = pending[start: start + config.chunk_size]
            for labeled in label_chunk(engine, chunk, config, sampling, prompts_dir):
                handle.write(json.dumps(labeled.to_record(), ensure_ascii=False) + "\n")
                handle.flush()
            if on_chunk is not None:
                on_chunk(len(chunk))
    return len(pending)


def summarize(path: Path) -> dict[str, Any]:
    """Label counts, tokens and (where the input had human scores) agreement, over the whole output."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    labels = Counter("unlabeled" if record["label"] is None else f"{record['label']:g}" for record in records)
    graded = [record for record in records if record["human_score"] is not None and record["label"] is not None]
    summary: dict[str, Any] = {
        "records": len(records),
        "labels": dict(sorted(labels.items())),
        "unlabeled": labels.get("unlabeled", 0),
        "rules": dict(sorted(Counter(record["rule"] for record in records).items())),
        "completion_tokens": sum(record["completion_tokens"] for record in records),
    }
    if any(record["human_score"] is not None for record in records):
        summary["human_agreement"] = {
            "labeled_with_human_score": len(graded),
            "exact": round(sum(record["label"] == record["human_score"] for record in graded) / len(graded), 4) if graded else None,
        }
    return summary
