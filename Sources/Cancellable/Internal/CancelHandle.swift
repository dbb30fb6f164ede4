import PromiseCore

/// Cancels a cancellable promise without keeping it alive: its state machine, which rejects the box (held weakly)
/// on cancel.
///
/// `OnCancel` callbacks (a link's vote on its upstream, a combinator's votes on its inputs, "cancel the promise my
/// body returned") hold states, never promises or boxes. Boxes hold handlers that deliver results downstream; if
/// callbacks held boxes too, an abandoned pending graph would be a cycle that never frees. If the box is gone,
/// nobody can observe the promise any more, but its callbacks still run. Not generic: the state rejects the box
/// through a function made where `T` is known.
@usableFromInline
struct CancelHandle {
    @usableFromInline
    let state: LockedCancellationState

    @inlinable
    init(state: LockedCancellationState) {
        self.state = state
    }

    /// Cancels the promise, whoever else consumes it. `box` is the promise's box, from a caller that holds it;
    /// without it the state must reach the box itself (see ``LockedCancellationState/box``).
    @inlinable
    @discardableResult
    func cancel(reason: CancellationReason = .user, box: AnyObject? = nil) -> Bool {
        state.carryOut(state.withLock { $0.cancel(reason: reason) }, reason: reason, box: box)
    }

    /// Opens a vote for a consumer that may cancel this promise (a link downstream, a promise following it, a
    /// timeout, an `autoCancel` combinator): casting it cancels the promise once every vote opened so far has been
    /// cast or withdrawn, at least one cast; releasing it uncast withdraws it (Docs/Design/0003, "Reasons and
    /// votes").
    ///
    /// `box` is the promise's box: the state keeps a weak reference to it, to reject it when the vote is cast.
    @inlinable
    func addVote(referencing box: AnyObject) -> Vote {
        Vote(on: state, isOpen: state.addVote(referencing: box, inline: false).isOpen)
    }

    /// Opens a vote as ``addVote()`` does, as an entry for the consumer's callbacks: the vote kept in the state's
    /// own slot (``OnCancelEntry/inlineVote(_:)``, no object) if this is the first consumer to vote, a ``Vote``
    /// otherwise. Only for a consumer that keeps its vote in its cancel callbacks and nowhere else: those are
    /// released through ``OnCancelList/releaseUncast()`` or ``OnCancelList/releaseUncastWithoutRecursion()``,
    /// which withdraw an inline vote.
    @inlinable
    func addVoteEntry(referencing box: AnyObject) -> OnCancelEntry {
        let (isInline, isOpen) = state.addVote(referencing: box, inline: true)
        return isInline ? .inlineVote(state) : .vote(Vote(on: state, isOpen: isOpen))
    }

    /// Runs `callback` if the promise is cancelled while pending, at once if it is cancelled already.
    @inlinable
    func add(_ callback: @escaping CancellationState.OnCancel) {
        if case .runNow(let reason) = state.withLock({ $0.add(.action(callback)) }) {
            callback(reason)
        }
    }
}

/// What a ``CancelScope`` or a ``CancellableFinalizer`` holds to cancel a promise directly. While it lives, the
/// promise counts as held — it can still be cancelled — like a promise whose object someone holds; unlike the
/// object, it does not keep the promise's box (and the handlers, and what they capture) alive.
final class CancelHold {
    let handle: CancelHandle
    private let counted: Bool

    init<T>(_ promise: CancellablePromise<T>) {
        handle = promise.handle
        counted = handle.state.addHolder(referencing: promise.promise)
    }

    /// Cancels the promise, whoever else consumes it.
    @discardableResult
    func cancel(reason: CancellationReason) -> Bool {
        handle.cancel(reason: reason)
    }

    deinit {
        guard counted else { return }
        let state = handle.state
        let action = state.withLock { $0.releaseHolder() }
        state.carryOut(consume action)
    }
}

/// A consumer's say in cancelling an upstream promise. Casting it (``cast(_:)``) counts the consumer as
/// cancelled; releasing it uncast withdraws it, as if the consumer had never attached — unless every other
/// vote was cast, in which case the upstream promise is cancelled then.
///
/// A link's vote on its upstream lives in the link's cancel callbacks, so it is released — withdrawn — when the
/// link resolves or when the link is orphaned (nobody can cancel it any more: its object released, and every
/// vote on it closed): an orphaned branch does not keep shared work alive. Not generic: casting and withdrawing
/// need no generic metadata (the state rejects its box through a function made where `T` is known).
@usableFromInline
final class Vote {
    @usableFromInline
    let state: LockedCancellationState
    /// Whether the vote is open: counted, neither cast nor withdrawn. Only touched under the upstream state's
    /// lock, by the state machine (``CancellationState/castVote(_:reason:)``,
    /// ``CancellationState/withdrawVote(_:)``), which already makes every access exclusive: the run-time
    /// exclusivity check is skipped.
    @usableFromInline
    @exclusivity(unchecked)
    var isOpen: Bool

    @inlinable
    init(on state: LockedCancellationState, isOpen: Bool) {
        self.state = state
        self.isOpen = isOpen
    }

    /// Counts this consumer as cancelled, for `reason`; the upstream promise is cancelled if it was the last.
    @inlinable
    func cast(_ reason: CancellationReason) {
        let action = state.withLock { $0.castVote(&isOpen, reason: reason) }
        _ = state.carryOut(action, reason: reason)
    }

    deinit {
        let action = state.withLock { $0.withdrawVote(&isOpen) }
        state.carryOut(consume action)
    }
}
