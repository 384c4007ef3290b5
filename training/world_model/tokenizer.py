"""A byte-level BPE tokenizer trained on the world's text, with a chat template every engine can use.

Byte-level: any text encodes and decodes back byte for byte (``≥``, ``·`` and text the world
never wrote included), so parsers see exactly what the model wrote. Digits are split one by
one before BPE merges anything, so ``127`` and ``1270`` share their digits' tokens and the
model can learn arithmetic digit by digit. The chat template writes each message as

    <|user|>
    CONTENT<|end|>

and a generation prompt as ``<|assistant|>`` and a newline; the assistant's answer ends with
``<|end|>``, the end-of-sequence token engines stop at.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

END = "<|end|>"
PAD = "<|pad|>"
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>")
SPECIAL_TOKENS = (PAD, END, *ROLE_TOKENS)
CHAT_TEMPLATE = (
    "{% for message in messages %}{{ '<|' + message['role'] + '|>\n' + message['content'] + '<|end|>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def train_tokenizer(texts: Iterable[str], vocab_size: int, min_frequency: int) -> Any:
    """A ``PreTrainedTokenizerFast`` whose BPE merges were learned from ``texts``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token=END, pad_token=PAD,
                                   additional_special_tokens=list(ROLE_TOKENS), clean_up_tokenization_spaces=False)
    fast.chat_template = CHAT_TEMPLATE
    return fast


def load_tokenizer(folder: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder))


def prompt_ids(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    """The token ids an engine sends for ``messages``: the chat template with its generation prompt."""
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


def answer_ids(tokenizer: Any, answer: str) -> list[int]:
    """The ids the model must write for ``answer``: its text, then the end-of-sequence token."""
    return [*tokenizer(answer, add_special_tokens=False)["input_ids"], tokenizer.convert_tokens_to_ids(END)]
