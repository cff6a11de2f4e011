"""Gate calls of concurrent questions are answered in batches: the same probabilities as
one-by-one calls, fewer gate invocations, errors reach every waiting question."""

from __future__ import annotations

import asyncio

import pytest

from sparqlab.methods.ggc.gate import Gate, GateExample, GateSettings
from sparqlab.methods.ggc.method import GateBatcher

TRAIN = [GateExample(f"which films did director {i} direct", f"SELECT ?f WHERE {{ ?f :directed_by :d{i} }}",
                     label=i % 2) for i in range(12)]
ASKED = [GateExample(f"who wrote film {i}", f"SELECT ?w WHERE {{ :f{i} :written_by ?w }}") for i in range(9)]


@pytest.fixture(scope="module")
def gate() -> Gate:
    return Gate.train(TRAIN, GateSettings("tfidf"))


class CountingGate:
    """The real gate, counting the batches it is asked for."""

    def __init__(self, gate: Gate):
        self.gate, self.calls = gate, []

    def probabilities(self, examples):
        self.calls.append(len(examples))
        return self.gate.probabilities(examples)


def test_concurrent_calls_share_batches_with_unchanged_probabilities(gate):
    counting = CountingGate(gate)

    async def ask_all():
        batcher = GateBatcher(counting)
        return await asyncio.gather(*(batcher.probability(e) for e in ASKED)), batcher.batches

    probabilities, batches = asyncio.run(ask_all())
    assert probabilities == pytest.approx([gate.probability(e) for e in ASKED], abs=1e-12)
    assert sum(batches) == len(ASKED) and counting.calls == batches
    assert len(batches) < len(ASKED)  # all nine were ready in the same loop turn: batched, not one by one


def test_a_gate_error_reaches_every_waiting_question(gate):
    class Broken:
        def probabilities(self, examples):
            raise ValueError("this gate reads KG feedback, but an example has none")

    async def ask_all():
        batcher = GateBatcher(Broken())
        return await asyncio.gather(*(batcher.probability(e) for e in ASKED[:3]), return_exceptions=True)

    outcomes = asyncio.run(ask_all())
    assert all(isinstance(o, ValueError) for o in outcomes)
