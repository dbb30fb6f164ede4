import PromiseCore

/// Who won the decision to resolve a cancellable promise: the result, or what came first.
@usableFromInline
package enum ResolutionDecision: Equatable {
    /// The result won: the promise is resolved with it.
    case resolved
    /// A cancellation won first, for this reason: the result was not made; the canceller rejects the promise.
    case cancelled(CancellationReason)
    /// The promise had already been resolved some other way: the result was not made.
    case resolvedAlready
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
    /// - Parameter inHandler: `true` (the default) when called from inside a library handler: the promise's own
    ///   handlers then run on PromiseCore's trampoline, after the current handler returns.
    /// - Returns: whether `result` won.
    @inlinable
    @discardableResult
    func resolve(_ result: Result<U>, inHandler: Bool = true) -> Bool {
        carryOut(state.withLock { $0.resolve() }, result, inHandler: inHandler)
    }

    /// Decides, under the cancellation lock, whether a result wins; if it does, makes it with `body` — after the
    /// decision, outside the lock — and resolves the promise with it.
    @inlinable
    func resolve(inHandler: Bool, _ body: () -> Result<U>) -> ResolutionDecision {
        let (action, reason) = state.withLock { state -> (CancellationState.ResolveAction, CancellationReason?) in
            let action = state.resolve()
            guard case .ignore = action else { return (action, nil) }
            return (action, state.cancellationReason)
        }
        if case .ignore = action { return reason.map(ResolutionDecision.cancelled) ?? .resolvedAlready }
        carryOut(action, body(), inHandler: inHandler)
        return .resolved
    }

    /// Carries out the decision `action` made under the lock: resolves the box with `result` — for an `autoCancel`
    /// combinator, once its inputs are cancelled. Both `resolve` forms end here. (The plain form passes its result
    /// directly, not through a closure as the deciding form must: a closure there cost the hot path two heap
    /// allocations per cancelled operation, which `allocation-budgets` caught.)
    ///
    /// - Returns: whether the result won (`false`: `action` was to ignore it).
    @inlinable
    @discardableResult
    func carryOut(_ action: CancellationState.ResolveAction, _ result: Result<U>, inHandler: Bool) -> Bool {
        switch action {
        case .resolve(let released):
            box.resolve(result, inHandler: inHandler)
            (consume released).releaseUncast()  // the callbacks are released here, outside the lock
            return true
        case .cancelInputsThenResolve(let votes):
            cancelInputs(votes, thenResolve: result, inHandler: inHandler)
            return true
        case .ignore:
            return false
        }
    }

    /// Casts an `autoCancel` combinator's votes on its inputs — with ``CancellationReason/lostRace`` if it fulfills,
    /// ``CancellationReason/anotherInputFailed`` if an input's failure decided it — so that every input still pending
    /// is cancelled and its cancel handlers run; only then resolves the box with `result`, so that no handler of the
    /// combinator's result runs before its losers have been stopped (Guarantees, rule 10).
    ///
    /// If this thread is already cancelling (a cancel handler fulfilled an input, say), the whole sequence waits
    /// in the thread's ``CancelPropagation`` loop, in the same order, until the current callback returns.
    @inlinable
    func cancelInputs(_ votes: OnCancelList, thenResolve result: Result<U>, inHandler: Bool) {
        let box = self.box
        let reason: CancellationReason
        switch result {
        case .fulfilled: reason = .lostRace
        case .rejected: reason = .anotherInputFailed
        }
        CancelPropagation.current.run(votes, reason: reason) { _ in
            box.resolve(result, inHandler: inHandler)
        }
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
            let cancelInner = cancellable.addVote()
            if case .runNow(let reason) = state.withLock({ $0.add(.vote(cancelInner)) }) {
                cancelInner.cast(reason)
            }
        }
        thenable.pipe { self.resolve($0, inHandler: inHandler) }
    }
}

extension LinkSink {
    /// The value of `result`, for a step that runs on values; a rejection is passed on to this link instead, and
    /// `nil` returned.
    @inlinable
    func value<V>(of result: Result<V>) -> V? {
        switch result {
        case .fulfilled(let value):
            return value
        case .rejected(let error):
            resolve(.rejected(error))
            return nil
        }
    }
}
