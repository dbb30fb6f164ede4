/// One input's outcome in the result of `any(_:)`: its value or its error.
///
/// ```swift
/// any(mirrors.map { fetch($0) }).done { outcomes in
///     let pages = outcomes.compactMap(\.value)
/// }
/// ```
public enum Maybe<T> {
    /// The input fulfilled.
    case value(T)
    /// The input rejected.
    case error(Error)

    /// The value, if the input fulfilled.
    @inlinable
    public var value: T? {
        if case .value(let value) = self { return value }
        return nil
    }

    /// The error, if the input rejected.
    @inlinable
    public var error: Error? {
        if case .error(let error) = self { return error }
        return nil
    }

    /// Whether the input fulfilled.
    @inlinable
    public var isSuccess: Bool { value != nil }

    /// Whether the input rejected.
    @inlinable
    public var isError: Bool { error != nil }
}

extension Maybe: Sendable where T: Sendable {}

/// What `any(_:)` rejects with when every input rejected.
///
/// ```swift
/// any(requests).catch { error in
///     if let failure = error as? AllPromisesFailedError<Data> { print(failure.errors) }
/// }
/// ```
public struct AllPromisesFailedError<T>: Error, @unchecked Sendable {
    // @unchecked Sendable: every promise held here is rejected, so its state never changes again, and
    // reading a resolved promise is thread-safe; no value of `T` is reachable from it.

    /// One rejected promise per input, in input order, with that input's error.
    public let promises: [Promise<T>]

    @usableFromInline
    init(promises: [Promise<T>]) {
        self.promises = promises
    }

    /// The inputs' errors, in input order.
    @inlinable
    public var errors: [Error] {
        promises.compactMap(\.error)
    }
}

/// Waits for **every** input and reports each outcome, in input order; rejects only if all inputs rejected.
///
/// ```swift
/// any(fetch(a), fetch(b), fetch(c)).done { outcomes in
///     for case .value(let page) in outcomes { show(page) }
/// }
/// ```
///
/// Unlike `race`, it never returns before every input has settled. An empty array fulfills with `[]`. Rejects
/// with ``AllPromisesFailedError`` (one rejected promise per input, with its error) when every input rejected.
@inlinable
public func any<U: Thenable>(_ thenables: [U]) -> Promise<[Maybe<U.T>]> {
    guard !thenables.isEmpty else {
        return .value([])
    }
    return joinResolved(thenables).map(on: nil) { results in
        let outcomes = results.map { result -> Maybe<U.T> in
            switch result {
            case .fulfilled(let value): return .value(value)
            case .rejected(let error): return .error(error)
            }
        }
        guard outcomes.contains(where: \.isSuccess) else {
            // Made from the results, not the inputs: capturing the inputs here would close a cycle
            // (join → inputs → join) that an abandoned pending `any` could never leave.
            throw AllPromisesFailedError(promises: results.map { Promise(state: $0) })
        }
        return outcomes
    }
}

/// Waits for **every** input and reports each outcome, in input order; rejects only if all inputs rejected.
@inlinable
public func any<U: Thenable>(_ thenables: U...) -> Promise<[Maybe<U.T>]> {
    any(thenables)
}
