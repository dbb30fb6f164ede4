/*
 * An orphaned promise whose holder is released while a vote is cast: P has two consumers, A = P.map and
 * B = P.map, and D = A.map consumes A. One thread releases P's object, then A's, then D's: D is orphaned and
 * withdraws its vote on A, which is then orphaned in turn — it withdraws its vote on P, and keeps its own cancel
 * handler until it resolves. Meanwhile another thread cancels B (B's vote on P is cast, perhaps while P's holder is
 * being released) and a third fulfills P's work.
 *
 * Checks, besides one outcome: P is cancelled iff both its votes closed, one cast, before its work fulfilled it;
 * A's cancel handler never runs (A is never cancelled: it resolves with P's result) and is released when A
 * resolves; nothing is left registered.
 */
#define NP 4
#define NE 5
#define ND 3
#define NT 3
#define ACTIONS 17  /* e0: P's cancel handler, e4: A's; e1: A's vote on P, e2: B's on P, e3: D's on A */

#include "Protocol.pml"

#define P 0
#define A 1
#define B 2
#define D 3

ltl shared_work { [] (sharedWorkHolds(P) && sharedWorkHolds(A)) }

/* Witnesses that the checks above are not vacuous: spin must find a run to each (check.sh expects an error). */
ltl reachable_orphaned { [] !(started && isOrphaned(A) && voteOpen[1] == false && phase[P] == PENDING) }
ltl reachable_cancelled { [] !(started && phase[P] == CANCELLED) }
ltl reachable_resolved { [] !(started && phase[P] == RESOLVED) }

proctype Release(byte me) {
    THREAD_LOCALS;
    perform(I_RELEASE_HOLDER, P, 0);
    perform(I_RELEASE_HOLDER, A, 0);
    perform(I_RELEASE_HOLDER, D, 0);
    done
}

proctype CancelB(byte me) {
    THREAD_LOCALS;
    cancelReturns(B, USER);
    done
}

proctype Work(byte me) {
    THREAD_LOCALS;
    perform(I_RESOLVE, P, VALUE);
    done
}

init {
    atomic {
        newPromise(P); created[P] = true;
        newPromise(A); created[A] = true;
        newPromise(B); created[B] = true;
        newPromise(D); created[D] = true;
        handler(P, 0);
        link(A, P, 1, 0, D_STEP);
        handler(A, 4);
        link(B, P, 2, 1, D_STEP);
        link(D, A, 3, 2, D_STEP);
        started = true;
        run Final();
        run Release(0);
        run CancelB(1);
        run Work(2)
    }
}
