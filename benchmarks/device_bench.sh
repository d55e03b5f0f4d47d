#!/bin/bash
# Speed side by side on the GPU host's CPUs (the device tool: an idle machine, no registry reachable).
# Prepare here (both folders git-ignored via .git/info/exclude), then carry .whl, .bench and .cache/corpora/NAME:
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 -d .whl \
#       libcst pyyaml typing_extensions pathspec pygls lsprotocol cattrs attrs flake8 pyflakes pycodestyle mccabe
#   git archive REV | tar -x -C /tmp/src && pip wheel --no-deps -w .bench/before-whl /tmp/src
#   pip wheel --no-deps -w .bench/after-whl .   (any .bench/LABEL-whl is timed as LABEL, in name order)
#   device run: bash benchmarks/device_bench.sh newton --skip-cold --no-tools --repeat 2 --jobs 2
set -e
corpus=${1:-newton}; shift || true
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >/dev/null 2>&1 || true
sites=()
for wheels in .bench/*-whl; do  # each version's wheel in .bench/LABEL-whl (before, after, any other)
  v=$(basename "$wheels" -whl)
  # each site holds its dependencies: run.py puts the site alone on PYTHONPATH
  [ -d /tmp/s-$v ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/s-$v $wheels/*.whl .whl/*.whl
  sites+=(--site "$v=/tmp/s-$v")
done
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nproc; python3 --version; uptime
repo=$PWD; cd /tmp && python3 $repo/benchmarks/run.py --corpus "$corpus" --markdown "${sites[@]}" "$@" 2>&1 | tee $OUT/bench-$corpus.txt
