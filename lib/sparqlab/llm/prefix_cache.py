"""What a vLLM server with automatic prefix caching would recompute of a run's prompts.

vLLM keeps the KV cache in blocks of 16 tokens and names each full block by a hash of its tokens chained to the
hash of the block before it, so a block is found again only when the whole prefix up to and including it is the
same; a request computes its prompt from the first block that is not in the cache, and at least its last token
(vLLM's prefix-caching design notes). :class:`PrefixCacheModel` replays a run's requests in the order they were
sent against that rule, with two simplifications stated here: the cache never evicts (an upper bound on reuse: a
busy server with little free KV memory reuses less), and tokens are this module's :func:`prompt_tokens` (words,
punctuation and one marker per message role of a generic chat template) rather than the model's tokenizer — the
share of a prompt that is reused depends on where prompts start to differ, which this tokenisation preserves, so
the share is applied to the tokens the server reported. Generated tokens are cached too (a reply's full blocks
become part of the prefix of a next request that carries the reply in its history).
"""

from __future__ import annotations

import re
import threading

from sparqlab.llm.base import ChatRequest

BLOCK_TOKENS = 16
"""vLLM's default KV-cache block size (tokens) on GPUs."""

_TOKEN = re.compile(r"\w+|[^\w\s]")


def message_tokens(role: str, content: str) -> list[str]:
    return [f"<|{role}|>", *_TOKEN.findall(content)]


def prompt_tokens(request: ChatRequest) -> list[str]:
    """The request as a chat template lays it out: each message's role marker and content, then the marker the
    reply is generated after."""
    tokens: list[str] = []
    for role, content in request.messages:
        tokens += message_tokens(role, content)
    return [*tokens, "<|assistant|>"]


class PrefixCacheModel:
    """A block-hash model of vLLM's prefix cache over the requests of one server (thread-safe)."""

    def __init__(self, block_tokens: int = BLOCK_TOKENS):
        self.block_tokens = block_tokens
        self._blocks: set[int] = set()
        self._lock = threading.Lock()

    def _hashes(self, tokens: list[str]) -> list[int]:
        hashes, parent = [], None
        for start in range(0, len(tokens) - self.block_tokens + 1, self.block_tokens):
            parent = hash((parent, tuple(tokens[start:start + self.block_tokens])))
            hashes.append(parent)
        return hashes

    def request(self, tokens: list[str]) -> int:
        """How many of the prompt's ``tokens`` the server computes: all after its longest cached run of leading
        full blocks (at least one). The prompt's full blocks are cached afterwards."""
        hashes = self._hashes(tokens)
        with self._lock:
            hit = next((i for i, h in enumerate(hashes) if h not in self._blocks), len(hashes))
            self._blocks.update(hashes)
        return len(tokens) - min(hit * self.block_tokens, len(tokens) - 1) if tokens else 0

    def generated(self, prompt: list[str], reply: str) -> None:
        """Cache the full blocks of the prompt followed by the generated reply."""
        with self._lock:
            self._blocks.update(self._hashes([*prompt, *_TOKEN.findall(reply)]))

    def recomputed(self, request: ChatRequest, reply: str, reported_prompt_tokens: int) -> int:
        """Prompt tokens (in the server's count) the server recomputes for ``request``, then cache its reply."""
        tokens = prompt_tokens(request)
        computed = self.request(tokens)
        self.generated(tokens, reply)
        return round(reported_prompt_tokens * computed / len(tokens)) if tokens else 0
