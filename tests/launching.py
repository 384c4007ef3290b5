"""Running ``proofsmith`` under ``accelerate launch`` with several processes, as a user on a CPU machine would.

On CPU the launch takes ``--multi_gpu``: that flag picks accelerate's torchrun launcher, and the
trainers set ``use_cpu`` themselves, so the processes meet over gloo (``accelerate launch --cpu
--num_processes 2`` starts one process only).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def launch_command(*args: str, processes: int = 2) -> list[str]:
    return [str(Path(sys.executable).with_name("accelerate")), "launch", "--multi_gpu", "--num_processes", str(processes),
            "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
            "--main_process_port", str(free_port()), "-m", "proofsmith", *args]


def launch(*args: str, processes: int = 2, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(launch_command(*args, processes=processes), capture_output=True, text=True, timeout=timeout,
                          cwd=REPO, env={**os.environ, "PYTHONWARNINGS": "ignore"})
