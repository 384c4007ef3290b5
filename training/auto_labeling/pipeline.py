"""Auto-labeling by scaled verification: n verifications, m meta-verifications per flagged
analysis, then the k rule (``training.auto_labeling.rule``).

Two dispatch modes, same records. Against a server (a streaming backend) every proof
moves on its own: its verification request (``n`` samples, one prefill), then its
meta-verifications, then its record, while other proofs' requests share one concurrency
bound, so no request waits on an unrelated one (``streaming``). In-process engines take
chunks (``chunked``): a chunk's verifications are one engine call and all its
meta-verifications a second, each record written once its chunk is done. Each record is
appended and flushed as soon as it is finished; a rerun with the same output skips the ids
already there (``data.jsonl``: a line cut off by a kill is dropped first). A proof or critique whose
prompt does not fit the model's context is recorded as such, never aborting the run.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from data.jsonl import JsonlWriter, read_jsonl, resume_ids
from data.records import ProofItem
from engine.base import Engine, StreamingEngine
from engine.config import SamplingConfig
from training.auto_labeling.chunked import label_chunk
from training.auto_labeling.config import LabelConfig
from training.auto_labeling.proofs import LabeledProof
from training.auto_labeling.streaming import label_streaming
from training.auto_labeling.sweep import trust_metrics


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

    A streaming backend (``engine.session``) labels proof by proof (``streaming``);
    others take chunks of ``config.chunk_size`` proofs, one engine call per stage. ``done``
    is ``resume_ids(out)`` when the caller has already read it.
    """
    done = resume_ids(out) if done is None else done
    pending = [(position, item) for position, item in enumerate(items) if item.id not in done]
    with JsonlWriter(out) as writer:

        def write(labeled: LabeledProof) -> None:
            writer.write(labeled.to_record())
            if on_done is not None:
                on_done(1)

        if isinstance(engine, StreamingEngine):
            asyncio.run(label_streaming(engine, pending, config, sampling, prompts_dir, write))
        else:
            for start in range(0, len(pending), config.chunk_size):
                for labeled in label_chunk(engine, pending[start: start + config.chunk_size], config, sampling, prompts_dir):
                    write(labeled)
    return len(pending)


def summarize(path: Path) -> dict[str, Any]:
    """Label counts, tokens and (where the input had human scores) how far the labels agree with them
    (``training.auto_labeling.sweep.trust_metrics``), over the whole output."""
    records = read_jsonl(path)
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
        trust = trust_metrics([(record["label"], record["human_score"]) for record in records if record["human_score"] is not None])
        summary["human_agreement"] = {
            "labeled_with_human_score": len(graded),
            "exact": None if trust["agreement"] is None else round(trust["agreement"], 4),
            **{name: None if trust[name] is None else round(trust[name], 4)
               for name in ("coverage", "precision_of_1", "flawed_labelled_1")},
        }
    return summary
