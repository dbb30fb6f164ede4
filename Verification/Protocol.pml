/*
 * The cancellation protocol as implemented: what each thread does around the state machine's decisions.
 *
 * A scenario file defines NP (promises), NE (cancel-callback entries), ND (deliveries: a box's handlers), NT
 * (threads), ACTIONS, FORALL_P(f) and FORALL_E(f), includes this file, sets the graph up in `init` and runs its
 * threads. What is modelled, at the granularity of the code:
 *
 * - One lock acquisition is one atomic step: each transition of CancellationState.pml runs in one `atomic` block,
 *   guarded by the promise's lock being free (`lockedBy`), as `LockedCancellationState.withLock` is; a box's
 *   resolution and a handler's registration on a box, under the box's lock (PromiseCore's Box), likewise.
 * - Everything done after unlocking — rejecting the box, running a cancel handler, casting or withdrawing a vote,
 *   resolving a link, running a link's step — is a separate item on the thread's own stack, which the thread
 *   pops one at a time (`drain`): the calling thread's CancelPropagation loop and PromiseCore's resolve and
 *   release loops, merged into one stack. Other threads interleave between any two steps.
 * - The entries of a promise's callbacks (OnCancelEntry) are actions (the user's cancel handler) or votes
 *   (Vote: a link's vote on its upstream, a `then` link's vote on the promise its body returned, an autoCancel
 *   combinator's votes on its inputs). A vote released uncast — its consumer resolved, or was orphaned — is
 *   withdrawn by its deinit: one more item.
 * - Results are abstract: VALUE, ERR (a rejection, including a cancellation passed down a chain) and CANCELLED_BOX
 *   (the box rejected by its own cancellation, `rejectBox`).
 *
 * Ghost variables (never read by the protocol) record what the properties need: how often each cancel handler
 * ran, which consumer's vote decided a cancellation, and how many of a promise's open votes are still open or were cast.
 */

/* Conjunctions over every promise and every entry. */
#if NP == 1
#define FORALL_P(f) (f(0))
#define FORALL_P_ARG(f, c) (f(c, 0))
#elif NP == 2
#define FORALL_P(f) (f(0) && f(1))
#define FORALL_P_ARG(f, c) (f(c, 0) && f(c, 1))
#elif NP == 3
#define FORALL_P(f) (f(0) && f(1) && f(2))
#define FORALL_P_ARG(f, c) (f(c, 0) && f(c, 1) && f(c, 2))
#elif NP == 4
#define FORALL_P(f) (f(0) && f(1) && f(2) && f(3))
#define FORALL_P_ARG(f, c) (f(c, 0) && f(c, 1) && f(c, 2) && f(c, 3))
#elif NP == 5
#define FORALL_P(f) (f(0) && f(1) && f(2) && f(3) && f(4))
#define FORALL_P_ARG(f, c) (f(c, 0) && f(c, 1) && f(c, 2) && f(c, 3) && f(c, 4))
#elif NP == 6
#define FORALL_P(f) (f(0) && f(1) && f(2) && f(3) && f(4) && f(5))
#define FORALL_P_ARG(f, c) (f(c, 0) && f(c, 1) && f(c, 2) && f(c, 3) && f(c, 4) && f(c, 5))
#elif NP == 7
#define FORALL_P(f) (f(0) && f(1) && f(2) && f(3) && f(4) && f(5) && f(6))
#define FORALL_P_ARG(f, c) (f(c, 0) && f(c, 1) && f(c, 2) && f(c, 3) && f(c, 4) && f(c, 5) && f(c, 6))
#elif NP == 8
#define FORALL_P(f) (f(0) && f(1) && f(2) && f(3) && f(4) && f(5) && f(6) && f(7))
#define FORALL_P_ARG(f, c) (f(c, 0) && f(c, 1) && f(c, 2) && f(c, 3) && f(c, 4) && f(c, 5) && f(c, 6) && f(c, 7))
#endif
#if NE == 1
#define FORALL_E(f) (f(0))
#elif NE == 2
#define FORALL_E(f) (f(0) && f(1))
#elif NE == 3
#define FORALL_E(f) (f(0) && f(1) && f(2))
#elif NE == 4
#define FORALL_E(f) (f(0) && f(1) && f(2) && f(3))
#elif NE == 5
#define FORALL_E(f) (f(0) && f(1) && f(2) && f(3) && f(4))
#elif NE == 6
#define FORALL_E(f) (f(0) && f(1) && f(2) && f(3) && f(4) && f(5))
#elif NE == 7
#define FORALL_E(f) (f(0) && f(1) && f(2) && f(3) && f(4) && f(5) && f(6))
#elif NE == 8
#define FORALL_E(f) (f(0) && f(1) && f(2) && f(3) && f(4) && f(5) && f(6) && f(7))
#endif

#include "CancellationState.pml"

/* Box results */
#define NONE          0
#define VALUE         1
#define ERR           2
#define CANCELLED_BOX 3

/* What a box's handler (a delivery) does with the result: a link's step (`map`, ...), skipped if the link is
   resolved already (runUnlessResolved); a `then` link's step, whose body returns a cancellable promise; following
   (LinkSink.follow's pipe, an autoCancel combinator's core). */
#define D_STEP   1
#define D_THEN   2
#define D_FOLLOW 3

/* Work items on a thread's stack: kind << 8 | a << 4 | b */
#define I_CANCEL         1  /* a: promise, b: reason   CancelHandle.cancel */
#define I_CAST           2  /* a: vote entry, b: reason Vote.cast */
#define I_WITHDRAW       3  /* a: vote entry           Vote.deinit */
#define I_HANDLER        4  /* a: promise, b: reason   the promise's cancel handler */
#define I_REJECT_BOX     5  /* a: promise, b: reason   rejectBox, after an autoCancel combinator's inputs */
#define I_RESOLVE_BOX    6  /* a: promise, b: result   Box.resolve, after an autoCancel combinator's inputs */
#define I_DELIVER        7  /* a: delivery, b: result  a box's handler */
#define I_RESOLVE        8  /* a: promise, b: result   LinkSink.resolve */
#define I_RELEASE_HOLDER 9  /* a: promise              CancellablePromise.deinit */
#define I_PIPE           10 /* a: promise, b: delivery Box.pipe: register a handler */

#define DEPTH 10

/* Boxes (PromiseCore's Box, one per promise): the result, the reason of a cancellation rejection, the handlers. */
byte box[NP];
byte boxReason[NP];
short watchers[NP];

/* The graph: what each entry is (an action is its promise's cancel handler; a vote is on `entryPromise`), where
   each delivery goes and how, and for a `then` link, the promise its body returns, the link's vote on it and the
   delivery that follows it. */
byte entryPromise[NE];
byte entryOwner[NE];    /* whose callbacks hold the entry */
byte deliverTo[ND];
byte deliverKind[ND];
byte thenInner[NP];
byte innerVote[NP];
byte innerDelivery[NP];
short inputsOf[NP];     /* an autoCancel combinator's inputs, for rule 10 */
bool created[NP];       /* a promise a `then` body returns exists once the body has run */
bool bodyDone[NP];      /* the `then` link's step ran or was skipped */

/* The locks of the cancellation states: 0 when free, else the owning thread + 1. */
byte lockedBy[NP];

/* Ghosts */
bool hasHandler[NP];
byte handlerRuns[NP];
byte cancelledBy[NP];   /* when a cast vote decided the cancellation: the consumer whose vote it was, + 1 */
byte ghostOpen[NP];     /* votes opened while pending and not closed yet */
byte ghostCast[NP];     /* votes cast while pending */
bool started;           /* the graph is set up (scenarios' witnesses look only from there on) */
byte finished;

#define isAction(e) (((1 << (e)) & ACTIONS) != 0)

#define push(k, a, b) \
    assert(sp < DEPTH); \
    stack[sp] = ((k) << 8) | ((a) << 4) | (b); \
    sp++

#define THREAD_LOCALS \
    short stack[DEPTH]; byte sp; short item; byte kind, a, b; \
    byte act, ar, ract, aact, q, e, i, held; short out, w; bool open, wasOpen, wasPending, skip_

/* Prints, in a replayed counterexample (`spin -t -B`), the state a lock-held decision left and the action. */
#define traceDecision(p, act) \
    printf("T%d   p%d: phase %d, openVotes %d, holders %d, reason %d -> action %d\n", \
        me, p, phase[p], openVotes[p], holders[p], reason[p], act)

/* A cancellation decision was just made under the lock (CancelAction .cancel or .cancelInputsThenReject). */
#define decidedCancel(act) ((act) == C_CANCEL || (act) == C_CANCEL_INPUTS_THEN_REJECT)

/* Shared work (the Guarantees' Shared work rule), at every step: a promise still pending never has every vote
   closed with one cast (a withdrawal never loses a cast); and a cancellation by votes needs exactly that. */
#define sharedWorkHolds(p) (!(phase[p] == PENDING && ghostOpen[p] == 0 && ghostCast[p] > 0))

/* Exactly one outcome, and the one the state machine decided: a promise that resolved never holds its own
   cancellation; one that was cancelled holds nothing else; the box and the state agree on the reason. */
#define oneOutcome(p) \
    (!(phase[p] == RESOLVED && box[p] == CANCELLED_BOX) && \
     !(phase[p] == CANCELLED && (box[p] == VALUE || box[p] == ERR)) && \
     (box[p] != CANCELLED_BOX || boxReason[p] == reason[p]))

/* Once every thread has finished: nothing is left pending, no callback or box handler is left registered, no
   vote is left open, every box holds the state's outcome, and the cancel handler ran iff a cancel won. */
#define settled(p) \
    (!created[p] || \
     (phase[p] != PENDING && callbacks[p] == 0 && watchers[p] == 0 && \
      (phase[p] != CANCELLED || box[p] == CANCELLED_BOX) && (phase[p] != RESOLVED || box[p] == VALUE || box[p] == ERR) && \
      handlerRuns[p] == (phase[p] == CANCELLED && hasHandler[p])))
#define closed(e) (!voteOpen[e] || isAction(e))

/* Rule 10, checked when an autoCancel combinator's box is resolved or rejected: each input is decided, and each
   loser — an input the combinator's own vote cancelled — has had its cancel handler run. (An input cancelled some
   other way, the input that decided the race say, or one another thread is cancelling at that instant, runs its
   handler on its own canceller's thread: the documented exception.) */
#define loserStopped(c, i) \
    ((inputsOf[c] & (1 << (i))) == 0 || \
     (phase[i] != PENDING && (cancelledBy[i] != (c) + 1 || handlerRuns[i] == hasHandler[i])))

/* What a box's handler receives from a box resolved with `v`: its own cancellation reaches it as a rejection. */
#define handlerResult(v) ((v) == CANCELLED_BOX -> ERR : (v))

/* Resolves box `p` with `v` (first wins) and queues its handlers. */
inline resolveBox(p, v, r) {
    atomic {
        if
        :: box[p] == NONE ->
            /* The box is resolved only with what the state machine decided. */
            assert(v != CANCELLED_BOX || phase[p] == CANCELLED);
            assert(v == CANCELLED_BOX || phase[p] == RESOLVED);
            assert(FORALL_P_ARG(loserStopped, p));
            box[p] = v;
            boxReason[p] = r;
            w = watchers[p];
            watchers[p] = 0
        :: else -> w = 0
        fi
    }
    /* Its handlers run next (first the lowest delivery), with the result a handler sees. */
    i = ND;
    do
    :: i > 0 ->
        i--;
        if
        :: (w & (1 << i)) != 0 -> push(I_DELIVER, i, handlerResult(v))
        :: else -> skip
        fi
    :: else -> break
    od
}

/* CancelPropagation.run: the callbacks run next, in the order they were added, each with `r`. */
inline pushCallbacks(cbs, r) {
    i = NE;
    do
    :: i > 0 ->
        i--;
        if
        :: (cbs & (1 << i)) != 0 && isAction(i) -> push(I_HANDLER, entryPromise[i], r)
        :: (cbs & (1 << i)) != 0 && !isAction(i) -> push(I_CAST, i, r)
        :: else -> skip
        fi
    :: else -> break
    od
}

/* Callbacks released uncalled (the release loop): each vote's deinit withdraws it; an action is just freed. */
inline pushReleased(cbs) {
    i = NE;
    do
    :: i > 0 ->
        i--;
        if
        :: (cbs & (1 << i)) != 0 && !isAction(i) -> push(I_WITHDRAW, i, 0)
        :: else -> skip
        fi
    :: else -> break
    od
}

/* LockedCancellationState.carryOut(_: CancelAction, reason:) */
inline carryOutCancel(p, act, ar, out) {
    if
    :: act == C_CANCEL ->
        pushCallbacks(out, ar);
        resolveBox(p, CANCELLED_BOX, ar)
    :: act == C_CANCEL_INPUTS_THEN_REJECT ->
        push(I_REJECT_BOX, p, ar);
        pushCallbacks(out, ar)
    :: act == C_ALREADY_CANCELLED -> resolveBox(p, CANCELLED_BOX, ar)
    :: else -> skip
    fi
}

/* LockedCancellationState.carryOut(_: ReleaseAction) */
inline carryOutRelease(p, ract, act, ar, out) {
    if
    :: ract == R_CANCEL -> carryOutCancel(p, act, ar, out)
    :: ract == R_ORPHANED -> pushReleased(out)
    :: else -> skip
    fi
}

/* CancelHandle.cancel(reason:): decide under the lock, carry out after it. */
#ifdef MUTANT_CARRY_OUT_CANCEL
#include MUTATION
#else
inline doCancel(p, r) {
    atomic {
        lockedBy[p] == 0 -> cancel(p, r, act, ar, out);
        traceDecision(p, act)
    }
    carryOutCancel(p, act, ar, out)
}
#endif

/* Vote.cast */
inline doCast(e, r) {
    q = entryPromise[e];
    atomic {
        lockedBy[q] == 0 -> wasOpen = voteOpen[e]; wasPending = (phase[q] == PENDING);
        castVote(q, e, r, act, ar, out);
        traceDecision(q, act);
        if :: wasOpen && wasPending -> ghostOpen[q]--; ghostCast[q]++ :: else -> skip fi;
        if
        :: decidedCancel(act) && wasPending ->
            cancelledBy[q] = entryOwner[e] + 1; assert(ghostOpen[q] == 0 && ghostCast[q] > 0)
        :: else -> skip
        fi;
        assert(sharedWorkHolds(q))
    }
    carryOutCancel(q, act, ar, out)
}

/* Vote.deinit */
inline doWithdraw(e) {
    q = entryPromise[e];
    atomic {
        lockedBy[q] == 0 -> wasOpen = voteOpen[e]; wasPending = (phase[q] == PENDING);
        withdrawVote(q, e, ract, act, ar, out);
        traceDecision(q, ract);
        if :: wasOpen && wasPending -> ghostOpen[q]-- :: else -> skip fi;
        if
        :: ract == R_CANCEL && decidedCancel(act) ->
            assert(ghostOpen[q] == 0 && ghostCast[q] > 0)
        :: else -> skip
        fi;
        assert(sharedWorkHolds(q))
    }
    carryOutRelease(q, ract, act, ar, out)
}

/* CancellablePromise.deinit (or a CancelHold's) */
inline doReleaseHolder(p) {
    atomic { lockedBy[p] == 0 -> releaseHolder(p, ract, out); traceDecision(p, ract) }
    carryOutRelease(p, ract, 0, NOREASON, out)
}

/* LinkSink.resolve */
inline doResolve(p, v) {
    atomic { lockedBy[p] == 0 -> resolve(p, act, out); traceDecision(p, act) }
    if
    :: act == RS_RESOLVE ->
        pushReleased(out);   /* released after the box is resolved */
        resolveBox(p, v, NOREASON)
    :: act == RS_CANCEL_INPUTS_THEN_RESOLVE ->
        push(I_RESOLVE_BOX, p, v);
        pushCallbacks(out, LOSTRACE)
    :: else -> skip
    fi
}

/* The user's cancel handler: runs with no lock held, once, for a promise that was cancelled. */
inline doHandler(p, r) {
    atomic {
        assert(held == 0);
        assert(phase[p] == CANCELLED && r == reason[p]);
        handlerRuns[p]++;
        assert(handlerRuns[p] == 1)
    }
}

/* Box.pipe: registers delivery `d` on box `p`, or runs it at once if the box is resolved. */
inline doPipe(p, d) {
    atomic {
        if
        :: box[p] == NONE -> watchers[p] = watchers[p] | (1 << d); w = NONE
        :: else -> w = handlerResult(box[p])
        fi
    }
    if :: w != NONE -> push(I_DELIVER, d, w) :: else -> skip fi
}

/* A `then` link's body returns the promise `i`, which the link follows (LinkSink.follow): a vote on it, stored in
   the link's callbacks (cast at once if the link is cancelled already), then a handler on its box; the body's
   reference to it is released last. */
inline runThenBody(q) {
    atomic { created[thenInner[q]] = true }
    e = innerVote[q];
    atomic {
        lockedBy[thenInner[q]] == 0 -> addVote(thenInner[q], open); voteOpen[e] = open;
        if :: open -> ghostOpen[thenInner[q]]++ :: else -> skip fi
    }
    atomic { lockedBy[q] == 0 -> add(q, e, aact, ar) }
    push(I_RELEASE_HOLDER, thenInner[q], 0);
    push(I_PIPE, thenInner[q], innerDelivery[q]);
    if
    :: aact == A_RUN_NOW -> push(I_CAST, e, ar)
    :: aact == A_DISCARD -> push(I_WITHDRAW, e, 0)
    :: else -> skip
    fi
}

/* A box's handler: the link's step (chain, LinkStep.runUnlessResolved) or a follower's resolve. */
inline doDeliver(d, v) {
    q = deliverTo[d];
    if
    :: deliverKind[d] == D_FOLLOW -> push(I_RESOLVE, q, v)
    :: deliverKind[d] == D_STEP || (deliverKind[d] == D_THEN && v == VALUE) ->
        atomic { skip_ = (box[q] != NONE) }
        if
        :: skip_ -> skip
        :: !skip_ && deliverKind[d] == D_STEP -> push(I_RESOLVE, q, v)
        :: !skip_ && deliverKind[d] == D_THEN -> runThenBody(q)
        fi;
        if :: deliverKind[d] == D_THEN -> bodyDone[q] = true :: else -> skip fi
    :: deliverKind[d] == D_THEN && v != VALUE ->
        /* A rejection passes a `then` step straight through. */
        bodyDone[q] = true;
        push(I_RESOLVE, q, v)
    fi
}

/* Pops and carries out items until the thread's stack is empty. */
inline drain() {
    do
    :: sp > 0 ->
        atomic {
            sp--;
            item = stack[sp];
            stack[sp] = 0;
            kind = item >> 8;
            a = (item >> 4) & 15;
            b = item & 15
        }
        if
        :: kind == I_CANCEL -> printf("T%d cancel p%d (reason %d)\n", me, a, b); doCancel(a, b)
        :: kind == I_CAST -> printf("T%d cast vote e%d on p%d (reason %d)\n", me, a, entryPromise[a], b); doCast(a, b)
        :: kind == I_WITHDRAW -> printf("T%d withdraw vote e%d on p%d\n", me, a, entryPromise[a]); doWithdraw(a)
        :: kind == I_HANDLER -> printf("T%d run p%d's cancel handler (reason %d)\n", me, a, b); doHandler(a, b)
        :: kind == I_REJECT_BOX -> printf("T%d reject p%d's box (reason %d)\n", me, a, b); resolveBox(a, CANCELLED_BOX, b)
        :: kind == I_RESOLVE_BOX -> printf("T%d resolve p%d's box (result %d)\n", me, a, b); resolveBox(a, b, NOREASON)
        :: kind == I_DELIVER -> printf("T%d deliver d%d to p%d (result %d)\n", me, a, deliverTo[a], b); doDeliver(a, b)
        :: kind == I_RESOLVE -> printf("T%d resolve p%d (result %d)\n", me, a, b); doResolve(a, b)
        :: kind == I_RELEASE_HOLDER -> printf("T%d release p%d's holder\n", me, a); doReleaseHolder(a)
        :: kind == I_PIPE -> printf("T%d register d%d on p%d's box\n", me, b, a); doPipe(a, b)
        fi
    :: else -> break
    od
}

/* One operation of a thread's script: the call, and everything it leads to on this thread, before the next. */
#define perform(k, x, y) push(k, x, y); drain()

/* cancel(), as a thread's operation: by the time it returns, a cancellation that won — this one or another
   thread's — has rejected the box (rule 2; an autoCancel combinator that another thread is cancelling is rejected by
   that thread once its inputs are cancelled, rule 10). */
#define cancelReturns(p, r) \
    perform(I_CANCEL, p, r); \
    assert(cancelsInputsOnResolution[p] || phase[p] != CANCELLED || box[p] == CANCELLED_BOX)

/* The last statement of every thread. */
#define done atomic { finished++ }

/* Setting up the graph (in `init`, before any thread starts). */
inline newPromise(p) {
    phase[p] = PENDING; holders[p] = 1
}
/* Link `q` consumes `p` through delivery `d` of kind `kind`, with vote `e` in its callbacks. */
inline link(q, p, e, d, kind) {
    entryPromise[e] = p; entryOwner[e] = q; voteOpen[e] = true; openVotes[p]++; ghostOpen[p]++;
    callbacks[q] = callbacks[q] | (1 << e);
    deliverTo[d] = q; deliverKind[d] = kind; watchers[p] = watchers[p] | (1 << d)
}
/* Promise `p`'s cancel handler is action `e`. */
inline handler(p, e) {
    entryPromise[e] = p; entryOwner[e] = p; callbacks[p] = callbacks[p] | (1 << e); hasHandler[p] = true
}

/* Every thread finished: the end state. */
#define endStateHolds (FORALL_P(settled) && FORALL_E(closed) && FORALL_P(oneOutcome))

bool endOk;

/* The properties every scenario checks as LTL, besides the assertions above: one outcome per promise at every
   step; and every run ends with every thread finished and the end state right (no deadlock, no lost wake-up). */
ltl one_outcome { [] FORALL_P(oneOutcome) }
ltl nothing_left_pending { <> endOk }

proctype Final() {
    finished == NT;
    atomic { assert(endStateHolds); endOk = true }
}
