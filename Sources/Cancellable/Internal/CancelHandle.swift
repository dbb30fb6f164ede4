import PromiseCore

/// Cancels a cancellable promise without keeping it alive: the state machine strongly, the box weakly.
///
/// `OnCancel` callbacks (a link's "cancel my upstream", a combinator's "cancel my inputs", "cancel the promise
/// my body returned") hold handles, never promises or boxes. Boxes hold handlers that deliver results
/// downstream; if callbacks held boxes too, an abandoned pending graph would be a cycle that never frees.
/// If the box is gone, nobody can observe the promise any more, but its callbacks still run.
@usableFromInline
struct CancelHandle<T> {
    @usableFromInline
    let state: LockedCancellationState
    @usableFromInline
    weak var box: Promise<T>?

    @inlinable
    init(state: LockedCancellationState, box: Promise<T>) {
        self.state = state
        self.box = box
    }

    /// Cancels the promise, whoever else consumes it.
    @inlinable
    @discardableResult
    func cancel(reason: CancellationReason = .user) -> Bool {
        carryOut(state.withLock { $0.cancel(reason: reason) }, reason: reason)
    }

    /// Counts a consumer that may cancel this promise (a link downstream, a promise following it, an
    /// `autoCancel` combinator) and returns what that consumer calls, at most once, to cancel: the promise
    /// is cancelled when every consumer counted so far has cancelled (Docs/Design/0003, "Several consumers").
    @inlinable
    func addConsumer() -> CancellationState.OnCancel {
        state.withLock { $0.addConsumer() }
        return { reason in
            _ = self.carryOut(self.state.withLock { $0.consumerCancelled(reason: reason) }, reason: reason)
        }
    }

    /// Carries out what the state machine decided: a cancellation rejects the box now and hands the callbacks
    /// to the thread's ``CancelPropagation`` loop (which calls them now, unless this is itself one of them).
    @inlinable
    func carryOut(_ action: CancellationState.CancelAction, reason: CancellationReason) -> Bool {
        switch action {
        case .cancel(let callbacks):
            box?.resolve(.rejected(CancellablePromiseError(reason: reason)))
            CancelPropagation.current.run(callbacks, reason: reason)
            return true
        case .alreadyCancelled(let winningReason):
            // Another thread won and may not have rejected the box yet; the outcome must be decided before
            // this call returns too. Resolving twice is harmless: the first resolution wins.
            box?.resolve(.rejected(CancellablePromiseError(reason: winningReason)))
            return false
        case .alreadyResolved, .otherConsumersRemain:
            return false
        }
    }

    /// Runs `callback` if the promise is cancelled while pending, at once if it is cancelled already.
    @inlinable
    func add(_ callback: @escaping CancellationState.OnCancel) {
        if case .runNow(let reason) = state.withLock({ $0.add(callback) }) {
            callback(reason)
        }
    }
}

/// Delivers results to a cancellable promise through its state machine, without keeping the promise
/// object alive: handlers upstream hold this (the box, which someone may observe through `asPromise()`, and
/// the state, which decides), so a chain works even if nobody holds the link object itself.
@usableFromInline
struct LinkSink<U> {
    @usableFromInline
    let box: Promise<U>
    @usableFromInline
    let state: LockedCancellationState

    @inlinable
    init(box: Promise<U>, state: LockedCancellationState) {
        self.box = box
        self.state = state
    }

    /// Whether the promise has resolved (or been cancelled) already.
    @inlinable
    var isResolved: Bool { box.isResolvedWithoutMetadata }

    /// Resolves the promise with `result` unless it was cancelled or resolved already.
    ///
    /// - Parameters:
    ///   - inHandler: `true` (the default) when called from inside a library handler: the promise's own
    ///     handlers then run on PromiseCore's trampoline, after the current handler returns.
    ///   - beforeResolving: runs once `result` has won but before anyone can observe it.
    /// - Returns: whether `result` won.
    @inlinable
    @discardableResult
    func resolve(_ result: Result<U>, inHandler: Bool = true, beforeResolving: () -> Void = {}) -> Bool {
        guard case .resolve(let released) = state.withLock({ $0.resolve() }) else {
            return false
        }
        beforeResolving()
        box.resolve(result, inHandler: inHandler)
        withExtendedLifetime(released) {}  // the callbacks are released here, outside the lock
        return true
    }

    /// Whether `thenable` is this very promise (a body returning the promise its link produced).
    @inlinable
    func isOwnPromise<V: Thenable>(_ thenable: V) -> Bool {
        if let cancellable = thenable as? CancellablePromise<U> {
            return cancellable.promise === box
        }
        return (thenable as? Promise<U>) === box
    }

    /// Resolves like `thenable`; if it is cancellable, cancelling this promise cancels it (at once if this
    /// promise is already cancelled).
    @inlinable
    func follow<V: Thenable>(_ thenable: V, inHandler: Bool = true) where V.T == U {
        if let cancellable = thenable as? CancellablePromise<U> {
            let cancelInner = cancellable.handle.addConsumer()
            if case .runNow(let reason) = state.withLock({ $0.add(cancelInner) }) {
                cancelInner(reason)
            }
        }
        thenable.pipe { self.resolve($0, inHandler: inHandler) }
    }
}
