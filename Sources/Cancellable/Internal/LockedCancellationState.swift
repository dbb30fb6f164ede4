import PromiseCore

/// The cancellation state of one ``CancellablePromise`` behind its own lock: what cancel actions elsewhere
/// hold (through a ``CancelHandle``), what result sinks decide through (``LinkSink``).
///
/// Its deinit keeps release stack-safe: a pending state still holds its callbacks, and a link's callback
/// holds the upstream link's state, whose callbacks hold the next one up, and so on. Dropping the last
/// downstream link of a long pending chain would release them by nested deinits, one per link; the
/// callbacks are handed to PromiseCore's release loop instead.
///
/// It is also its box's arbiter: the box (an `ArbitratedPromise`) holds it, so that a resolver is the box alone and a
/// chain link's handler captures one object; results that a resolver delivers come here to be decided.
@usableFromInline
final class LockedCancellationState: _ResolutionArbiter, @unchecked Sendable {
    // @unchecked Sendable: `state` is only touched through `withLock` (and by deinit, the only owner left).
    /// The first stored property (its root class, `_ResolutionArbiter`, has none): on Darwin, ``PromiseLock``
    /// finds its lock word there.
    @usableFromInline
    let lock: PromiseLock
    /// Only touched under `lock`, which already makes every access exclusive: the run-time exclusivity check
    /// is skipped.
    @usableFromInline
    @exclusivity(unchecked)
    var state: CancellationState

    /// The promise's box, to reject it on cancel when the cancel comes from something that does not hold the box —
    /// a vote, a ``CancelHold``; weak: callbacks downstream hold this state, and a box leads to them through its
    /// handlers (and the box holds this state).
    ///
    /// Made only when such a canceller is made (``addVote(referencing:inline:)``, ``addHolder(referencing:)``): a
    /// weak reference gives the box a side table — one more allocation, and every retain of the box then takes the
    /// runtime's slow path —, and most promises are never voted on (the last link of a chain, a combinator's
    /// result). Their own object passes the box to ``carryOut(_:reason:box:)``. Written under the lock, and only
    /// while the promise is pending; read by ``carryOut(_:reason:box:)`` only after the lock decided a
    /// cancellation, so after every write: the run-time exclusivity check is skipped.
    @usableFromInline
    @exclusivity(unchecked)
    weak var box: AnyObject?
    /// Rejects `box` with a cancellation. Made where `T` is known (specialised in the client, it captures nothing
    /// and allocates nothing), so that votes, which do not know `T`, reject without generic metadata.
    @usableFromInline
    let rejectBox: (AnyObject, CancellationReason) -> Void

    @inlinable
    init(
        callbacks: consuming OnCancelList,
        cancelsInputsOnResolution: Bool,
        rejectBox: @escaping (AnyObject, CancellationReason) -> Void
    ) {
        lock = PromiseLock()
        // Made in place, not passed in: a state passed in is copied field by field (an outlined value-witness
        // copy, then the destruction of the original), on every cancellable promise.
        state = CancellationState(callbacks: callbacks, cancelsInputsOnResolution: cancelsInputsOnResolution)
        self.rejectBox = rejectBox
        super.init()
    }

    /// A result from the box's resolver: it resolves the box unless the promise was cancelled or resolved already.
    @inlinable
    override func _resolve<T>(_ promise: Promise<T>, with result: Result<T>) {
        LinkSink(box: promise, state: self).resolve(result, inHandler: false)
    }

    /// Makes ``box`` refer to `box`, unless it does already; under the lock, while pending.
    @inlinable
    func referenceBoxUnderLock(_ box: AnyObject) {
        if self.box == nil { self.box = box }
    }

    /// Counts a consumer's vote — in the state's own slot if `inline` and the slot is free (see
    /// ``CancellationState/addInlineVote()``) — and, while the promise is pending, makes sure the state can reach
    /// `box` when the vote is cast.
    ///
    /// - Returns: whether the vote is in the slot, and whether it is open.
    @inlinable
    func addVote(referencing box: AnyObject, inline: Bool) -> (isInline: Bool, isOpen: Bool) {
        lock.withLock(in: self) {
            guard state.phase == .pending else { return (false, false) }
            referenceBoxUnderLock(box)
            if inline, state.addInlineVote() { return (true, true) }
            return (false, state.addVote())
        }
    }

    /// Counts a holder (a ``CancelHold``) and, while the promise is pending, makes sure the state can reach `box`
    /// when the holder cancels.
    ///
    /// - Returns: whether the hold counts (the promise is pending).
    @inlinable
    func addHolder(referencing box: AnyObject) -> Bool {
        lock.withLock(in: self) {
            guard state.addHolder() else { return false }
            referenceBoxUnderLock(box)
            return true
        }
    }

    /// Runs `body` with the state machine, under the lock. `body` must not run user code.
    @inlinable
    func withLock<Value>(_ body: (inout CancellationState) -> Value) -> Value {
        lock.withLock(in: self) { body(&state) }
    }

    /// Carries out what the state machine decided: a cancellation rejects the box now and hands the callbacks
    /// to the thread's ``CancelPropagation`` loop (which calls them now, unless this is itself one of them).
    ///
    /// - Parameter box: the promise's box, from a caller that holds it (the promise's own object); `nil` from a
    ///   vote or a hold, which reach it through ``box``.
    /// - Returns: whether this call cancelled the promise.
    @inlinable
    func carryOut(
        _ action: CancellationState.CancelAction,
        reason: CancellationReason,
        box heldBox: AnyObject? = nil
    ) -> Bool {
        switch action {
        case .cancel(let callbacks):
            if let box = heldBox ?? box { rejectBox(box, reason) }
            CancelPropagation.current.run(callbacks, reason: reason)
            return true
        case .cancelInputsThenReject(let votes):
            let box = heldBox ?? box
            CancelPropagation.current.run(votes, reason: reason) { [self] reason in
                if let box { rejectBox(box, reason) }
            }
            return true
        case .alreadyCancelled(let winningReason):
            // Another thread won and may not have rejected the box yet; the outcome must be decided before
            // this call returns too. Resolving twice is harmless: the first resolution wins.
            if let box = heldBox ?? box { rejectBox(box, winningReason) }
            return false
        case .alreadyResolved, .otherVotesOpen, .voteClosed, .inputsBeingCancelled:
            return false
        }
    }

    /// Casts the vote kept in this state's own slot (``OnCancelEntry/inlineVote(_:)``), as ``Vote/cast(_:)`` does.
    @inlinable
    func castInlineVote(_ reason: CancellationReason) {
        let action = withLock { $0.castInlineVote(reason: reason) }
        _ = carryOut(action, reason: reason)
    }

    /// Withdraws the vote kept in this state's own slot, as a ``Vote``'s deinit does, except for one thing: what
    /// an orphaned promise lets go of is returned, for the caller's loop
    /// (``OnCancelList/releaseUncastWithoutRecursion()``), not released here.
    @inlinable
    func withdrawInlineVote() -> OnCancelList? {
        let action = withLock { $0.withdrawInlineVote() }
        switch consume action {
        case .none:
            return nil
        case .cancel(let cancelAction, let reason):
            _ = carryOut(cancelAction, reason: reason)
            return nil
        case .orphaned(let entries):
            return entries
        }
    }

    /// Carries out what a withdrawn vote or a released holder led to (rare: not inlined). The caller hands over
    /// its only reference (`consume`): orphaned callbacks go to the release loop whole, so that what they release
    /// in turn (the votes upstream) is released by the loop, not by nested deinits.
    @usableFromInline
    func carryOut(_ action: consuming CancellationState.ReleaseAction) {
        if case .none = action { return }
        if case .cancel(let cancelAction, let reason) = action {
            _ = carryOut(cancelAction, reason: reason)
            return
        }
        guard case .orphaned(let entries) = consume action else { return }
        (consume entries).releaseUncastWithoutRecursion()
    }

    deinit {
        if !state.callbacks.isEmpty {
            let callbacks = state.takeCallbacks()
            // The only reference: a copy kept here would be released after the loop, nested.
            (consume callbacks).releaseUncastWithoutRecursion()
        }
    }
}
