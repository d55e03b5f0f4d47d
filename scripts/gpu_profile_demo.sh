#!/bin/sh
# The --confirm cold-start profiler demo (issue 13) on a machine with a CUDA GPU.
# Usage: scripts/gpu_profile_demo.sh OUT_DIR [--cpu] [--jobs N]
# Needs warp-lang 1.19 and libcst/pathspec/pyyaml importable (e.g. PYTHONPATH=/tmp/site:$PWD/.gpudeps);
# warplint runs from this checkout. See scripts/gpu_profile_demo.py and docs/confirm.md.
set -e
if [ -z "$1" ]; then echo "usage: $0 OUT_DIR [--cpu] [--jobs N]" >&2; exit 2; fi
cd "$(dirname "$0")/.."
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L || true
exec python3 scripts/gpu_profile_demo.py "$@"
