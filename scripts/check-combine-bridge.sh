#!/usr/bin/env bash
# Type-checks Sources/PromiseCore/Combine.swift (compiled only where Combine exists) against a stand-in with
# Combine's signatures, in Swift 6 mode, as a module that imports PromiseCore.
# Usage: scripts/check-combine-bridge.sh [modules directory of a debug build, default .build/debug/Modules]
set -euo pipefail
cd "$(dirname "$0")/.."
modules="${1:-.build/debug/Modules}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
swiftc -emit-module -module-name Combine -parse-as-library -swift-version 5 \
    -o "$work/Combine.swiftmodule" Tests/CombineStandIn/Combine.swift
# The bridge lives inside PromiseCore; as a client module it needs PromiseCore imported publicly.
sed 's/^@preconcurrency public import Combine$/&\npublic import PromiseCore/' Sources/PromiseCore/Combine.swift \
    > "$work/Bridge.swift"
grep -q '^public import PromiseCore$' "$work/Bridge.swift"
swiftc -emit-module -module-name Bridge -swift-version 6 -enable-upcoming-feature InternalImportsByDefault \
    -warnings-as-errors -I "$work" -I "$modules" -o "$work/Bridge.swiftmodule" "$work/Bridge.swift"
echo "Combine bridge: type-checks against Combine's signatures"
