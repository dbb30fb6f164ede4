import PromiseCore

/// Ends a cancellable promise from inside its work when ending it has effects a cancellation must never see — a
/// download moving its file into place, say — for the other modules of this package.
///
/// A plain `Resolver` resolves after the work has done whatever it does at the end, so a cancel that wins in
/// between leaves a promise that says "cancelled" over work that finished. ``decide(_:)`` turns the order around:
/// it first decides, under the promise's cancellation lock, whether the work's ending or a cancellation wins; only
/// if the ending wins does it carry the ending out, and from that instant a `cancel()` finds the promise resolved
/// (and returns `false`) even while the ending is still being carried out.
package struct DecidingResolver<T> {
    @usableFromInline
    let sink: LinkSink<T>

    @inlinable
    init(_ sink: LinkSink<T>) {
        self.sink = sink
    }

    /// Who won: the work's ending (`body` ran, and the promise is resolved with what it returned), or what came
    /// first — a cancellation, or another resolution — and `body` did not run.
    package typealias Decision = ResolutionDecision

    /// Resolves the promise with the result of `body`, unless a cancellation has already won.
    ///
    /// The decision is made first, under the cancellation lock; `body` runs after it, outside the lock, and before
    /// anyone can observe the result.
    ///
    /// - Returns: who won.
    package func decide(_ body: () -> Result<T>) -> Decision {
        sink.resolve(inHandler: false, body)
    }
}

extension CancellablePromise {
    /// Makes a cancellable promise whose work ends it through a ``DecidingResolver``; `body` starts the work and
    /// returns what to run on cancel.
    ///
    /// Unlike other cancellable promises, a cancellation runs that cancel handler **before** it rejects the promise
    /// (still before `cancel()` returns): whoever sees the rejection — a handler on any queue, inline or not — sees
    /// what the handler did, a download's partial file already removed, say. (The order of an `autoCancel`
    /// combinator, whose inputs are cancelled before it resolves; its state machine runs the callbacks on
    /// resolution too, with ``CancellationReason/lostRace``, which is not passed on here: once the work's own ending
    /// has won, there is nothing to cancel.)
    package convenience init(
        file: StaticString = #fileID,
        line: UInt = #line,
        deciding body: (DecidingResolver<T>) -> ((CancellationReason) -> Void)
    ) {
        self.init(callbacks: OnCancelList(), cancelsInputsOnResolution: true)
        promise.recordCreation(file: file, line: line, as: CancellablePromise<T>.self)
        let cancel = body(DecidingResolver(sink))
        let state = handle.state
        addCancelAction { reason in
            guard state.withLock({ $0.isCancelled }) else { return }  // the ending won: nothing to cancel
            cancel(reason)
        }
    }
}

// Safe to share between threads, like a `Resolver`: the box resolves under its own lock, the decision is made under
// the cancellation lock, and values cross threads only when `T` is `Sendable`.
extension DecidingResolver: @unchecked Sendable where T: Sendable {}
