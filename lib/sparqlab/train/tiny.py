"""Tiny randomly initialised models built from a config, for offline pipeline checks (no weights can be
downloaded here or in CI).

:func:`build_tiny_decoder` writes a Llama-architecture causal LM (a few thousand parameters per layer) with a
byte-level BPE tokenizer trained on the fly on the given texts and a Llama-3-style chat template, so the SFT
trainer, the adapter files and the local model server go through exactly the code a real
``Llama-3.2-3B-Instruct`` folder would. :func:`build_tiny_encoder` does the same for a RoBERTa-architecture
sequence-pair encoder (the GGC gate's backbone). Results from these models check the pipeline only: they are
untrained weights and say nothing about the papers' numbers.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from sparqlab.core.paths import cache_dir
from sparqlab.llm.base import ChatModel
from sparqlab.llm.local_transformers import STANDIN_CONFIG_KEY
from sparqlab.llm.standins import register_standin

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
    "{{ message['content'] }}<|eot_id|>{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)
"""Llama-3's turn layout (header tokens, ``<|eot_id|>`` ending every turn); a generation prompt opens the
assistant turn, so a prompt rendered with it is a prefix of the conversation rendered with the answer."""

DECODER_SPECIALS = ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|pad|>"]
ENCODER_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]

SEED_TEXTS = (
    "SELECT ?x WHERE { ?x ?p ?o . } LIMIT 10",
    "PREFIX wd: <http://www.wikidata.org/entity/> PREFIX wdt: <http://www.wikidata.org/prop/direct/>",
    "ASK { ?s ?p ?o } FILTER(LANG(?label) = \"en\") ORDER BY DESC(?n) COUNT(DISTINCT ?x) GROUP BY ?x",
    "Which films did [Tom Hanks] star in? Who directed the movie? What is the genre of the film written by",
)
"""Always part of the tokenizer corpus, so SPARQL punctuation and keywords get merges of their own."""


def _train_bpe(texts: Iterable[str], vocab_size: int, specials: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator([*SEED_TEXTS, *texts], trainer=trainer)
    return tokenizer


def build_tiny_decoder(folder: str | Path, texts: Iterable[str] = (), *, vocab_size: int = 512, hidden_size: int = 64,
                       layers: int = 2, heads: int = 4, max_positions: int = 1024, seed: int = 0) -> Path:
    """Write a tiny random Llama causal LM and its tokenizer to ``folder`` (created) and return the folder.

    ``texts``: corpus for the tokenizer (the training records' text, so the BPE merges fit the data);
    ``vocab_size``: BPE vocabulary size (at least the 256 bytes plus the special tokens); ``hidden_size``,
    ``layers``, ``heads``: model size; ``max_positions``: longest sequence; ``seed``: initialisation seed.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=_train_bpe(texts, vocab_size, DECODER_SPECIALS),
                                        bos_token="<|begin_of_text|>", eos_token="<|eot_id|>", pad_token="<|pad|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=max_positions, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         tie_word_embeddings=False, **{STANDIN_CONFIG_KEY: True})
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_tiny_encoder(folder: str | Path, texts: Iterable[str] = (), *, vocab_size: int = 512, hidden_size: int = 64,
                       layers: int = 2, heads: int = 4, max_positions: int = 512, seed: int = 0) -> Path:
    """Write a tiny random RoBERTa encoder (sequence-pair input) and its tokenizer to ``folder``; parameters as in
    :func:`build_tiny_decoder`. The classification head is added by whoever fine-tunes it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast, RobertaConfig, RobertaModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    raw = _train_bpe(texts, vocab_size, ENCODER_SPECIALS)
    raw.post_processor = processors.RobertaProcessing(("</s>", raw.token_to_id("</s>")),
                                                      ("<s>", raw.token_to_id("<s>")), add_prefix_space=False)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                        cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")
    config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                           num_hidden_layers=layers, num_attention_heads=heads,
                           max_position_embeddings=max_positions + 2, pad_token_id=tokenizer.pad_token_id,
                           bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, type_vocab_size=1)
    torch.manual_seed(seed)
    RobertaModel(config, add_pooling_layer=False).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


TINY_RANDOM = "standin-tiny-random"


@register_standin(TINY_RANDOM)
def tiny_random_model(folder: str | Path | None = None, seed: int = 0) -> ChatModel:
    """``standin-tiny-random``: a tiny random Llama decoder (:func:`build_tiny_decoder`, 4096 positions, built
    once under the cache folder) run in process through the ``local:`` backend. Its replies are the garbage a
    decoder emits before training, in a real tokenizer's and chat template's form: every method must turn them
    into an answer or a typed error. Deterministic: greedy at temperature 0, seeded otherwise.
    Torch runs on one thread: a model this small is fastest that way, most of all on a shared machine."""
    import torch

    from sparqlab.llm.local_transformers import LocalTransformersModel

    torch.set_num_threads(1)

    target = Path(folder) if folder else cache_dir() / "models" / f"tiny-random-seed{seed}"
    if not (target / "config.json").is_file():  # built beside and renamed: a concurrent builder loses cleanly
        partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
        build_tiny_decoder(partial, max_positions=4096, seed=seed)
        try:
            partial.rename(target)
        except OSError:
            shutil.rmtree(partial, ignore_errors=True)
    model = LocalTransformersModel(target, name=TINY_RANDOM)
    model.is_standin = True
    return model
