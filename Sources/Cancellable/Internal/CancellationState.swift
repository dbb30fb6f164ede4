/// The cancellation state machine of one ``CancellablePromise``: the single place where a cancel racing a
/// resolution is decided (SPEC §5.3).
///
/// A pure value: each event is a `mutating` method that changes the state and returns what the owner must
/// do. The owner calls it under its lock and carries the decision out after releasing it — resolving the
/// promise's box, running cancel actions, or letting released actions deallocate (their captures may run
/// arbitrary `deinit`s, which must not run under the lock).
struct CancellationState {
    /// Something to do when the promise is cancelled: run the user's cancel handler, cancel the upstream
    /// link of a chain, cancel the promise a `then` body returned, cancel a combinator's inputs.
    typealias Action = (CancellationReason) -> Void

    private enum State {
        /// Neither cancelled nor resolved; the actions run if a cancel comes first.
        case pending(actions: [Action])
        /// `cancel()` won: the promise is (being) rejected with `CancellablePromiseError(reason:)`.
        case cancelled(CancellationReason)
        /// A result won: cancelling is a no-op from now on.
        case resolved
    }

    enum CancelDecision {
        /// This call cancelled the promise: reject it, then run `actions`.
        case cancel(actions: [Action])
        /// An earlier call cancelled it, for this reason; make sure the rejection is in place before returning.
        case alreadyCancelled(CancellationReason)
        /// The promise resolved first; nothing to do.
        case alreadyResolved
        /// A consumer cancelled, but others still want the result: nothing to do yet.
        case otherConsumersRemain
    }

    enum ResolveDecision {
        /// This result wins: resolve the box with it; `released` are dropped after the lock is released.
        case resolve(released: [Action])
        /// The promise was cancelled or resolved already; drop the result.
        case ignore
    }

    enum AddDecision {
        /// Kept; it runs if the promise is cancelled while pending.
        case stored
        /// The promise is already cancelled, for this reason: run the action now.
        case runNow(CancellationReason)
        /// The promise resolved: the action will never be needed.
        case discard
    }

    private var state: State
    /// How many downstream consumers that can cancel this promise have attached (links, followers,
    /// `autoCancel` combinators), and how many of them have cancelled. A consumer's cancellation cancels the
    /// promise only once every consumer attached so far has cancelled.
    private var consumers: UInt32 = 0
    private var cancelledConsumers: UInt32 = 0

    init(actions: [Action] = []) {
        state = .pending(actions: actions)
    }

    /// Why the promise was cancelled, if `cancel()` won.
    var cancellationReason: CancellationReason? {
        if case .cancelled(let reason) = state { return reason }
        return nil
    }

    /// Whether `cancel()` won.
    var isCancelled: Bool {
        cancellationReason != nil
    }

    /// Counts a new consumer that may later cancel through ``consumerCancelled(reason:)``.
    mutating func addConsumer() {
        if case .pending = state {
            consumers &+= 1
        }
    }

    /// One consumer cancelled: cancels the promise if it was the last one still wanting the result.
    mutating func consumerCancelled(reason: CancellationReason) -> CancelDecision {
        guard case .pending = state else { return cancel(reason: reason) }
        cancelledConsumers &+= 1
        guard cancelledConsumers >= consumers else { return .otherConsumersRemain }
        return cancel(reason: reason)
    }

    mutating func cancel(reason: CancellationReason) -> CancelDecision {
        switch state {
        case .pending(let actions):
            state = .cancelled(reason)
            return .cancel(actions: actions)
        case .cancelled(let reason):
            return .alreadyCancelled(reason)
        case .resolved:
            return .alreadyResolved
        }
    }

    mutating func resolve() -> ResolveDecision {
        switch state {
        case .pending(let actions):
            state = .resolved
            return .resolve(released: actions)
        case .cancelled, .resolved:
            return .ignore
        }
    }

    mutating func add(_ action: @escaping Action) -> AddDecision {
        switch state {
        case .pending(var actions):
            // Move the array out of the enum before appending, so it is not copied.
            state = .resolved
            actions.append(action)
            state = .pending(actions: actions)
            return .stored
        case .cancelled(let reason):
            return .runNow(reason)
        case .resolved:
            return .discard
        }
    }
}
