"""``proofsmith world model`` end to end: a tiny world model trains, resumes, and works with every command and engine.

No assertion on learning here (a few steps of a 100k-parameter model learn nothing): these
tests check the plumbing. The model is an ordinary checkpoint: transformers and in-process
vLLM load it by path, and ``prove``, ``verify`` and ``eval verifier`` run on it with the
prompts it was trained with.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from data.jsonl import read_jsonl
from eval.calibration import problems_at_the_edge, proofs_at_the_edge

TINY = Path(__file__).parent / "tiny.toml"
pytestmark = pytest.mark.slow


def train(cli, out: Path, *extra: str) -> dict:
    result = cli("world", "model", "--config", str(TINY), "--out", str(out), "--json", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def run(cli, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("world-model") / "run"
    train(cli, out)
    return out


def test_a_run_leaves_an_ordinary_checkpoint_its_world_and_its_cost(run: Path) -> None:
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert (run / "COMPLETE").exists() and summary["steps"] == summary["timed_steps"] == 4
    final = run / "final"
    config = json.loads((final / "config.json").read_text(encoding="utf-8"))
    assert config["architectures"] == ["LlamaForCausalLM"] and config["num_hidden_layers"] == 2
    assert (final / "model.safetensors").exists() and (final / "tokenizer.json").exists()
    assert sorted(path.name for path in (final / "prompts").iterdir()) == ["generate.md", "meta_verify.md", "refine.md",
                                                                           "verify.md"]
    assert summary["trained_tokens"] > 0 and summary["tokens_per_second"] > 0 and 0 <= summary["padding_fraction"] < 1
    assert summary["examples"] == {"verifier": 28, "generator": 14, "meta-verifier": 14}
    assert summary["decision_weight"] == 1 and summary["decision_token_share"] is None  # the model's own loss, unweighted
    metrics = read_jsonl(run / "metrics.jsonl")
    assert [record["step"] for record in metrics if "loss" in record] == [1, 2, 3, 4]
    assert all(record["tokens_per_second"] > 0 for record in metrics if "loss" in record)
    assert list((run / "tensorboard").rglob("events.out.tfevents.*"))
    world = {row["problem"] for row in read_jsonl(run / "world" / "train.jsonl")}
    assert world and not world & {row["problem"] for row in read_jsonl(run / "world" / "test_in.jsonl")}
    taught = {example["problem_id"] for example in read_jsonl(run / "examples.jsonl")}
    assert taught == {row["problem_id"] for row in read_jsonl(run / "world" / "train.jsonl")}


def test_a_cut_off_run_resumes_from_its_last_checkpoint(cli, run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    # what a kill after the step-2 checkpoint leaves: no later checkpoint, no final model, no COMPLETE
    for name in ("final", "checkpoints/checkpoint-4"):
        shutil.rmtree(copy / name)
    for name in ("COMPLETE", "summary.json"):
        (copy / name).unlink()
    (copy / "config.toml").write_text((run / "config.toml").read_text(encoding="utf-8").replace(str(run), str(copy)))
    summary = train(cli, copy)
    sessions = read_jsonl(copy / "sessions.jsonl")
    assert [(session["first_step"], session["last_step"]) for session in sessions] == [(0, 4), (2, 4)]
    assert summary["steps"] == 4 and (copy / "final" / "model.safetensors").exists()
    assert summary["timed_steps"] == 4 + 2  # both sessions' steps, the two redone after the cut included
    assert (copy / "examples.jsonl").read_bytes() == (run / "examples.jsonl").read_bytes()  # drawn once, read back
    again = train(cli, copy)  # complete: nothing trains again
    assert again["steps"] == 4 and len(read_jsonl(copy / "sessions.jsonl")) == 2


def test_a_run_killed_after_its_last_step_trains_no_step_more(cli, run: Path, tmp_path: Path) -> None:
    """Training done, summary not written (a kill, or an error after training): the rerun writes the final model from
    the last checkpoint; resumed there, transformers would train one step past max_steps."""
    from safetensors.torch import load_file

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    for name in ("COMPLETE", "summary.json"):
        (copy / name).unlink()
    shutil.rmtree(copy / "final")
    (copy / "config.toml").write_text((run / "config.toml").read_text(encoding="utf-8").replace(str(run), str(copy)))
    summary = train(cli, copy)
    assert summary["steps"] == summary["timed_steps"] == 4 and len(read_jsonl(copy / "sessions.jsonl")) == 1
    final, trained = load_file(copy / "final" / "model.safetensors"), load_file(run / "final" / "model.safetensors")
    assert final.keys() == trained.keys() and all(final[name].equal(trained[name]) for name in final)


def test_dry_run_and_bad_settings(cli, run: Path, tmp_path: Path) -> None:
    out = tmp_path / "dry"
    result = cli("world", "model", "--config", str(TINY), "--out", str(out), "--max-steps", "9", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert tomllib.loads(result.stdout)["training"]["max_steps"] == 9
    assert sorted(path.name for path in out.iterdir()) == ["config.toml"]
    other = cli("world", "model", "--config", str(TINY), "--out", str(run), "--max-steps", "9")
    assert other.returncode == 2 and "holds a world-model run with other settings" in other.stderr
    assert len(other.stderr.strip().splitlines()) == 1
    for bad, fragment in ((("--set", "architecture.heads=3"), "hidden_size must divide by heads"),
                          (("--precision", "fp8"), "unknown precision"), (("--family", "geometry"), "unknown family")):
        result = cli("world", "model", "--config", str(TINY), "--out", str(tmp_path / "bad"), *bad)
        assert result.returncode == 2 and fragment in result.stderr and "Traceback" not in result.stderr
    missing = cli("world")
    assert missing.returncode == 2 and "--out is required" in missing.stderr


def test_a_run_continues_a_world_model_from_its_weights_and_tokenizer(cli, tiny_world_model: str, tmp_path: Path) -> None:
    """``init_model``: the shipped tiny model trained two more steps at a learning rate too small to move it far, on
    examples drawn anew: it starts from the checkpoint's weights (a fresh model's would differ by ~0.1), keeps its
    tokenizer, and a wrong checkpoint or a shape [architecture] does not describe is said in one line before any work."""
    import torch
    from safetensors.torch import load_file

    roles = Path(__file__).parent / "tiny_roles.toml"
    out = tmp_path / "continued"
    result = cli("world", "model", "--config", str(roles), "--out", str(out), "--json", "--set", f"init_model={tiny_world_model}",
                 "--set", "examples.seed=1", "--max-steps", "2", "--set", "training.learning_rate=1e-7")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["init_model"] == tiny_world_model and summary["steps"] == 2
    init, continued = load_file(str(Path(tiny_world_model) / "model.safetensors")), load_file(str(out / "final" / "model.safetensors"))
    assert init.keys() == continued.keys()
    assert all(torch.allclose(init[name], continued[name], atol=1e-4) for name in init)
    assert any(not torch.equal(init[name], continued[name]) for name in init)  # and it did train
    kept = json.loads((Path(tiny_world_model) / "tokenizer.json").read_text(encoding="utf-8"))
    assert json.loads((out / "final" / "tokenizer.json").read_text(encoding="utf-8"))["model"] == kept["model"]
    for config, init_model, fragment in ((roles, str(tmp_path / "nowhere"), "is not a world-model checkpoint"),
                                         (TINY, tiny_world_model, "[architecture] does not describe init_model")):
        bad = cli("world", "model", "--config", str(config), "--out", str(tmp_path / "bad"), "--set", f"init_model={init_model}")
        assert bad.returncode == 2 and fragment in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "bad").exists()


def test_a_run_weights_the_decisions_of_worked_analyses(cli, tiny_world_model: str, tmp_path: Path) -> None:
    """``training.decision_weight``: the run trains on the weighted loss (tests/training/world_model/test_decision.py
    checks it token by token) and says what share of the answer tokens it weighted (at weight 1, none: the module's
    run); with ``training.decision_parts=verdict`` only the verdict words."""
    roles = Path(__file__).parent / "tiny_roles.toml"
    shares = {}
    for weight, parts in ((5, "right,verdict"), (5, "verdict")):
        out = tmp_path / f"weight{weight}-{parts}"
        result = cli("world", "model", "--config", str(roles), "--out", str(out), "--json", "--set", f"init_model={tiny_world_model}",
                     "--set", "examples.analysis=worked", "--set", f"training.decision_weight={weight}", "--max-steps", "2",
                     "--set", "training.logging_steps=1", "--set", f"training.decision_parts={parts}")
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["decision_weight"] == weight and summary["decision_parts"] == parts.split(",") and summary["steps"] == 2
        losses = [record["loss"] for record in read_jsonl(out / "metrics.jsonl") if "loss" in record]
        assert len(losses) == 2 and all(0 < loss < 20 for loss in losses)
        shares[weight, parts] = summary["decision_token_share"]
    assert 0 < shares[5, "verdict"] < shares[5, "right,verdict"] < 0.5


def test_a_run_trains_on_comparison_drills_and_refinements_beside_the_roles(cli, tiny_world_model: str, tmp_path: Path) -> None:
    """``examples.comparison_drills``: drills (no problem of their own) are written, counted and trained on end to end, here
    with their claims (``examples.drill_claims``), each written as two examples of four lines (``examples.drill_lines``),
    and their flawed right sides weighted (``flawed_right``); and ``examples.refine_per_problem``'s refinements, in the
    refine prompt the model carries, at the model's whole context."""
    roles = Path(__file__).parent / "tiny_roles.toml"
    out = tmp_path / "drills"
    result = cli("world", "model", "--config", str(roles), "--out", str(out), "--json", "--set", f"init_model={tiny_world_model}",
                 "--set", "examples.comparison_drills=0.5", "--set", "examples.drill_claims=true", "--set", "examples.drill_lines=4",
                 "--set", "training.decision_weight=5", "--set", "training.decision_parts=verdict,flawed_right",
                 "--set", "examples.refine_per_problem=1", "--set", "training.max_length=1024", "--max-steps", "2")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    examples = read_jsonl(out / "examples.jsonl")
    problems = {example["problem_id"] for example in examples if example["role"] != "comparison"}
    assert summary["examples"]["comparison"] == 2 * round(0.5 * len(problems)) > 0
    assert summary["problems"] == len(problems) and summary["steps"] == 2
    assert all("They differ." in example["answer"] and example["answer"].startswith("Step 1: ")
               and len(example["answer"].split("\n")) == 4 for example in examples if example["role"] == "comparison")
    assert summary["decision_parts"] == ["verdict", "flawed_right"] and 0 < summary["decision_token_share"] < 0.1
    refinements = [example for example in examples if example["role"] == "refiner"]
    assert summary["examples"]["refiner"] == len(refinements) == len(problems)  # every problem has a correct and a flawed proof
    refine_prompt = (out / "final" / "prompts" / "refine.md").read_text(encoding="utf-8").split("{{")[0].strip()
    assert all(example["prompt"][-1]["content"].startswith(refine_prompt) for example in refinements)


def problem_and_flawed_proof(run: Path, tmp_path: Path) -> tuple[str, str]:
    row = next(row for row in read_jsonl(run / "world" / "test_in.jsonl") if row["score"] == 0)
    (tmp_path / "problem.txt").write_text(row["problem"], encoding="utf-8")
    (tmp_path / "proof.txt").write_text(row["proof"], encoding="utf-8")
    return str(tmp_path / "problem.txt"), str(tmp_path / "proof.txt")


@pytest.mark.parametrize("engine", ["transformers", "vllm"])
def test_every_command_runs_the_world_model(cli, run: Path, tmp_path: Path, engine: str) -> None:
    """Every command on transformers; on in-process vLLM, eval verifier only (each vLLM start costs ~10 s here, and
    what is the world model's own there, its tokenizer and chat template, one command loads as well as three)."""
    model = ("--engine", engine, "--model", str(run / "final"), "--prompts", str(run / "final" / "prompts"),
             "--max-tokens", "24", "--seed", "0", "--set", "engine.max_model_len=1024")
    if engine == "transformers":
        problem, proof = problem_and_flawed_proof(run, tmp_path)
        verified = cli("verify", "--problem", problem, "--proof", proof, "--samples", "2", "--json", *model)
        assert verified.returncode == 0, verified.stderr
        report = json.loads(verified.stdout)
        assert report["engine"] == engine and len(report["samples"]) == 2 and report["prompt_tokens"] > 0
        proved = cli("prove", Path(problem).read_text(encoding="utf-8"), "--max-rounds", "1", "--json", *model)
        assert proved.returncode == 0, proved.stderr
        assert json.loads(proved.stdout)["rounds"]
    evaluated = cli("eval", "verifier", str(run / "world" / "test_in.jsonl"), "--out", str(tmp_path / "eval"),
                    "--samples", "1", "--max-items", "3", "--json", *model)
    assert evaluated.returncode == 0, evaluated.stderr
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text(encoding="utf-8"))
    assert "truth_by_n" in metrics and len(read_jsonl(tmp_path / "eval" / "items.jsonl")) == 3


def test_trl_trains_the_world_model_with_grpo(cli, run: Path, tmp_path: Path) -> None:
    """Verifier GRPO (TRL) from the world model, full weights, scores balanced, R_meta from the world's checker (the
    first bad step travels through TRL's dataset to the reward): the checkpoint is one TRL loads."""
    result = cli("train", "verifier", "--run-dir", str(tmp_path / "grpo"), "--model", str(run / "final"),
                 "--prompts", str(run / "final" / "prompts"), "--data", str(run / "world" / "train.jsonl"),
                 "--max-steps", "1", "--group-size", "2", "--max-tokens", "16", "--json",
                 "--set", "model.lora=false", "--set", "data.balance_scores=true", "--set", "rewards.meta=checker")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["steps"] == 1 and (tmp_path / "grpo" / "final" / "model.safetensors").exists()
    [logged] = [record for record in read_jsonl(tmp_path / "grpo" / "metrics.jsonl") if "reward/format" in record]
    assert "meta/seconds" not in logged  # no meta-verifier engine was called
    assert logged["skipped"] == 0.0 and ("reward/meta" in logged or logged["reward/format"] == 0.0)


def test_calibrate_measures_the_model_per_family_and_level_and_resumes(cli, run: Path, tmp_path: Path) -> None:
    out = tmp_path / "calibration"
    command = ("world", "calibrate", str(run / "world"), "--out", str(out), "--split", "test_in", "--samples", "2",
               "--engine", "transformers", "--model", str(run / "final"), "--prompts", str(run / "final" / "prompts"),
               "--max-tokens", "16", "--seed", "0")
    result = cli(*command, "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    problems = read_jsonl(run / "world" / "test_in_problems.jsonl")
    generations, verifications = read_jsonl(out / "generations.jsonl"), read_jsonl(out / "verifications.jsonl")
    assert [record["id"] for record in generations] == [row["id"] for row in problems]
    assert len(verifications) == len(read_jsonl(run / "world" / "test_in.jsonl"))
    assert all(len(record["passes"]) == 2 and len(record["analyses"]) == 0 for record in generations if "analyses" in record)
    assert all(len(record["analyses"]) == 2 for record in verifications)
    families = {(row["family"], row["level"]) for row in document["table"] if row["family"] != "all"}
    assert families == {("identity", 1), ("equation", 1)}
    edge = document["edge_of_competence"]  # what data.calibration selects GRPO rows by, from these very records
    assert edge["proofs_with_spread"] == proofs_at_the_edge(verifications)
    assert edge["problems_with_spread"] == problems_at_the_edge(generations)
    in_groups = {(group["family"], group["level"]) for group in edge["groups"]}
    assert edge["problems_in_groups"] == [record["id"] for record in generations  # every test_in problem is measured here
                                          if (record["family"], record["level"]) in in_groups]
    assert (out / "calibration.md").read_text(encoding="utf-8").startswith("| split | family | level |")
    assert (out / "calibration.png").read_bytes().startswith(b"\x89PNG")
    before = (out / "verifications.jsonl").read_bytes()
    again = cli(*command, "--json")  # everything is done: nothing is generated again, the same table comes back
    assert again.returncode == 0, again.stderr
    assert (out / "verifications.jsonl").read_bytes() == before and json.loads(again.stdout)["table"] == document["table"]
    other = cli(*command[:-2], "--seed", "1")
    assert other.returncode == 2 and "different settings" in other.stderr
    alone = tmp_path / "generator-only"
    only = cli(*command[:4], str(alone), *command[5:], "--role", "generator", "--json")
    assert only.returncode == 0, only.stderr
    assert [record["id"] for record in read_jsonl(alone / "generations.jsonl")] == [record["id"] for record in generations]
    assert not (alone / "verifications.jsonl").exists()
    assert all("verifier" not in row for row in json.loads(only.stdout)["table"])


def test_a_vllm_server_serves_the_world_model(cli, run: Path, tmp_path: Path) -> None:
    from engine.vllm_server import VLLMServer

    problem, proof = problem_and_flawed_proof(run, tmp_path)
    with VLLMServer(model=str(run / "final"), served_name="world-lm", max_model_len=1024,
                    log_path=tmp_path / "server.log") as server:
        result = cli("verify", "--problem", problem, "--proof", proof, "--samples", "2", "--json", "--engine", "openai",
                     "--base-url", server.base_url, "--model", "world-lm", "--prompts", str(run / "final" / "prompts"),
                     "--max-tokens", "24", "--seed", "0")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["engine"] == "openai" and len(report["samples"]) == 2 and report["prompt_tokens"] > 0
