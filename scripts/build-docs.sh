#!/usr/bin/env bash
# Builds the DocC archives of the four library modules with the toolchain's own `docc` (no plugin, so the
# package stays dependency-free), treating every warning as an error. Output: .build/docs/<Module>.doccarchive
#
# Works as the first command after cloning: the library targets are built alone, in a scratch path of their own
# (.build-docs), and their symbol graphs extracted from that build as SwiftPM's dump-symbol-graph does (which walks every
# module, test modules included, and fails on those a plain build does not make).
set -euo pipefail
cd "$(dirname "$0")/.."

modules=(PromiseCore Cancellable CancellableURLSession PromiseTesting)
# CancellableURLSession and PromiseTesting between them depend on the other two.
for target in CancellableURLSession PromiseTesting; do
    swift build --scratch-path .build-docs --target "$target" > /dev/null
done
modules_dir="$(swift build --scratch-path .build-docs --show-bin-path)/Modules"
triple=$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
sdk=()
if command -v xcrun > /dev/null; then
    sdk=(-sdk "$(xcrun --show-sdk-path)")
    # The modules were built for the package's minimum (Package.swift's platforms), not the toolchain's default.
    triple=$(echo "$triple" | sed -E 's/macosx[0-9.]*$/macosx10.15/')
fi
graphs=.build-docs/symbolgraph
rm -rf "$graphs"
mkdir -p "$graphs"
for module in "${modules[@]}"; do
    swift symbolgraph-extract -module-name "$module" -target "$triple" ${sdk[@]+"${sdk[@]}"} -I "$modules_dir" \
        -minimum-access-level public -omit-extension-block-symbols -output-dir "$graphs"
done

for module in "${modules[@]}"; do
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
