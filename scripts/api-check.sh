#!/usr/bin/env bash
# Fails when a public symbol of a library module changed incompatibly since the API baseline
# (swift-api-digester through `swift package diagnose-api-breaking-changes`). `.ci/run` runs it.
#
#   scripts/api-check.sh            # compare the working tree with the baseline in api/baselines/COMMIT
#   scripts/api-check.sh --update   # make HEAD's public API the baseline (on purpose, after a breaking change)
#
# The baseline is the API of one commit, kept as swift-api-digester's JSON per module in
# api/baselines/COMMIT/MODULE.json (SwiftPM names the folder after the commit); additions are not
# breaking, removals and changed signatures are, and so is a case added to a public enum (a switch
# over it in an app's code no longer compiles without a default).
set -euo pipefail
cd "$(dirname "$0")/.."
products=(AsyncSocket SocketFraming FramedSocket LongLink WebSocket)
if [[ ${1:-} == --update ]]; then
    rm -rf api/baselines
    commit=$(git rev-parse HEAD)
    # The comparison that follows (the working tree with HEAD) may report changes not committed yet;
    # what matters here is the baseline it writes, checked below.
    swift package diagnose-api-breaking-changes "$commit" --baseline-dir api/baselines --regenerate-baseline \
        --products "${products[@]}" >&2 || true
    for product in "${products[@]}"; do
        [[ -f api/baselines/$commit/$product.json ]] || { echo "api: no baseline written for $product" >&2; exit 1; }
    done
    echo "api: baseline is now $commit (commit api/baselines)" >&2
    exit 0
fi
commits=(api/baselines/*/)
[[ ${#commits[@]} == 1 && -d ${commits[0]} ]] || { echo "api: expected one baseline in api/baselines" >&2; exit 1; }
commit=$(basename "${commits[0]}")
swift package diagnose-api-breaking-changes "$commit" --baseline-dir api/baselines --products "${products[@]}"
