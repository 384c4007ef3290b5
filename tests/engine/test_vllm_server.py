"""Ports for servers started side by side (the servers themselves: the session's ``vllm_server`` fixture and the
async pool's ``local_servers``, tests/training/async_rl/test_async_train.py)."""

from __future__ import annotations

import socket

from engine.vllm_server import free_port, free_ports


def test_ports_probed_together_are_distinct_and_free() -> None:
    ports = free_ports(8)
    assert len(set(ports)) == 8
    for port in [*ports, free_port()]:
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", port))  # nobody holds it
