public import Dispatch

/// A value that will be known later and cannot fail.
///
/// Use a guarantee where an error is impossible (a timer, a cached value); its chain methods take
/// non-throwing closures and need no `catch`.
///
/// ```swift
/// after(seconds: 1).done { print("a second later") }
/// ```
public class Guarantee<T>: _PromiseStorage<_PromiseState<T>>, Thenable, Box {
    /// Makes a guarantee that is pending (`nil`) or already resolved.
    @inlinable
    package init(state result: Result<T>?) {
        super.init(hasResult: result != nil, state: _PromiseState(result: result))
    }

    /// Makes a guarantee that `body` resolves by calling the closure it is given.
    ///
    /// ```swift
    /// let tapped = Guarantee<Void> { resolve in button.onTap = { resolve(()) } }
    /// ```
    ///
    /// > Note: if the guarantee is deallocated while pending (its resolve closure, which holds it, gone too), it
    /// > can never resolve: ``LogEvent/pendingGuaranteeDeallocated`` is logged.
    ///
    /// - Parameters:
    ///   - file: where the guarantee is made, for ``PromiseDiagnostics`` (debug builds only).
    ///   - line: the line, likewise.
    ///   - body: starts the work and calls the resolve closure it is given, once.
    @inlinable
    public convenience init(
        file: StaticString = #fileID,
        line: UInt = #line,
        resolver body: (@escaping @Sendable (T) -> Void) -> Void
    ) {
        self.init(state: nil)
        recordCreation(file: file, line: line)
        body(Guarantee.resolveClosure(self))
    }

    /// Makes a resolved guarantee.
    @inlinable
    public static func value(_ value: T) -> Guarantee<T> {
        Guarantee(state: .fulfilled(value))
    }

    /// Makes a pending guarantee and the closure that resolves it.
    ///
    /// ```swift
    /// let (guarantee, resolve) = Guarantee<Int>.pending()
    /// resolve(42)
    /// ```
    @inlinable
    public static func pending(
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> (guarantee: Guarantee<T>, resolve: @Sendable (T) -> Void) {
        let guarantee = Guarantee(state: nil)
        guarantee.recordCreation(file: file, line: line)
        return (guarantee, resolveClosure(guarantee))
    }

    @inlinable
    static func resolveClosure(_ guarantee: Guarantee<T>) -> @Sendable (T) -> Void {
        // The closure holds only the guarantee, so the guarantee is its context: no allocation. Deallocated pending,
        // the guarantee logs pendingGuaranteeDeallocated.
        guarantee.logIfDeallocatedPending = .guarantee
        let sendable = UncheckedSendable(guarantee)
        return { value in
            sendable.value.resolve(.fulfilled(value), inHandler: false)
        }
    }

    /// Calls `to` with the result once it is known (at once if it is known already).
    @inlinable
    public final func pipe(to: @escaping (Result<T>) -> Void) {
        append(to)
    }

    /// The result, or `nil` while pending.
    @inlinable
    public final var result: Result<T>? {
        lockedResult
    }

    /// Blocks the calling thread until the guarantee resolves.
    ///
    /// > Warning: on the main thread (or main queue) this logs ``LogEvent/waitOnMainThread``. Prefer `await
    /// guarantee.async()`.
    @inlinable
    public final func wait() -> T {
        guard case .fulfilled(let value) = waitForResult() else {
            preconditionFailure("Internal inconsistency: a guarantee rejected")
        }
        return value
    }
}

extension Guarantee where T == Void {
    /// Makes a guarantee resolved with `()`.
    @inlinable
    public convenience init() {
        self.init(state: .fulfilled(()))
    }

    /// A guarantee resolved with `()`.
    @inlinable
    public static var value: Guarantee<Void> {
        Guarantee(state: .fulfilled(()))
    }
}

// MARK: - Chaining without errors

extension Guarantee {
    /// Consumes the value.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// after(seconds: 1).done { hideToast() }
    /// ```
    @inlinable
    @discardableResult
    public func done(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) -> Void
    ) -> Guarantee<Void> {
        nonisolated(unsafe) let body = body
        return self.done(on: defaultQueue(conf.Q.return, for: isolation, calling: "done"), flags: flags, body)
    }

    /// `done` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchData().done(on: .global()) { try $0.write(to: cacheURL) }
    /// ```
    @inlinable
    @discardableResult
    public func done(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (T) -> Void
    ) -> Guarantee<Void> {
        link(GuaranteeMapLink(on: on, flags: flags, body))
    }

    /// Looks at the value and passes it on.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    @inlinable
    public func get(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) -> Void
    ) -> Guarantee<T> {
        nonisolated(unsafe) let body = body
        return self.get(on: defaultQueue(conf.Q.return, for: isolation, calling: "get"), flags: flags, body)
    }

    /// `get` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchData().get(on: .global()) { try $0.write(to: cacheURL) }
    /// ```
    @inlinable
    public func get(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (T) -> Void
    ) -> Guarantee<T> {
        link(GuaranteeGetLink(on: on, flags: flags, body))
    }

    /// Transforms the value.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// Guarantee.value(2).map { $0 * 21 }   // Guarantee<Int>
    /// ```
    @inlinable
    public func map<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) -> U
    ) -> Guarantee<U> {
        nonisolated(unsafe) let body = body
        return self.map(on: defaultQueue(conf.Q.map, for: isolation, calling: "map"), flags: flags, body)
    }

    /// `map` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchData().map(on: .global()) { try JSONDecoder().decode(User.self, from: $0) }
    /// ```
    @inlinable
    public func map<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (T) -> U
    ) -> Guarantee<U> {
        mapUnchecked(on: on, flags: flags, body)
    }

    /// `map(on:flags:_:)` for a body that is not `sending` (the library's own steps, which capture generic
    /// metatypes).
    @inlinable
    func mapUnchecked<U>(on: DispatchQueue?, flags: DispatchWorkItemFlags?, _ body: @escaping (T) -> U) -> Guarantee<U>
    {
        link(GuaranteeMapLink(on: on, flags: flags, body))
    }

    /// Runs `body` with the value and follows the guarantee it returns.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// after(seconds: 1).then { after(seconds: 1) }
    /// ```
    @inlinable
    @discardableResult
    public func then<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (T) -> Guarantee<U>
    ) -> Guarantee<U> {
        nonisolated(unsafe) let body = body
        return self.then(on: defaultQueue(conf.Q.map, for: isolation, calling: "then"), flags: flags, body)
    }

    /// `then` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUser().then(on: .global()) { user in fetchAvatar(user) }
    /// ```
    @inlinable
    @discardableResult
    public func then<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (T) -> Guarantee<U>
    ) -> Guarantee<U> {
        thenUnchecked(on: on, flags: flags, body)
    }

    /// `then(on:flags:_:)` for a body that is not `sending`.
    @inlinable
    func thenUnchecked<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        _ body: @escaping (T) -> Guarantee<U>
    ) -> Guarantee<U> {
        link(GuaranteeThenLink(on: on, flags: flags, body))
    }

    /// Discards the value.
    @inlinable
    public func asVoid() -> Guarantee<Void> {
        map(on: nil) { _ in }
    }
}

extension Guarantee {
    /// Makes a guarantee from a `Swift.Result` that cannot fail.
    @inlinable
    public convenience init(_ result: Swift.Result<T, Never>) {
        switch result {
        case .success(let value): self.init(state: .fulfilled(value))
        }
    }
}

// Safe to share between threads: all mutable state is behind the guarantee's lock, and the value crosses
// threads only when `T` is `Sendable`.
extension Guarantee: @unchecked Sendable where T: Sendable {}
