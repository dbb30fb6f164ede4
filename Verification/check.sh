#!/usr/bin/env bash
# Model-checks the cancellation protocol (Docs/Design/0004-model-checking.md):
#  1. every scenario-*.pml, exhaustively: its assertions and end states, then each of its LTL properties — none may
#     fail, and no search may be cut short (depth or memory);
#  2. each scenario's reachable_* claims, which must fail: a run reaches what the scenario is about, so its checks
#     are not vacuous;
#  3. every mutant-*.pml: spin must report an error, with a counterexample trail;
#  4. Verification/transitions.tsv is what transitions.pml prints, so the table the Swift tests replay is the model's.
# Installs spin with apt-get if it is missing. Prints, per run, the states explored and the time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v spin > /dev/null; then
    apt-get update -qq && apt-get install -y -qq spin > /dev/null
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here"/*.pml "$work"
cd "$work"

# Exhaustive search: no bit-state hashing, and no partial-order reduction either (-DNOREDUCE: every interleaving is
# explored as it is, at a few seconds' cost); a depth and a memory limit far above what any scenario needs, so that
# reaching one fails the check rather than truncating the search. -O0: gcc -O2 takes 15 s a verifier, more than the
# searches.
CFLAGS=(-O0 -DNOREDUCE -DMEMLIM=8192)
PAN=(-n -m2000000)
failed=0

# run NAME BINARY ARGS...: runs pan, prints one line, sets $errors.
run() {
    local name="$1"
    shift
    local out
    out="$("$@" 2>&1 || true)"
    errors="$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' <<< "$out" | head -1)"
    local states time
    states="$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' <<< "$out" | head -1)"
    time="$(sed -n 's/^pan: elapsed time \(.*\) seconds/\1/p' <<< "$out" | head -1)"
    # No verdict at all, or a pass from a search that stopped short (a violation found early is a verdict).
    if [[ -z "$errors" ]] \
        || { [[ "$errors" == 0 ]] && grep -qE "max search depth too small|out of memory|Search not completed" <<< "$out"; }; then
        echo "$out"
        echo "FAIL: $name: the search did not complete"
        failed=1
        errors=-1
        return
    fi
    printf '  %-58s %12s states %8ss  errors: %s\n' "$name" "${states:-?}" "${time:-0}" "$errors"
}

for scenario in scenario-*.pml; do
    echo "== $scenario"
    spin -a "$scenario" > spin.out
    gcc "${CFLAGS[@]}" -DNOCLAIM -o pan-safety pan.c
    gcc "${CFLAGS[@]}" -o pan-ltl pan.c
    run "assertions, invalid end states (deadlock)" ./pan-safety "${PAN[@]}"
    if [[ "$errors" != 0 ]]; then
        echo "FAIL: $scenario: an assertion or end state fails"
        spin -t -B "$scenario" | tail -40
        failed=1
    fi
    for claim in $(sed -n 's/^ltl \([a-z_0-9]*\).*/\1/p' Protocol.pml "$scenario"); do
        rm -f ./*.trail
        run "ltl $claim" ./pan-ltl -a "${PAN[@]}" -N "$claim"
        case "$claim" in
        reachable_*)
            if [[ "$errors" == 0 ]]; then
                echo "FAIL: $scenario: no run reaches $claim: the scenario's checks are vacuous there"
                failed=1
            fi
            ;;
        *)
            if [[ "$errors" != 0 ]]; then
                echo "FAIL: $scenario: $claim is violated"
                spin -t -B -N "$claim" "$scenario" | tail -40
                failed=1
            fi
            ;;
        esac
    done
done

echo "== mutants: spin must catch each"
for mutant in mutant-*.pml; do
    rm -f ./*.trail
    spin -a "$mutant" > spin.out
    gcc "${CFLAGS[@]}" -DNOCLAIM -o pan-mutant pan.c
    run "$mutant" ./pan-mutant "${PAN[@]}"
    if [[ "$errors" == 0 ]] || [[ ! -f "$mutant.trail" ]]; then
        echo "FAIL: $mutant: spin found no error — the check is vacuous"
        failed=1
    else
        echo "    caught: $(spin -t "$mutant" 2>&1 | grep -m1 -E 'text of failed assertion|invalid end state' | cut -c1-160)"
        echo "    counterexample, $(grep -c . "$mutant.trail") steps; what each thread did (spin -t -B $mutant):"
        spin -t -B "$mutant" 2>&1 | grep -E '^ *T[0-9]' | sed 's/^ */      /' | tail -25
    fi
done

echo "== the transition table is the model's"
spin -T -B transitions.pml > transitions.tsv
if ! diff -q transitions.tsv "$here/transitions.tsv" > /dev/null; then
    diff transitions.tsv "$here/transitions.tsv" | head -20
    echo "FAIL: Verification/transitions.tsv is not what transitions.pml prints: run"
    echo "      (cd Verification && spin -T -B transitions.pml > transitions.tsv), then swift test --filter ModelTransitionTests"
    failed=1
else
    echo "  $(wc -l < transitions.tsv) transitions, as committed"
fi

if [[ "$failed" != 0 ]]; then
    exit 1
fi
echo "== model checking passed"
