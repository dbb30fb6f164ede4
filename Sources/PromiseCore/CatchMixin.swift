public import Dispatch

/// The error-handling half of a promise: `catch`, `recover`, `ensure`, `ensureThen`, `cauterize`.
///
/// `Promise` conforms; `Guarantee` does not, because it cannot fail.
///
/// ```swift
/// fetchUser()
///     .recover { _ in Promise.value(User.guest) }
///     .ensure { spinner.stop() }
///     .done { show($0) }
///     .catch { show($0) }
/// ```
public protocol CatchMixin: Thenable {}

extension CatchMixin {
    /// Handles an error at the end of a chain.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUser().done { show($0) }.catch { error in show(error) }
    /// ```
    ///
    /// - Parameters:
    ///   - flags: work-item flags for the dispatch to the default queue.
    ///   - policy: whether `body` sees cancellation errors. The default skips them.
    ///   - body: the error handler.
    ///   - isolation: the caller's actor, which decides the default queue; leave the default.
    /// - Returns: a finalizer, to run something whether or not an error happened.
    @inlinable
    @discardableResult
    public func `catch`(
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) -> Void
    ) -> PMKFinalizer {
        nonisolated(unsafe) let body = body
        return self.`catch`(
            on: defaultQueue(conf.Q.return, for: isolation, calling: "catch"),
            flags: flags,
            policy: policy,
            body
        )
    }

    /// `catch` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// upload().catch(on: .global()) { error in logger.log("upload failed: \(error)") }
    /// ```
    @inlinable
    @discardableResult
    public func `catch`(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        _ body: sending @escaping (Error) -> Void
    ) -> PMKFinalizer {
        // The finalizer's guarantee holds the body, and the handler on this promise captures only it.
        let link = CatchLink<T>(on: on, flags: flags, policy: policy, body)
        pipe { [link] in link.receive($0) }
        return PMKFinalizer(box: link)
    }

    /// Replaces an error with the result of another promise.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchFromNetwork().recover { _ in fetchFromCache() }
    /// ```
    ///
    /// - Parameters:
    ///   - flags: work-item flags for the dispatch to the default queue.
    ///   - policy: whether `body` sees cancellation errors; skipped errors pass through.
    ///   - body: returns the recovery; throwing rejects the chain with the thrown error.
    ///   - isolation: the caller's actor, which decides the default queue; leave the default.
    /// - Returns: a promise that fulfills with the original value or resolves like the recovery.
    @inlinable
    public func recover<U: Thenable>(
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) throws -> U
    ) -> Promise<T> where U.T == T {
        nonisolated(unsafe) let body = body
        return self.recover(
            on: defaultQueue(conf.Q.map, for: isolation, calling: "recover"),
            flags: flags,
            policy: policy,
            body
        )
    }

    /// `recover` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchFromNetwork().recover(on: .global()) { _ in readFromDisk() }
    /// ```
    @inlinable
    public func recover<U: Thenable>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        _ body: sending @escaping (Error) throws -> U
    ) -> Promise<T> where U.T == T {
        // One object: the link holds the body, and the handler on this promise captures only the link.
        let link = RecoverLink<U>(on: on, flags: flags, policy: policy, body)
        pipe { [link] in link.receive($0) }
        return link
    }

    /// Replaces every error, cancellation included, with the value of a guarantee.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// let name: Guarantee<String> = fetchName().recover { _ in .value("Guest") }
    /// ```
    @inlinable
    @discardableResult
    public func recover(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) -> Guarantee<T>
    ) -> Guarantee<T> {
        nonisolated(unsafe) let body = body
        return self.recover(on: defaultQueue(conf.Q.map, for: isolation, calling: "recover"), flags: flags, body)
    }

    /// `recover` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchFromNetwork().recover(on: .global()) { _ in readFromDisk() }
    /// ```
    @inlinable
    @discardableResult
    public func recover(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (Error) -> Guarantee<T>
    ) -> Guarantee<T> {
        let box = Guarantee<T>(state: nil)
        pipe { result in
            switch result {
            case .fulfilled:
                box.resolveInHandler(result)
            case .rejected(let error):
                dispatch(on: on, flags: flags) {
                    body(error).pipe(to: box.resolveInHandler)
                }
            }
        }
        return box
    }

    /// Runs `body` when the promise resolves, either way, and passes the result on.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// spinner.start()
    /// fetchUser().ensure { spinner.stop() }.done { show($0) }.catch { show($0) }
    /// ```
    @inlinable
    public func ensure(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping () -> Void
    ) -> Promise<T> {
        nonisolated(unsafe) let body = body
        return self.ensure(on: defaultQueue(conf.Q.return, for: isolation, calling: "ensure"), flags: flags, body)
    }

    /// `ensure` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// upload().ensure(on: .global()) { try? FileManager.default.removeItem(at: temporaryFile) }
    /// ```
    @inlinable
    public func ensure(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping () -> Void
    ) -> Promise<T> {
        // One object: the link holds the body, and the handler on this promise captures only the link.
        let link = EnsureLink<T>(on: on, flags: flags, body)
        pipe { [link] in link.receive($0) }
        return link
    }

    /// Runs an asynchronous clean-up when the promise resolves, either way, and passes the result on once
    /// it finishes.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// upload(file).ensureThen { removeTemporaryFile() }   // returns Guarantee<Void>
    /// ```
    @inlinable
    public func ensureThen(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping () -> Guarantee<Void>
    ) -> Promise<T> {
        nonisolated(unsafe) let body = body
        return self.ensureThen(
            on: defaultQueue(conf.Q.return, for: isolation, calling: "ensureThen"),
            flags: flags,
            body
        )
    }

    /// `ensureThen` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// upload().ensureThen(on: .global()) { deleteTemporaryFiles() }
    /// ```
    @inlinable
    public func ensureThen(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping () -> Guarantee<Void>
    ) -> Promise<T> {
        ensureThen(on: on, flags: flags) { Promise(body()) }
    }

    /// Runs a clean-up that can fail when the promise resolves, either way.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// The chain waits for the clean-up. If the clean-up rejects, the chain rejects with its error, even if
    /// the promise had fulfilled; otherwise the promise's own result passes on. `body` runs exactly once.
    ///
    /// ```swift
    /// download(file).ensureThen { session.close() }   // returns Promise<Void>
    /// ```
    @inlinable
    public func ensureThen(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping () -> Promise<Void>
    ) -> Promise<T> {
        nonisolated(unsafe) let body = body
        return self.ensureThen(
            on: defaultQueue(conf.Q.return, for: isolation, calling: "ensureThen"),
            flags: flags,
            body
        )
    }

    /// `ensureThen` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// upload().ensureThen(on: .global()) { deleteTemporaryFiles() }
    /// ```
    @inlinable
    public func ensureThen(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping () -> Promise<Void>
    ) -> Promise<T> {
        let box = Promise<T>(state: nil)
        pipe { result in
            dispatch(on: on, flags: flags) {
                body().pipe { cleanup in
                    switch cleanup {
                    case .fulfilled: box.resolveInHandler(result)
                    case .rejected(let error): box.resolveInHandler(.rejected(error))
                    }
                }
            }
        }
        return box
    }

    /// Ends a chain whose errors you deliberately ignore; they are logged as ``LogEvent/cauterized(_:)``.
    ///
    /// ```swift
    /// analytics.send(event).cauterize()
    /// ```
    @inlinable
    @discardableResult
    public func cauterize() -> PMKFinalizer {
        self.catch { error in
            conf.logHandler(.cauterized(error))
        }
    }
}

extension CatchMixin where T == Void {
    /// Handles every error, cancellation included, turning the chain into a guarantee.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// save(document).recover { error in log(error) }.done { close() }
    /// ```
    @inlinable
    @discardableResult
    public func recover(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) -> Void
    ) -> Guarantee<Void> {
        nonisolated(unsafe) let body = body
        return self.recover(on: defaultQueue(conf.Q.map, for: isolation, calling: "recover"), flags: flags, body)
    }

    /// `recover` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchFromNetwork().recover(on: .global()) { _ in readFromDisk() }
    /// ```
    @inlinable
    @discardableResult
    public func recover(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (Error) -> Void
    ) -> Guarantee<Void> {
        recover(on: on, flags: flags) { (error: Error) -> Guarantee<Void> in
            body(error)
            return .value
        }
    }

    /// Handles an error, or rethrows it to keep the chain rejected.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// save(document).recover { error in
    ///     guard error is DiskFullError else { throw error }
    /// }
    /// ```
    @inlinable
    public func recover(
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) throws -> Void
    ) -> Promise<Void> {
        nonisolated(unsafe) let body = body
        return self.recover(
            on: defaultQueue(conf.Q.map, for: isolation, calling: "recover"),
            flags: flags,
            policy: policy,
            body
        )
    }

    /// `recover` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchFromNetwork().recover(on: .global()) { _ in readFromDisk() }
    /// ```
    @inlinable
    public func recover(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        _ body: sending @escaping (Error) throws -> Void
    ) -> Promise<Void> {
        let box = Promise<Void>(state: nil)
        pipe { result in
            switch result {
            case .rejected(let error) where policy.handles(error):
                dispatch(on: on, flags: flags) {
                    do {
                        try body(error)
                        box.resolveInHandler(.fulfilled(()))
                    } catch {
                        box.resolveInHandler(.rejected(error))
                    }
                }
            case .fulfilled, .rejected:
                box.resolveInHandler(result)
            }
        }
        return box
    }
}

extension CatchPolicy {
    /// Whether a handler with this policy sees `error`.
    @inlinable
    package func handles(_ error: Error) -> Bool {
        self == .allErrors || !error.isCancelled
    }
}

/// What `catch` returns: lets you run something after the chain, whether or not it failed.
///
/// ```swift
/// fetchUser()
///     .done { show($0) }
///     .catch { show($0) }
///     .finally { spinner.stop() }
/// ```
public final class PMKFinalizer: @unchecked Sendable {
    // @unchecked Sendable: its only state is `box`, which is thread-safe behind its own lock.
    /// Resolves once the chain has finished and any `catch` handler has run.
    @usableFromInline
    package let box: Guarantee<Void>

    /// A finalizer over `box`, which resolves once the `catch` it finalizes has finished.
    @inlinable
    init(box: Guarantee<Void>) {
        self.box = box
    }

    /// Runs `body` once the chain has finished and any `catch` handler has run.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    @inlinable
    public func finally(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping () -> Void
    ) {
        nonisolated(unsafe) let body = body
        self.finally(on: defaultQueue(conf.Q.return, for: isolation, calling: "finally"), flags: flags, body)
    }

    /// `finally` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// upload().catch(on: nil) { logger.log("\($0)") }.finally(on: nil) { semaphore.signal() }
    /// ```
    @inlinable
    public func finally(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping () -> Void
    ) {
        box.append { _ in
            dispatch(on: on, flags: flags, body)
        }
    }
}
