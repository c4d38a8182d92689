#!/usr/bin/env bash
# Fuzzes the SocketFraming decoders and the TLS receive path with the toolchain's libFuzzer: each target
# in fuzz/targets/ is built with `swiftc -sanitize=fuzzer,address` against an instrumented build of
# Sources/SocketFraming (and, for a target that imports AsyncSocket, of Sources/AsyncSocket, with
# -enable-testing), then run from its seed corpus (fuzz/corpus/TARGET, committed; new inputs go to
# .build/fuzz/corpus/TARGET).
#
#   scripts/fuzz.sh                         every target for 60 s each
#   scripts/fuzz.sh -t 300 delimiter zlib   the named targets for 300 s each
#   scripts/fuzz.sh --ci                    every target for 7 s (about a minute of fuzzing, and the
#                                           builds): .ci/run calls this
#   scripts/fuzz.sh --build-only
#
# A crashing input is written to .build/fuzz/artifacts/TARGET/; replay it with
# `.build/fuzz/TARGET FILE`, and make it a regression test. Exits 1 when any target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
build_only=false
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        -t) seconds="$2"; shift 2 ;;
        --ci) seconds=7; shift ;;
        --build-only) build_only=true; shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) targets+=("$1"); shift ;;
    esac
done
if [ ${#targets[@]} -eq 0 ]; then
    for file in fuzz/targets/*.swift; do targets+=("$(basename "$file" .swift)"); done
fi

out=.build/fuzz
mkdir -p "$out"
flags=(-parse-as-library -sanitize=fuzzer,address -O -g -I Sources/CZlib -package-name swift_async_socket)
# ld.gold warns once per sanitizer symbol it cannot export; those lines say nothing about our code.
quiet() { grep -v "ld.gold: warning: Cannot export local symbol" || true; }

echo "fuzz: building SocketFraming with -sanitize=fuzzer,address"
swiftc "${flags[@]}" -module-name SocketFraming -emit-module -emit-module-path "$out/SocketFraming.swiftmodule" \
    -emit-library -static -o "$out/libSocketFraming.a" \
    $(find Sources/SocketFraming -name '*.swift' -not -path 'Sources/SocketFraming/Sockets/*' | sort) 2>&1 | quiet
# (Its subfolders, HTTP/ and WebSocket/, are included; Sources/SocketFraming/Sockets, the glue onto
# AsyncSocket's sockets, is left out: the decoders alone are fuzzed.)

# Targets that import AsyncSocket (its internals: @testable) also link it, its C shims and OpenSSL.
uses_async_socket() { grep -q "^@testable import AsyncSocket" "fuzz/targets/$1.swift"; }
async_socket=(-I Sources/COpenSSL -I "$out/CAsyncSocketShims" -lAsyncSocket "$out/CAsyncSocketShims/shims.o" -lssl -lcrypto)
for target in "${targets[@]}"; do
    uses_async_socket "$target" || continue
    echo "fuzz: building AsyncSocket with -sanitize=fuzzer,address"
    # SwiftPM would make this module map for the C target's include directory.
    mkdir -p "$out/CAsyncSocketShims"
    printf 'module CAsyncSocketShims {\n    header "%s"\n    export *\n}\n' \
        "$PWD/Sources/CAsyncSocketShims/include/CAsyncSocketShims.h" >"$out/CAsyncSocketShims/module.modulemap"
    clang -O2 -c Sources/CAsyncSocketShims/shims.c -I Sources/CAsyncSocketShims/include -o "$out/CAsyncSocketShims/shims.o"
    # One whole-module job: quicker than per-file batches here (some 75 s against 85 s).
    swiftc "${flags[@]}" -wmo -enable-testing -I Sources/COpenSSL -I "$out/CAsyncSocketShims" -module-name AsyncSocket \
        -emit-module -emit-module-path "$out/AsyncSocket.swiftmodule" -emit-library -static -o "$out/libAsyncSocket.a" \
        $(find Sources/AsyncSocket -name '*.swift' | sort) 2>&1 | quiet
    break
done
for target in "${targets[@]}"; do
    echo "fuzz: building $target"
    extra=()
    if uses_async_socket "$target"; then extra=("${async_socket[@]}"); fi
    swiftc "${flags[@]}" -I "$out" -L "$out" -lSocketFraming -lz "${extra[@]}" fuzz/FuzzHarness.swift \
        "fuzz/targets/$target.swift" -o "$out/$target" 2>&1 | quiet
done
$build_only && exit 0

failed=()
for target in "${targets[@]}"; do
    mkdir -p "$out/corpus/$target" "$out/artifacts/$target"
    log="$out/$target.log"
    # The Swift runtime's backtracer would wait on a crashing fuzzer; libFuzzer reports crashes itself.
    if SWIFT_BACKTRACE=enable=no "$out/$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/artifacts/$target/" \
        "$out/corpus/$target" "fuzz/corpus/$target" >"$log" 2>&1; then
        runs=$(grep -o "stat::number_of_executed_units: [0-9]*" "$log" | grep -o "[0-9]*$" || echo "?")
        echo "fuzz: $target: $runs executions in ${seconds} s, no crash"
    else
        echo "fuzz: $target CRASHED, see $log and $out/artifacts/$target/" >&2
        grep -E "ERROR|Fatal error|SUMMARY|Test unit written" "$log" | head -5 >&2 || true
        failed+=("$target")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: crashes in ${failed[*]}" >&2
    exit 1
fi
