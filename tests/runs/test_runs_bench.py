"""The concurrency benchmark runs end to end (tiny sizes; speed itself is measured by benchmarks/, not here)."""

from sparqlab.experiments.runner_bench import format_report, run_benchmark


def test_benchmark_reports_every_level_against_a_served_standin():
    report = run_benchmark(questions=4, calls=2, delay_ms=20, levels=[4])
    assert [row["concurrency"] for row in report["levels"]] == [1, 4]
    assert all(row["calls"] == 8 for row in report["levels"])
    assert all(abs(row["speedup"] * row["wall_s"] - report["levels"][0]["wall_s"]) < 1e-9 for row in report["levels"])
    assert all(row["model_latency_ms_per_call"] > 0 for row in report["levels"])
    text = format_report(report)
    assert "4 questions x 2 calls" in text and "runner overhead per model call" in text
