#!/usr/bin/env bash
# The suite and the benchmarks on an accelerator machine (a TPU, a GPU), given this checkout and
# a JAX with the accelerator's plugin already installed there (the machine's own, left first on
# the path). CI has no accelerator: this is how a contributor checks what CI cannot.
#
#   bash scripts/accelerator.sh              # the tests, then the benchmarks
#   bash scripts/accelerator.sh tests        # or either alone
#   bash scripts/accelerator.sh benchmarks
#
# Environment:
#   WHEELS=DIR    install the wheels in DIR first (a machine with no package index: download
#                 them elsewhere with `pip download --no-deps --only-binary=:all:`), into a
#                 scratch folder put at the END of PYTHONPATH, so the machine's JAX stays first
#   OUT=DIR       where the logs go (default: accelerator-out/)
#   BUDGET=S      seconds each benchmark sizes its repeats to (default 60)
#   BENCHMARKS="..."  the benchmark scripts, each with its arguments, ";"-separated (default:
#                 accelerator.py; stages.py; lanes.py --lanes 64 1024 4096; overhead.py;
#                 compile.py)
#   PYTHON=...    the interpreter whose JAX sees the accelerator (default: python3)
#   TESTS="..."   the pytest paths (default: every test that needs neither a Jupyter kernel nor
#                 a browser: a TPU machine may allow no sockets at all)
#
# One program at a time can hold a TPU, so the tests run in one process (no -n), and the tests'
# own child processes run on the CPU (they set JAX_PLATFORMS=cpu). Exits non-zero if a test
# failed; a benchmark's MISS lines are read, not judged.
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
py=${PYTHON:-python3}
out=${OUT:-accelerator-out}
mkdir -p "$out"

if [ -n "${WHEELS:-}" ]; then
  site=$(mktemp -d)
  PIP_CONFIG_FILE=/dev/null "$py" -m pip install --isolated -q --no-index --no-deps \
    --no-compile --no-cache-dir --target "$site" "$WHEELS"/*.whl || exit 1
  export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$site"
fi
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD" PYTHONUNBUFFERED=1
"$py" -c 'import jax; print("devices:", jax.devices())' || exit 1

status=0
if [ "$what" = all ] || [ "$what" = tests ]; then
  # shellcheck disable=SC2086
  "$py" -m pytest -p no:cacheprovider -q --tb=short -rfE -m "not kernel and not ui" \
    --deselect tests/device/parallel/test_devices.py::test_two_processes_distributed \
    --ignore tests/host/interrupts/test_presses_across_processes.py \
    ${TESTS:-tests/device tests/host tests/ui tests/adapters} 2>&1 | tee "$out/tests.log" ||
    status=1
fi
if [ "$what" = all ] || [ "$what" = benchmarks ]; then
  budget=${BUDGET:-60}
  IFS=';' read -ra benches <<<"${BENCHMARKS:-accelerator.py;stages.py;lanes.py --lanes 64 1024 4096;overhead.py;compile.py}"
  for bench in "${benches[@]}"; do
    bench=$(echo "$bench" | xargs)  # trimmed
    name=${bench%%.py*}
    echo "=== benchmarks/$bench --budget $budget"
    # shellcheck disable=SC2086
    "$py" benchmarks/$bench --budget "$budget" 2>&1 | tee "$out/$name.log"
  done
fi
exit $status
