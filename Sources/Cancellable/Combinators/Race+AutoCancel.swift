import PromiseCore

// Each combinator has a form without `autoCancel` (it means `autoCancel: false`) rather than a defaulted
// parameter: with a default, Swift prefers PromiseCore's generic `race<U: Thenable>(_: [U])` for a call
// without the label, which returns a plain `Promise`. These are CancellablePromiseKit's own shapes.

/// Resolves like the first input to resolve — fulfilled or rejected: a failure decides the race too. The inputs are
/// never cancelled by the race. To take the first *success*, use `race(fulfilled:)`.
///
/// ```swift
/// race(mirrors.map { download(from: $0) }).done { show($0) }
/// ```
///
/// An empty array rejects with `PMKError.badInput`.
@inlinable
public func race<T>(_ promises: [CancellablePromise<T>]) -> CancellablePromise<T> {
    race(promises, autoCancel: false)
}

/// Resolves like the first input to resolve — fulfilled or rejected: the first failure decides the race too, and
/// with `autoCancel` cancels every other input. To race mirrors, where one that fails should leave the rest running,
/// use `race(fulfilled:autoCancel:)`.
///
/// ```swift
/// let first = race([fromCache(), fromNetwork()], autoCancel: true)
/// first.done { show($0) }   // the other one stopped
/// ```
///
/// With `autoCancel`, the losers are cancelled, with ``CancellationReason/lostRace``, *before* the race's promise
/// resolves: by the time any handler of the result runs — inline or on a queue — every loser's cancel handler
/// has run (on the thread that fulfilled the winner). A loser that another branch still consumes is cancelled
/// only once that branch cancels too (Guarantees, *Shared work*). Cancelling the returned promise cancels every
/// input, with its reason, likewise before the race rejects. An empty array rejects with `PMKError.badInput`.
@inlinable
public func race<T>(_ promises: [CancellablePromise<T>], autoCancel: Bool) -> CancellablePromise<T> {
    combine(promises, autoCancel: autoCancel, PromiseCore.race(promises.map { $0.promise }))
}

/// Resolves like the first input to resolve. The inputs are never cancelled by the race.
@inlinable
public func race<T>(_ promises: CancellablePromise<T>...) -> CancellablePromise<T> {
    race(promises, autoCancel: false)
}

/// Resolves like the first input to resolve; with `autoCancel`, cancels the others as soon as one wins.
///
/// ```swift
/// race(download(from: a), download(from: b), autoCancel: true)
/// ```
@inlinable
public func race<T>(_ promises: CancellablePromise<T>..., autoCancel: Bool) -> CancellablePromise<T> {
    race(promises, autoCancel: autoCancel)
}

/// Fulfills with the first input to fulfill; an input that fails does not decide the race. The inputs are never
/// cancelled by the race.
///
/// ```swift
/// race(fulfilled: mirrors.map { download(from: $0) }).done { show($0) }
/// ```
///
/// Rejects only once every input has failed, with `AggregateError` carrying each input's error in the order they
/// failed. An empty array rejects with `PMKError.badInput`.
@inlinable
public func race<T>(fulfilled promises: [CancellablePromise<T>]) -> CancellablePromise<T> {
    race(fulfilled: promises, autoCancel: false)
}

/// Fulfills with the first input to fulfill, while an input that fails leaves the others running; with
/// `autoCancel`, cancels the others as soon as one fulfills.
///
/// ```swift
/// let fastest = race(fulfilled: mirrors.map { download(from: $0) }, autoCancel: true)
/// fastest.done { show($0) }   // a mirror that was cut did not end the race; the losers stopped transferring
/// ```
///
/// With `autoCancel`, the losers are cancelled, with ``CancellationReason/lostRace``, *before* the race's promise
/// fulfills, as in `race(_:autoCancel:)`. If every input fails, the race rejects with `AggregateError` carrying
/// each input's error in the order they failed (there is nothing left to cancel). Cancelling the returned promise
/// cancels every input, with its reason, before the race rejects. An empty array rejects with `PMKError.badInput`.
@inlinable
public func race<T>(fulfilled promises: [CancellablePromise<T>], autoCancel: Bool) -> CancellablePromise<T> {
    combine(promises, autoCancel: autoCancel, firstFulfilled(promises.map { $0.promise }))
}

/// Fulfills with the first input to fulfill; an input that fails does not decide the race. The inputs are never
/// cancelled by the race.
@inlinable
public func race<T>(fulfilled promises: CancellablePromise<T>...) -> CancellablePromise<T> {
    race(fulfilled: promises, autoCancel: false)
}

/// Fulfills with the first input to fulfill; with `autoCancel`, cancels the others as soon as one fulfills.
///
/// ```swift
/// race(fulfilled: download(from: a), download(from: b), autoCancel: true)
/// ```
@inlinable
public func race<T>(fulfilled promises: CancellablePromise<T>..., autoCancel: Bool) -> CancellablePromise<T> {
    race(fulfilled: promises, autoCancel: autoCancel)
}
