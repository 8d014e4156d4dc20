"""Speed measurements, run from the checkout root as modules: python -m benchmarks.bench_core."""
