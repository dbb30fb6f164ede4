import PromiseCore

/// The one implementation behind every cancellable combinator: a cancellable promise that follows `core` (the
/// PromiseCore combinator over the inputs' promises).
///
/// With `autoCancel`, once the combinator's promise resolves — because its outcome is decided, or because it
/// was cancelled — every input still pending is cancelled (cancelling a resolved input is a no-op). Without
/// it, the inputs are never cancelled by the combinator. O(n) in the number of inputs.
func combine<T, C: Thenable>(
    _ inputs: [CancellablePromise<T>],
    autoCancel: Bool,
    _ core: C
) -> CancellablePromise<C.T> {
    let combined = CancellablePromise<C.T>()
    if autoCancel {
        combined.promise.pipe { _ in
            for input in inputs {
                input.cancel()
            }
        }
    }
    combined.follow(core)
    return combined
}
