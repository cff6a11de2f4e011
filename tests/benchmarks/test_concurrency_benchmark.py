"""The concurrency benchmark (benchmarks/concurrency.py) runs end to end (tiny sizes; speed itself is measured by
the benchmark, not here)."""

from support.benchmarks import load_benchmark

bench = load_benchmark("concurrency")
format_report, run_benchmark = bench.format_report, bench.run_benchmark


def test_benchmark_reports_every_level_against_a_served_standin():
    report = run_benchmark(questions=4, calls=2, delay_ms=20, levels=[4])
    assert [row["concurrency"] for row in report["levels"]] == [1, 4]
    assert all(row["calls"] == 8 for row in report["levels"])
    assert all(abs(row["speedup"] * row["wall_s"] - report["levels"][0]["wall_s"]) < 1e-9 for row in report["levels"])
    assert all(row["model_latency_ms_per_call"] > 0 for row in report["levels"])
    text = format_report(report)
    assert "4 questions x 2 calls" in text and "runner overhead per model call" in text


def test_a_level_below_target_is_explained():
    """A NO row says how far below 0.8 x C it is, the ideal its question count allows and the machine's load."""
    row = {"concurrency": 32, "wall_s": 1.0, "calls_per_s": 1.0, "speedup": 25.38, "target_speedup": 25.6,
           "meets_target": False, "model_latency_ms_per_call": 201.0, "client_cpu_ms_per_call": 0.9}
    report = {"questions": 96, "calls_per_question": 2, "delay_ms": 200, "levels": [row],
              "runner_overhead_ms_per_call": 1.0, "runner_only_ms_per_call": 0.5, "http_overhead_ms_per_call": 1.0,
              "load_average": 7.5, "cpus": 2}
    text = format_report(report)
    assert "target: speedup >= 0.8 x concurrency" in text
    assert ("NO at concurrency 32: speedup 25.38x is 0.9% below the target 25.6x (ideal with 96 questions: 32.0x; "
            "client CPU 0.90 ms per call; load average 7.5 on 2 CPUs)") in text
    row.update(speedup=30.0, meets_target=True)
    assert "NO at" not in format_report(report)
