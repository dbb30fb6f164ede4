import PromiseCore

/// Pulls cancellable promises from `promiseIterator`, keeping at most `concurrently` pending at once, and
/// fulfills with all their values in the order they were generated. It stops pulling, and cancels the promises
/// in flight, as soon as one rejects or it is cancelled.
///
/// ```swift
/// let downloads = urls.lazy.map { download($0) }.makeIterator()   // CancellablePromise<Data> each
/// let all = when(fulfilled: downloads, concurrently: 3)
/// stopButton.onTap { all.cancel() }   // the three transfers in flight stop; no fourth one starts
/// ```
///
/// The promises it pulls belong to it: on the first rejection it cancels the others still in flight with
/// ``CancellationReason/anotherInputFailed``, then rejects with that error; cancelling it cancels them with its own
/// reason before it is rejected. Their cancel handlers have run before any handler of its result runs. A promise
/// pulled while the cancellation happens is cancelled as soon as it is pulled; nothing is pulled
/// after. A `concurrently` below 1 rejects with `PMKError.badInput` without pulling.
///
/// > Note: the pending promises hold the iterator until it is exhausted or the outcome is decided; prefer a
/// > lazy generator, as in the example, to an array's iterator (which holds every promise).
public func when<It: IteratorProtocol, T>(
    fulfilled promiseIterator: It,
    concurrently: Int
) -> CancellablePromise<[T]> where It.Element == CancellablePromise<T> {
    guard concurrently > 0 else {
        return CancellablePromise(error: PMKError.badInput)
    }
    let inFlight = CancelSet()
    // However it ends — fulfilled, rejected by an input, or cancelled — nothing more is pulled, and what is still
    // in flight is cancelled (only a rejection or a cancellation can leave anything in flight), before the
    // combined promise resolves: like an `autoCancel` combinator's votes, this runs on resolution too.
    let combined = CancellablePromise<[T]>(
        callbacks: OnCancelList { reason in inFlight.cancelAll(reason: reason, closing: true) },
        cancelsInputsOnResolution: true
    )
    let tracked = InFlightIterator(base: promiseIterator, inFlight: inFlight)
    combined.follow(PromiseCore.when(fulfilled: tracked, concurrently: concurrently))
    return combined
}

/// Hands PromiseCore's puller the generator's promises, recording each one's cancel (as one consumer of it) until
/// it resolves; reports the end of the sequence once the combined promise is decided.
private struct InFlightIterator<Base: IteratorProtocol, T>: IteratorProtocol
where Base.Element == CancellablePromise<T> {
    var base: Base
    let inFlight: CancelSet

    mutating func next() -> CancellablePromise<T>? {
        guard !inFlight.isClosed, let promise = base.next() else { return nil }
        // If the outcome was decided while `base` made it, `track` cancels it at once.
        let vote = promise.addVote()
        inFlight.track({ vote.cast($0) }, until: promise.promise)
        return promise
    }
}
