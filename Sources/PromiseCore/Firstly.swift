/// Starts a chain with a body that may throw, so that every step of the chain reads the same.
///
/// ```swift
/// firstly {
///     try login(user, password)        // returns Promise<Token>
/// }.then { token in
///     fetchProfile(token)
/// }.done { show($0) }.catch { show($0) }
/// ```
///
/// - Returns: a promise that resolves like the one `body` returns, or rejects with the error it throws.
@inlinable
public func firstly<U: Thenable>(execute body: () throws -> U) -> Promise<U.T> {
    do {
        let promise = Promise<U.T>(state: nil)
        try body().pipe(to: promise.resolve)
        return promise
    } catch {
        return Promise(error: error)
    }
}

/// Starts a chain with a guarantee.
///
/// ```swift
/// firstly { after(seconds: 1) }.done { print("tick") }
/// ```
@inlinable
public func firstly<T>(execute body: () -> Guarantee<T>) -> Guarantee<T> {
    body()
}
