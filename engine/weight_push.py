"""Push a trainer's weights into running vLLM engines without restarting them (filesystem transfer).

The trainer writes its tensors as one safetensors file in a fresh folder (``/dev/shm`` when it
exists: a RAM disk, so the write and the engine's read cost no disk I/O), renamed into place
only when complete. Each engine then reloads that folder in place through
``engine.weight_reload_extension`` and drops its prefix cache, whose KV blocks were computed
by the old weights. A file path travels through vLLM's RPC, never tensors: tensors lose their
data on the way, and raw bytes were 5-10x slower than the file here. On GPU the same role is
played by vLLM's NCCL weight transfer.

Servers must run with ``VLLM_SERVER_DEV_MODE=1`` and the extension
(``VLLMServer(weight_reload=True)`` starts them so); a server push pauses generation
(in-flight requests keep their state), reloads, clears the cache and resumes.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from data.errors import EngineUnavailableError

logger = logging.getLogger(__name__)

EXTENSION = "engine.weight_reload_extension.WeightReloadExtension"
RELOAD_METHOD = "proofsmith_reload_weights"


def default_push_root() -> Path:
    shared_memory = Path("/dev/shm")
    base = shared_memory if shared_memory.is_dir() and os.access(shared_memory, os.W_OK) else Path("/tmp")
    return base / f"proofsmith-weights-{os.getpid()}"


def vllm_tensors(model: Any) -> Iterator[tuple[str, Any]]:
    """A Hugging Face model's tensors under the names vLLM loads, tied copies left out.

    With tied embeddings ``lm_head.weight`` is the embedding matrix again: vLLM ignores it,
    and safetensors refuses to store two names for one tensor.
    """
    tied = bool(getattr(getattr(model, "config", None), "tie_word_embeddings", False))
    for name, tensor in model.state_dict().items():
        if tied and name == "lm_head.weight":
            continue
        yield name, tensor


class WeightFolders:
    """Numbered weight folders under ``root``; keeps the newest ``keep`` (an engine may still be reading the last)."""

    def __init__(self, root: Path | None = None, keep: int = 2) -> None:
        if keep < 1:
            raise ValueError(f"keep must be at least 1, got {keep}")
        self.root = Path(root) if root is not None else default_push_root()
        self.keep = keep

    def write(self, tensors: Iterable[tuple[str, Any]], version: int, dtype: Any = None) -> Path:
        """Write ``tensors`` as ``root/v{version}/model.safetensors``; the folder appears only when complete."""
        import torch
        from safetensors.torch import save_file

        folder = self.root / f"v{version}"
        partial = self.root / f"v{version}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        contents: dict[str, torch.Tensor] = {}
        for name, tensor in tensors:
            tensor = tensor.detach()
            if dtype is not None and tensor.is_floating_point():
                tensor = tensor.to(dtype)
            contents[name] = tensor.to("cpu").contiguous()
        save_file(contents, str(partial / "model.safetensors"))
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
        self._prune(version)
        return folder

    def _prune(self, newest: int) -> None:
        for folder in self.root.glob("v*"):
            number = folder.name[1:]
            if number.isdigit() and int(number) <= newest - self.keep:
                shutil.rmtree(folder, ignore_errors=True)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def push_to_llm(llm: Any, folder: Path) -> float:
    """Reload an in-process ``vllm.LLM`` (built with ``worker_extension_cls=EXTENSION``); returns seconds."""
    started = time.perf_counter()
    llm.collective_rpc(RELOAD_METHOD, kwargs={"weights_path": str(folder)})
    llm.reset_prefix_cache()
    return time.perf_counter() - started


def server_root(base_url: str) -> str:
    """``http://host:port/v1`` → ``http://host:port`` (the dev routes live at the root)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def push_to_server(base_url: str, folder: Path, timeout_s: float = 600.0) -> float:
    """Pause, reload, clear the prefix cache and resume one server; returns seconds.

    A server that cannot be reached raises ``EngineUnavailableError`` (the caller's pool decides
    what to do with it); one that answers with an error raises it with vLLM's message.
    """
    import httpx

    root = server_root(base_url)
    started = time.perf_counter()
    try:
        with httpx.Client(base_url=root, timeout=timeout_s) as client:
            check(client.post("/pause", params={"mode": "keep"}), "pause")
            try:
                body = {"method": RELOAD_METHOD, "kwargs": {"weights_path": str(folder)}, "timeout": timeout_s}
                check(client.post("/collective_rpc", json=body), "reload weights")
                check(client.post("/reset_prefix_cache"), "reset the prefix cache")
            finally:
                check(client.post("/resume"), "resume")
    except httpx.TransportError as error:
        raise EngineUnavailableError(f"weight push to {root} failed: {type(error).__name__}: {error}") from error
    return time.perf_counter() - started


def check(response: Any, action: str) -> None:
    if response.status_code == 404:
        raise EngineUnavailableError(
            f"server at {response.request.url.host}:{response.request.url.port} has no route to {action}: "
            "start it with VLLM_SERVER_DEV_MODE=1 (VLLMServer(weight_reload=True))"
        )
    if response.status_code >= 400:
        raise EngineUnavailableError(f"server could not {action}: HTTP {response.status_code}: {response.text[:300]}")
