"""Token and latency accounting per call kind and per run."""

from sparqlab.llm import ChatResponse, Usage, UsageTotals, aggregate_usage


def test_totals_by_call_kind_and_merge():
    totals = UsageTotals()
    totals.add(ChatResponse("a", Usage(10, 5), latency_s=0.5), kind="generate")
    totals.add(ChatResponse("b", Usage(4, 2), latency_s=0.0, cached=True), kind="reparse")
    other = UsageTotals()
    other.add(ChatResponse("c", Usage(1, 1, estimated=True), latency_s=0.25), kind="generate")
    totals.merge(other)
    summary = totals.to_dict()
    assert summary["calls"] == {"total": 3, "generate": 2, "reparse": 1}
    assert summary["cached_calls"] == 1
    # no prefix-cache model saw these responses: every prompt token counts as recomputed
    assert summary["tokens"] == {"prompt": 15, "completion": 8, "total": 23, "prompt_recomputed": 15,
                                 "estimated": True}
    assert summary["model_latency_s"] == 0.75


def test_reported_cached_tokens_are_summed_only_where_a_server_reported_them():
    totals = UsageTotals()
    totals.add(ChatResponse("a", Usage(10, 5)))
    assert "prompt_cached" not in totals.to_dict()["tokens"]  # nothing reported is not zero reported
    totals.add(ChatResponse("b", Usage(10, 5, cached_tokens=8)))
    other = UsageTotals()
    other.add(ChatResponse("c", Usage(10, 5, cached_tokens=0)))
    other.add(ChatResponse("d", Usage(10, 5, cached_tokens=3)))
    totals.merge(other)
    assert totals.to_dict()["tokens"]["prompt_cached"] == 11


def test_aggregate_over_question_records_of_either_form():
    records = [
        {"model_calls": {"generate": 2, "gate": 1}, "tokens": {"prompt": 100, "completion": 20, "total": 120},
         "latency_s": 1.5},
        {"model_calls": 4, "tokens": 60, "latency_s": 0.5},
        {"model_calls": {"total": 1, "generate": 1}, "tokens": {"prompt": 10, "completion": 2, "estimated": True}},
    ]
    summary = aggregate_usage(records)
    assert summary["questions"] == 3
    assert summary["model_calls"] == {"total": 8, "gate": 1, "generate": 3}
    assert summary["tokens"] == {"total": 192, "prompt": 110, "completion": 22}
    assert summary["latency_s"] == 2.0
    assert summary["per_question"] == {"model_calls": round(8 / 3, 6), "tokens": 64.0, "latency_s": round(2 / 3, 6)}


def test_aggregate_of_nothing_is_zero():
    assert aggregate_usage([])["per_question"] == {"model_calls": 0.0, "tokens": 0.0, "latency_s": 0.0}
