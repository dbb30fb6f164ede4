/// A value that will be known later, or an error.
///
/// A promise is eager and one-shot: its body runs once, when the promise is made, and every observer sees
/// the same result. Chain with `then`, `map`, `done`; handle errors with `catch` and `recover`.
///
/// ```swift
/// func fetchUser() -> Promise<User> {
///     Promise { seal in
///         api.get("/user") { user, error in seal.resolve(user, error) }
///     }
/// }
/// ```
///
/// > Note: a promise may be shared between threads (when `T` is `Sendable`): resolving, chaining and
/// > inspecting are thread-safe, and the first resolution wins.
public class Promise<T>: _PromiseStorage<_PromiseState<T>>, Thenable, CatchMixin, Box {
    /// Makes a promise that is pending (`nil`) or already resolved.
    @inlinable
    package init(state result: Result<T>?) {
        super.init(hasResult: result != nil, state: _PromiseState(result: result))
    }

    /// Makes a promise that `body` resolves through a ``Resolver``; if `body` throws, the promise rejects.
    ///
    /// ```swift
    /// let promise = Promise<Data> { seal in
    ///     load { data, error in seal.resolve(data, error) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - file: where the promise is made, for ``PromiseDiagnostics`` (debug builds only).
    ///   - line: the line, likewise.
    ///   - body: starts the work and resolves the promise through the resolver.
    @inlinable
    public convenience init(
        file: StaticString = #fileID,
        line: UInt = #line,
        resolver body: (Resolver<T>) throws -> Void
    ) {
        self.init(state: nil)
        recordCreation(file: file, line: line)
        let resolver = Resolver(self)
        do {
            try body(resolver)
        } catch {
            resolver.reject(error)
        }
    }

    /// Makes a promise that follows another thenable (a guarantee, say).
    ///
    /// ```swift
    /// let promise = Promise(after(seconds: 1))   // Promise<Void>
    /// ```
    @inlinable
    public convenience init<U: Thenable>(_ bridge: U) where U.T == T {
        self.init(state: nil)
        bridge.pipe(to: resolve)
    }

    /// Makes a rejected promise.
    ///
    /// ```swift
    /// guard let url else { return Promise(error: URLError(.badURL)) }
    /// ```
    @inlinable
    public convenience init(error: Error) {
        self.init(state: .rejected(error))
    }

    /// Makes a fulfilled promise.
    ///
    /// ```swift
    /// if let cached { return .value(cached) }
    /// ```
    @inlinable
    public static func value(_ value: T) -> Promise<T> {
        Promise(state: .fulfilled(value))
    }

    /// Makes a pending promise and the resolver that settles it.
    ///
    /// ```swift
    /// let (promise, resolver) = Promise<Int>.pending()
    /// resolver.fulfill(42)
    /// ```
    @inlinable
    public static func pending(
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> (promise: Promise<T>, resolver: Resolver<T>) {
        let promise = Promise(state: nil)
        promise.recordCreation(file: file, line: line)
        return (promise, Resolver(promise))
    }

    /// Calls `to` with the result, once it is known (at once if it is known already), on the resolving
    /// thread.
    @inlinable
    public final func pipe(to: @escaping (Result<T>) -> Void) {
        append(to)
    }

    /// The result, or `nil` while pending.
    @inlinable
    public final var result: Result<T>? {
        lockedResult
    }

    /// Blocks the calling thread until the promise resolves, then returns its value or throws its error.
    ///
    /// ```swift
    /// let user = try fetchUser().wait()   // in a command-line tool
    /// ```
    ///
    /// > Warning: on the main thread (or main queue) this logs ``LogEvent/waitOnMainThread`` and deadlocks if the
    /// promise
    /// > needs the main queue to resolve. Prefer `await promise.async()`.
    @inlinable
    public final func wait() throws -> T {
        switch waitForResult() {
        case .fulfilled(let value): return value
        case .rejected(let error): throw error
        }
    }
}

extension Promise where T == Void {
    /// Makes a promise fulfilled with `()`.
    @inlinable
    public convenience init() {
        self.init(state: .fulfilled(()))
    }

    /// A promise fulfilled with `()`.
    @inlinable
    public static var value: Promise<Void> {
        Promise(state: .fulfilled(()))
    }
}

extension Promise {
    /// Makes a promise from a standard-library `Result`.
    ///
    /// ```swift
    /// func parse(_ data: Data) -> Swift.Result<User, Error> { … }
    /// fetchData().then { Promise(parse($0)) }
    /// ```
    @inlinable
    public convenience init<E: Error>(_ result: Swift.Result<T, E>) {
        self.init(state: Result(result))
    }
}

extension Promise: CustomStringConvertible, CustomDebugStringConvertible {
    /// The state, as PromiseKit prints it: `Promise(…Int)` while pending, `Promise(3)`, `Promise(dummy)`.
    ///
    /// ```swift
    /// print(Promise.value(3))   // Promise(3)
    /// ```
    public final var description: String {
        switch result {
        case nil: return "Promise(…\(T.self))"
        case .fulfilled(let value)?: return "Promise(\(value))"
        case .rejected(let error)?: return "Promise(\(error))"
        }
    }

    /// The state with the value type, the handler count and the error's type, as PromiseKit prints it:
    /// `Promise<Int>.pending(handlers: 0)`, `Promise<()>.fulfilled(())`, `Promise<String>.rejected(Error.dummy)`.
    ///
    /// ```swift
    /// debugPrint(Promise<Int>.pending().promise)   // Promise<Int>.pending(handlers: 0)
    /// ```
    public final var debugDescription: String {
        let (result, handlers): (Result<T>?, Int) = withStateLock {
            (state.result, withHandlers { $0.count })
        }
        switch result {
        case nil: return "Promise<\(T.self)>.pending(handlers: \(handlers))"
        case .fulfilled(let value)?: return "Promise<\(T.self)>.fulfilled(\(value))"
        case .rejected(let error)?: return "Promise<\(T.self)>.rejected(\(type(of: error)).\(error))"
        }
    }
}

// Safe to share between threads: all mutable state is behind the promise's lock, and the value crosses
// threads only when `T` is `Sendable`.
extension Promise: @unchecked Sendable where T: Sendable {}
