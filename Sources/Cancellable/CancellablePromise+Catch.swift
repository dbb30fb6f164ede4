public import Dispatch
public import PromiseCore

extension CancellablePromise {
    /// Handles an error at the end of a cancellable chain.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// let chain = download(url).done { show($0) }.catch { show($0) }
    /// stopButton.onTap { chain.cancel() }
    /// ```
    ///
    /// With the default policy a cancellation is not an error: `body` does not run for it;
    /// `policy: .allErrors` sees it.
    ///
    /// - Returns: a finalizer that can also cancel the chain.
    @discardableResult
    public func `catch`(
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) -> Void
    ) -> CancellableFinalizer {
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
    @discardableResult
    public func `catch`(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        _ body: sending @escaping (Error) -> Void
    ) -> CancellableFinalizer {
        let finalizer = promise.catch(on: on, flags: flags, policy: policy, body)
        // While someone holds the finalizer, the chain can be cancelled through it: it holds the last link, so the
        // link's votes upstream stand (but not its box: a `catch` body that captures the finalizer's owner
        // closes no cycle).
        let chain = CancelHold(self)
        return CancellableFinalizer(finalizer) { chain.cancel(reason: $0) }
    }

    /// Replaces an error with the result of another promise; the chain stays cancellable, and so does the
    /// recovery if it returns a ``CancellablePromise``.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// download(from: primary).recover { _ in download(from: mirror) }
    /// ```
    ///
    /// With the default policy a cancellation passes through untouched: a cancelled chain stays cancelled.
    public func recover<U: Thenable>(
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) throws -> U
    ) -> CancellablePromise<T> where U.T == T {
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
    public func recover<U: Thenable>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        _ body: sending @escaping (Error) throws -> U
    ) -> CancellablePromise<T> where U.T == T {
        recoverFollowing(on: on, flags: flags, policy: policy, body)
    }

    private func recoverFollowing<U: Thenable>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags?,
        policy: CatchPolicy,
        _ body: @escaping (Error) throws -> U
    ) -> CancellablePromise<T> where U.T == T {
        chain(on: on, flags: flags, RecoverStep(policy: policy, body: body))
    }

    /// Replaces every error that reaches it — a cancellation of the work upstream included — with the value of
    /// a guarantee, as PromiseKit's form does; the chain stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// let avatar = download(avatarURL).recover { _ in .value(placeholder) }
    /// stopButton.onTap { avatar.cancel() }   // still stops the download
    /// ```
    ///
    /// Cancelling the returned promise itself rejects it with ``CancellablePromiseError/cancelled`` (it is not
    /// a guarantee: it can be cancelled) and skips `body`. Annotate the result as `Guarantee<T>` to get
    /// PromiseKit's guarantee, which cannot cancel the chain.
    @discardableResult
    public func recover(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) -> Guarantee<T>
    ) -> CancellablePromise<T> {
        nonisolated(unsafe) let body = body
        return self.recover(on: defaultQueue(conf.Q.map, for: isolation, calling: "recover"), flags: flags, body)
    }

    /// `recover` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchFromNetwork().recover(on: .global()) { _ in readFromDisk() }
    /// ```
    @discardableResult
    public func recover(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (Error) -> Guarantee<T>
    ) -> CancellablePromise<T> {
        chain(on: on, flags: flags, RecoverStep(policy: .allErrors, body: body))
    }

    /// Replaces an error with the result of a cancellable promise; cancelling the chain cancels it.
    ///
    /// ```swift
    /// download(from: primary).recover { _ in download(from: mirror) }   // both CancellablePromises
    /// ```
    // Disfavoured: on a `CancellablePromise<Void>`, a body that only throws would otherwise match this form and
    // the Void form equally (PromiseKit's `recover { error in guard … else { throw error } }`).
    @_disfavoredOverload
    public func recover(
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) throws -> CancellablePromise<T>
    ) -> CancellablePromise<T> {
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
    @_disfavoredOverload
    public func recover(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        _ body: sending @escaping (Error) throws -> CancellablePromise<T>
    ) -> CancellablePromise<T> {
        recoverFollowing(on: on, flags: flags, policy: policy, body)
    }

    /// Runs `body` when the promise resolves — fulfilled, rejected or cancelled — and passes the result on.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// spinner.start()
    /// let chain = download(url).ensure { spinner.stop() }.done { show($0) }
    /// ```
    ///
    /// `body` always runs, even when the chain is cancelled.
    public func ensure(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping () -> Void
    ) -> CancellablePromise<T> {
        nonisolated(unsafe) let body = body
        return self.ensure(on: defaultQueue(conf.Q.return, for: isolation, calling: "ensure"), flags: flags, body)
    }

    /// `ensure` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// upload().ensure(on: .global()) { try? FileManager.default.removeItem(at: temporaryFile) }
    /// ```
    public func ensure(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping () -> Void
    ) -> CancellablePromise<T> {
        chain(on: on, flags: flags, EnsureStep(body: body))
    }

    /// Runs an asynchronous clean-up when the promise resolves, either way, and passes the result on once it
    /// finishes. `body` always runs, even when the chain is cancelled.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// download(url).ensureThen { cache.flush() }   // returns Guarantee<Void>
    /// ```
    public func ensureThen(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping () -> Guarantee<Void>
    ) -> CancellablePromise<T> {
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
    public func ensureThen(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping () -> Guarantee<Void>
    ) -> CancellablePromise<T> {
        ensureThen(on: on, flags: flags) { Promise(body()) }
    }

    /// Runs a clean-up that can fail when the promise resolves, either way; a failing clean-up rejects the
    /// chain. `body` runs exactly once, even when the chain is cancelled.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// upload(file).ensureThen { storage.deleteTemporary(file) }   // returns Promise<Void>
    /// ```
    public func ensureThen(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping () -> Promise<Void>
    ) -> CancellablePromise<T> {
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
    public func ensureThen(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping () -> Promise<Void>
    ) -> CancellablePromise<T> {
        chain(on: on, flags: flags, EnsureThenStep(body: body))
    }
}

extension CancellablePromise {
    /// Ends a chain whose errors you deliberately ignore; they are logged as `LogEvent.cauterized`. The
    /// finalizer can still cancel the chain.
    ///
    /// ```swift
    /// let prefetch = download(url).done { cache.store($0) }.cauterize()
    /// prefetch.cancel()
    /// ```
    @discardableResult
    public func cauterize() -> CancellableFinalizer {
        self.catch { error in
            conf.logHandler(.cauterized(error))
        }
    }
}

extension CancellablePromise where T == Void {
    /// Handles every error that reaches it — a cancellation of the work upstream included — as PromiseKit's
    /// Void form does; the chain stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// let saved = upload(document).recover { error in log(error) }   // CancellablePromise<Void>
    /// stopButton.onTap { saved.cancel() }
    /// ```
    ///
    /// Cancelling the returned promise itself rejects it with ``CancellablePromiseError/cancelled`` and skips
    /// `body`. Annotate the result as `Guarantee<Void>` to get PromiseKit's guarantee instead.
    @discardableResult
    public func recover(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) -> Void
    ) -> CancellablePromise<Void> {
        nonisolated(unsafe) let body = body
        return self.recover(on: defaultQueue(conf.Q.map, for: isolation, calling: "recover"), flags: flags, body)
    }

    /// `recover` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchFromNetwork().recover(on: .global()) { _ in readFromDisk() }
    /// ```
    @discardableResult
    public func recover(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping (Error) -> Void
    ) -> CancellablePromise<Void> {
        chain(on: on, flags: flags, RecoverVoidStep(policy: .allErrors, body: body))
    }

    /// Handles an error, or rethrows it to keep the chain rejected; the chain stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// upload(document).recover { error in
    ///     guard error is DiskFullError else { throw error }
    /// }
    /// ```
    ///
    /// With the default policy a cancellation passes through untouched: a cancelled chain stays cancelled.
    public func recover(
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Error) throws -> Void
    ) -> CancellablePromise<Void> {
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
    public func recover(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        policy: CatchPolicy = conf.catchPolicy,
        _ body: sending @escaping (Error) throws -> Void
    ) -> CancellablePromise<Void> {
        chain(on: on, flags: flags, RecoverVoidStep(policy: policy, body: body))
    }
}

/// What `catch` on a ``CancellablePromise`` returns: runs something after the chain, and can still cancel it.
///
/// ```swift
/// let chain = download(url).done { show($0) }.catch { show($0) }
/// chain.finally { spinner.stop() }
/// stopButton.onTap { chain.cancel() }
/// ```
public final class CancellableFinalizer {
    private let finalizer: PMKFinalizer
    private let cancelChain: (CancellationReason) -> Bool

    /// Resolves once the chain has finished and any `catch` handler has run; a ``CancelScope`` watches it.
    var finished: Guarantee<Void> { finalizer.box }

    init(_ finalizer: PMKFinalizer, cancel: @escaping (CancellationReason) -> Bool) {
        self.finalizer = finalizer
        self.cancelChain = cancel
    }

    /// Runs `body` once the chain has finished, cancelled or not, and any `catch` handler has run.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.return` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
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
    public func finally(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ body: sending @escaping () -> Void
    ) {
        finalizer.finally(on: on, flags: flags, body)
    }

    /// Cancels the chain this finalizer ends.
    ///
    /// - Returns: whether this call cancelled it.
    @discardableResult
    public func cancel() -> Bool {
        cancelChain(.user)
    }

    /// Cancels the chain this finalizer ends, saying why.
    ///
    /// ```swift
    /// chain.cancel(reason: .superseded)
    /// ```
    ///
    /// - Returns: whether this call cancelled it.
    @discardableResult
    public func cancel(reason: CancellationReason) -> Bool {
        cancelChain(reason)
    }
}
