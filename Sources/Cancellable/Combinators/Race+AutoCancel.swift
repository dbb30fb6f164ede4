import PromiseCore

// Each combinator has a form without `autoCancel` (it means `autoCancel: false`) rather than a defaulted
// parameter: with a default, Swift prefers PromiseCore's generic `race<U: Thenable>(_: [U])` for a call
// without the label, which returns a plain `Promise`. These are CancellablePromiseKit's own shapes.

/// Resolves like the first input to resolve. The inputs are never cancelled by the race.
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

/// Resolves like the first input to resolve; with `autoCancel`, cancels the others as soon as one wins.
///
/// ```swift
/// let fastest = race(mirrors.map { download(from: $0) }, autoCancel: true)
/// fastest.done { show($0) }   // the losers stopped transferring
/// ```
///
/// With `autoCancel`, cancelling the returned promise cancels every input. An empty array rejects with
/// `PMKError.badInput`.
@inlinable
public func race<T>(_ promises: [CancellablePromise<T>], autoCancel: Bool) -> CancellablePromise<T> {
    combine(promises, autoCancel: autoCancel, PromiseCore.race(promises.map(\.promise)))
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
