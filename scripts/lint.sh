#!/usr/bin/env bash
# Checks the formatting of every Swift file with the toolchain's swift-format and the configuration in
# .swift-format (4-space indents, lines up to 140 columns); any finding fails. `.ci/run` runs it.
#
#   scripts/lint.sh          # report
#   scripts/lint.sh --fix    # rewrite the files in place (then read the diff)
#
# Rules switched off in .swift-format, where the code follows another convention on purpose:
# OnlyOneTrailingClosureArgument (calls that take a completion and a trailing event handler),
# AmbiguousTrailingClosureOverload (the tests' sync and async `withTemporaryDirectory`),
# AlwaysUseLowerCamelCase (fields named as in the NATS JetStream API's JSON, `err_code`),
# UseLetInEveryBoundCaseVariable (`case let .x(a, b)` is kept), ReplaceForEachWithForLoop,
# NoAccessLevelOnExtensionDeclaration and FileScopedDeclarationPrivacy (access stays as written).
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Package.swift Sources Tests)
if [[ ${1:-} == --fix ]]; then
    swift format format --in-place --recursive --parallel "${paths[@]}"
else
    swift format lint --strict --recursive --parallel "${paths[@]}"
fi
