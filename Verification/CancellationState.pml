/*
 * The state machine of Sources/Cancellable/Internal/CancellationState.swift, transition by transition, with the
 * same names. Each inline is what the Swift method does under the promise's cancellation lock; a caller runs it
 * inside one `atomic` block (one lock acquisition is one step) and carries the returned action out afterwards,
 * outside the lock, in separate steps (Protocol.pml).
 *
 * The promise is an index `p` into the arrays below; its callbacks are a bit mask over the entries of
 * Protocol.pml's (or the transition table's) entry table, `ACTIONS` being the mask of the entries that are
 * actions (cancel handlers, kept when the promise is orphaned) rather than votes.
 *
 * Tests/CancellableTests/ModelTransitionTests.swift replays Verification/transitions.tsv — every transition of
 * this file from every small state, printed by transitions.pml — against the Swift `CancellationState`. Change a
 * transition here or there and one of the two checks in .ci/run fails (Verification/check.sh).
 *
 * A mutant (mutant-*.pml) replaces one inline: it defines the inline's guard macro (MUTANT_CANCEL,
 * MUTANT_WITHDRAW_VOTE) and MUTATION, its own file name, which is included here in the original's place.
 */

/* CancellationState.Phase */
#define PENDING   0
#define CANCELLED 1
#define RESOLVED  2

/* CancellationReason: the three the model needs (any other behaves as these do). 0 is Swift's nil. */
#define NOREASON 0
#define USER     1
#define TIMEOUT  2
#define LOSTRACE 3

/* CancelAction */
#define C_CANCEL                    1
#define C_CANCEL_INPUTS_THEN_REJECT 2
#define C_ALREADY_CANCELLED         3
#define C_INPUTS_BEING_CANCELLED    4
#define C_ALREADY_RESOLVED          5
#define C_OTHER_VOTES_OPEN          6
#define C_VOTE_CLOSED              16

/* ResolveAction */
#define RS_RESOLVE                     7
#define RS_CANCEL_INPUTS_THEN_RESOLVE  8
#define RS_IGNORE                      9

/* AddAction */
#define A_STORED   10
#define A_RUN_NOW  11
#define A_DISCARD  12

/* ReleaseAction */
#define R_NONE     13
#define R_CANCEL   14
#define R_ORPHANED 15

/* The state of each promise (CancellationState's fields). `voteOpen` is each vote entry's own flag (Vote.isOpen),
   which only the vote transitions touch, under the lock of the promise the vote is on. */
byte phase[NP];
byte openVotes[NP];
byte holders[NP];
byte reason[NP];
bool cancelsInputsOnResolution[NP];
short callbacks[NP];
bool voteOpen[NE];

#define isOrphaned(p) (phase[p] == PENDING && holders[p] == 0 && openVotes[p] == 0)
#define isCancelled(p) (phase[p] == CANCELLED)

/* takeCallbacks(): moves the callbacks out. */
inline takeCallbacks(p, out) {
    out = callbacks[p];
    callbacks[p] = 0
}

/* takeReleasedWhenOrphaned(): an autoCancel combinator keeps its votes; anyone else keeps its actions only. */
inline takeReleasedWhenOrphaned(p, out) {
    if
    :: cancelsInputsOnResolution[p] -> out = 0
    :: else ->
        out = callbacks[p] & ~ACTIONS;
        callbacks[p] = callbacks[p] & ACTIONS
    fi
}

/* releaseIfOrphaned() */
inline releaseIfOrphaned(p, ract, out) {
    if
    :: isOrphaned(p) && callbacks[p] != 0 -> ract = R_ORPHANED; takeReleasedWhenOrphaned(p, out)
    :: else -> ract = R_NONE; out = 0
    fi
}

/* cancel(reason:) -> CancelAction; `ar` is the action's reason (the winning one for alreadyCancelled). */
#ifdef MUTANT_CANCEL
#include MUTATION
#else
inline cancel(p, r, act, ar, out) {
    if
    :: phase[p] == PENDING ->
        phase[p] = CANCELLED;
        reason[p] = r;
        ar = r;
        takeCallbacks(p, out);
        if
        :: cancelsInputsOnResolution[p] -> act = C_CANCEL_INPUTS_THEN_REJECT
        :: else -> act = C_CANCEL
        fi
    :: phase[p] == CANCELLED ->
        out = 0;
        if
        :: cancelsInputsOnResolution[p] -> act = C_INPUTS_BEING_CANCELLED; ar = NOREASON
        :: else -> act = C_ALREADY_CANCELLED; ar = reason[p]
        fi
    :: phase[p] == RESOLVED -> act = C_ALREADY_RESOLVED; ar = NOREASON; out = 0
    fi
}
#endif

/* resolve() -> ResolveAction */
inline resolve(p, act, out) {
    if
    :: phase[p] == PENDING ->
        phase[p] = RESOLVED;
        reason[p] = NOREASON;
        takeCallbacks(p, out);
        if
        :: cancelsInputsOnResolution[p] -> act = RS_CANCEL_INPUTS_THEN_RESOLVE
        :: else -> act = RS_RESOLVE
        fi
    :: else -> act = RS_IGNORE; out = 0
    fi
}

/* addVote() -> Bool: whether the vote is open. */
inline addVote(p, open) {
    if
    :: phase[p] == PENDING -> openVotes[p]++; open = true
    :: else -> open = false
    fi
}

/* closeOpenVote(): the Swift code's preconditionFailure is this assertion: no scenario, in any interleaving, closes
   a vote that was not counted (the count would wrap below zero). */
inline closeOpenVote(p) {
    assert(openVotes[p] > 0);
    openVotes[p]--
}

/* castVote(_ isOpen:, reason:) -> CancelAction */
inline castVote(p, e, r, act, ar, out) {
    if
    :: !voteOpen[e] ->
        if
        :: phase[p] == PENDING -> act = C_VOTE_CLOSED; ar = NOREASON; out = 0
        :: else -> cancel(p, r, act, ar, out)
        fi
    :: else ->
        voteOpen[e] = false;
        if
        :: phase[p] != PENDING -> cancel(p, r, act, ar, out)
        :: else ->
            closeOpenVote(p);
            if
            :: openVotes[p] != 0 -> reason[p] = r; act = C_OTHER_VOTES_OPEN; ar = NOREASON; out = 0
            :: else -> cancel(p, r, act, ar, out)
            fi
        fi
    fi
}

/* withdrawVote(_ isOpen:) -> ReleaseAction; for R_CANCEL, `act`/`ar`/`out` are the cancellation's. */
#ifdef MUTANT_WITHDRAW_VOTE
#include MUTATION
#else
inline withdrawVote(p, e, ract, act, ar, out) {
    act = 0; ar = NOREASON; out = 0;
    if
    :: voteOpen[e] ->
        voteOpen[e] = false;
        if
        :: phase[p] == PENDING ->
            closeOpenVote(p);
            if
            :: openVotes[p] == 0 && reason[p] != NOREASON -> ract = R_CANCEL; cancel(p, reason[p], act, ar, out)
            :: openVotes[p] == 0 && reason[p] == NOREASON -> releaseIfOrphaned(p, ract, out)
            :: else -> ract = R_NONE
            fi
        :: else -> ract = R_NONE
        fi
    :: else -> ract = R_NONE
    fi
}
#endif

/* addHolder() -> Bool: whether the hold counts. */
inline addHolder(p, counted) {
    if
    :: phase[p] == PENDING -> holders[p]++; counted = true
    :: else -> counted = false
    fi
}

/* releaseHolder() -> ReleaseAction */
inline releaseHolder(p, ract, out) {
    assert(holders[p] > 0);
    holders[p]--;
    releaseIfOrphaned(p, ract, out)
}

/* add(_ callback:) -> AddAction; `ar` is runNow's reason. */
inline add(p, e, aact, ar) {
    if
    :: phase[p] == PENDING && isOrphaned(p) && ((1 << e) & ACTIONS) == 0 -> aact = A_DISCARD; ar = NOREASON
    :: phase[p] == PENDING && !(isOrphaned(p) && ((1 << e) & ACTIONS) == 0) ->
        callbacks[p] = callbacks[p] | (1 << e); aact = A_STORED; ar = NOREASON
    :: phase[p] == CANCELLED -> aact = A_RUN_NOW; ar = reason[p]
    :: phase[p] == RESOLVED -> aact = A_DISCARD; ar = NOREASON
    fi
}
