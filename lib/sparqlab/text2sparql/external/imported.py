"""``imported``: a peer's published output file as a method, so a released run becomes an ordinary run folder.

Each question's answer is the peer's final query for its qname (:mod:`sparqlab.text2sparql.peers` reads the file:
GRASP's JSONL, the official answers format, SPARQL-LLM's), executed on the run's KG and scored by the runner like
every method's. The trace keeps what the file says about how the answer came about: the peer's conversation
(``peer_conversation``: the messages in the OpenAI chat schema, tool calls included) and its times and calls
(``peer_answer``); the record's ``extra`` holds ``peer_elapsed_s``, ``peer_model_calls`` and ``peer_tool_calls``:
the peer's cost per question. The record's ``latency_s`` is the peer's time plus the final query's here
(:attr:`~sparqlab.platform.base.MethodOutput.reported_latency_s`); its ``model_calls`` and ``tokens`` stay the
replay's (none), which tables show as unknown. A question the file
does not answer is ``not_answered``; one it answers without a query ``peer_error`` (GRASP's ``error`` set) or
``external_no_query``. The file's content digest enters the run id.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from sparqlab.core.hashing import file_digest
from sparqlab.data.question import Question
from sparqlab.platform.base import Method, MethodOutput
from sparqlab.platform.config import MethodConfig
from sparqlab.platform.context import PrepareContext, QuestionContext
from sparqlab.platform.registry import register_method
from sparqlab.text2sparql.editions import EDITIONS
from sparqlab.text2sparql.peers import CONVERTERS, PeerAnswer, apply_id_map, read_peer_output


@dataclass(frozen=True)
class ImportedConfig(MethodConfig):
    """Settings of :class:`ImportedOutput`.

    - ``file``: the peer's output file.
    - ``output_format``: its format (:data:`sparqlab.text2sparql.peers.CONVERTERS`; ``None``: ``grasp`` for ``.jsonl``,
      else ``answers``).
    - ``language``: the language of the questions the file answers (GRASP's ids carry none).
    - ``id_map``: a JSON object mapping the file's question keys (qnames, GRASP ids) to the run's question ids,
      for a dataset that is no TEXT2SPARQL edition whose ids the file does not use (``None``: the keys are the
      question ids, or a TEXT2SPARQL edition's qnames).
    """

    file: str = ""
    output_format: str | None = None
    language: str = "en"
    id_map: str | None = None

    def __post_init__(self) -> None:
        if not self.file:
            raise ValueError("imported needs the peer's output file: -o file=PATH")
        if self.output_format is not None and self.output_format not in CONVERTERS:
            raise ValueError(f"output_format must be one of {', '.join(CONVERTERS)}; got {self.output_format!r}")


@register_method("imported")
class ImportedOutput(Method):
    """A peer's published answers replayed as a run (see the module docstring)."""

    config_class = ImportedConfig
    roles: ClassVar[tuple[str, ...]] = ()
    needs_model = False

    def __init__(self, config: ImportedConfig | None = None, **overrides: Any):
        super().__init__(config, **overrides)
        self.answers: dict[str, PeerAnswer] | None = None
        self._digest: str | None = None

    def artifacts(self) -> dict[str, str]:
        if not self._digest:
            return {}
        mapped = {"id_map": file_digest(self.config.id_map, 16)} if self.config.id_map else {}
        return {"peer_output": self._digest, **mapped}

    async def prepare(self, ctx: PrepareContext) -> None:
        prefixes = {qid.partition(":")[0] for qid in ctx.scored_ids}
        edition = next(iter(prefixes)) if len(prefixes) == 1 and prefixes <= EDITIONS.keys() else None
        path = Path(self.config.file)
        answers = await asyncio.to_thread(read_peer_output, path, self.config.output_format, prefix=edition,
                                          language=self.config.language)
        if self.config.id_map:
            answers = apply_id_map(answers, self.config.id_map)
        self.answers = {a.qname: a for a in answers}
        if answers and not self.answers.keys() & ctx.scored_ids:
            raise ValueError(f"{path} answers none of the run's questions: its keys (e.g. {answers[0].qname!r}) "
                             f"are not question ids (e.g. {min(ctx.scored_ids)!r}); map them with --id-map FILE "
                             "(a JSON object {file key: question id})")
        self._digest = file_digest(path, 16)
        ctx.log("peer_output", file=str(path), answers=len(answers))

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        if self.answers is None:
            raise RuntimeError("ImportedOutput.prepare() must run before answer() (the runner calls it)")
        peer = self.answers.get(question.id)
        if peer is None:
            return MethodOutput(None, error_category="not_answered")
        if peer.messages:
            ctx.log("peer_conversation", messages=peer.messages)
        extra = {"peer_elapsed_s": peer.elapsed_s, "peer_model_calls": peer.model_calls if peer.messages else None,
                 "peer_tool_calls": peer.tool_calls if peer.messages else None}
        ctx.log("peer_answer", query=peer.query, error=peer.error, **extra)
        if peer.query is None:
            return MethodOutput(None, error_category="peer_error" if peer.error else "external_no_query",
                                extra=extra, reported_latency_s=peer.elapsed_s)
        return MethodOutput(peer.query, extra=extra, reported_latency_s=peer.elapsed_s)
