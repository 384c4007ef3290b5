"""The data-formats reference page: the records proofsmith reads and writes, from their code.

Contract: each format names the dataclasses that hold its rows (their fields, types,
defaults and field docstrings are listed) and the functions that write its lines (the keys
of every dict literal in their source are listed, in source order, with ``**`` spreads
shown as written and keys assigned afterwards as "set when present"). Which classes and
writers make up a format is chosen here, with one sentence of context each; everything
listed under them is read from the code when the site is built.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from data.pairwise import PairColumns, ProofPair
from data.records import ProofItem
from data.verifier_rows import VerifierRow, VerifierRowColumns
from data.world.proofs import WorldProof
from eval.benchmark_problems import BenchmarkProblem
from eval.deepseek_outputs import output_row
from eval.human_grades import HumanGrade
from generator.final_proof import FinalProof
from generator.refine import Round
from generator.search import Candidate
from markdown_text import anchor, code, prose, toml_value
from proofsmith.commands.common import engine_record
from proofsmith.commands.prove import summarize
from proofsmith.config import field_docs
from reference_config import class_doc
from training.auto_labeling.proofs import LabeledProof
from training.role_data.rows import TrainingRow
from verifier.verification import Analysis, Verification


@dataclass(frozen=True)
class RecordFormat:
    title: str
    context: str
    """Where the format is read or written (hand-written: the code does not say it in one place)."""
    classes: tuple[type, ...] = ()
    writers: tuple[Callable[..., Any], ...] = ()


READ: tuple[RecordFormat, ...] = (
    RecordFormat("Proofs to label or verify", "Rows `label` reads (JSONL, CSV, Parquet or a `datasets` folder; columns "
                 "renamed with `--problem-column`, `--proof-column`, `--id-column`, `--score-column`).", (ProofItem,)),
    RecordFormat("Human-graded proofs", "What `eval verifier` reads from each of its formats (`imo-gradingbench`, "
                 "`open-proof-corpus`, `deepseek-math-v2`, `jsonl`, `verifier-rows`).", (HumanGrade,)),
    RecordFormat("Verifier rows", "Graded proofs with a reference critique (`data/verifier_rows.py`), read by `eval "
                 "verifier`, `eval meta-verifier` and `train`; the column names are the defaults of the first class "
                 "(`--column FIELD=COLUMN` changes them).", (VerifierRowColumns, VerifierRow)),
    RecordFormat("Proof pairs", "What `eval selection` reads (`data/pairwise.py`); `correct_index` is 1-based.",
                 (PairColumns, ProofPair)),
    RecordFormat("Benchmark problems", "What `eval prover` and `prove --search --problems` read: an IMO-ProofBench "
                 "CSV, JSONL/JSON/CSV rows, or DeepSeekMath-V2 inputs.", (BenchmarkProblem,)),
    RecordFormat("Training rows", "One row of `train` data after its columns (`[data]` in the configuration "
                 "reference) are mapped; which fields a role needs is in the guide to training.", (TrainingRow,)),
)

WRITTEN: tuple[RecordFormat, ...] = (
    RecordFormat("`prove --out RUN.jsonl`", "A `config` line, one `round` line per round, then a `result` line "
                 "(the final proof, with the fields of `FinalProof`).", (FinalProof,), (Round.to_record, engine_record, summarize)),
    RecordFormat("Verifications", "`verify --json` prints these keys with `score` (`rating` for `meta-verify`), "
                 "`engine` and `model` added; every record that holds sampled analyses (labels, eval items, pool "
                 "proofs) holds them in this shape.", (), (Verification.to_dict, Analysis.to_dict)),
    RecordFormat("Search pool, `pool.jsonl`", "One line per proof of a `prove --search` pool.", (Candidate,), (Candidate.to_record,)),
    RecordFormat("Labels, `label --out`", "One line per labelled proof, appended as each proof finishes.",
                 (LabeledProof,), (LabeledProof.to_record,)),
    RecordFormat("World rows, `SPLIT.jsonl`", "One line per proof of a `proofsmith world` split; `problem`, `proof` "
                 "and `score` are the columns `label`, `eval verifier` and `train` read.", (WorldProof,), (WorldProof.to_record,)),
    RecordFormat("DeepSeekMath-V2 outputs, `deepseek_outputs.jsonl`", "One line per problem in the release's key order "
                 "(written by `prove --search --problems` and `eval prover`).", (), (output_row,)),
)


def _type_name(annotation: Any) -> str:
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))


def _default(item: dataclasses.Field[Any]) -> str:
    if item.default is not dataclasses.MISSING:
        return "default " + code(toml_value(item.default))
    if item.default_factory is not dataclasses.MISSING:
        return "default " + code(toml_value(item.default_factory()))
    return "required"


def fields_markdown(cls: type) -> str:
    docs = field_docs(cls)
    lines = [f"Fields of `{cls.__module__}.{cls.__qualname__}`" + (f": {prose(' '.join(class_doc(cls).split()))}" if class_doc(cls) else "."), ""]
    for item in dataclasses.fields(cls):
        facts = f"({code(_type_name(item.type))}; {_default(item)})"
        lines.append(f"- {code(item.name)} {facts}" + (f": {prose(docs[item.name])}" if item.name in docs else ""))
    return "\n".join(lines)


def written_keys(function: Callable[..., Any]) -> tuple[list[list[str]], list[str]]:
    """The keys of each dict literal in ``function``'s source, and keys assigned by subscript afterwards."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    literals: list[list[str]] = []
    later: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = [key.value if isinstance(key, ast.Constant) else f"**{ast.unparse(value)}"
                    for key, value in zip(node.keys, node.values)
                    if key is None or (isinstance(key, ast.Constant) and isinstance(key.value, str))]
            if keys:
                literals.append((node.lineno, node.col_offset, keys))  # type: ignore[arg-type]
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
                    later.append(target.slice.value)
    ordered = [keys for _, _, keys in sorted(literals)]  # type: ignore[misc]
    return ordered, later


def writer_markdown(function: Callable[..., Any]) -> str:
    literals, later = written_keys(function)
    name = f"{function.__module__}.{function.__qualname__}"
    lines = [f"Keys written by `{name}`:", ""]
    for keys in literals:
        lines.append("- `{` " + ", ".join(code(key) for key in keys) + " `}`")
    if later:
        lines.append("- set when present: " + ", ".join(code(key) for key in later))
    return "\n".join(lines)


def format_section(record: RecordFormat) -> str:
    parts = [f"### {record.title} {{#{anchor(record.title)}}}", "", prose(record.context) if "`" not in record.context else record.context]
    parts += ["", *(fields_markdown(cls) + "\n" for cls in record.classes)]
    parts += [writer_markdown(writer) + "\n" for writer in record.writers]
    return "\n".join(parts).rstrip()


def records_markdown() -> str:
    header = ("# Data formats\n\n"
              "The records proofsmith reads and writes, generated when the site is built from the dataclasses that "
              "hold them and the functions that write them. The output formats of each role and the parsing rules "
              "are described in [Formats and parsing](formats.md); JSONL run files follow the rules of `data/jsonl.py` "
              "(one flushed line per record, a cut-off last line skipped on reading).")
    read = "\n\n".join(format_section(record) for record in READ)
    written = "\n\n".join(format_section(record) for record in WRITTEN)
    return f"{header}\n\n## Read\n\n{read}\n\n## Written\n\n{written}\n"
