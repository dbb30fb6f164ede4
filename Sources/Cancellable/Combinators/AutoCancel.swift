import PromiseCore

/// The one implementation behind every cancellable combinator: a cancellable promise that follows `core` (the
/// PromiseCore combinator over the inputs' promises).
///
/// With `autoCancel`, once the combinator's promise resolves — because its outcome is decided, or because it
/// was cancelled — every input still pending is cancelled (cancelling a resolved input is a no-op): with the
/// combinator's own reason if it was cancelled, with `.lostRace` otherwise. The combinator is one consumer of
/// each input, so an input that another branch also consumes is cancelled only once that branch has
/// cancelled too. Without `autoCancel`, the inputs are never cancelled by the combinator. O(n) in the number
/// of inputs.
@inlinable
func combine<T, C: Thenable>(
    _ inputs: [CancellablePromise<T>],
    autoCancel: Bool,
    _ core: C
) -> CancellablePromise<C.T> {
    // With autoCancel the combinator's cancel callbacks are its votes on its inputs: cast when it is cancelled
    // (its reason) or when it resolves (`.lostRace`), withdrawn if it is released while pending and nobody can
    // cancel it any more. Votes, not the inputs: the inputs' boxes lead to this box, so holding them here would
    // close a cycle that an abandoned pending race could never leave.
    var votes = OnCancelList()
    if autoCancel {
        votes.reserveCapacity(inputs.count)
        for input in inputs {
            votes.append(.vote(input.handle.addConsumer()))
        }
    }
    let combined = CancellablePromise<C.T>(callbacks: votes, cancelsCallbacksOnResolution: autoCancel)
    combined.follow(core)
    return combined
}

extension CancellablePromise {
    /// Calls `cancelInputs` once this combinator's promise resolves, with the reason its inputs are cancelled for:
    /// its own cancellation's reason if it was cancelled, ``CancellationReason/lostRace`` if its outcome was
    /// decided otherwise.
    @inlinable
    func onResolution(cancelInputs: @escaping (CancellationReason) -> Void) {
        let decision = handle.state
        promise.pipe { _ in
            cancelInputs(decision.withLock(\.cancellationReason) ?? .lostRace)
        }
    }
}
