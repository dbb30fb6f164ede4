/*
 * An autoCancel race of two inputs: I0 fulfills on one thread while another cancels the race R itself, and a third
 * cancels the loser I1 directly.
 *
 * Checks, besides one outcome: by the time R's box is resolved or rejected, every input is decided, and each input
 * whose cancellation this thread won has had its cancel handler run (rule 10; an input another thread is
 * cancelling at that instant runs its handler on that thread); R's own votes are cast, never lost.
 */
#define NP 3
#define NE 4
#define ND 2
#define NT 3
#define ACTIONS 3   /* e0, e1: the cancel handlers of I0, I1; e2, e3: R's votes on I0, I1 */

#include "Protocol.pml"

#define I0 0
#define I1 1
#define R 2

/* Witnesses that the checks above are not vacuous: spin must find a run to each (check.sh expects an error). */
ltl reachable_fulfilled { [] !(started && box[R] == VALUE) }
ltl reachable_cancelled { [] !(started && box[R] == CANCELLED_BOX) }
ltl reachable_loser_cancelled_by_the_race { [] !(started && cancelledBy[I1] == R + 1) }

proctype Winner(byte me) {
    THREAD_LOCALS;
    perform(I_RESOLVE, I0, VALUE);
    done
}

proctype CancelRace(byte me) {
    THREAD_LOCALS;
    cancelReturns(R, USER);
    done
}

proctype CancelLoser(byte me) {
    THREAD_LOCALS;
    cancelReturns(I1, TIMEOUT);
    done
}

init {
    atomic {
        newPromise(I0); created[I0] = true;
        newPromise(I1); created[I1] = true;
        newPromise(R); created[R] = true;
        handler(I0, 0);
        handler(I1, 1);
        link(R, I0, 2, 0, D_FOLLOW);
        link(R, I1, 3, 1, D_FOLLOW);
        cancelsInputsOnResolution[R] = true;
        inputsOf[R] = 3;
        started = true;
        run Final();
        run Winner(0);
        run CancelRace(1);
        run CancelLoser(2)
    }
}
