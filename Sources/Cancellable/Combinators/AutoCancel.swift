import PromiseCore

/// The one implementation behind every cancellable combinator: a cancellable promise that follows `core` (the
/// PromiseCore combinator over the inputs' promises).
///
/// With `autoCancel`, once the combinator's outcome is decided — by its inputs, or by a cancellation — every input
/// still pending is cancelled (cancelling a resolved input is a no-op): with the combinator's own reason if it was
/// cancelled, with `.lostRace` if it fulfilled, `.anotherInputFailed` if an input's failure decided it. Those
/// cancellations, and the cancel handlers they run, come first; the
/// combinator's promise resolves after them, so no handler of its result runs while a loser is still working
/// (Guarantees, rule 10). The combinator is one consumer of each input, so an input that another branch also
/// consumes is cancelled only once that branch has cancelled too. Without `autoCancel`, the inputs are never
/// cancelled by the combinator. O(n) in the number of inputs.
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
            votes.append(input.addVoteEntry())
        }
    }
    let combined = CancellablePromise<C.T>(callbacks: votes, cancelsInputsOnResolution: autoCancel)
    combined.follow(core)
    return combined
}
