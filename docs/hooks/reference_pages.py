"""Which reference pages are generated, from which code: the one list the hook and the tests share.

``generated_pages()`` renders every page (site path -> Markdown) without MkDocs, so the tests
that check the reference against the code run without the ``docs`` extra.
"""

from __future__ import annotations

from proofsmith.cli import build_parser
from proofsmith.config import Config
from reference_cli import cli_markdown
from reference_config import Root, config_markdown
from reference_records import records_markdown
from training.config import TrainConfig
from training.world_model.config import WorldModelConfig

ROOTS: list[Root] = [
    Root(Config, "Commands: prove, verify, meta-verify, label, eval, world, world calibrate", "commands",
         "The file `--config FILE` gives to every command except `train` and `world model`; `--dry-run` prints it resolved."),
    Root(TrainConfig, "proofsmith train", "train",
         "The file `proofsmith train ROLE --config FILE` reads (shipped: `configs/*_cpu.toml`, `configs/*_gpu.toml`)."),
    Root(WorldModelConfig, "proofsmith world model", "world-model",
         "The file `proofsmith world model --config FILE` reads (shipped: `configs/world_model.toml`)."),
]


def generated_pages() -> dict[str, str]:
    """Site path -> Markdown of every generated reference page."""
    return {
        "reference/cli.md": cli_markdown(build_parser()),
        "reference/config.md": config_markdown(ROOTS),
        "reference/records.md": records_markdown(),
    }
