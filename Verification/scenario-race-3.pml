/*
 * An autoCancel race of three inputs: I0 fulfills on one thread while another cancels the race R itself and a third
 * fulfills I1; I2's work never ends, so only the race can stop it.
 *
 * Checks, besides one outcome: by the time R's box is resolved or rejected, every input is decided and each input
 * this thread cancelled has had its cancel handler run (rule 10); I2 is always cancelled, never left pending.
 */
#define NP 4
#define NE 6
#define ND 3
#define NT 3
#define ACTIONS 7   /* e0, e1, e2: the cancel handlers of I0, I1, I2; e3, e4, e5: R's votes on them */

#include "Protocol.pml"

#define I0 0
#define I1 1
#define I2 2
#define R 3

/* Witnesses that the checks above are not vacuous: spin must find a run to each (check.sh expects an error). */
ltl reachable_fulfilled { [] !(started && box[R] == VALUE) }
ltl reachable_cancelled { [] !(started && box[R] == CANCELLED_BOX) }
ltl reachable_loser_lost_the_race { [] !(started && phase[I2] == CANCELLED && reason[I2] == LOSTRACE) }

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

proctype Other(byte me) {
    THREAD_LOCALS;
    perform(I_RESOLVE, I1, VALUE);
    done
}

init {
    atomic {
        newPromise(I0); created[I0] = true;
        newPromise(I1); created[I1] = true;
        newPromise(I2); created[I2] = true;
        newPromise(R); created[R] = true;
        handler(I0, 0);
        handler(I1, 1);
        handler(I2, 2);
        link(R, I0, 3, 0, D_FOLLOW);
        link(R, I1, 4, 1, D_FOLLOW);
        link(R, I2, 5, 2, D_FOLLOW);
        cancelsInputsOnResolution[R] = true;
        inputsOf[R] = 7;
        started = true;
        run Final();
        run Winner(0);
        run CancelRace(1);
        run Other(2)
    }
}
