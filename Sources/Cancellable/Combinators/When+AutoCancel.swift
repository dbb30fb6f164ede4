public import PromiseCore

/// Waits for every input: fulfills with their values in input order, or rejects with the first error. The
/// inputs are never cancelled by `when`.
///
/// ```swift
/// when(fulfilled: chunks.map { download($0) }).done { parts in … }
/// ```
@inlinable
public func when<T>(fulfilled promises: [CancellablePromise<T>]) -> CancellablePromise<[T]> {
    when(fulfilled: promises, autoCancel: false)
}

/// Waits for every input: fulfills with their values in input order, or rejects with the first error; with
/// `autoCancel`, that first error cancels the inputs still pending.
///
/// ```swift
/// let parts = when(fulfilled: chunks.map { download($0) }, autoCancel: true)
/// ```
///
/// With `autoCancel`, cancelling the returned promise cancels every input. The inputs are cancelled, and their
/// cancel handlers have run, before the returned promise rejects (Guarantees, rule 10). An empty array
/// fulfills with `[]`.
@inlinable
public func when<T>(fulfilled promises: [CancellablePromise<T>], autoCancel: Bool) -> CancellablePromise<[T]> {
    combine(promises, autoCancel: autoCancel, PromiseCore.when(fulfilled: promises.map { $0.promise }))
}

/// Waits for every input; rejects with the first error; with `autoCancel`, that error cancels the rest.
///
/// ```swift
/// when(fulfilled: download(a), download(b), download(c), download(d), download(e), download(f),
///      autoCancel: true)
/// ```
///
/// For two to five inputs the tuple forms below are chosen, as in PromiseKit; this form serves one input or
/// more than five.
@_disfavoredOverload
@inlinable
public func when<T>(fulfilled promises: CancellablePromise<T>..., autoCancel: Bool) -> CancellablePromise<[T]> {
    when(fulfilled: promises, autoCancel: autoCancel)
}

/// Waits for two cancellable promises of any types; fulfills with a tuple, or rejects with the first
/// error. The inputs are never cancelled by `when`.
@inlinable
public func when<U, V>(
    fulfilled pu: CancellablePromise<U>,
    _ pv: CancellablePromise<V>
) -> CancellablePromise<(U, V)> {
    when(fulfilled: pu, pv, autoCancel: false)
}

/// Waits for two cancellable promises of any types; fulfills with a tuple, or rejects with the first
/// error; with `autoCancel`, that error (or cancelling the result) cancels the inputs still pending.
///
/// ```swift
/// when(fulfilled: download(user), download(avatar), autoCancel: true).done { user, avatar in … }
/// ```
@inlinable
public func when<U, V>(
    fulfilled pu: CancellablePromise<U>,
    _ pv: CancellablePromise<V>,
    autoCancel: Bool
) -> CancellablePromise<(U, V)> {
    combine([pu.asVoid(), pv.asVoid()], autoCancel: autoCancel, PromiseCore.when(fulfilled: pu.promise, pv.promise))
}

/// Waits for three cancellable promises of any types; fulfills with a tuple, or rejects with the first
/// error. The inputs are never cancelled by `when`.
@inlinable
public func when<U, V, W>(
    fulfilled pu: CancellablePromise<U>,
    _ pv: CancellablePromise<V>,
    _ pw: CancellablePromise<W>
) -> CancellablePromise<(U, V, W)> {
    when(fulfilled: pu, pv, pw, autoCancel: false)
}

/// Waits for three cancellable promises of any types; fulfills with a tuple, or rejects with the first
/// error; with `autoCancel`, that error (or cancelling the result) cancels the inputs still pending.
@inlinable
public func when<U, V, W>(
    fulfilled pu: CancellablePromise<U>,
    _ pv: CancellablePromise<V>,
    _ pw: CancellablePromise<W>,
    autoCancel: Bool
) -> CancellablePromise<(U, V, W)> {
    combine(
        [pu.asVoid(), pv.asVoid(), pw.asVoid()],
        autoCancel: autoCancel,
        PromiseCore.when(fulfilled: pu.promise, pv.promise, pw.promise)
    )
}

/// Waits for four cancellable promises of any types; fulfills with a tuple, or rejects with the first
/// error. The inputs are never cancelled by `when`.
@inlinable
public func when<U, V, W, X>(
    fulfilled pu: CancellablePromise<U>,
    _ pv: CancellablePromise<V>,
    _ pw: CancellablePromise<W>,
    _ px: CancellablePromise<X>
) -> CancellablePromise<(U, V, W, X)> {
    when(fulfilled: pu, pv, pw, px, autoCancel: false)
}

/// Waits for four cancellable promises of any types; fulfills with a tuple, or rejects with the first
/// error; with `autoCancel`, that error (or cancelling the result) cancels the inputs still pending.
@inlinable
public func when<U, V, W, X>(
    fulfilled pu: CancellablePromise<U>,
    _ pv: CancellablePromise<V>,
    _ pw: CancellablePromise<W>,
    _ px: CancellablePromise<X>,
    autoCancel: Bool
) -> CancellablePromise<(U, V, W, X)> {
    combine(
        [pu.asVoid(), pv.asVoid(), pw.asVoid(), px.asVoid()],
        autoCancel: autoCancel,
        PromiseCore.when(fulfilled: pu.promise, pv.promise, pw.promise, px.promise)
    )
}

/// Waits for five cancellable promises of any types; fulfills with a tuple, or rejects with the first
/// error. The inputs are never cancelled by `when`.
@inlinable
public func when<U, V, W, X, Y>(
    fulfilled pu: CancellablePromise<U>,
    _ pv: CancellablePromise<V>,
    _ pw: CancellablePromise<W>,
    _ px: CancellablePromise<X>,
    _ py: CancellablePromise<Y>
) -> CancellablePromise<(U, V, W, X, Y)> {
    when(fulfilled: pu, pv, pw, px, py, autoCancel: false)
}

/// Waits for five cancellable promises of any types; fulfills with a tuple, or rejects with the first
/// error; with `autoCancel`, that error (or cancelling the result) cancels the inputs still pending.
@inlinable
public func when<U, V, W, X, Y>(
    fulfilled pu: CancellablePromise<U>,
    _ pv: CancellablePromise<V>,
    _ pw: CancellablePromise<W>,
    _ px: CancellablePromise<X>,
    _ py: CancellablePromise<Y>,
    autoCancel: Bool
) -> CancellablePromise<(U, V, W, X, Y)> {
    combine(
        [pu.asVoid(), pv.asVoid(), pw.asVoid(), px.asVoid(), py.asVoid()],
        autoCancel: autoCancel,
        PromiseCore.when(fulfilled: pu.promise, pv.promise, pw.promise, px.promise, py.promise)
    )
}

/// Waits for every input to resolve, either way. The inputs are never cancelled by `when`.
///
/// ```swift
/// when(resolved: uploads).done { results in retry(results.filter { !$0.isFulfilled }) }
/// ```
@inlinable
public func when<T>(resolved promises: [CancellablePromise<T>]) -> CancellablePromise<[Result<T>]> {
    when(resolved: promises, autoCancel: false)
}

/// Waits for every input to resolve, either way; with `autoCancel`, cancelling the returned promise cancels
/// every input still pending.
@inlinable
public func when<T>(
    resolved promises: [CancellablePromise<T>],
    autoCancel: Bool
) -> CancellablePromise<[Result<T>]> {
    combine(promises, autoCancel: autoCancel, PromiseCore.when(resolved: promises.map { $0.promise }))
}

/// Waits for every input to resolve, either way.
@inlinable
public func when<T>(resolved promises: CancellablePromise<T>...) -> CancellablePromise<[Result<T>]> {
    when(resolved: promises, autoCancel: false)
}

/// Waits for every input to resolve, either way; with `autoCancel`, cancelling the returned promise cancels
/// every input still pending.
@inlinable
public func when<T>(
    resolved promises: CancellablePromise<T>...,
    autoCancel: Bool
) -> CancellablePromise<[Result<T>]> {
    when(resolved: promises, autoCancel: autoCancel)
}
