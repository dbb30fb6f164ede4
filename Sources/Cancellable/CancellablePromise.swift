public import PromiseCore

/// A promise that can be cancelled: `cancel()` stops the work behind it and rejects it with
/// ``CancellablePromiseError/cancelled``.
///
/// ```swift
/// let download = CancellablePromise<Data> { resolver in
///     let task = session.dataTask(with: url) { data, _, error in resolver.resolve(data, error) }
///     task.resume()
///     return { task.cancel() }            // the cancel handler
/// }
/// stopButton.onTap { download.cancel() }
/// ```
///
/// Chain methods (`then`, `map`, `done`, `recover`, `ensure`, …) return cancellable promises too, and
/// cancelling any link cancels every pending link upstream and the promise a running `then` body returned. A
/// promise that several branches consume is cancelled through them only once every branch has cancelled — a branch
/// nobody holds any more (its object and every link built on it released) does not count.
/// Every cancellation carries a ``CancellationReason`` (``cancel(reason:)``).
///
/// > Note: cancellation is decided once, under one lock. If `cancel()` wins against the work's own result,
/// > the promise is rejected before `cancel()` returns, then the cancel handler runs (on the cancelling
/// > thread, exactly once), then the cancellation spreads up the chain. If the result wins, `cancel()` does
/// > nothing and the handler never runs. See `Docs/Design/0003-cancellation.md`.
public final class CancellablePromise<T>: Thenable, CatchMixin {
    // The hot path — create, link, cancel, resolve — is `@inlinable`, so that it is specialised in the
    // caller's module (as PromiseCore's is): unspecialised generic code looks up generic metadata at run time, a
    // large share of a cancelled `map`'s cost (the benchmark package's cancel-chain measures it).

    /// The underlying promise, which holds the cancellation state as its arbiter; its box is resolved only through
    /// the cancellation state machine.
    @usableFromInline
    package let promise: ArbitratedPromise<T>
    /// Cancels this promise; what `OnCancel` callbacks elsewhere hold instead of the promise itself.
    @usableFromInline
    let handle: CancelHandle

    /// A pending cancellable promise that runs `callbacks` if it is cancelled — and, with
    /// `cancelsInputsOnResolution` (an `autoCancel` combinator), also when it resolves, with
    /// ``CancellationReason/lostRace`` (fulfilled) or ``CancellationReason/anotherInputFailed`` (rejected).
    @inlinable
    convenience init(callbacks: consuming OnCancelList = OnCancelList(), cancelsInputsOnResolution: Bool = false) {
        let state = LockedCancellationState(
            callbacks: callbacks,
            cancelsInputsOnResolution: cancelsInputsOnResolution,
            rejectBox: Self.rejectBox
        )
        self.init(box: ArbitratedPromise(arbiter: state), state: state)
    }

    /// The cancellable promise of `box`, whose arbiter is `state`: made before anything else can see either.
    @inlinable
    init(box: ArbitratedPromise<T>, state: LockedCancellationState) {
        promise = box
        handle = CancelHandle(state: state)
    }

    /// A pending cancellable promise made by one of the public initialisers or `pending()`, created at
    /// `file`:`line` (recorded in debug builds, for `PromiseDiagnostics`).
    @inlinable
    convenience init(callbacks: OnCancelList = OnCancelList(), file: StaticString, line: UInt) {
        self.init(callbacks: callbacks)
        promise.recordCreation(file: file, line: line, as: CancellablePromise<T>.self)
    }

    // Nobody can call `cancel()` on this promise or attach a link to it any more. If no vote on it is open either,
    // it is orphaned: it withdraws its own votes upstream (an orphaned branch does not keep shared work alive). Its
    // cancel handlers stay until it resolves: they may own the work.
    deinit {
        let state = handle.state
        let action = state.withLock { $0.releaseHolder() }
        state.carryOut(consume action)
    }

    /// Rejects a box of this type with a cancellation (see ``LockedCancellationState/rejectBox``).
    @inlinable
    static var rejectBox: (AnyObject, CancellationReason) -> Void {
        { box, reason in
            unsafeDowncast(box, to: Promise<T>.self).resolve(.rejected(CancellablePromiseError.rejection(for: reason)))
        }
    }

    /// An already-resolved cancellable promise.
    @inlinable
    convenience init(resolved result: Result<T>) {
        let state = LockedCancellationState(
            callbacks: OnCancelList(),
            cancelsInputsOnResolution: false,
            rejectBox: Self.rejectBox
        )
        self.init(box: ArbitratedPromise(arbiter: state, state: result), state: state)
        _ = handle.state.withLock { $0.resolve() }
    }

    // MARK: Creating

    /// Makes a cancellable promise from a body that starts the work and returns its cancel handler.
    ///
    /// ```swift
    /// CancellablePromise<Int> { resolver in
    ///     let timer = startTimer { resolver.fulfill(42) }
    ///     return { timer.invalidate() }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - file: where the promise is made, for `PromiseDiagnostics` (debug builds only).
    ///   - line: the line, likewise.
    ///   - body: starts the work, resolves it through the resolver, and returns what to run on
    ///     cancel. If it throws, the promise rejects with the error.
    @inlinable
    public convenience init(
        file: StaticString = #fileID,
        line: UInt = #line,
        resolver body: (Resolver<T>) throws -> (() -> Void)
    ) {
        self.init(file: file, line: line) { resolver -> (CancellationReason) -> Void in
            let cancelHandler = try body(resolver)
            return { _ in cancelHandler() }
        }
    }

    /// Makes a cancellable promise from a body that starts the work and returns a cancel handler that receives
    /// the ``CancellationReason``.
    ///
    /// ```swift
    /// CancellablePromise<Data> { resolver in
    ///     let task = startDownload(resolver)
    ///     return { reason in
    ///         log("download stopped: \(reason)")
    ///         task.cancel()
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - file: where the promise is made, for `PromiseDiagnostics` (debug builds only).
    ///   - line: the line, likewise.
    ///   - body: starts the work, resolves it through the resolver, and returns what to run on
    ///     cancel. If it throws, the promise rejects with the error.
    @_disfavoredOverload
    @inlinable
    public convenience init(
        file: StaticString = #fileID,
        line: UInt = #line,
        resolver body: (Resolver<T>) throws -> ((CancellationReason) -> Void)
    ) {
        self.init(file: file, line: line)
        do {
            addCancelAction(try body(makeResolver()))
        } catch {
            resolve(.rejected(error), inHandler: false)
        }
    }

    /// Makes a cancellable promise that follows `promise` and runs `cancel` if it is cancelled first.
    ///
    /// ```swift
    /// let task = session.dataTask(with: url)
    /// let download = CancellablePromise(using: promiseFor(task), cancel: { task.cancel() })
    /// ```
    public convenience init(
        using promise: Promise<T>,
        cancel: @escaping () -> Void,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        self.init(using: promise, cancel: { (_: CancellationReason) in cancel() }, file: file, line: line)
    }

    /// Makes a cancellable promise that follows `promise` and runs `cancel` with the
    /// ``CancellationReason`` if it is cancelled first.
    ///
    /// ```swift
    /// let download = CancellablePromise(using: promiseFor(task), cancel: { reason in
    ///     if reason == .timeout { metrics.countTimeout() }
    ///     task.cancel()
    /// })
    /// ```
    public convenience init(
        using promise: Promise<T>,
        cancel: @escaping (CancellationReason) -> Void,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        self.init(callbacks: OnCancelList(cancel), file: file, line: line)
        follow(promise)
    }

    /// Makes a cancellable promise from a body that receives a `cancelPromise`: it rejects with
    /// ``CancellablePromiseError/cancelled`` when this promise is cancelled (the error's `reason` is the
    /// cancellation's), and fulfills once this promise can no longer be cancelled — it resolved, or it was
    /// released while pending (nobody holds it or a link built on it) — so that nothing waits on it forever.
    ///
    /// ```swift
    /// CancellablePromise<Data>(wrapper: { cancelPromise in
    ///     when(download(url), while: cancelPromise)
    /// })
    /// ```
    public convenience init(
        file: StaticString = #fileID,
        line: UInt = #line,
        wrapper body: (_ cancelPromise: Promise<Void>) -> Promise<T>
    ) {
        let cancelPromise = CancelPromise()
        self.init(callbacks: OnCancelList(.cancelPromise(cancelPromise)), file: file, line: line)
        follow(body(cancelPromise.promise))
    }

    /// Makes a pending cancellable promise and the resolver that settles it. Cancelling it only rejects it.
    ///
    /// ```swift
    /// let (promise, resolver) = CancellablePromise<Int>.pending()
    /// resolver.fulfill(1)
    /// ```
    public static func pending(
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> (promise: CancellablePromise<T>, resolver: Resolver<T>) {
        let promise = CancellablePromise<T>(file: file, line: line)
        return (promise, promise.makeResolver())
    }

    /// Makes a fulfilled cancellable promise.
    public static func value(_ value: T) -> CancellablePromise<T> {
        CancellablePromise(resolved: .fulfilled(value))
    }

    /// Makes a rejected cancellable promise.
    public convenience init(error: Error) {
        self.init(resolved: .rejected(error))
    }

    // MARK: Cancelling

    /// Cancels the promise if it is still pending, for ``CancellationReason/user``.
    ///
    /// ```swift
    /// if download.cancel() { print("stopped before it finished") }
    /// ```
    ///
    /// Thread-safe and idempotent. If the promise was pending, it is rejected with
    /// ``CancellablePromiseError/cancelled`` before this returns, its cancel handler runs exactly once, and
    /// the cancellation reaches every pending link upstream (each one once all the branches consuming it have
    /// cancelled) and the promise a running `then` body returned.
    ///
    /// - Returns: whether this call cancelled the promise (`false` if it had already resolved or been
    ///   cancelled).
    @inlinable
    @discardableResult
    public func cancel() -> Bool {
        handle.cancel(reason: .user, box: promise)
    }

    /// Cancels the promise if it is still pending, saying why.
    ///
    /// ```swift
    /// searchResults.cancel(reason: .superseded)   // a newer query replaced it
    /// ```
    ///
    /// Behaves as ``cancel()``; the rejection is a ``CancellablePromiseError`` whose `reason` is `reason`,
    /// cancel handlers that take a reason receive it, and it travels up the chain with the cancellation.
    ///
    /// - Returns: whether this call cancelled the promise.
    @inlinable
    @discardableResult
    public func cancel(reason: CancellationReason) -> Bool {
        handle.cancel(reason: reason, box: promise)
    }

    /// Whether the promise was cancelled: by ``cancel()``, or by a cancellation that reached it through its
    /// chain (its error is a cancellation).
    public var isCancelled: Bool {
        handle.state.withLock(\.isCancelled) || promise.error?.isCancelled == true
    }

    /// Why the promise was cancelled, or `nil` if it was not (or not by a ``CancellablePromise``
    /// cancellation).
    ///
    /// ```swift
    /// download.timeout(seconds: 30).catch(policy: .allErrors) { _ in
    ///     print(download.cancellationReason == .timeout)   // true if the deadline passed
    /// }
    /// ```
    public var cancellationReason: CancellationReason? {
        handle.state.withLock(\.cancellationReason) ?? promise.error?.cancellationReason
    }

    /// The underlying promise, which cannot be cancelled; it resolves like this one.
    ///
    /// ```swift
    /// let plain: Promise<Data> = download.asPromise()
    /// ```
    public func asPromise() -> Promise<T> {
        promise
    }

    /// Blocks the calling thread until the promise resolves, then returns its value or throws its error — a
    /// cancellation's `CancellablePromiseError` too. Cancelling it from another thread ends the wait.
    ///
    /// ```swift
    /// let (data, _) = try URLSession.shared.cancellableData(from: url).wait()   // off the main thread
    /// ```
    ///
    /// > Warning: on the main thread (or main queue) this logs `LogEvent.waitOnMainThread`, and never returns if the
    /// > promise needs the main queue to resolve — as a handler written on the main actor without `on:` does. Prefer
    /// > `try await promise.async()`, which also cancels the promise if its task is cancelled.
    public func wait() throws -> T {
        try promise.wait()
    }

    // MARK: Thenable

    /// Calls `to` with the result once it is known (at once if it is known already).
    @inlinable
    public func pipe(to: @escaping (Result<T>) -> Void) {
        promise.pipe(to: to)
    }

    /// The result, or `nil` while pending.
    @inlinable
    public var result: Result<T>? {
        promise.result
    }

    // MARK: Internals shared by the module

    /// Resolves the promise with `result` unless it was cancelled or resolved already.
    ///
    /// - Returns: whether `result` won.
    @inlinable
    @discardableResult
    func resolve(_ result: Result<T>, inHandler: Bool) -> Bool {
        sink.resolve(result, inHandler: inHandler)
    }

    /// Runs `action` if the promise is cancelled while pending, at once if it is already cancelled.
    @inlinable
    func addCancelAction(_ action: @escaping CancellationState.OnCancel) {
        handle.add(action)
    }

    /// Runs `action` if the promise is cancelled while pending, at once if it is already cancelled.
    @inlinable
    func addCancelAction(_ action: @escaping () -> Void) {
        handle.add { _ in action() }
    }

    /// Opens a vote for a consumer that may cancel this promise (see ``CancelHandle/addVote(referencing:)``).
    @inlinable
    func addVote() -> Vote {
        handle.addVote(referencing: promise)
    }

    /// Opens a vote for a consumer that keeps it in its cancel callbacks and nowhere else (see
    /// ``CancelHandle/addVoteEntry(referencing:)``).
    @inlinable
    func addVoteEntry() -> OnCancelEntry {
        handle.addVoteEntry(referencing: promise)
    }

    /// What delivers results to this promise.
    @inlinable
    var sink: LinkSink<T> {
        LinkSink(box: promise, state: handle.state)
    }

    /// A resolver whose results go through the cancellation state machine.
    @inlinable
    func makeResolver() -> Resolver<T> {
        Resolver(arbitrated: promise)
    }

    /// Resolves like `thenable` (and cancels it on cancel, if it is cancellable).
    @inlinable
    func follow<U: Thenable>(_ thenable: U) where U.T == T {
        sink.follow(thenable, inHandler: false)
    }
}

/// The `cancelPromise` of ``CancellablePromise/init(file:line:wrapper:)``: rejected when the cancellable promise
/// is cancelled; fulfilled when its cancel callback is released uncalled (the cancellable promise resolved, or
/// nobody can cancel it any more), as CancellablePromiseKit fulfills it when the cancellable promise is released.
@usableFromInline
final class CancelPromise {
    let promise = Promise<Void>(state: nil)

    @usableFromInline
    func reject(_ reason: CancellationReason) {
        promise.resolve(.rejected(CancellablePromiseError.rejection(for: reason)))
    }

    deinit {
        promise.resolve(.fulfilled(()))  // ignored if rejected already
    }
}

// Safe to share between threads: the promise's state is behind its box's lock, the cancellation state
// behind its own, and values cross threads only when `T` is `Sendable`.
extension CancellablePromise: @unchecked Sendable where T: Sendable {}
