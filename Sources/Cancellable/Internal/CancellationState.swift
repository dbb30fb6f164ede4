import PromiseCore

/// The cancellation state machine of one ``CancellablePromise``: the single place where a cancel racing a
/// resolution is decided (SPEC §5.3).
///
/// A pure value, in the style of swift-async-algorithms' state machines: each event is a `mutating` method
/// that changes the state and returns an *action* — what the owner must do. The owner calls it under its lock
/// (``LockedCancellationState``) and carries the action out after releasing it: resolving the promise's box,
/// handing the `OnCancel` callbacks to ``CancelPropagation``, or letting released callbacks deallocate (their
/// captures may run arbitrary `deinit`s, which must not run under the lock).
@usableFromInline
struct CancellationState {
    /// What to do when the promise is cancelled: run the user's cancel handler, cancel the upstream link of a
    /// chain, cancel the promise a `then` body returned, cancel a combinator's inputs.
    @usableFromInline
    typealias OnCancel = (CancellationReason) -> Void

    @usableFromInline
    enum State {
        /// Neither cancelled nor resolved; the callbacks run if a cancel comes first.
        case pending
        /// `cancel()` won: the promise is (being) rejected with `CancellablePromiseError(reason:)`.
        case cancelled(CancellationReason)
        /// A result won: cancelling is a no-op from now on.
        case resolved
    }

    @usableFromInline
    enum CancelAction {
        /// This call cancelled the promise: reject it, then run `callbacks`.
        case cancel(OnCancelList)
        /// An earlier call cancelled it, for this reason; make sure the rejection is in place before returning.
        case alreadyCancelled(CancellationReason)
        /// The promise resolved first; nothing to do.
        case alreadyResolved
        /// A consumer cancelled, but others still want the result: nothing to do yet.
        case otherConsumersRemain
    }

    @usableFromInline
    enum ResolveAction {
        /// This result wins: resolve the box with it; `released` is dropped after the lock is released.
        case resolve(released: OnCancelList)
        /// The promise was cancelled or resolved already; drop the result.
        case ignore
    }

    @usableFromInline
    enum AddAction {
        /// Kept; it runs if the promise is cancelled while pending.
        case stored
        /// The promise is already cancelled, for this reason: run the callback now.
        case runNow(CancellationReason)
        /// The promise resolved: the callback will never be needed.
        case discard
    }

    @usableFromInline
    var state: State
    /// The callbacks, while pending; moved out when the state leaves `pending`.
    @usableFromInline
    var callbacks: OnCancelList
    /// How many downstream consumers that can cancel this promise have attached (links, followers,
    /// `autoCancel` combinators), and how many of them have cancelled. A consumer's cancellation cancels the
    /// promise only once every consumer attached so far has cancelled.
    @usableFromInline
    var consumers: UInt32
    @usableFromInline
    var cancelledConsumers: UInt32

    @inlinable
    init(callbacks: OnCancelList = OnCancelList()) {
        state = .pending
        self.callbacks = callbacks
        consumers = 0
        cancelledConsumers = 0
    }

    /// Why the promise was cancelled, if `cancel()` won.
    @inlinable
    var cancellationReason: CancellationReason? {
        if case .cancelled(let reason) = state { return reason }
        return nil
    }

    /// Whether `cancel()` won.
    @inlinable
    var isCancelled: Bool {
        cancellationReason != nil
    }

    /// Counts a new consumer that may later cancel through ``consumerCancelled(reason:)``.
    @inlinable
    mutating func addConsumer() {
        if case .pending = state {
            consumers &+= 1
        }
    }

    /// One consumer cancelled: cancels the promise if it was the last one still wanting the result.
    @inlinable
    mutating func consumerCancelled(reason: CancellationReason) -> CancelAction {
        guard case .pending = state else { return cancel(reason: reason) }
        cancelledConsumers &+= 1
        guard cancelledConsumers >= consumers else { return .otherConsumersRemain }
        return cancel(reason: reason)
    }

    @inlinable
    mutating func cancel(reason: CancellationReason) -> CancelAction {
        switch state {
        case .pending:
            state = .cancelled(reason)
            return .cancel(takeCallbacks())
        case .cancelled(let reason):
            return .alreadyCancelled(reason)
        case .resolved:
            return .alreadyResolved
        }
    }

    @inlinable
    mutating func resolve() -> ResolveAction {
        switch state {
        case .pending:
            state = .resolved
            return .resolve(released: takeCallbacks())
        case .cancelled, .resolved:
            return .ignore
        }
    }

    @inlinable
    mutating func add(_ callback: @escaping OnCancel) -> AddAction {
        switch state {
        case .pending:
            callbacks.append(callback)
            return .stored
        case .cancelled(let reason):
            return .runNow(reason)
        case .resolved:
            return .discard
        }
    }

    /// Moves the callbacks out (a move: no retain and release of each).
    @inlinable
    mutating func takeCallbacks() -> OnCancelList {
        var taken = OnCancelList()
        swap(&taken, &callbacks)
        return taken
    }
}

/// A cancellable promise's `OnCancel` callbacks, in the order they were added. Most promises have one (the
/// user's cancel handler, or a link's "cancel my upstream"), stored inline: no array is allocated for it.
@usableFromInline
struct OnCancelList {
    @usableFromInline
    var first: CancellationState.OnCancel?
    @usableFromInline
    var rest: [CancellationState.OnCancel]

    @inlinable
    init() {
        first = nil
        rest = []
    }

    @inlinable
    init(_ callback: @escaping CancellationState.OnCancel) {
        first = callback
        rest = []
    }

    @inlinable
    var isEmpty: Bool { first == nil }

    @inlinable
    mutating func append(_ callback: @escaping CancellationState.OnCancel) {
        if first == nil {
            first = callback
        } else {
            rest.append(callback)
        }
    }
}

/// The cancellation state of one ``CancellablePromise`` behind its own lock: what cancel actions elsewhere
/// hold (through a ``CancelHandle``), what result sinks decide through (``LinkSink``).
///
/// Its deinit keeps release stack-safe: a pending state still holds its callbacks, and a link's callback
/// holds the upstream link's state, whose callbacks hold the next one up, and so on. Dropping the last
/// downstream link of a long pending chain would release them by nested deinits, one per link; the
/// callbacks are handed to PromiseCore's release loop instead.
@usableFromInline
final class LockedCancellationState: @unchecked Sendable {
    // @unchecked Sendable: `state` is only touched through `withLock` (and by deinit, the only owner left).
    @usableFromInline
    let lock: PromiseLock
    /// Only touched under `lock`, which already makes every access exclusive: the run-time exclusivity check
    /// is skipped.
    @usableFromInline
    @exclusivity(unchecked)
    var state: CancellationState

    @inlinable
    init(_ state: CancellationState) {
        lock = PromiseLock()
        self.state = state
    }

    /// Runs `body` with the state machine, under the lock. `body` must not run user code.
    @inlinable
    func withLock<Value>(_ body: (inout CancellationState) -> Value) -> Value {
        lock.withLock { body(&state) }
    }

    deinit {
        if !state.callbacks.isEmpty {
            let callbacks = state.takeCallbacks()
            releaseWithoutRecursion(consume callbacks)  // the only reference: a copy kept here would nest
        }
    }
}
