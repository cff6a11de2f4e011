"""The model oracle of a GenOp: ``Call_M`` / ``Parse_M`` for proposals and the YES/NO validation query (paper
Sect. 3 "Generative patterns", Sect. 6.2 and App. A.1 (A)/(B)), over any chat model, plus the scripted model.

Proposal (``Propose(g, θ, K)``): the instantiated prompt goes into :data:`PROMPTS` ``propose`` asking for one
JSON object ``{"y": ["…", …]}`` with one list per output variable and at most K entries (the i-th entries of the
lists form one tuple). Parsing (``Parse_M``) takes the first JSON object in the reply (code fences allowed),
keeps string/number entries, zips the lists to the shortest, drops duplicates and keeps the first K tuples; a
reply that is not such an object parses to no tuples (counted in ``parse_failures``, and by why in
``reply_failures``: a reply cut by ``max_tokens`` is ``truncated_reply``, :func:`~sparqlab.llm.replies.failure_kind`).

Validation (``Validate(g, θ, ν; R)``): :data:`PROMPTS` ``validate`` shows the instantiated prompt and the candidate
tuple and asks for YES or NO. The reply's first word decides (anything else counts as NO and as a parse failure).
The query is repeated R times (repetition r > 0 sends ``seed = r`` so that a response cache does not collapse the
repetitions) and the votes are combined by the **aggregation policy**: ``all`` (every vote YES), ``majority``
(more than half, the default) or ``any`` (at least one).

Every GenOp of an evaluation calls the one model behind the oracle; a GenOp's model specifier M is recorded and
is part of the memo keys (so two occurrences naming different models never share cached answers).

Memoisation (App. A.1 "Memoization"): proposals are cached under ``(g, π^[S], K, decoding)``, validations under
``(g, π^[μ|X], μ|Y, R)`` (plus the aggregation policy); ``decoding`` is the model specifier with the sampling
parameters. ``calls`` counts the model calls actually made (by kind); ``memo_hits`` the calls memoisation saved.

The scripted model (:class:`ScriptedModel`, stand-in ``standin-genop-script``) answers these two prompts from a
JSON object mapping each instantiated prompt to its list of outputs (strings for one output variable; lists in
output order or objects keyed by variable name for several): a proposal returns that list (an unknown prompt
returns an empty list), a validation answers YES iff the candidate is in the list of its fully instantiated
prompt. It is a deterministic stand-in for tests and the paper's worked examples, never an LLM result.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sparqlab.llm.base import ChatRequest, ChatResponse
from sparqlab.llm.replies import failure_kind
from sparqlab.llm.standins import StandinModel, register_standin
from sparqlab.platform.parsing import first_json_object, parse_yes_no
from sparqlab.platform.prompts import PromptTemplate, prompt_table

SCRIPT_ENV = "SPARQLAB_GENOP_SCRIPT"
"""Environment variable naming the scripted model's JSON file when none is passed."""

SENTINEL = "<unknown:?{var}>"
"""How an unbound placeholder is rendered in a proposal prompt (App. A.1 (A) step 1)."""

AGGREGATIONS = ("all", "majority", "any")

PROMPTS = prompt_table(
    PromptTemplate("system", """\
You generate values for a query engine that extends SPARQL with model calls. Follow the requested output format \
exactly and add no explanation."""),
    PromptTemplate("propose", """\
Task: {instruction}
Fields: {fields}
At most: {k}

Give up to {k} different answers to the task. Each answer is a short value (a name, a term or a short phrase), \
not a sentence. Reply with one JSON object and nothing else, with one list per field, for example:
{example}
When there are several fields, the i-th entries of all lists belong to the same answer. A value written as \
<unknown:?name> in the task is not known yet: answer as well as you can without it."""),
    PromptTemplate("validate", """\
Task: {instruction}
Candidate: {candidate}

Is the candidate a correct answer to the task? Answer YES or NO only."""),
)
"""The GenOp oracle's prompts (system message, proposal, validation), written for instruction-tuned chat models
served by vLLM (gpt-oss-120b, Llama-3.1-70B-Instruct, Llama-3.2-3B-Instruct)."""

ChatFn = Callable[..., Awaitable[Any]]
"""``await chat(messages, kind=..., **params)`` returning an object with a ``text`` attribute."""


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return None
    text = " ".join(str(value).split())
    return text or None


def parse_proposals(text: str, outputs: Sequence[str], k: int) -> list[tuple[str, ...]] | None:
    """``Parse_M``: up to ``k`` distinct output tuples from a ``{"y": [...], ...}`` reply; None if unparseable."""
    obj = first_json_object(text)
    if obj is None:
        return None
    columns = []
    for var in outputs:
        values = obj.get(var, obj.get("?" + var))
        if isinstance(values, str | int | float):
            values = [values]
        if not isinstance(values, list):
            return None
        columns.append([_scalar(v) for v in values])
    tuples: list[tuple[str, ...]] = []
    for row in zip(*columns, strict=False):
        if all(v is not None for v in row) and row not in tuples:
            tuples.append(row)  # type: ignore[arg-type]
        if len(tuples) >= k:
            break
    return tuples


def parse_verdict(text: str) -> bool | None:
    """YES -> True, NO -> False, anything else -> None (:func:`sparqlab.platform.parsing.parse_yes_no`: after any
    reasoning, the first word or an ``Answer: YES`` line)."""
    return parse_yes_no(text)


def aggregate(votes: Sequence[bool], policy: str) -> bool:
    """Combine R validation votes by ``policy`` (``all`` / ``majority`` / ``any``)."""
    if policy == "all":
        return all(votes)
    if policy == "any":
        return any(votes)
    if policy == "majority":
        return sum(votes) * 2 > len(votes)
    raise ValueError(f"unknown validation aggregation {policy!r}; choose one of {', '.join(AGGREGATIONS)}")


class Oracle:
    """Propose and Validate over a chat function, with the paper's memoisation and model-call counting.

    ``chat`` is ``await chat(messages, kind="propose"|"validate", **params)`` (e.g. a method context's
    ``ctx.chat`` bound to the ``oracle`` role, or :meth:`for_model`); ``params`` are the sampling parameters of
    every call (part of the memo key as "decoding"); ``aggregation`` is the validation policy; ``memoise``
    switches both caches off when False (to measure what they save).
    """

    def __init__(self, chat: ChatFn, *, params: Mapping[str, Any] | None = None, aggregation: str = "majority",
                 memoise: bool = True, model_name: str = ""):
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown validation aggregation {aggregation!r}; choose one of "
                             f"{', '.join(AGGREGATIONS)}")
        self.chat = chat
        self.params = dict(params or {})
        self.aggregation = aggregation
        self.memoise = memoise
        self.model_name = model_name
        self.calls: Counter[str] = Counter()
        self.memo_hits: Counter[str] = Counter()
        self.parse_failures = 0
        self.reply_failures: Counter[str] = Counter()
        self._proposals: dict[tuple, list[tuple[str, ...]]] = {}
        self._validations: dict[tuple, bool] = {}

    @classmethod
    def for_model(cls, model, **kwargs: Any) -> Oracle:
        """An oracle over a :class:`~sparqlab.llm.base.ChatModel` (``kind`` is dropped: a bare model has no
        accounting)."""
        async def chat(messages, kind: str = "", **params):
            return await model.chat(messages, **params)

        return cls(chat, model_name=getattr(model, "name", ""), **kwargs)

    @property
    def model_calls(self) -> int:
        return sum(self.calls.values())

    def _decoding(self, model: str) -> tuple:
        return (model or self.model_name, tuple(sorted((k, repr(v)) for k, v in self.params.items())))

    def _messages(self, user: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": PROMPTS["system"].render()}, {"role": "user", "content": user}]

    async def propose(self, index: int, model: str, prompt: str, outputs: Sequence[str],
                      k: int) -> list[tuple[str, ...]]:
        """``Propose``: up to ``k`` output tuples for the instantiated ``prompt`` of occurrence ``index``."""
        key = (index, prompt, k, self._decoding(model))
        if self.memoise and key in self._proposals:
            self.memo_hits["propose"] += 1
            return self._proposals[key]
        example = json.dumps({v: ["...", "..."] for v in outputs})
        user = PROMPTS["propose"].render(instruction=prompt, fields=", ".join(outputs), k=str(k), example=example)
        response = await self.chat(self._messages(user), kind="propose", **self.params)
        self.calls["propose"] += 1
        tuples = parse_proposals(response.text, outputs, k)
        if tuples is None:
            self._unreadable(response)
            tuples = []
        if self.memoise:
            self._proposals[key] = tuples
        return tuples

    async def validate(self, index: int, model: str, prompt: str, outputs: Sequence[str],
                       candidate: tuple[str, ...], r: int) -> bool:
        """``Validate``: is ``candidate`` an admissible output of the fully instantiated ``prompt``?"""
        key = (index, prompt, candidate, r, self.aggregation, self._decoding(model))
        if self.memoise and key in self._validations:
            self.memo_hits["validate"] += 1
            return self._validations[key]
        shown = json.dumps(dict(zip(outputs, candidate, strict=True)), ensure_ascii=False)
        user = PROMPTS["validate"].render(instruction=prompt, candidate=shown)
        votes = []
        for rep in range(max(1, r)):
            params = dict(self.params)
            if rep:
                params["seed"] = rep
            response = await self.chat(self._messages(user), kind="validate", **params)
            self.calls["validate"] += 1
            verdict = parse_verdict(response.text)
            if verdict is None:
                self._unreadable(response)
            votes.append(bool(verdict))
        accepted = aggregate(votes, self.aggregation)
        if self.memoise:
            self._validations[key] = accepted
        return accepted

    def _unreadable(self, response: ChatResponse) -> None:
        """Count a reply that gave no proposal or verdict, and why (truncated, empty, unreadable)."""
        self.parse_failures += 1
        self.reply_failures[failure_kind(response.text, response.finish_reason, response.reasoning)] += 1

    def stats(self) -> dict[str, Any]:
        return {"model_calls": self.model_calls, "calls": dict(self.calls), "memo_hits": dict(self.memo_hits),
                "parse_failures": self.parse_failures, "reply_failures": dict(sorted(self.reply_failures.items()))}


# --- the scripted model ---------------------------------------------------------------------------------------

def load_script(script: str | Path | Mapping[str, Any]) -> dict[str, list]:
    """A script as ``{instantiated prompt: [outputs]}``, from a mapping or a JSON file; checked for shape."""
    if isinstance(script, Mapping):
        data = dict(script)
    else:
        path = Path(script)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"scripted model {path}: not JSON ({error})") from None
    if not isinstance(data, dict):
        raise ValueError("a GenOp script is a JSON object mapping instantiated prompts to lists of outputs")
    for prompt, outputs in data.items():
        if not isinstance(outputs, list):
            raise ValueError(f"script entry {prompt!r}: expected a list of outputs, got {type(outputs).__name__}")
    return {" ".join(k.split()): v for k, v in data.items()}


def _line(text: str, label: str) -> str | None:
    m = re.search(rf"^{label}: (.*)$", text, re.MULTILINE)
    return m.group(1).strip() if m else None


@register_standin("standin-genop-script")
class ScriptedModel(StandinModel):
    """Answers the GenOp oracle's prompts from a script (see the module docstring); ``script`` is a path to a
    JSON file or a mapping, by default the file named by ``SPARQLAB_GENOP_SCRIPT`` (how ``sparqlab run genop -m
    standin-genop-script`` gets its script from the shell)."""

    name = "standin-genop-script"

    def __init__(self, script: str | Path | Mapping[str, Any] | None = None, name: str | None = None):
        if script is None:
            script = os.environ.get(SCRIPT_ENV) or {}
        self.script = load_script(script)
        # The script is part of the model's identity: a response cache must not mix two scripts' answers.
        digest = hashlib.sha256(json.dumps(self.script, sort_keys=True).encode()).hexdigest()[:10]
        super().__init__(name or f"standin-genop-script-{digest}")

    def _tuples(self, prompt: str, outputs: Sequence[str]) -> list[tuple[str, ...]]:
        rows = []
        for item in self.script.get(prompt, []):
            if isinstance(item, dict):
                row = tuple(str(item.get(v, "")) for v in outputs)
            elif isinstance(item, list):
                row = tuple(str(x) for x in item)
            else:
                row = (str(item),)
            rows.append(row)
        return rows

    def respond(self, request: ChatRequest) -> str:
        text = request.last_user_message
        task = _line(text, "Task")
        if task is None:
            return "NO"
        candidate = _line(text, "Candidate")
        if candidate is not None:
            try:
                shown = json.loads(candidate)
            except json.JSONDecodeError:
                return "NO"
            outputs = list(shown)
            return "YES" if tuple(str(shown[v]) for v in outputs) in self._tuples(task, outputs) else "NO"
        outputs = [f.strip() for f in (_line(text, "Fields") or "y").split(",")]
        k = int(_line(text, "At most") or "1000")
        rows = self._tuples(task, outputs)[:k]
        return json.dumps({v: [row[i] if i < len(row) else "" for row in rows] for i, v in enumerate(outputs)},
                          ensure_ascii=False)
