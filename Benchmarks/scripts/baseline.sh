#!/usr/bin/env bash
# Adds a "before" contestant to promise-benchmarks: PromiseCore and Cancellable as they were at a git ref (a release
# tag, or a commit), built as the modules BaselinePromiseCore and BaselineCancellable beside the current ones, and
# timed in the same process, round by round, with the same floors — so that a change's before/after is one run's
# ratios, not two runs' on a noisy machine.
#
#   Benchmarks/scripts/baseline.sh REF      # then: swift run -c release --package-path Benchmarks promise-benchmarks
#   Benchmarks/scripts/baseline.sh --remove
#
# What it writes is ignored by git: Benchmarks/Baseline/ (the sources at REF) and the generated contestant
# (Benchmarks/Sources/PromiseBenchmarks/Baseline/). Benchmarks/Package.swift adds the targets when they exist.
set -euo pipefail
cd "$(dirname "$0")/../.."
baseline=Benchmarks/Baseline
contestant=Benchmarks/Sources/PromiseBenchmarks/Baseline
rm -rf "$baseline" "$contestant"
[ "${1:-}" = "--remove" ] && { echo "baseline removed"; exit 0; }
ref=${1:?usage: baseline.sh REF | --remove}
commit=$(git rev-parse --short "$ref^{commit}")
mkdir -p "$baseline" "$contestant"
for module in PromiseCore Cancellable; do
    mkdir -p "$baseline/Baseline$module"
    git archive "$commit" "Sources/$module" | tar -x -C "$baseline/Baseline$module" --strip-components=2
    find "$baseline/Baseline$module" -name '*.docc' -prune -exec rm -rf {} +
done
# The modules' names, wherever the sources spell them: imports and qualified names.
rename() {
    sed -E -e 's/\b(import|public import|package import|internal import) (PromiseCore|Cancellable)\b/\1 Baseline\2/' \
        -e 's/\bPromiseCore\./BaselinePromiseCore./g' -e 's/\bCancellable\./BaselineCancellable./g' "$@"
}
find "$baseline" -name '*.swift' -print0 | while IFS= read -r -d '' file; do
    rename "$file" > "$file.renamed" && mv "$file.renamed" "$file"
done
rename Benchmarks/Sources/PromiseBenchmarks/PromiseCoreContestant.swift \
    | sed -e 's/\bPromiseCoreContestant\b/BaselineContestant/g' \
        -e "s/let name = \"PromiseCore\"/let name = \"before ($commit)\"/" \
        -e 's/\braceCancellingLosers\b/baselineRaceCancellingLosers/g' > "$contestant/BaselineContestant.swift"
rename Benchmarks/Sources/PromiseBenchmarks/CancellableRace.swift \
    | sed -e 's/\braceCancellingLosers\b/baselineRaceCancellingLosers/g' > "$contestant/BaselineRace.swift"
cat >> "$contestant/BaselineRace.swift" <<'SWIFT'

import BaselinePromiseCore

/// The baseline has a `conf` of its own: its races leave losers pending on purpose too.
func silenceBaselineLogs() {
    BaselinePromiseCore.conf.logHandler = { _ in }
}
SWIFT
echo "$commit" > "$baseline/REF"
echo "baseline: PromiseCore and Cancellable at $commit, contestant \"before ($commit)\""
