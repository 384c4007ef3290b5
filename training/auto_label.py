"""Auto-labeling by scaled verification: n verifications, m meta-verifications per flagged
analysis, then the k rule (``training.label_rule``).

Two dispatch modes, same records. Against a server (a streaming backend) every proof
moves on its own: its verification request (``n`` samples, one prefill), then its
meta-verifications, then its record, while other proofs' requests share one concurrency
bound, so no request waits on an unrelated one (``training.label_stream``). In-process
engines take chunks: a chunk's verifications are one engine call and all its
meta-verifications a second, each record written once its chunk is done. Each record is
appended and flushed as soon as it is finished; a rerun with the same output skips the ids
already there (a line cut off by a kill is dropped first). A proof or critique whose
prompt does not fit the model's context is recorded as such, never aborting the run.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from data.records import ProofItem
from engine.base import Engine, GenerationRequest, GenerationResult, StreamingEngine
from engine.fitting import generate_fitting
from engine.config import SamplingConfig
from engine.sampling import make_requests, request_seed
from meta_verifier.meta_verify import META_FORMAT, MetaItem, meta_verification_messages
from training.label_config import LabelConfig
from training.label_rule import TOO_LONG_RULE, LabelDecision, decide, is_valid
from verifier.parse import VERIFIER_FORMAT
from verifier.prompt import verification_messages
from verifier.scoring import Verification, verification_from


@dataclass(frozen=True)
class LabeledProof:
    item: ProofItem
    verification: Verification
    meta: dict[int, Verification]
    """Meta-verifications by analysis index; only analyses that report issues have one."""
    validity: tuple[bool, ...]
    decision: LabelDecision
    meta_errors: dict[int, str] = field(default_factory=dict)
    """Analyses whose meta-verification prompt did not fit the model's context (not valid)."""
    error: str | None = None
    """Why the proof could not be verified at all (its prompt is longer than the context)."""

    def to_record(self) -> dict[str, Any]:
        analyses = []
        for index, analysis in enumerate(self.verification.analyses):
            meta = self.meta.get(index)
            entry = {
                **analysis.to_dict(),
                "valid": self.validity[index] if meta is not None else None,
                "meta": [rating.to_dict() for rating in meta.analyses] if meta is not None else [],
            }
            if index in self.meta_errors:
                entry["meta_error"] = self.meta_errors[index]
            analyses.append(entry)
        meta_tokens = sum(meta.completion_tokens for meta in self.meta.values())
        record = {
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
        if self.error is not None:
            record["error"] = self.error
        return record


def unverifiable(item: ProofItem, reason: str) -> LabeledProof:
    """The record of a proof whose verification prompt does not fit: left for a human."""
    return LabeledProof(item, Verification((), 0, 0, 0.0), {}, (), LabelDecision(None, TOO_LONG_RULE, None, 0), error=reason)


def seed_base(sampling: SamplingConfig, position: int, config: LabelConfig) -> int | None:
    """Seeds are tied to the proof's place in the input, not to chunking, order or resumes.

    Proof ``position`` owns the seeds base .. base + n: its verification request, then one
    meta request per analysis.
    """
    return request_seed(sampling.seed, position * (config.n + 1))


def verification_request(item: ProofItem, position: int, config: LabelConfig, sampling: SamplingConfig,
                         prompts_dir: str | None) -> GenerationRequest:
    [request] = make_requests([verification_messages(item.problem, item.proof, prompts_dir)], sampling, n=config.n)
    return replace(request, seed=seed_base(sampling, position, config))


def flagged_analyses(verification: Verification) -> list[int]:
    """Analyses that report issues: these are meta-verified."""
    return [index for index, analysis in enumerate(verification.analyses) if analysis.score is not None and analysis.score < 1.0]


def meta_requests(item: ProofItem, position: int, verification: Verification, flagged: Sequence[int], config: LabelConfig,
                  sampling: SamplingConfig, prompts_dir: str | None) -> list[GenerationRequest]:
    if config.m == 0:
        return []  # meta-verification is off: no flagged analysis gets a request
    prompts = [meta_verification_messages(MetaItem(item.problem, item.proof, verification.analyses[j].text), prompts_dir)
               for j in flagged]
    base = seed_base(sampling, position, config)
    return [replace(request, seed=None if base is None else base + 1 + j)
            for request, j in zip(make_requests(prompts, sampling, n=config.m), flagged)]


def meta_rating(item: ProofItem, verification: Verification, index: int, result: GenerationResult) -> Verification:
    return verification_from(result, META_FORMAT, (item.proof, verification.analyses[index].text))


def assemble(item: ProofItem, verification: Verification, meta: dict[int, Verification], meta_errors: dict[int, str],
             config: LabelConfig) -> LabeledProof:
    """Apply validity votes and the k rule to one proof's verifications and meta ratings.

    With ``config.m == 0`` nothing is meta-verified and every critique counts as valid in
    the k rule (the record's ``valid`` stays None: unchecked).
    """
    validity = tuple(
        config.m == 0
        or (index in meta and is_valid([a.score for a in meta[index].analyses], config.confirm_rating, config.majority))
        for index in range(len(verification.analyses))
    )
    decision = decide([analysis.score for analysis in verification.analyses], validity, config.k)
    return LabeledProof(item, verification, meta, validity, decision, meta_errors)


def label_chunk(
    engine: Engine, items: Sequence[tuple[int, ProofItem]], config: LabelConfig, sampling: SamplingConfig,
    prompts_dir: str | None = None,
) -> list[LabeledProof]:
    """Label (position, proof) pairs with two engine calls: all verifications, then all meta-verifications."""
    answers, refused = generate_fitting(
        engine, [verification_request(item, position, config, sampling, prompts_dir) for position, item in items]
    )
    verifications = {
        slot: verification_from(answer, VERIFIER_FORMAT, (items[slot][1].proof,))
        for slot, answer in enumerate(answers) if answer is not None
    }
    flagged = [(slot, index) for slot, verification in verifications.items() for index in flagged_analyses(verification)]
    requests = [
        request
        for slot, verification in verifications.items()
        for request in meta_requests(items[slot][1], items[slot][0], verification, flagged_analyses(verification), config,
                                     sampling, prompts_dir)
    ]
    ratings, meta_refused = generate_fitting(engine, requests) if requests else ([], {})
    meta: dict[int, dict[int, Verification]] = {}
    meta_errors: dict[int, dict[int, str]] = {}
    for number, ((slot, index), rating) in enumerate(zip(flagged, ratings)):
        if rating is None:
            meta_errors.setdefault(slot, {})[index] = meta_refused[number]
        else:
            meta.setdefault(slot, {})[index] = meta_rating(items[slot][1], verifications[slot], index, rating)
    return [
        unverifiable(item, refused[slot]) if slot in refused
        else assemble(item, verifications[slot], meta.get(slot, {}), meta_errors.get(slot, {}), config)
        for slot, (_, item) in enumerate(items)
    ]


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
    on_done: Callable[[int], None] | None = None,
    done: set[str] | None = None,
) -> int:
    """Label every item not yet in ``out``, appending each record as it is finished; returns how many were labeled now.

    A streaming backend (``engine.session``) labels proof by proof (``training.label_stream``);
    others take chunks of ``config.chunk_size`` proofs, one engine call per stage. ``done``
    is ``finished_ids(out)`` when the caller has already read it.
    """
    done = finished_ids(out) if done is None else done
    pending = [(position, item) for position, item in enumerate(items) if item.id not in done]
    with open(out, "a", encoding="utf-8") as handle:

        def write(labeled: LabeledProof) -> None:
            handle.write(json.dumps(labeled.to_record(), ensure_ascii=False) + "\n")
            handle.flush()
            if on_done is not None:
                on_done(1)

        if isinstance(engine, StreamingEngine):
            from training.label_stream import label_streaming

            asyncio.run(label_streaming(engine, pending, config, sampling, prompts_dir, write))
        else:
            for start in range(0, len(pending), config.chunk_size):
                for labeled in label_chunk(engine, pending[start: start + config.chunk_size], config, sampling, prompts_dir):
                    write(labeled)
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
