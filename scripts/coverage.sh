#!/usr/bin/env bash
# coverage.sh: line and branch coverage of the test suite, per file.
#
#   scripts/coverage.sh            build ./build-cov (gcc --coverage), run the suite, report
#   scripts/coverage.sh --report   report on the counts the last run left, without rerunning
#
# Builds with -DHN_COVERAGE=ON in its own folder (./build-cov, Debug: no
# optimisation folding lines together), clears old counts, runs every CTest test,
# and prints with gcovr (installed with apt-get when missing, as root, as
# scripts/setup.sh installs packages) two tables, worst-covered file first:
#   - the code that runs without a GPU: harness/ except the CUDA-only files; its
#     total line coverage is the headline figure (README, Development);
#   - the CUDA-only files, reported apart: the driver backend
#     (harness/cuda/backend_cuda.c) and the cuBLAS baseline (harness/baseline.c)
#     run only on a GPU, so they are kept out of the headline. NVRTC
#     (harness/cuda/nvrtc.c) compiles without a GPU (`harness compile`, the
#     tests) and counts in the headline like the rest.
# Reports land in build-cov/coverage/ (JSON summaries; coverage.html with the
# annotated sources). Exits non-zero when a test failed (the report still prints).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v gcovr >/dev/null 2>&1; then
  echo "coverage: installing gcovr"
  if [ "$(id -u)" -ne 0 ]; then
    echo "coverage: run as root (or install gcovr yourself: apt-get install gcovr)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends gcovr >/dev/null
fi
if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda /usr/local/cuda-13.0; do
    [ -x "$d/bin/nvcc" ] && export PATH="$d/bin:$PATH" && break
  done
fi
jobs=$(nproc)
b=build-cov
status=0
if [ "${1:-}" != "--report" ]; then
  echo "== build with coverage counters (./$b) =="
  cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Debug -DHN_COVERAGE=ON -DHN_WERROR=ON >/dev/null
  cmake --build "$b" -j "$jobs"
  find "$b" -name '*.gcda' -delete
  echo "== run the suite =="
  (cd "$b" && ctest --output-on-failure -j "$jobs") || status=$?
fi

mkdir -p "$b/coverage"
# The CUDA-only files, as regular expressions gcovr matches against the path.
gpu_only=('harness/cuda/backend_cuda\.c$' 'harness/baseline\.c$')
common=(--root . --object-directory "$b" --exclude-unreachable-branches)
gcovr "${common[@]}" --filter 'harness/' "${gpu_only[@]/#/--exclude=}" \
  --json-summary-pretty --json-summary "$b/coverage/cpu.json" \
  --html-details "$b/coverage/coverage.html" >/dev/null
gcovr "${common[@]}" "${gpu_only[@]/#/--filter=}" --json-summary-pretty --json-summary "$b/coverage/gpu.json" >/dev/null

python3 - "$b/coverage/cpu.json" "$b/coverage/gpu.json" <<'PY'
import json, sys

def pct(covered, total):
    return 100.0 * covered / total if total else 100.0

def table(path, title):
    d = json.load(open(path))
    files = sorted(d["files"], key=lambda f: (pct(f["line_covered"], f["line_total"]), f["filename"]))
    print(f"\n{title}")
    print(f"  {'file':<34} {'lines':>7} {'of':>6} {'line %':>7} {'branch %':>9}")
    for f in files:
        print(f"  {f['filename']:<34} {f['line_covered']:>7} {f['line_total']:>6} "
              f"{pct(f['line_covered'], f['line_total']):>6.1f}% {pct(f['branch_covered'], f['branch_total']):>8.1f}%")
    lp, bp = pct(d["line_covered"], d["line_total"]), pct(d["branch_covered"], d["branch_total"])
    print(f"  {'total':<34} {d['line_covered']:>7} {d['line_total']:>6} {lp:>6.1f}% {bp:>8.1f}%")
    return lp, bp

lp, bp = table(sys.argv[1], "code that runs without a GPU (harness/ less the CUDA-only files):")
table(sys.argv[2], "CUDA-only files (run only on a GPU; not in the headline):")
print(f"\nheadline: {lp:.1f} % of lines ({bp:.1f} % of branches) of the code that runs without a GPU")
PY
echo "annotated sources: $b/coverage/coverage.html"
exit "$status"
