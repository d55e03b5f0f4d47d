"""warplint: a linter for NVIDIA Warp compile-time defects."""

__version__ = "0.1.0"
