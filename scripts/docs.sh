#!/usr/bin/env bash
# Builds the DocC documentation of the public library modules, warnings as failures (a broken symbol
# link fails), and compiles the LongLink tutorial's code steps. `.ci/run` runs it after the build.
#
#   scripts/docs.sh [OUTPUT]     # default .build/docs; one archive per module, OUTPUT/MODULE.doccarchive
#
# Open one locally: `python3 -m http.server -d .build/docs/AsyncSocket.doccarchive 8000`, then
# http://127.0.0.1:8000/documentation/asyncsocket (archives are built for static hosting at a
# server's root; Xcode opens a .doccarchive as it is).
#
# The DocC plugin package cannot be fetched here, so this drives the toolchain's tools directly:
# `swift package dump-symbol-graph` (public symbols, from the debug build), then `docc convert` per
# catalog (`Sources/MODULE/MODULE.docc`).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build/docs}
modules=(AsyncSocket SocketFraming FramedSocket LongLink WebSocket)

swift build >&2
bin=$(swift build --show-bin-path)
graphs=$(swift package dump-symbol-graph --minimum-access-level public | sed -n 's/^Files written to //p')
[[ -d $graphs ]] || { echo "docs: no symbol graphs" >&2; exit 1; }

mkdir -p "$out"
for module in "${modules[@]}"; do
    # The module's graph and its extensions of the others' types (FramedSocket@AsyncSocket, …).
    staged=$(mktemp -d)
    cp "$graphs/$module.symbols.json" "$staged/"
    find "$graphs" -name "$module@*.symbols.json" -exec cp {} "$staged/" \;
    lower=$(tr '[:upper:]' '[:lower:]' <<<"$module")
    docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$staged" \
        --fallback-display-name "$module" --fallback-bundle-identifier "swift-async-socket.$lower" \
        --output-path "$out/$module.doccarchive" --transform-for-static-hosting \
        --warnings-as-errors --diagnostic-level warning >&2
    rm -rf "$staged"
    echo "docs: $out/$module.doccarchive" >&2
done

# The tutorial's code: each step is a whole main.swift, type-checked on its own against the built
# modules, as an app's executable target would compile it (Swift 6 mode).
flags=(-swift-version 6 -typecheck -I "$bin/Modules" -module-cache-path "$bin/ModuleCache")
for map in Sources/C*/module.modulemap "$bin"/*.build/module.modulemap; do
    [[ -f $map ]] && flags+=(-Xcc "-fmodule-map-file=$map")
done
for include in Sources/C*/include; do
    [[ -d $include ]] && flags+=(-Xcc -I -Xcc "$include")
done
for step in Sources/LongLink/LongLink.docc/Resources/*.swift; do
    swiftc "${flags[@]}" -warnings-as-errors "$step"
    echo "docs: $step compiles" >&2
done

# The WebSocket article's examples: each a whole main.swift, type-checked, and shown in the article
# as it is (so the two cannot drift apart).
for example in Sources/WebSocket/WebSocket.docc/Resources/*.swift; do
    swiftc "${flags[@]}" -warnings-as-errors "$example"
    python3 -c 'import sys; sys.exit(open(sys.argv[1]).read() not in open(sys.argv[2]).read())' \
        "$example" Sources/WebSocket/WebSocket.docc/WebSocket.md ||
        { echo "docs: $example is not shown as it is in WebSocket.md" >&2; exit 1; }
    echo "docs: $example compiles and is in the article" >&2
done
