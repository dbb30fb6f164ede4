/*
 * Mutant: a cancel that does not re-check the result. This cancel() only asks whether the promise was cancelled
 * already, not whether a result won first: a cancel that loses the race to a fulfillment still "cancels". spin
 * must find it (Verification/check.sh fails if it does not).
 *
 * Run as it is (`spin -run mutant-cancel-without-recheck.pml`): the scenario is included below, and it
 * includes this file again where the original transition stands, this time for the replacement only.
 */
#ifndef MUTATION
#define MUTANT_CANCEL
#define MUTATION "mutant-cancel-without-recheck.pml"
#include "scenario-resolve-cancel-cancel.pml"
#else
inline cancel(p, r, act, ar, out) {
    if
    :: phase[p] != CANCELLED ->   /* the bug: RESOLVED is treated as PENDING */
        phase[p] = CANCELLED;
        reason[p] = r;
        ar = r;
        takeCallbacks(p, out);
        if
        :: cancelsInputsOnResolution[p] -> act = C_CANCEL_INPUTS_THEN_REJECT
        :: else -> act = C_CANCEL
        fi
    :: else ->
        out = 0;
        if
        :: cancelsInputsOnResolution[p] -> act = C_INPUTS_BEING_CANCELLED; ar = NOREASON
        :: else -> act = C_ALREADY_CANCELLED; ar = reason[p]
        fi
    fi
}
#endif
