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
    typealias Action = () -> Void

    private enum State {
        /// Neither cancelled nor resolved; the actions run if a cancel comes first.
        case pending(actions: [Action])
        /// `cancel()` won: the promise is (being) rejected with `CancellablePromiseError.cancelled`.
        case cancelled
        /// A result won: cancelling is a no-op from now on.
        case resolved
    }

    enum CancelDecision {
        /// This call cancelled the promise: reject it, then run `actions`.
        case cancel(actions: [Action])
        /// An earlier call cancelled it; make sure the rejection is in place before returning.
        case alreadyCancelled
        /// The promise resolved first; nothing to do.
        case alreadyResolved
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
        /// The promise is already cancelled: run the action now.
        case runNow
        /// The promise resolved: the action will never be needed.
        case discard
    }

    private var state: State

    init(actions: [Action] = []) {
        state = .pending(actions: actions)
    }

    /// Whether `cancel()` won.
    var isCancelled: Bool {
        if case .cancelled = state { return true }
        return false
    }

    mutating func cancel() -> CancelDecision {
        switch state {
        case .pending(let actions):
            state = .cancelled
            return .cancel(actions: actions)
        case .cancelled:
            return .alreadyCancelled
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
        case .cancelled:
            return .runNow
        case .resolved:
            return .discard
        }
    }
}
