"""The runtime oracle: generated Warp programs labelled by running them on real Warp, scored against
warplint's static findings. See ``python -m benchmarks.oracle --help`` and docs/accuracy.md."""
