/// The outcome of a resolved promise: a value or an error.
///
/// This is PromiseKit's `Result`, kept for source compatibility (it shadows `Swift.Result` in files that
/// import PromiseCore; write `Swift.Result` for the standard library's). Convert with
/// `PromiseCore.Result(_:)` and `Swift.Result(_:)`.
///
/// ```swift
/// promise.tap { result in
///     if case .rejected(let error) = result { log(error) }
/// }
/// ```
public enum Result<T> {
    /// The promise fulfilled with this value.
    case fulfilled(T)
    /// The promise rejected with this error.
    case rejected(Error)
}

extension Result: Sendable where T: Sendable {}

extension Result {
    /// Whether this is ``fulfilled(_:)``.
    public var isFulfilled: Bool {
        if case .fulfilled = self { return true }
        return false
    }

    /// Makes a PromiseKit result from a standard-library result.
    ///
    /// ```swift
    /// let result = PromiseCore.Result(Swift.Result<Int, Error>.success(1))   // .fulfilled(1)
    /// ```
    public init<E: Error>(_ result: Swift.Result<T, E>) {
        switch result {
        case .success(let value): self = .fulfilled(value)
        case .failure(let error): self = .rejected(error)
        }
    }
}

extension Swift.Result where Failure == Error {
    /// Makes a standard-library result from a promise's result.
    ///
    /// ```swift
    /// if let result = promise.result {
    ///     let standard = Swift.Result(result)   // Swift.Result<T, Error>
    /// }
    /// ```
    public init(_ result: PromiseCore.Result<Success>) {
        switch result {
        case .fulfilled(let value): self = .success(value)
        case .rejected(let error): self = .failure(error)
        }
    }
}

extension Result {
    /// The value, if fulfilled.
    @usableFromInline
    var fulfilledValue: T? {
        if case .fulfilled(let value) = self { return value }
        return nil
    }
}
