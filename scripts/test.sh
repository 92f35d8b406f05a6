#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then run every test:
# lint, the type check, the JS unit tests, and pytest (core, widget, real-kernel, notebooks,
# README and docs pages, the docs site's build, browser).
#   bash scripts/test.sh            # all of it
#   bash scripts/test.sh -k stop    # extra arguments go to pytest (both passes: see the end)
set -euo pipefail
cd "$(dirname "$0")/.."

# Browser tests drive Debian's Chromium (Playwright cannot download its own browsers here).
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    chromium fonts-dejavu-core >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test]"

# JHW_TEST_PASS: both (default); shared: the checks and the tests on every core only; alone: the
# tests that run alone only (CI runs the two apart: see .ci/run).
pass=${JHW_TEST_PASS:-both}
case $pass in both | shared | alone) ;; *) echo "JHW_TEST_PASS: both, shared or alone" >&2; exit 2 ;; esac

# JHW_CHECKS: all (default): lint, types and the JS unit tests before the shared pass; types:
# the type check only (it reads the installed libraries' annotations); none (CI's environments
# after the first: lint and the JS tests do not depend on the environment).
checks=${JHW_CHECKS:-all}
case $checks in all | types | none) ;; *) echo "JHW_CHECKS: all, types or none" >&2; exit 2 ;; esac

if [ "$pass" != alone ]; then
  if [ "$checks" = all ]; then
    python3 -m ruff check .
    python3 -m ruff format --check .
  fi
  # Types: the package's annotations checked against what it calls (config: pyproject.toml), so a
  # wrong one, or a value that can be None where it is used, fails here rather than in a test.
  [ "$checks" != none ] && python3 -m mypy
  if [ "$checks" = all ]; then
    if command -v node >/dev/null; then
      node --test js/
    else
      echo "node not found: skipping the JS unit tests" >&2
    fi
  fi
fi
# pytest on every core (pytest-xdist), then the tests that must run alone (a kernel, a browser,
# a timed or signalled test: tests/conftest.py lists them) one at a time. Arguments that choose
# the workers themselves (-n, -p no:xdist) get one run as written; JHW_TEST_JOBS=1 runs one
# process. Either pass may select nothing (exit status 5): that is no failure.
jobs=${JHW_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
for arg in "$@"; do
  case $arg in -n | -n* | --numprocesses* | no:xdist) jobs=0 ;; esac
done
# JHW_ALONE_PATHS="tests/device ...": of the tests that run alone, only those under these paths
# (CI's oldest and Python 3.13 environments: what differs there; see .ci/run).
read -ra alone_paths <<<"${JHW_ALONE_PATHS:-}"
if [ "$jobs" -le 1 ]; then
  case $pass in
    both) python3 -m pytest -p no:cacheprovider "$@" ;;
    shared) python3 -m pytest -p no:cacheprovider --serial skip "$@" ;;
    alone) python3 -m pytest -p no:cacheprovider --serial only "$@" "${alone_paths[@]}" ;;
  esac
  exit
fi
status=0
if [ "$pass" != alone ]; then
  python3 -m pytest -p no:cacheprovider -n "$jobs" --serial skip "$@" || status=$?
  [ "$status" -eq 5 ] && status=0
  # (JHW_SHARED_DONE: a file made once this pass is over, for CI to start what runs beside)
  [ -n "${JHW_SHARED_DONE:-}" ] && touch "$JHW_SHARED_DONE"
  [ "$pass" = shared ] && exit "$status"
fi
alone=0
python3 -m pytest -p no:cacheprovider --serial only "$@" "${alone_paths[@]}" || alone=$?
[ "$alone" -eq 5 ] && alone=0
[ "$status" -ne 0 ] && exit "$status"
exit "$alone"
