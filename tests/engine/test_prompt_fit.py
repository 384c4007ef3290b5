"""engine.prompt_fit: prompts that cannot fit are refused from the tokenizer alone, before weights load."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from data.errors import PromptTooLongError
from engine.base import ChatMessage
from engine.config import EngineConfig
from engine.model_store import ensure_checkpoint
from engine.prompt_fit import DEFAULT_CONTEXT, check_prompts_fit, transformers_context, vllm_context

REPO = Path(__file__).resolve().parents[2]


def test_transformers_context_is_the_position_limit_or_the_default() -> None:
    assert transformers_context(SimpleNamespace(max_position_embeddings=8192)) == 8192
    assert transformers_context(SimpleNamespace()) == DEFAULT_CONTEXT


def test_vllm_context_never_undercuts_what_vllm_allows() -> None:
    model = SimpleNamespace(max_position_embeddings=4096, rope_scaling={"type": "linear", "factor": 4.0})
    assert vllm_context(model, 0) == 16384
    assert vllm_context(model, 1024) == 1024  # --max-model-len is what vLLM will hold
    assert vllm_context(SimpleNamespace(n_positions=1024, max_position_embeddings=2048), 0) == 2048


@pytest.mark.slow
def test_a_long_prompt_is_refused_for_in_process_backends_only(embedded_checkpoint: str) -> None:
    source = ensure_checkpoint("embedded")
    short = (ChatMessage("user", "Prove that 1 + 1 = 2."),)
    long = (ChatMessage("user", "word " * 700),)
    check_prompts_fit(EngineConfig(backend="transformers"), "transformers", source, [short, long])  # 8192 holds both
    with pytest.raises(PromptTooLongError, match=r"^prompt 1 has \d+ tokens; the model's context holds 512$") as refused:
        check_prompts_fit(EngineConfig(backend="vllm", max_model_len=512), "vllm", source, [short, long])
    assert refused.value.indices == (1,)
    # A server's context is the server's to state: nothing is checked here.
    check_prompts_fit(EngineConfig(backend="openai", max_model_len=512), "openai", source, [long])


@pytest.mark.slow
def test_create_engine_refuses_before_vllm_is_imported(embedded_checkpoint: str) -> None:
    script = textwrap.dedent(
        """
        import json, sys
        from data.errors import PromptTooLongError
        from engine.auto import Workload
        from engine.base import ChatMessage
        from engine.config import EngineConfig
        from engine.factory import create_engine

        try:
            create_engine(EngineConfig(backend="vllm"), Workload(1, 16), [(ChatMessage("user", "word " * 9000),)])
            outcome = "built"
        except PromptTooLongError as error:
            outcome = str(error)
        print(json.dumps({"outcome": outcome, "vllm_imported": "vllm" in sys.modules}))
        """
    )
    process = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert process.returncode == 0, process.stderr[-2000:]
    report = json.loads(process.stdout.strip().splitlines()[-1])
    assert report["outcome"].startswith("prompt 0 has ") and report["outcome"].endswith("the model's context holds 8192")
    assert report["vllm_imported"] is False
