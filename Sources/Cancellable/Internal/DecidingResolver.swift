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
    package convenience init(
        file: StaticString = #fileID,
        line: UInt = #line,
        deciding body: (DecidingResolver<T>) -> ((CancellationReason) -> Void)
    ) {
        self.init(file: file, line: line)
        addCancelAction(body(DecidingResolver(sink)))
    }
}

// Safe to share between threads, like a `Resolver`: the box resolves under its own lock, the decision is made under
// the cancellation lock, and values cross threads only when `T` is `Sendable`.
extension DecidingResolver: @unchecked Sendable where T: Sendable {}
