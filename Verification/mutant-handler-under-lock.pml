/*
 * Mutant: a handler run under the lock. This cancel() carries its decision out — the promise's own cancel
 * handler included — before releasing the cancellation lock, as a naive implementation would. spin must find it
 * (Verification/check.sh fails if it does not).
 *
 * Run as it is (`spin -run mutant-handler-under-lock.pml`): the scenario is included below, and it
 * includes this file again where the original transition stands, this time for the replacement only.
 */
#ifndef MUTATION
#define MUTANT_CARRY_OUT_CANCEL
#define MUTATION "mutant-handler-under-lock.pml"
#include "scenario-resolve-cancel-cancel.pml"
#else
inline doCancel(p, r) {
    atomic { lockedBy[p] == 0 -> lockedBy[p] = me + 1; held++; cancel(p, r, act, ar, out) }
    /* the bug: the handlers run here, with the lock held */
    i = 0;
    do
    :: i < NE ->
        if
        :: (out & (1 << i)) != 0 && isAction(i) ->
            printf("T%d run p%d's cancel handler, holding p%d's lock\n", me, entryPromise[i], p);
            doHandler(entryPromise[i], ar);
            out = out & ~(1 << i)
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    carryOutCancel(p, act, ar, out);
    atomic { lockedBy[p] = 0; held-- }
}
#endif
