/// Waits for every promise: fulfills with their values, in input order, or rejects with the first error.
///
/// ```swift
/// when(fulfilled: ids.map { fetchUser($0) }).done { users in show(users) }
/// ```
///
/// An empty array fulfills at once with `[]`. Inputs are never cancelled: after a rejection the others keep
/// running (use Cancellable's `when(fulfilled:autoCancel:)` to stop them).
@inlinable
public func when<U: Thenable>(fulfilled thenables: [U]) -> Promise<[U.T]> {
    joinFulfilled(thenables)
}

/// Waits for every `Void` promise; rejects with the first error.
///
/// ```swift
/// when(fulfilled: files.map { upload($0) }).done { print("all uploaded") }
/// ```
@inlinable
public func when<U: Thenable>(fulfilled promises: [U]) -> Promise<Void> where U.T == Void {
    joinFulfilled(promises).asVoid()
}

/// Waits for every `Void` promise; rejects with the first error.
@inlinable
public func when<U: Thenable>(fulfilled promises: U...) -> Promise<Void> where U.T == Void {
    when(fulfilled: promises)
}

/// Waits for thenables of any types; fulfills with their values as `[Any]`, in input order.
///
/// ```swift
/// when(fulfilled: [fetchUser() as any Thenable, fetchSettings()]).done { values in … }
/// ```
///
/// Disfavoured, so that an array literal of same-typed promises (`when(fulfilled: [a, b])`) still picks the
/// generic overload and fulfills with `[T]`, as it does in PromiseKit.
@inlinable
@_disfavoredOverload
public func when(fulfilled thenables: [any Thenable]) -> Promise<[Any]> {
    joinFulfilled(thenables.map { $0.erased() })
}

/// Waits for two promises of different types; fulfills with a tuple, or rejects with the first error.
///
/// ```swift
/// when(fulfilled: fetchUser(), fetchAvatar()).done { user, avatar in show(user, avatar) }
/// ```
@inlinable
public func when<U: Thenable, V: Thenable>(fulfilled pu: U, _ pv: V) -> Promise<(U.T, V.T)> {
    joinFulfilled([pu.erased(), pv.erased()]).map(on: nil) { values in
        (values[0] as! U.T, values[1] as! V.T)
    }
}

/// Waits for three promises of different types; fulfills with a tuple, or rejects with the first error.
@inlinable
public func when<U: Thenable, V: Thenable, W: Thenable>(
    fulfilled pu: U,
    _ pv: V,
    _ pw: W
) -> Promise<(U.T, V.T, W.T)> {
    joinFulfilled([pu.erased(), pv.erased(), pw.erased()]).map(on: nil) { values in
        (values[0] as! U.T, values[1] as! V.T, values[2] as! W.T)
    }
}

/// Waits for four promises of different types; fulfills with a tuple, or rejects with the first error.
@inlinable
public func when<U: Thenable, V: Thenable, W: Thenable, X: Thenable>(
    fulfilled pu: U,
    _ pv: V,
    _ pw: W,
    _ px: X
) -> Promise<(U.T, V.T, W.T, X.T)> {
    joinFulfilled([pu.erased(), pv.erased(), pw.erased(), px.erased()]).map(on: nil) { values in
        (values[0] as! U.T, values[1] as! V.T, values[2] as! W.T, values[3] as! X.T)
    }
}

/// Waits for five promises of different types; fulfills with a tuple, or rejects with the first error.
@inlinable
public func when<U: Thenable, V: Thenable, W: Thenable, X: Thenable, Y: Thenable>(
    fulfilled pu: U,
    _ pv: V,
    _ pw: W,
    _ px: X,
    _ py: Y
) -> Promise<(U.T, V.T, W.T, X.T, Y.T)> {
    joinFulfilled([pu.erased(), pv.erased(), pw.erased(), px.erased(), py.erased()]).map(on: nil) { values in
        (values[0] as! U.T, values[1] as! V.T, values[2] as! W.T, values[3] as! X.T, values[4] as! Y.T)
    }
}

/// Waits for every promise to resolve, either way; never rejects.
///
/// ```swift
/// when(resolved: uploads).done { results in
///     let failures = results.filter { !$0.isFulfilled }
/// }
/// ```
@inlinable
public func when<T>(resolved promises: [Promise<T>]) -> Guarantee<[Result<T>]> {
    joinResolved(promises)
}

/// Waits for every promise to resolve, either way; never rejects.
@inlinable
public func when<T>(resolved promises: Promise<T>...) -> Guarantee<[Result<T>]> {
    joinResolved(promises)
}

// MARK: - Guarantees

/// Waits for every guarantee.
///
/// ```swift
/// when(after(seconds: 1), after(seconds: 2)).done { print("both fired") }
/// ```
@inlinable
public func when(_ guarantees: Guarantee<Void>...) -> Guarantee<Void> {
    when(guarantees: guarantees)
}

/// Waits for every guarantee.
@inlinable
public func when(guarantees: [Guarantee<Void>]) -> Guarantee<Void> {
    Guarantee(assumingSuccessOf: joinFulfilled(guarantees)).asVoid()
}

/// Waits for every guarantee; resolves with their values in input order.
@inlinable
public func when<T>(_ guarantees: Guarantee<T>...) -> Guarantee<[T]> {
    when(guarantees: guarantees)
}

/// Waits for every guarantee; resolves with their values in input order.
///
/// ```swift
/// when(guarantees: [Guarantee.value(1), Guarantee.value(2)]).done { print($0) }   // [1, 2]
/// ```
@inlinable
public func when<T>(guarantees: [Guarantee<T>]) -> Guarantee<[T]> {
    Guarantee(assumingSuccessOf: joinFulfilled(guarantees))
}

/// Waits for two guarantees of different types.
@inlinable
public func when<U, V>(guarantees gu: Guarantee<U>, _ gv: Guarantee<V>) -> Guarantee<(U, V)> {
    Guarantee(assumingSuccessOf: when(fulfilled: gu, gv))
}

/// Waits for three guarantees of different types.
@inlinable
public func when<U, V, W>(
    guarantees gu: Guarantee<U>,
    _ gv: Guarantee<V>,
    _ gw: Guarantee<W>
) -> Guarantee<(U, V, W)> {
    Guarantee(assumingSuccessOf: when(fulfilled: gu, gv, gw))
}

/// Waits for four guarantees of different types.
@inlinable
public func when<U, V, W, X>(
    guarantees gu: Guarantee<U>,
    _ gv: Guarantee<V>,
    _ gw: Guarantee<W>,
    _ gx: Guarantee<X>
) -> Guarantee<(U, V, W, X)> {
    Guarantee(assumingSuccessOf: when(fulfilled: gu, gv, gw, gx))
}

/// Waits for five guarantees of different types.
@inlinable
public func when<U, V, W, X, Y>(
    guarantees gu: Guarantee<U>,
    _ gv: Guarantee<V>,
    _ gw: Guarantee<W>,
    _ gx: Guarantee<X>,
    _ gy: Guarantee<Y>
) -> Guarantee<(U, V, W, X, Y)> {
    Guarantee(assumingSuccessOf: when(fulfilled: gu, gv, gw, gx, gy))
}

extension Thenable {
    /// The value as `Any`, for joins of thenables of different types. The join collects values as they
    /// arrive instead of reading the inputs afterwards: a closure holding the inputs would close a cycle
    /// (join → inputs → join) that an abandoned pending join could never leave.
    @inlinable
    func erased() -> Promise<Any> {
        map(on: nil) { $0 as Any }
    }
}
