/*
 * Prints every transition of CancellationState.pml from every small state: the table Verification/transitions.tsv,
 * which Tests/CancellableTests/ModelTransitionTests.swift replays against the Swift `CancellationState`.
 * `Verification/check.sh` regenerates it with `spin -T -B transitions.pml` and fails if it differs from the one
 * committed.
 *
 * Each row: the state before (phase, openVotes, holders, reason, cancelsInputsOnResolution, callbacks, isOpen of
 * the vote the event casts or withdraws), the event and its reason, the state after (the same fields), then what
 * the transition returned: its action (the codes of CancellationState.pml; for addVote and addHolder, 1 for true
 * and 0 for false), the CancelAction inside a ReleaseAction's `.cancel` (else 0), the action's reason, and the
 * entries it moved out (a mask over `callbacks`).
 *
 * Entries: e0 is an action (a cancel handler), e1 and e2 are votes on other promises; e3 is the vote on this
 * promise that castVote and withdrawVote close (its flag is `voteOpen[3]`).
 */
#define NP 1
#define NE 4
#define ACTIONS 1

#include "CancellationState.pml"

/* Events */
#define E_CANCEL         1
#define E_RESOLVE        2
#define E_ADD_VOTE       3
#define E_CAST_VOTE      4
#define E_WITHDRAW_VOTE  5
#define E_ADD_HOLDER     6
#define E_RELEASE_HOLDER 7
#define E_ADD_ACTION     8  /* add(e0) */
#define E_ADD_VOTE_ENTRY 9  /* add(e1) */

init {
    byte ph, ov, ho, re, ac, cb, vo, ev, er;
    byte act, ract, ar;
    short out;
    bool flag;
    for (ph : 0 .. 2) {
    for (ov : 0 .. 2) {
    for (ho : 0 .. 2) {
    for (re : 0 .. 3) {
    for (ac : 0 .. 1) {
    for (cb : 0 .. 7) {
    for (vo : 0 .. 1) {
    for (ev : 1 .. 9) {
    for (er : 1 .. 3) {
        if
        /* Only states the protocol can be in: a cancelled promise has a reason, a resolved one none, and neither
           holds callbacks; an open vote on a pending promise is counted. */
        :: ph == CANCELLED && re == NOREASON -> skip
        :: ph == RESOLVED && re != NOREASON -> skip
        :: ph != PENDING && cb != 0 -> skip
        :: ph == PENDING && vo == 1 && ov == 0 -> skip
        /* Each event where it can happen, with a reason only where it takes one. */
        :: (ev == E_CANCEL || ev == E_CAST_VOTE) && er == LOSTRACE -> skip
        :: ev != E_CANCEL && ev != E_CAST_VOTE && er != USER -> skip
        :: (ev == E_CAST_VOTE || ev == E_WITHDRAW_VOTE) == false && vo == 1 -> skip
        :: ev == E_RELEASE_HOLDER && ho == 0 -> skip
        :: ev == E_ADD_ACTION && (cb & 1) != 0 -> skip
        :: ev == E_ADD_VOTE_ENTRY && (cb & 2) != 0 -> skip
        :: else ->
            phase[0] = ph; openVotes[0] = ov; holders[0] = ho; reason[0] = re;
            cancelsInputsOnResolution[0] = ac; callbacks[0] = cb; voteOpen[3] = vo;
            act = 0; ract = 0; ar = 0; out = 0;
            if
            :: ev == E_CANCEL -> cancel(0, er, act, ar, out)
            :: ev == E_RESOLVE -> resolve(0, act, out)
            :: ev == E_ADD_VOTE -> addVote(0, flag); act = flag
            :: ev == E_CAST_VOTE -> castVote(0, 3, er, act, ar, out)
            :: ev == E_WITHDRAW_VOTE -> withdrawVote(0, 3, ract, act, ar, out)
            :: ev == E_ADD_HOLDER -> addHolder(0, flag); act = flag
            :: ev == E_RELEASE_HOLDER -> releaseHolder(0, ract, out)
            :: ev == E_ADD_ACTION -> add(0, 0, act, ar)
            :: ev == E_ADD_VOTE_ENTRY -> add(0, 1, act, ar)
            fi;
            /* A ReleaseAction goes first; the CancelAction of its `.cancel` second. */
            if
            :: ev == E_WITHDRAW_VOTE || ev == E_RELEASE_HOLDER -> printf("%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n",
                ph, ov, ho, re, ac, cb, vo, ev, er,
                phase[0], openVotes[0], holders[0], reason[0], callbacks[0], voteOpen[3], ract, act, ar, out)
            :: else -> printf("%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n",
                ph, ov, ho, re, ac, cb, vo, ev, er,
                phase[0], openVotes[0], holders[0], reason[0], callbacks[0], voteOpen[3], act, 0, ar, out)
            fi
        fi
    } } } } } } } } }
}
