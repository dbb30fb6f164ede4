/*
 * Resolve against cancel against cancel: the work of P fulfills on one thread while two others cancel it with
 * different reasons, and one of them then cancels L = P.map, whose vote on P may come before or after.
 *
 * Checks: one winner; P's cancel handler runs exactly once iff a cancel won, with the winning reason, which the
 * rejection carries too; L ends with P's result, or cancelled.
 */
#define NP 2
#define NE 2
#define ND 1
#define NT 3
#define ACTIONS 1   /* e0: P's cancel handler; e1: L's vote on P */

#include "Protocol.pml"

#define P 0
#define L 1

/* Witnesses that the checks above are not vacuous: spin must find a run to each (check.sh expects an error). */
ltl reachable_resolved { [] !(started && phase[P] == RESOLVED) }
ltl reachable_cancelled_by_user { [] !(started && phase[P] == CANCELLED && reason[P] == USER) }
ltl reachable_cancelled_by_timeout { [] !(started && phase[P] == CANCELLED && reason[P] == TIMEOUT) }

proctype Work(byte me) {
    THREAD_LOCALS;
    perform(I_RESOLVE, P, VALUE);
    done
}

proctype User(byte me) {
    THREAD_LOCALS;
    cancelReturns(P, USER);
    done
}

proctype Timer(byte me) {
    THREAD_LOCALS;
    cancelReturns(P, TIMEOUT);
    cancelReturns(L, USER);
    done
}

init {
    atomic {
        newPromise(P); created[P] = true;
        newPromise(L); created[L] = true;
        handler(P, 0);
        link(L, P, 1, 0, D_STEP);
        started = true;
        run Final();
        run Work(0);
        run User(1);
        run Timer(2)
    }
}
