/*
 * A `then` whose body returns a promise while the link is cancelled: L = U.then { I }, where I is a cancellable
 * promise whose work never ends. One thread fulfills U (L's body runs, returns I, and L follows it: a vote on I,
 * stored in L's callbacks, then a handler on I's box); another cancels L; a third cancels U.
 *
 * Checks, besides one outcome: if the body ran, I is cancelled — whether L was cancelled before its vote on I
 * was stored (cast at once) or after (cast with L's callbacks) — so I is never left pending; a body whose link was
 * cancelled first does not run.
 */
#define NP 3
#define NE 4
#define ND 2
#define NT 3
#define ACTIONS 5   /* e0: U's cancel handler, e2: I's; e1: L's vote on U, e3: L's vote on I */

#include "Protocol.pml"

#define U 0
#define L 1
#define I 2

/* Witnesses that the checks above are not vacuous: spin must find a run to each (check.sh expects an error). */
ltl reachable_inner_cancelled { [] !(started && phase[I] == CANCELLED) }
ltl reachable_body_skipped { [] !(started && bodyDone[L] && !created[I]) }
ltl reachable_link_rejected_by_upstream { [] !(started && phase[L] == RESOLVED && box[L] == ERR) }

proctype Work(byte me) {
    THREAD_LOCALS;
    perform(I_RESOLVE, U, VALUE);
    done
}

proctype CancelLink(byte me) {
    THREAD_LOCALS;
    cancelReturns(L, USER);
    done
}

proctype CancelUpstream(byte me) {
    THREAD_LOCALS;
    cancelReturns(U, TIMEOUT);
    done
}

init {
    atomic {
        newPromise(U); created[U] = true;
        newPromise(L); created[L] = true;
        newPromise(I);  /* made by L's body */
        handler(U, 0);
        handler(I, 2);
        link(L, U, 1, 0, D_THEN);
        thenInner[L] = I; innerVote[L] = 3; innerDelivery[L] = 1;
        entryPromise[3] = I; entryOwner[3] = L; deliverTo[1] = L; deliverKind[1] = D_FOLLOW;
        started = true;
        run Final();
        run Work(0);
        run CancelLink(1);
        run CancelUpstream(2)
    }
}
