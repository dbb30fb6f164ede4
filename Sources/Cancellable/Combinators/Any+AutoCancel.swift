public import PromiseCore

/// Waits for every input and reports each outcome in input order; rejects with `AllPromisesFailedError` only
/// if all rejected. The inputs are never cancelled by `any`.
///
/// ```swift
/// any(mirrors.map { ping($0) }).done { outcomes in … }
/// ```
@inlinable
public func any<T>(_ promises: [CancellablePromise<T>]) -> CancellablePromise<[Maybe<T>]> {
    any(promises, autoCancel: false)
}

/// Waits for every input and reports each outcome in input order; with `autoCancel`, cancelling the returned
/// promise cancels every input still pending.
@inlinable
public func any<T>(_ promises: [CancellablePromise<T>], autoCancel: Bool) -> CancellablePromise<[Maybe<T>]> {
    combine(promises, autoCancel: autoCancel, PromiseCore.any(promises.map { $0.promise }))
}

/// Waits for every input and reports each outcome in input order.
@inlinable
public func any<T>(_ promises: CancellablePromise<T>...) -> CancellablePromise<[Maybe<T>]> {
    any(promises, autoCancel: false)
}

/// Waits for every input and reports each outcome in input order; with `autoCancel`, cancelling the returned
/// promise cancels every input still pending.
@inlinable
public func any<T>(_ promises: CancellablePromise<T>..., autoCancel: Bool) -> CancellablePromise<[Maybe<T>]> {
    any(promises, autoCancel: autoCancel)
}

/// Fulfills with the first `count` values, in the order they fulfilled. The inputs are never cancelled by
/// `some`.
///
/// Rejects with `AggregateError` once fewer than `count` can still fulfill; a `count` below 1 or above the
/// number of inputs rejects with `PMKError.badInput`.
@inlinable
public func some<T>(_ count: Int, _ promises: [CancellablePromise<T>]) -> CancellablePromise<[T]> {
    some(count, promises, autoCancel: false)
}

/// Fulfills with the first `count` values, in the order they fulfilled; with `autoCancel`, cancels the rest
/// as soon as the outcome is decided.
///
/// ```swift
/// some(2, mirrors.map { download(from: $0) }, autoCancel: true)   // the two fastest; the rest stop
/// ```
@inlinable
public func some<T>(_ count: Int, _ promises: [CancellablePromise<T>], autoCancel: Bool) -> CancellablePromise<[T]> {
    combine(promises, autoCancel: autoCancel, PromiseCore.some(count, promises.map { $0.promise }))
}

/// Fulfills with the first `count` values, in the order they fulfilled.
@inlinable
public func some<T>(_ count: Int, _ promises: CancellablePromise<T>...) -> CancellablePromise<[T]> {
    some(count, promises, autoCancel: false)
}

/// Fulfills with the first `count` values; with `autoCancel`, cancels the rest once decided.
@inlinable
public func some<T>(_ count: Int, _ promises: CancellablePromise<T>..., autoCancel: Bool) -> CancellablePromise<[T]> {
    some(count, promises, autoCancel: autoCancel)
}
