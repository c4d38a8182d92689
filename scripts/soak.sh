#!/usr/bin/env bash
# soak.sh — runs the test suite N times in a row to flush out flaky tests.
#
#   scripts/soak.sh [N] [swift test arguments...]
#
#   scripts/soak.sh                                   # 20 runs of the whole suite
#   scripts/soak.sh 50 --filter 'TCPSocketReadTests|FrameBoundaryReadTests'
#   scripts/soak.sh 10 --sanitize=thread --scratch-path /tmp/tsan  # TSAN_OPTIONS: scripts/tsan-suppressions.txt
#   LOGDIR=/tmp/soak scripts/soak.sh 5               # where the logs go (default: .build/soak/<time>)
#
# Builds once first (with the same arguments), then runs `swift test --skip-build ARGS` N times. Each
# run's output is kept as LOGDIR/run-K.log; per run it prints PASS or FAIL and the names of the failing
# tests (Swift Testing's `✘ Test ... recorded an issue` / `failed` lines, XCTest's `error:` and
# `' failed (` lines). Under ThreadSanitizer a run with a report from any process fails too. A run still going after SOAK_RUN_LIMIT seconds (default 900) is ended and failed. Ends with `P passed, F failed`; the exit status is 1 when any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
N=20
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then N=$1; shift; fi
LOGDIR=${LOGDIR:-.build/soak/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$LOGDIR"
echo "soak: $N runs of swift test $*; logs in $LOGDIR"
# The build takes only the arguments that change what is built (swift build knows no --filter).
# Both spellings: `--sanitize=thread` and `--sanitize thread`.
build_args=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case ${args[i]} in
    --sanitize=*|--scratch-path=*|--configuration=*|-c=*) build_args+=("${args[i]}") ;;
    --sanitize|--scratch-path|--configuration|-c) build_args+=("${args[i]}" "${args[i+1]:-}"); i=$((i + 1)) ;;
    esac
done
# Under ThreadSanitizer: libnats' threads are not reported as leaks (scripts/tsan-suppressions.txt),
# and every process's reports (the test process's and those of the servers and clients it starts,
# whose standard error is not in the log) go to files in LOGDIR/tsan-K, one directory a run.
tsan=0
if [[ " $* " =~ " --sanitize thread "|" --sanitize=thread " ]]; then
    tsan=1
    tsan_options=${TSAN_OPTIONS:-suppressions=$PWD/scripts/tsan-suppressions.txt}
fi
# SOAK_BUILD=0: no build first (the scratch path holds a build already, e.g. a copy of .build, which
# lets a second soak run beside a first: SwiftPM locks a scratch path while it runs tests).
if [[ ${SOAK_BUILD:-1} != 0 ]]; then
    swift build --build-tests ${build_args[@]+"${build_args[@]}"} >"$LOGDIR/build.log" 2>&1 || { echo "build failed: see $LOGDIR/build.log"; exit 2; }
fi

passed=0 failed=0
for run in $(seq "$N"); do
    log=$LOGDIR/run-$run.log
    start=$SECONDS
    if [[ $tsan == 1 ]]; then
        mkdir -p "$LOGDIR/tsan-$run"
        export TSAN_OPTIONS="$tsan_options log_path=$(cd "$LOGDIR/tsan-$run" && pwd)/report"
    fi
    # A hung run (a deadlock) is ended after SOAK_RUN_LIMIT seconds (default 900) and counts as failed.
    timeout --kill-after=10 "${SOAK_RUN_LIMIT:-900}" swift test --skip-build "$@" >"$log" 2>&1
    status=$?
    reports=$( (ls "$LOGDIR/tsan-$run" 2>/dev/null || true) | wc -l)
    if [[ $status -eq 0 && $reports -eq 0 ]]; then
        passed=$((passed + 1))
        echo "run $run: PASS ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1))
        echo "run $run: FAIL ($((SECONDS - start)) s)"
        # Swift Testing: "✘ Test name() recorded an issue at ..." / "✘ Test name() failed after ...";
        # XCTest: "Test Case '-[Suite test]' failed (...)". A crash shows as the last lines of the log.
        names=$(grep -aoE "✘ Test [^ ]+|Test Case '[^']+' failed" "$log" | grep -v '^✘ Test run$' |
            sed -E "s/^✘ Test //; s/^Test Case '([^']+)' failed/\1/" | sort -u)
        [[ $((SECONDS - start)) -ge ${SOAK_RUN_LIMIT:-900} ]] && echo "    (ended after ${SOAK_RUN_LIMIT:-900} s: a hang)"
        [[ $reports -gt 0 ]] && echo "    ThreadSanitizer reports from $reports processes: $LOGDIR/tsan-$run"
        if [[ -n $names ]]; then
            sed 's/^/    /' <<<"$names"
        else
            echo "    (no failing test named; the log ends with:)"
            tail -n 5 "$log" | sed 's/^/    /'
        fi
    fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
