"""MkDocs hook: adds the pages generated from the code to the site at build time.

Registered under ``hooks:`` in ``mkdocs.yml``. ``on_files`` adds

* ``reference/cli.md``: every command, subcommand and flag (``reference_cli``);
* ``reference/config.md``: every config table and field (``reference_config``);
* ``reference/records.md``: the records read and written (``reference_records``);
* ``results/plots/*.png``: the plots embedded in ``benchmarks/results/*.html`` (``result_plots``).

The pages exist only in the built site; the nav in ``mkdocs.yml`` names them like any other.
MkDocs puts this file's folder on ``sys.path`` only while importing it, so the renderers are
imported here, at the top.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from reference_pages import generated_pages
from result_plots import plots

REPO = Path(__file__).resolve().parents[2]


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path, markdown in generated_pages().items():
        files.append(File.generated(config, path, content=markdown))
    for path, png in plots(REPO / "benchmarks" / "results").items():
        files.append(File.generated(config, path, content=png))
    return files
