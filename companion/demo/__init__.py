"""The demo wing: the demo vault and the synthetic vault generator used by benchmarks and tests."""
