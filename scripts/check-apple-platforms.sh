#!/usr/bin/env bash
# Type-checks every target for iOS 13 and macOS 10.15 — the libraries in debug and release, then every target, tests
# included — with the Linux toolchain against public copies of Apple's SDK headers and Swift interfaces, and fails
# on any error or warning. CONTRIBUTING.md ("Apple platforms") says what it sees and what it cannot.
#
# The checker and its inputs are the workplace's, not the project's (they are Apple's files: never commit them):
# APPLE_TYPECHECK names the script (default: ../shared/hooks/apple-typecheck.sh beside this checkout). Where it is
# missing or not set up, this says so and exits 0: a contributor with a Mac checks the same with xcodebuild.
set -uo pipefail
cd "$(dirname "$0")/.."
checker=${APPLE_TYPECHECK:-../shared/hooks/apple-typecheck.sh}
if [ ! -x "$checker" ]; then
    echo "skipped: no Apple type-check here ($checker); see CONTRIBUTING.md, 'Apple platforms'"
    exit 0
fi
if [ ! -d "${W:-${TMPDIR:-/tmp}/apple-typecheck}/resource" ]; then
    echo "skipped: the Apple type-check is not set up on this machine ('$checker setup'; its INPUTS say what it needs)"
    exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
check() {  # [VARIABLE=value] checker platforms configuration
    echo "-- $*"
    env "$@" 2>&1 | tee "$log"
    if [ "${PIPESTATUS[0]}" -ne 0 ] || grep -qE 'rc=[1-9]|errors=[1-9]|warnings=[1-9]' "$log"; then failed=1; fi
}
check "$checker" all debug
check "$checker" all release
check TESTS=1 "$checker" all debug

# The checker leaves executables out; the package's own (stack-safety, crash-recovery) are built by
# `swift build --build-tests` on macOS and by Xcode's package scheme for every platform, so they are type-checked here
# too, against the modules the TESTS=1 run emitted, with the checker's SDKs and resource directory.
W=${W:-${TMPDIR:-/tmp}/apple-typecheck}
while IFS=$'\t' read -r name path features; do
    for platform in "ios arm64-apple-ios13.0 $W/sdk/iPhoneOS16.5.sdk" "macos arm64-apple-macos10.15 $W/sdk/MacOSX14.2.sdk"; do
        read -r short target sdk <<< "$platform"
        echo "-- executable $name ($target, debug)"
        # -I testing: an executable that imports a test-support module (crash-recovery's LoopbackHTTPServer, through
        # PromiseTesting) finds swift-testing where the TESTS=1 run found it.
        args=(-typecheck -target "$target" -sdk "$sdk" -module-cache-path "$W/mc-$short" -I "$W/out/$short-debug-tests1"
              -I "$W/testing/$short"
              -package-name main -DSWIFT_PACKAGE -DDEBUG -Onone -resource-dir "$W/resource" -swift-version 6
              -module-name "${name//-/_}")
        for feature in $features; do args+=(-enable-upcoming-feature "$feature"); done
        mapfile -t sources < <(find "$path" -name '*.swift' | sort)
        # As SwiftPM: top-level code in main.swift, otherwise an @main type.
        printf '%s\n' "${sources[@]}" | grep -q '/main\.swift$' || args+=(-parse-as-library)
        swiftc "${args[@]}" "${sources[@]}" > "$log" 2>&1
        status=$?
        problems=$(grep -cE ': (error|warning):' "$log")
        echo "  $name: rc=$status problems=$problems"
        grep -E ': (error|warning):' "$log" | sort -u | sed 's/^/    /'
        if [ "$status" -ne 0 ] || [ "$problems" -ne 0 ]; then failed=1; fi
    done
done < <(python3 - <(swift package describe --type json 2>/dev/null) <(swift package dump-package 2>/dev/null) <<'PY'
import json, sys
describe, dump = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
features = {t["name"]: [list(s["kind"]["enableUpcomingFeature"].values())[0] for s in t.get("settings", [])
                        if "enableUpcomingFeature" in s.get("kind", {})] for t in dump["targets"]}
for t in describe["targets"]:
    if t["type"] == "executable":
        print("\t".join([t["name"], t["path"], " ".join(features.get(t["name"], []))]))
PY
)
if [ "$failed" -ne 0 ]; then
    echo "FAIL: a target has errors or warnings on an Apple platform"
    exit 1
fi
echo "every target it can see is clean on iOS and macOS, debug and release"
