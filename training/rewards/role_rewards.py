"""The rewards of ``training.rewards.formulas`` as TRL reward functions (async callables).

TRL calls a reward with the step's prompts, completions and the dataset's extra columns
(here ``problem``, ``proof``, ``analysis``, ``reference``), and accepts ``None`` for a
rollout it should leave out of the advantage. Each reward returns its total and logs
every component through TRL's ``log_metric`` (averaged per logging step, written to
TensorBoard): ``reward/format`` and ``format_failure_rate``, the role's score terms,
``skipped`` (rollouts left out because a scoring call failed or could not be parsed),
and for rewards that call engines their seconds and completion tokens per step.

Engines: ``verifier`` and ``meta`` are :class:`training.rewards.scoring_engines.ScoringClient` s, or
None for "not used" (meta None means R_meta = ms = 1; ``rewards.meta = 'checker'`` rates a verifier's analyses
from the world's truth, ``checker_rating``, and ``'checker_work'`` the work they show as well, ``work_rating``);
with ``rewards.verifier = 'checker'`` the generator's proofs are scored by the world's checker against their
problem's goal, with no verifier engine (the ground-truth arm: what a perfect verifier would teach); with
``'self'``, by the rollout's own self-score (the arm where nothing checks the proof: s = s', so the reward is
α·s' + β·ms). The policy engine is attached once
the trainer exists (``attach``), since it is the trainer's own model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

from data.records import mean_score
from engine.base import GenerationRequest
from engine.sampling import make_requests
from generator.parse import GeneratedProof, parse_generation
from meta_verifier.meta_verify import META_FORMAT, MetaItem, meta_verification_messages
from training.rewards.formulas import generator_reward, meta_verifier_reward, verifier_reward
from training.rewards.scoring_engines import CallStats, ScoringClient
from training.config import (CHECKER, ENGINELESS_VERIFIERS, SELF_SCORE, WORLD_RATERS, RewardSettings, SamplingSettings,
                             scoring_defaults)
from training.processes import process_count, process_index
from verifier.parse import VERIFIER_FORMAT, parse_verdict
from verifier.prompt import verification_messages

Metric = Callable[[str, float], None]


def completion_text(completion: Any) -> str:
    """TRL passes conversational completions as message lists, plain ones as strings."""
    if isinstance(completion, list):
        return "".join(str(message.get("content") or "") for message in completion if message.get("role") == "assistant")
    return str(completion)


def own_score(text: str, role_format: Any, quoted: tuple[str, ...]) -> float | None:
    """The score a rollout gives, or None when it breaks the format in any way (R_format = 0)."""
    verdict = parse_verdict(text, role_format, None, quoted)
    return verdict.score if verdict.format_ok else None


def call_metrics(prefix: str, stats: CallStats, used: bool) -> dict[str, float | None]:
    """Seconds, tokens and failed calls of one scoring stage in a step (nothing when the stage is off)."""
    if not used:
        return {}
    return {f"{prefix}/seconds": stats.seconds, f"{prefix}/completion_tokens": float(stats.completion_tokens),
            f"{prefix}/failed_calls": float(stats.failed)}


def process_metrics(completions: Sequence[Any], *stats: CallStats) -> dict[str, float | None]:
    """Under several training processes, what this one's reward did: ``process/rankN/rollouts`` it scored
    and ``process/rankN/scoring_tokens`` its engine calls generated (nothing with one process). TRL
    averages a metric over the processes that log it, so a name per rank keeps each rank's own count."""
    if process_count() == 1:
        return {}
    rank = process_index()
    return {f"process/rank{rank}/rollouts": float(len(completions)),
            f"process/rank{rank}/scoring_tokens": float(sum(stat.completion_tokens for stat in stats))}


def log_all(log_metric: Metric | None, values: dict[str, float | None]) -> None:
    if log_metric is None:
        return
    for name, value in values.items():
        if value is not None:
            log_metric(name, float(value))


class RoleReward:
    """Shared plumbing: sampling for scoring calls, the meta-verifier stage, the policy hookup."""

    __name__ = "reward"

    def __init__(self, settings: RewardSettings, verifier: ScoringClient | None = None, meta: ScoringClient | None = None,
                 prompts_dir: str | None = None, sampling: SamplingSettings | None = None) -> None:
        self.settings, self.verifier, self.meta, self.prompts_dir = settings, verifier, meta, prompts_dir
        self.sampling = sampling or scoring_defaults()
        """How scoring answers are sampled (``[scoring]``)."""
        self.waiting: dict[str, str] = {}
        """Roles ('verifier', 'meta') the trained model itself serves, each with its source ('policy' or 'reference'); ``attach`` fills them."""

    def attach(self, source: str, client: ScoringClient) -> None:
        """Give the trained model's engine for ``source`` to the roles waiting for it."""
        for role, wanted in self.waiting.items():
            if wanted == source:
                setattr(self, role, client)

    def requests(self, prompts: Sequence[Any], samples: int) -> list[GenerationRequest]:
        return make_requests(prompts, self.sampling.requests_sampling(seed=None), n=samples)

    async def meta_ratings(self, items: Sequence[MetaItem], stats: CallStats) -> list[float | None]:
        """Mean parsed rating per analysis; 1.0 each when no meta-verifier is configured; None when unavailable."""
        if self.meta is None:
            return [1.0] * len(items)
        prompts = [meta_verification_messages(item, self.prompts_dir) for item in items]
        results = await self.meta.generate(self.requests(prompts, self.settings.meta_samples), stats)
        ratings: list[float | None] = []
        for item, result in zip(items, results):
            if result is None:
                ratings.append(None)
                continue
            parsed = [parse_verdict(c.text, META_FORMAT, c.finish_reason, (item.proof, item.analysis)).score for c in result.completions]
            ratings.append(mean_score(parsed))
        return ratings


class VerifierReward(RoleReward):
    """R = R_format · (1 − |s' − s|) · R_meta for verifier rollouts (``reference`` is s)."""

    __name__ = "verifier_reward"

    async def __call__(self, prompts: list[Any], completions: list[Any], problem: list[str], proof: list[str],
                       reference: list[float], log_metric: Metric | None = None, first_bad_step: list[int] | None = None,
                       step_known: list[bool] | None = None, **_: Any) -> list[float | None]:
        texts = [completion_text(completion) for completion in completions]
        scores = [own_score(text, VERIFIER_FORMAT, (proof_text,)) for text, proof_text in zip(texts, proof)]
        stats = CallStats()
        parsed_indices = [index for index, score in enumerate(scores) if score is not None]
        if self.settings.meta in WORLD_RATERS:  # the world's truth rates the analysis: no meta-verifier engine
            known = step_known or [False] * len(completions)
            steps = first_bad_step or [0] * len(completions)
            rate = checker_rating if self.settings.meta == CHECKER else work_rating
            ratings = [rate(texts[i], scores[i], reference[i], steps[i] or None, proof[i]) if known[i] else None
                       for i in parsed_indices]
        else:
            ratings = await self.meta_ratings([MetaItem(problem[i], proof[i], texts[i]) for i in parsed_indices], stats)
        rating_of = dict(zip(parsed_indices, ratings))
        rewards: list[float | None] = []
        for index, score in enumerate(scores):
            if score is None:
                rewards.append(verifier_reward(None, reference[index]))
            elif rating_of[index] is None:
                rewards.append(None)
            else:
                rewards.append(verifier_reward(score, reference[index], rating_of[index]))
        parsed = [(score, ref) for score, ref in zip(scores, reference) if score is not None]
        log_all(log_metric, {
            "reward/format": fmean(score is not None for score in scores),
            "format_failure_rate": fmean(score is None for score in scores),
            "reward/score_agreement": fmean(1 - abs(s - r) for s, r in parsed) if parsed else None,
            "reward/meta": mean_score([rating_of[i] for i in parsed_indices]),
            "skipped": float(sum(reward is None for reward in rewards)),
            **call_metrics("meta", stats, self.meta is not None),
            **process_metrics(completions, stats),
        })
        return rewards


def checker_rating(analysis: str, score: float | None, true_score: float, first_bad_step: int | None,
                   proof: str = "") -> float:
    """R_meta from the world's truth (``rewards.meta = 'checker'``), as the world rates critiques: 1 when the analysis
    names the defect the checker found (the first bad step of a flawed proof, no step of a correct one) and boxes the
    true score; 0.5 for the right defect with a wrong score; 0 when it blames another step or none of a flawed proof.
    ``proof`` is not read: it is there so that this and :func:`work_rating` are called alike."""
    from data.world.blame import blamed_step

    blamed = blamed_step(analysis)
    if blamed != first_bad_step:
        return 0.0
    return 1.0 if score == true_score else 0.5


def work_rating(analysis: str, score: float | None, true_score: float, first_bad_step: int | None, proof: str) -> float:
    """R_meta from the world's truth and the analysis's own work (``rewards.meta = 'checker_work'``): the mean of
    :func:`checker_rating` and the share of its worked steps whose expansions are true and whose verdict follows from
    them (``data.world.work``); an analysis that works out no step is rated by the checker alone. The verdict is paid
    only when it comes from the work: the bundled world model's verdicts ignore its own expansions (data/world/work.py)."""
    from data.world.work import work_accuracy

    verdict = checker_rating(analysis, score, true_score, first_bad_step)
    work = work_accuracy(analysis, proof)
    return verdict if work is None else (verdict + work) / 2


class MetaVerifierReward(RoleReward):
    """R = R_format · (1 − |ms' − ms|) for meta-verifier rollouts (``reference`` is ms)."""

    __name__ = "meta_verifier_reward"

    async def __call__(self, prompts: list[Any], completions: list[Any], proof: list[str], analysis: list[str],
                       reference: list[float], log_metric: Metric | None = None, **_: Any) -> list[float | None]:
        ratings = [
            own_score(completion_text(completion), META_FORMAT, (proof_text, analysis_text))
            for completion, proof_text, analysis_text in zip(completions, proof, analysis)
        ]
        rewards: list[float | None] = [meta_verifier_reward(rating, ref) for rating, ref in zip(ratings, reference)]
        parsed = [(rating, ref) for rating, ref in zip(ratings, reference) if rating is not None]
        log_all(log_metric, {
            "reward/format": fmean(rating is not None for rating in ratings),
            "format_failure_rate": fmean(rating is None for rating in ratings),
            "reward/rating_agreement": fmean(1 - abs(m - r) for m, r in parsed) if parsed else None,
            **process_metrics(completions),
        })
        return rewards


class EnhancedVerifierReward(VerifierReward):
    """The paper's enhanced verifier: one GRPO run on verification and meta-verification prompts together.

    Each rollout is rewarded by its prompt's task (the dataset's ``task`` column): a verification
    by :class:`VerifierReward` (with R_meta from ``meta``), a meta-verification by
    :class:`MetaVerifierReward` against the analysis's reference rating. The verification
    components are logged under their usual names, the meta-verification ones under
    ``rating/``, and ``task/meta_share`` is the share of the step's rollouts that rated analyses.
    """

    __name__ = "enhanced_verifier_reward"

    def __init__(self, settings: RewardSettings, verifier: ScoringClient | None = None, meta: ScoringClient | None = None,
                 prompts_dir: str | None = None, sampling: SamplingSettings | None = None) -> None:
        super().__init__(settings, verifier, meta, prompts_dir, sampling)
        self.rating = MetaVerifierReward(settings, prompts_dir=prompts_dir, sampling=sampling)

    async def __call__(self, prompts: list[Any], completions: list[Any], problem: list[str], proof: list[str],
                       reference: list[float], analysis: list[str] | None = None, task: list[str] | None = None,
                       log_metric: Metric | None = None, first_bad_step: list[int] | None = None,
                       step_known: list[bool] | None = None, **_: Any) -> list[float | None]:
        tasks = task or ["verifier"] * len(completions)
        rated = [index for index, name in enumerate(tasks) if name == "meta-verifier"]
        verified = [index for index, name in enumerate(tasks) if name != "meta-verifier"]

        def pick(values: Sequence[Any], indices: list[int]) -> list[Any]:
            return [values[index] for index in indices]

        rewards: list[float | None] = [None] * len(completions)
        if verified:
            parts = await super().__call__(pick(prompts, verified), pick(completions, verified), pick(problem, verified),
                                           pick(proof, verified), pick(reference, verified), log_metric=log_metric,
                                           first_bad_step=pick(first_bad_step or [0] * len(completions), verified),
                                           step_known=pick(step_known or [False] * len(completions), verified))
            for index, reward in zip(verified, parts):
                rewards[index] = reward
        if rated:
            prefixed = None if log_metric is None else (lambda name, value: log_metric(f"rating/{name}", value))
            parts = await self.rating(pick(prompts, rated), pick(completions, rated), pick(proof, rated),
                                      pick(analysis or [""] * len(completions), rated), pick(reference, rated),
                                      log_metric=prefixed)
            for index, reward in zip(rated, parts):
                rewards[index] = reward
        log_all(log_metric, {"task/meta_share": len(rated) / len(completions) if completions else None})
        return rewards


class GeneratorReward(RoleReward):
    """R = R_format(Y, Z) · (α · s + β · (1 − |s' − s|) · ms): the verifier scores Y, the meta-verifier rates Z."""

    __name__ = "generator_reward"

    async def verifier_scores(self, problem: list[str], generated: Sequence[GeneratedProof], formatted: list[int],
                              stats: CallStats) -> dict[int, float | None]:
        """s per formatted rollout: the mean score of its ``verify_samples`` analyses (None: no analysis came back)."""
        assert self.verifier is not None, "the generator reward needs a verifier engine (attach the policy first)"
        prompts_y = [verification_messages(problem[i], generated[i].proof, self.prompts_dir) for i in formatted]
        results = await self.verifier.generate(self.requests(prompts_y, self.settings.verify_samples), stats)
        return {index: None if result is None else mean_score(
                    [parse_verdict(c.text, VERIFIER_FORMAT, c.finish_reason, (generated[index].proof,)).score
                     for c in result.completions])
                for index, result in zip(formatted, results)}

    async def __call__(self, prompts: list[Any], completions: list[Any], problem: list[str],
                       goal: list[list[str]] | None = None, log_metric: Metric | None = None, **_: Any) -> list[float | None]:
        generated = [parse_generation(completion_text(completion)) for completion in completions]
        formatted = [index for index, item in enumerate(generated) if item.format_ok]
        verify_stats, meta_stats = CallStats(), CallStats()
        truth = true_scores(goal or [[]] * len(generated), generated)
        if self.settings.verifier == CHECKER:  # s is the truth; a problem without a goal leaves its rollout out
            proof_scores: dict[int, float | None] = {index: truth.get(index) for index in formatted}
        elif self.settings.verifier == SELF_SCORE:  # s = s': the policy grades itself and nothing checks it
            proof_scores = {index: generated[index].self_score for index in formatted}
        else:
            proof_scores = await self.verifier_scores(problem, generated, formatted, verify_stats)
        scored = [index for index in formatted if proof_scores[index] is not None]
        ratings = await self.meta_ratings(
            # the whole self-evaluation, verdict and boxed self-score included: ms rates whether the score fits the defects
            [MetaItem(problem[i], generated[i].proof, generated[i].self_evaluation_text) for i in scored], meta_stats
        )
        rating_of = dict(zip(scored, ratings))
        rewards: list[float | None] = []
        parts = []
        for index, item in enumerate(generated):
            if not item.format_ok:
                rewards.append(0.0)
            elif proof_scores[index] is None or rating_of[index] is None:
                rewards.append(None)
            else:
                part = generator_reward(True, proof_scores[index], item.self_score, rating_of[index],
                                        self.settings.alpha, self.settings.beta)
                parts.append(part)
                rewards.append(part.total)
        log_all(log_metric, {
            "reward/format": fmean(item.format_ok for item in generated),
            "format_failure_rate": fmean(not item.format_ok for item in generated),
            "reward/proof_score": fmean(part.proof_score for part in parts) if parts else None,
            "reward/self_accuracy": fmean(part.self_accuracy for part in parts) if parts else None,
            "self_score": mean_score([item.self_score for item in generated]),
            "skipped": float(sum(reward is None for reward in rewards)),
            **call_metrics("verifier", verify_stats, self.settings.verifier not in ENGINELESS_VERIFIERS),
            **call_metrics("meta", meta_stats, self.meta is not None),
            **process_metrics(completions, verify_stats, meta_stats),
            **truth_metrics(truth, generated, proof_scores),
        })
        return rewards


def true_scores(goals: Sequence[Sequence[str]], generated: Sequence[GeneratedProof]) -> dict[int, float]:
    """The world checker's score of each rollout whose problem has a goal (a rollout that breaks the format: 0)."""
    from data.world.checker import check_goal

    return {index: check_goal(claims, generated[index].proof).score if generated[index].format_ok else 0.0
            for index, claims in enumerate(goals) if claims}


def truth_metrics(truth: dict[int, float], generated: Sequence[GeneratedProof],
                  proof_scores: dict[int, float | None]) -> dict[str, float | None]:
    """What the world's checker says (``truth``: ``true_scores``) of the rollouts whose problem has a checkable goal
    (nothing when none has):

    ``truth/pass_rate`` the share it scores 1 (a rollout that breaks the format fails), ``truth/score`` its
    mean score, ``truth/verifier_agreement`` 1 − |verifier score − true score| and ``truth/self_accuracy``
    1 − |self-score − true score| over the rollouts that have them, and ``truth/self_accuracy_baseline``
    the same for a self-evaluation that always gives the most common true score among those rollouts.
    Beside ``reward/proof_score`` they show whether the reward rises with real correctness or only with
    the verifier's opinion.
    """
    if not truth:
        return {}
    judged = [(proof_scores[index], true) for index, true in truth.items() if proof_scores.get(index) is not None]
    self_scored = [(generated[index].self_score, true) for index, true in truth.items()
                   if generated[index].format_ok and generated[index].self_score is not None]
    return {
        "truth/pass_rate": fmean(true == 1.0 for true in truth.values()),
        "truth/score": fmean(truth.values()),
        "truth/verifier_agreement": fmean(1 - abs(said - true) for said, true in judged) if judged else None,
        "truth/self_accuracy": fmean(1 - abs(said - true) for said, true in self_scored) if self_scored else None,
        "truth/self_accuracy_baseline": constant_accuracy([true for _, true in self_scored]) if self_scored else None,
    }


def constant_accuracy(true_scores: Sequence[float]) -> float:
    """1 − mean |c − true score| for c the most common true score (ties: the lowest)."""
    counts = Counter(true_scores)
    common = min(counts, key=lambda score: (-counts[score], score))
    return fmean(1 - abs(common - true) for true in true_scores)
