#!/usr/bin/env bash
# Where each allocation of one operation comes from: ALLOCATION_TRACE's stacks, with the executable's own frames
# turned into file:line (inlined frames included).
# Usage: scripts/symbolize-allocations.sh "OPERATION NAME PREFIX"
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product allocation-budgets >/dev/null
binary="$(swift build -c release --show-bin-path)/allocation-budgets"
ALLOCATION_TRACE="$1" "$binary" 2>&1 >/dev/null | while IFS= read -r line; do
    if [[ "$line" =~ allocation-budgets\(\+(0x[0-9a-f]+)\) ]]; then
        addr2line -f -i -p -s -e "$binary" "$(printf '0x%x' $((${BASH_REMATCH[1]} - 1)))" | swift demangle --simplified | sed "s/^/    /"
    elif [[ "$line" == "-- allocation" || "$line" == "-- object"* ]]; then
        echo "$line"
    fi
done
