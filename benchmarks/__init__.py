"""Performance suite: `python -m benchmarks [--quick]` writes BENCHMARKS.md."""
