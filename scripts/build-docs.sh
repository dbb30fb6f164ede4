#!/usr/bin/env bash
# Builds the DocC archives of the four library modules with the toolchain's own `docc` (no plugin, so the
# package stays dependency-free), treating every warning as an error. Output: .build/docs/<Module>.doccarchive
set -euo pipefail
cd "$(dirname "$0")/.."

swift package dump-symbol-graph --minimum-access-level public > /dev/null
graphs=$(find .build -type d -path '*/symbolgraph' -newer Package.swift | head -n 1)
[ -n "$graphs" ] || graphs=$(find .build -type d -path '*/symbolgraph' | head -n 1)

for module in PromiseCore Cancellable CancellableURLSession PromiseTesting; do
    work=$(mktemp -d)
    cp "$graphs/$module.symbols.json" "$work/"
    cp "$graphs/$module@"*.symbols.json "$work/" 2> /dev/null || true
    mkdir -p .build/docs
    docc convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$work" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.promisecore.$module" \
        --output-path ".build/docs/$module.doccarchive" \
        --warnings-as-errors
    rm -rf "$work"
    echo "built .build/docs/$module.doccarchive"
done
