"""``train loop``: the iteration schedule of DESIGN.md, one resumable stage at a time.

Stages, each starting from the model the previous one finished (the first from
``model.name``), each in its own run directory under ``RUN/iterN/``:

    sft            (iteration 1, ``loop.cold_start``) formats from the verifier data (its
                   written critiques when it has them), the meta-verifier's from the meta data
    samples        (iteration >= 2) proofs sampled from the current model (``loop.sample_problems``
                   problems drawn at random from the generator's), each verified once
    label          (iteration >= 2, ``loop.auto_label``) the sampled proofs through the
                   ``label`` pipeline (or, ``loop.labeler = "checker"``, the world's checker: the
                   upper bound); labeled ones join this iteration's verifier data
    rft            (iteration >= 2) SFT on what the labels vouch for (``rejection_set``):
                   sampled proofs auto-labelled 1 whose self-score says 1, analyses of
                   them that the meta-verifier confirmed and that agree with the label, and
                   analyses of graded proofs that match their reference score
    meta-verifier  (``loop.meta_data`` set, ``loop.enhanced_verifier`` false) GRPO on rated analyses
    verifier       GRPO on graded proofs and, with ``loop.meta_data`` and ``loop.enhanced_verifier``
                   (default), on the rated analyses too in the same run: the paper's enhanced verifier
    generator      GRPO on problems, starting from the verifier checkpoint

A stage is done when its directory holds ``COMPLETE``; a rerun skips done stages and a
training stage resumes from its last checkpoint. Deliberate simplification: sampling,
verification and labeling inside the loop use one in-process engine on the current model
(``scorer.backend`` when it is transformers or vllm, else transformers).

Under a multi-process launch every process runs the schedule; the main one alone samples,
labels and writes each stage's files, the others wait for them (``training.processes``),
and the training stages run on all of them.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from data.atomic import write_text_atomic
from data.errors import InputError
from data.jsonl import JsonlWriter, read_jsonl, resume_ids
from data.records import ProofItem, stable_id
from engine.config import EngineConfig, SamplingConfig
from engine.sampling import make_requests
from generator.parse import parse_generation
from generator.prompt import generation_messages
from training.processes import fingerprint, is_main_process, wait_for_everyone
from training.role_data.rows import TrainingRow, as_meta_verification_tasks, read_rows, read_sft_rows
from training.role_data.records import as_dicts, sft_records
from training.role_data.selection import selected
from training.config import TrainConfig, is_complete, mark_complete
from verifier.prompt import verification_messages
from verifier.verification import verify_proofs

logger = logging.getLogger(__name__)

RFT_RECORDS = "rft_records.json"
"""An iteration's rejection fine-tuning set (``iterN/rft_records.json``), written before the rft stage trains."""


def rejection_set(drafts: list[dict[str, Any]], labeled: list[dict[str, Any]] | None, min_score: float,
                  prompts_dir: str | None) -> list[dict[str, Any]]:
    """SFT records of the sampled proofs and analyses worth imitating.

    With auto-labels (``labeled``, the label pipeline's records of these drafts): proofs
    labelled 1 whose self-score is 1 too (a proof the model wrongly thought flawed teaches
    a dishonest self-evaluation), and the analyses of labelled proofs whose critique the
    meta-verifier confirmed and whose score is the label. Without them: proofs whose one
    verification scored at least ``min_score`` and whose self-score agrees with it.
    """
    if labeled is None:
        kept = [draft for draft in drafts if draft.get("verifier_score") is not None
                and draft["verifier_score"] >= min_score and draft.get("self_score") == draft["verifier_score"]]
    else:
        label_of = {record["id"]: record["label"] for record in labeled}
        kept = [draft for draft in drafts
                if label_of.get(stable_id(draft["problem"], draft["proof"])) == 1.0 and draft.get("self_score") == 1.0]
    records = [{"prompt": as_dicts(generation_messages(draft["problem"], prompts_dir)),
                "completion": [{"role": "assistant", "content": draft["completion"]}]} for draft in kept]
    for record in labeled or []:
        if record.get("label") is None:
            continue
        for analysis in record.get("analyses") or []:
            if analysis.get("critique") == "confirmed" and analysis.get("score") == record["label"]:
                records.append({"prompt": as_dicts(verification_messages(record["problem"], record["proof"], prompts_dir)),
                                "completion": [{"role": "assistant", "content": analysis["analysis"]}]})
    return records


class Loop:
    def __init__(self, config: TrainConfig, render_config: Callable[[TrainConfig], str]) -> None:
        self.config = config
        self.render_config = render_config
        """Writes a stage's resolved config as its ``config.toml`` (the front door's TOML writer)."""
        self.root = Path(config.run_dir)
        self.model = config.model.name
        """The model the next stage starts from."""
        self.log: list[dict[str, Any]] = []
        """{iteration, stage, status} in the order the stages ran or were skipped."""
        self._rows: dict[tuple[str, str], list[TrainingRow]] = {}

    # -- data -------------------------------------------------------------------------------

    def rows(self, role: str, path: str) -> list[TrainingRow]:
        """The checked rows of one dataset for one role, read once per loop."""
        if (role, path) not in self._rows:
            self._rows[role, path] = read_rows(replace(self.config.data, path=path, holdout=0), role)
        return self._rows[role, path]

    def check_data(self) -> None:
        """Read every dataset once before any model loads, so a bad row fails the loop at once."""
        loop = self.config.loop
        for role, path in (("verifier", loop.verifier_data), ("generator", loop.generator_data)):
            if not path:
                raise InputError(f"train loop needs loop.{role}_data")
            self.rows(role, path)
        if loop.meta_data:
            self.rows("meta-verifier", loop.meta_data)
        if loop.auto_label and loop.labeler == "checker":
            ungoaled = sum(not row.goal for row in self.rows("generator", loop.generator_data))
            if ungoaled:
                raise InputError(f"loop.labeler = 'checker' needs world problems with a goal (column {self.config.data.goal_column!r}); "
                                 f"{ungoaled} of the generator's problems have none")
        if loop.cold_start:
            self.cold_start_rows()

    def data_fingerprint(self) -> str:
        """The ids of every row this process read, hashed: processes of one launch must agree on it."""
        return fingerprint([row.id for key in sorted(self._rows) for row in self._rows[key]])

    def cold_start_rows(self) -> list[TrainingRow]:
        """The SFT rows of iteration 1: critiques of the verifier data, ratings of the meta data."""
        if ("sft", "") not in self._rows:
            data = replace(self.config.data, path=self.config.loop.verifier_data, meta_path=self.config.loop.meta_data, holdout=0)
            self._rows["sft", ""] = read_sft_rows(data, tuple(self.config.sft.formats))
        return self._rows["sft", ""]

    # -- stages -----------------------------------------------------------------------------

    def stage_config(self, stage_dir: Path, stage: str) -> TrainConfig:
        """The loop's config for one stage: its own run directory, starting from the current model, at the
        stage's own GRPO learning rate where the loop sets one."""
        loop = self.config.loop
        learning_rate = {"verifier": loop.verifier_learning_rate, "meta-verifier": loop.verifier_learning_rate,
                         "generator": loop.generator_learning_rate}.get(stage) or self.config.grpo.learning_rate
        return replace(self.config, run_dir=str(stage_dir), model=replace(self.config.model, name=self.model),
                       data=replace(self.config.data, holdout=0), grpo=replace(self.config.grpo, learning_rate=learning_rate))

    def train_stage(self, iteration: int, stage: str, rows: list[TrainingRow] | None = None,
                    records: list[dict[str, Any]] | None = None) -> None:
        """Run (or skip, if complete) one training stage; afterwards ``self.model`` is its final model."""
        stage_dir = self.root / f"iter{iteration}" / stage
        if is_complete(stage_dir):
            self.log.append({"iteration": iteration, "stage": stage, "status": "skipped (complete)"})
        else:
            stage_dir.mkdir(parents=True, exist_ok=True)
            config = self.stage_config(stage_dir, stage)
            if is_main_process():
                write_text_atomic(stage_dir / "config.toml", self.render_config(config))
            logger.info("iteration %d: %s from %s", iteration, stage, self.model)
            if stage in ("sft", "rft"):
                from training.trainers.sft import run_sft

                run_sft(config, records or [])
            else:
                from training.trainers.grpo import run_grpo

                run_grpo(stage, config, rows or [])
            self.log.append({"iteration": iteration, "stage": stage, "status": "trained"})
        if (stage_dir / "final").is_dir():
            self.model = str(stage_dir / "final")

    def engine(self) -> Any:
        from engine.auto import Workload
        from engine.factory import create_engine

        backend = self.config.scorer.backend if self.config.scorer.backend in ("transformers", "vllm") else "transformers"
        settings = EngineConfig(backend=backend, model=self.model, dtype=self.config.scorer.dtype,
                                batch_size=self.config.scorer.batch_size)
        return create_engine(settings, Workload(self.config.loop.sample_problems * self.config.loop.proofs_per_problem, 0))

    def proof_sampling(self) -> SamplingConfig:
        """Proofs are sampled as the policy samples its rollouts (``[rollouts]``)."""
        return self.config.rollouts.requests_sampling(self.config.grpo.seed)

    def verification_sampling(self) -> SamplingConfig:
        """Verifications and labels are sampled as rewards score rollouts (``[scoring]``)."""
        return self.config.scoring.requests_sampling(self.config.grpo.seed)

    def problems_to_sample(self, iteration: int) -> list[str]:
        """``loop.sample_problems`` of the generator stage's problems (those at the edge, where ``data.calibration``
        selects), drawn at random afresh each iteration (seeded by ``data.seed``): a data file ordered by
        template would otherwise hand every sample to its first template."""
        rows = selected("generator", self.rows("generator", self.config.loop.generator_data), self.config.data)
        drawn = random.Random(f"{self.config.data.seed}/samples/{iteration}").sample(rows, min(len(rows), self.config.loop.sample_problems))
        return [row.problem for row in drawn]

    def samples(self, iteration: int, engine: Any) -> list[dict[str, Any]]:
        """Proofs sampled from the current model, each verified once by it (cached in samples.json)."""
        path = self.root / f"iter{iteration}" / "samples.json"
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
        loop, prompts_dir = self.config.loop, self.config.prompts_dir or None
        problems = self.problems_to_sample(iteration)
        prompts = [generation_messages(problem, prompts_dir) for problem in problems]
        results = engine.generate(make_requests(prompts, self.proof_sampling(), n=loop.proofs_per_problem))
        drafts = [
            {"problem": problem, "completion": completion.text, "proof": parsed.proof, "self_score": parsed.self_score}
            for problem, result in zip(problems, results)
            for completion in result.completions
            for parsed in [parse_generation(completion.text, completion.finish_reason)]
            if parsed.format_ok
        ]
        verifications = verify_proofs(engine, [(d["problem"], d["proof"]) for d in drafts], 1, self.verification_sampling(), prompts_dir) if drafts else []
        for draft, verification in zip(drafts, verifications):
            draft["verifier_score"] = verification.mean_score
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(drafts, ensure_ascii=False))
        return drafts

    def label(self, iteration: int, engine: Any, drafts: list[dict[str, Any]]) -> None:
        """Auto-label the sampled proofs into labeled.jsonl (resumable, like ``proofsmith label``), or have the
        world's checker label them (``loop.labeler = "checker"``)."""
        from training.auto_labeling.pipeline import run_labeling

        items = {stable_id(d["problem"], d["proof"]): d for d in drafts}
        unique = [ProofItem(item_id, d["problem"], d["proof"]) for item_id, d in items.items()]
        out = self.root / f"iter{iteration}" / "labeled.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.touch()
        if unique and self.config.loop.labeler == "checker":
            self.label_by_checker(unique, out)
        elif unique:
            run_labeling(engine, unique, out, self.config.label, self.verification_sampling(), self.config.prompts_dir or None)

    def label_by_checker(self, items: list[ProofItem], out: Path) -> None:
        """The checker's score of each proof against its problem's goal, as a label record (rule ``checker``, no
        analyses): the loop with labels that are always right, the upper bound of what auto-labeling can give it."""
        from data.world.checker import check_goal

        goals = {row.problem: row.goal for row in self.rows("generator", self.config.loop.generator_data)}
        done = resume_ids(out)
        with JsonlWriter(out) as writer:
            for item in items:
                if item.id not in done:
                    writer.write({"id": item.id, "problem": item.problem, "proof": item.proof,
                                  "label": check_goal(goals[item.problem], item.proof).score, "rule": "checker", "analyses": []})

    def labeled_rows(self, iteration: int) -> list[TrainingRow]:
        """Proofs the label pipeline gave a label to, as verifier training rows."""
        out = self.root / f"iter{iteration}" / "labeled.jsonl"
        records = read_jsonl(out) if out.exists() else []
        return [TrainingRow(r["id"], r["problem"], r["proof"], r["label"]) for r in records if r["label"] is not None]

    def rft_records(self, iteration: int, engine: Any, drafts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Rejection fine-tuning set (``rejection_set``), plus analyses of graded proofs that match their reference score."""
        loop, prompts_dir = self.config.loop, self.config.prompts_dir or None
        labeled_path = self.root / f"iter{iteration}" / "labeled.jsonl"
        labeled = read_jsonl(labeled_path) if loop.auto_label and labeled_path.exists() else None
        records = rejection_set(drafts, labeled, loop.rft_min_score, prompts_dir)
        graded = self.rows("verifier", loop.verifier_data)[: loop.sample_problems]
        verifications = verify_proofs(engine, [(row.problem, row.proof) for row in graded], loop.proofs_per_problem,
                                      self.verification_sampling(), prompts_dir)
        for row, verification in zip(graded, verifications):
            for analysis in verification.analyses:
                if analysis.score is not None and analysis.score == row.score:
                    records.append({"prompt": as_dicts(verification_messages(row.problem, row.proof, prompts_dir)),
                                    "completion": [{"role": "assistant", "content": analysis.text}]})
        return records

    def feedback_stages(self, iteration: int) -> list[TrainingRow]:
        """Iteration >= 2: sample, [label], rejection fine-tuning; returns the newly labeled verifier rows.

        With several processes the main one samples, labels and builds the fine-tuning set
        (files under ``iterN/``) while the others wait; then all train on what it wrote."""
        iteration_dir = self.root / f"iter{iteration}"
        label_needed = self.config.loop.auto_label and not is_complete(iteration_dir / "label")
        rft_needed = not is_complete(iteration_dir / "rft")
        sampling_needed = label_needed or (rft_needed and not (iteration_dir / RFT_RECORDS).exists())
        if is_main_process() and sampling_needed:
            self.sample_and_label(iteration, label_needed, rft_needed)
        wait_for_everyone()
        if label_needed:
            self.log.append({"iteration": iteration, "stage": "label", "status": "labeled"})
        if rft_needed:
            records = json.loads((iteration_dir / RFT_RECORDS).read_text(encoding="utf-8"))
            if records:
                self.train_stage(iteration, "rft", records=records)
            else:
                if is_main_process():
                    mark_complete(iteration_dir / "rft")  # nothing scored well: the model carries over unchanged
                self.log.append({"iteration": iteration, "stage": "rft", "status": "skipped (nothing scored well)"})
        else:
            self.train_stage(iteration, "rft")
        return self.labeled_rows(iteration) if self.config.loop.auto_label else []

    def sample_and_label(self, iteration: int, label_needed: bool, rft_needed: bool) -> None:
        """Sample (``samples.json``), label (``labeled.jsonl``, then ``label/COMPLETE``) and write the rejection
        fine-tuning set (``rft_records.json``), each kept on disk so a rerun does not draw it again."""
        iteration_dir = self.root / f"iter{iteration}"
        engine = self.engine()
        try:
            drafts = self.samples(iteration, engine)
            if label_needed:
                self.label(iteration, engine, drafts)
                mark_complete(iteration_dir / "label")
            if rft_needed and not (iteration_dir / RFT_RECORDS).exists():
                write_text_atomic(iteration_dir / RFT_RECORDS,
                                  json.dumps(self.rft_records(iteration, engine, drafts), ensure_ascii=False))
        finally:
            engine.close()

    def run(self) -> list[dict[str, Any]]:
        """Run every stage not yet complete; returns what each stage did."""
        loop, prompts_dir = self.config.loop, self.config.prompts_dir or None
        self.check_data()
        verifier_rows = self.rows("verifier", loop.verifier_data)
        for iteration in range(1, loop.iterations + 1):
            rows, labeled = list(verifier_rows), []
            if iteration == 1 and loop.cold_start:
                self.train_stage(iteration, "sft", records=sft_records(self.cold_start_rows(), self.config.sft.formats, prompts_dir))
            if iteration >= 2:
                labeled = self.feedback_stages(iteration)
            if loop.meta_data and loop.enhanced_verifier:
                rows += as_meta_verification_tasks(self.rows("meta-verifier", loop.meta_data))
            elif loop.meta_data:
                self.train_stage(iteration, "meta-verifier", rows=self.rows("meta-verifier", loop.meta_data))
            # The auto-labelled proofs are new: a data.calibration of the training proofs cannot have measured them.
            self.train_stage(iteration, "verifier", rows=selected("verifier", rows, self.config.data, unmeasured=labeled))
            self.train_stage(iteration, "generator", rows=selected("generator", self.rows("generator", loop.generator_data),
                                                                   self.config.data))
        if is_main_process():
            mark_complete(self.root)
        return self.log
