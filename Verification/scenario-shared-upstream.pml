/*
 * Shared work: U has two consumers, A = U.map and B = U.map. One thread cancels A (A's vote on U is cast), another
 * releases B's object, orphaning B (B's vote on U is withdrawn), while a third fulfills U's work.
 *
 * Checks, besides one outcome: U is cancelled iff every vote on it closed, one cast, before its work fulfilled it;
 * at no step is U pending with every vote closed and one cast (a withdrawal never loses a cast).
 */
#define NP 3
#define NE 3
#define ND 2
#define NT 3
#define ACTIONS 1   /* e0: U's cancel handler; e1: A's vote on U; e2: B's vote on U */

#include "Protocol.pml"

#define U 0
#define A 1
#define B 2

ltl shared_work { [] sharedWorkHolds(U) }

/* Witnesses that the checks above are not vacuous: spin must find a run to each (check.sh expects an error). */
ltl reachable_cancelled { [] !(started && phase[U] == CANCELLED) }
ltl reachable_resolved { [] !(started && phase[U] == RESOLVED) }
ltl reachable_cast_with_a_vote_open { [] !(started && phase[U] == PENDING && ghostCast[U] == 1 && ghostOpen[U] == 1) }

proctype CancelA(byte me) {
    THREAD_LOCALS;
    cancelReturns(A, USER);
    done
}

proctype ReleaseB(byte me) {
    THREAD_LOCALS;
    perform(I_RELEASE_HOLDER, B, 0);
    done
}

proctype Work(byte me) {
    THREAD_LOCALS;
    perform(I_RESOLVE, U, VALUE);
    done
}

init {
    atomic {
        newPromise(U); created[U] = true;
        newPromise(A); created[A] = true;
        newPromise(B); created[B] = true;
        handler(U, 0);
        link(A, U, 1, 0, D_STEP);
        link(B, U, 2, 1, D_STEP);
        started = true;
        run Final();
        run CancelA(0);
        run ReleaseB(1);
        run Work(2)
    }
}
