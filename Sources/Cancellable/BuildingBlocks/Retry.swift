public import Dispatch
public import Foundation
public import PromiseCore

/// Runs `body` until it fulfills, up to `attempts` times, waiting between attempts; `cancel()` stops it all.
///
/// Attempts after the first start on the main queue if `retry` is called on the main actor (`body` may then use
/// main-actor state), otherwise on `conf.Q.map`; on another actor, pass `on:`. `shouldRetry` runs inline on the
/// rejecting thread, so it is `sending` in both forms: it cannot use main-actor state.
///
/// ```swift
/// let download = retry(3, delay: 1, backoff: 2) {   // waits 1 s, then 2 s
///     session.cancellableData(from: url)
/// }
/// stopButton.onTap = { download.cancel() }   // cancels the running attempt or the pending delay
/// ```
///
/// - The first attempt starts at once, on the calling thread; each later one starts on the queue above once its
///   delay has passed. An attempt that `body` makes cancellable (a ``CancellablePromise``) is cancelled with the retry.
/// - An attempt that rejects is retried if attempts remain and `shouldRetry` returns `true` for its error
///   (it runs inline, on the rejecting thread); otherwise the promise rejects with that error. A body that
///   throws counts as an attempt that rejected.
/// - Cancellations are never retried: an attempt rejected with a cancellation error rejects the retry with it.
/// - `cancel()` rejects the promise with ``CancellablePromiseError/cancelled``, cancels the attempt in flight,
///   and releases the pending delay's timer; no further attempt starts.
/// - Bad input rejects at once with `PMKError.badInput`: fewer than one attempt, or a negative, NaN or infinite
///   `delay` or `backoff`.
///
/// - Parameters:
///   - attempts: how many times to run `body` at most, the first included.
///   - delay: seconds to wait after the first failure.
///   - backoff: each later delay is the previous one times this (`1`, the default, keeps it constant; `2`
///     doubles it).
///   - clock: where the delays' time comes from: by default `PromiseClocks.current` when `retry` is
///     called (real time unless a test installed a clock), kept for every delay of this retry.
///   - shouldRetry: whether a failure is worth another attempt; by default every failure that is not a
///     cancellation is.
///   - body: makes one attempt; kept until the retry ends, so it should make a new promise each time rather
///     than capture one (a body holding its own pending attempt would form a reference cycle).
///   - isolation: the caller's actor, which decides the default queue; leave the default.
public func retry<U: Thenable>(
    _ attempts: Int,
    delay: TimeInterval = 0,
    backoff: Double = 1,
    clock: any PromiseClock = PromiseClocks.current,
    when shouldRetry: sending @escaping (Error) -> Bool = { _ in true },
    isolation: isolated (any Actor)? = #isolation,
    _ body: @escaping () throws -> U
) -> CancellablePromise<U.T> {
    nonisolated(unsafe) let body = body
    return retry(
        attempts,
        delay: delay,
        backoff: backoff,
        clock: clock,
        on: defaultQueue(conf.Q.map, for: isolation, calling: "retry"),
        when: shouldRetry,
        body
    )
}

/// `retry` with attempts after the first started on `on`: a queue you choose, or `nil` for the timer's thread.
/// The first attempt runs on the calling thread. `body` and `shouldRetry` may run off the main actor, so they are
/// `sending`: in Swift 6, using main-actor state in them is a compile-time error.
///
/// ```swift
/// retry(3, delay: 1, on: .global()) { upload(file) }
/// ```
///
/// With `on: nil` and a `TestClock`, each later attempt runs inside the `advance(by:)` that ends its delay.
public func retry<U: Thenable>(
    _ attempts: Int,
    delay: TimeInterval = 0,
    backoff: Double = 1,
    clock: any PromiseClock = PromiseClocks.current,
    on: DispatchQueue?,
    when shouldRetry: sending @escaping (Error) -> Bool = { _ in true },
    _ body: sending @escaping () throws -> U
) -> CancellablePromise<U.T> {
    guard attempts >= 1, delay >= 0, delay.isFinite, backoff >= 0, backoff.isFinite else {
        return CancellablePromise(error: PMKError.badInput)
    }
    let retrying = Retrying(
        attempts: attempts,
        backoff: backoff,
        clock: clock,
        queue: on,
        shouldRetry: shouldRetry,
        body: body
    )
    retrying.start(attempt: 1, delay: delay)
    return retrying.promise
}

/// The state of one `retry`: the promise, and what `cancel()` must stop right now (the attempt in flight or
/// the pending delay).
private final class Retrying<U: Thenable>: @unchecked Sendable {
    // @unchecked Sendable: `current` is behind its lock; the rest is immutable. Closures cross threads as
    // PromiseKit's handlers do (see Docs/Design/0001-sendability.md).
    let promise = CancellablePromise<U.T>()
    let attempts: Int
    let backoff: Double
    let queue: DispatchQueue?
    let shouldRetry: (Error) -> Bool
    let body: () throws -> U
    let clock: any PromiseClock
    /// What cancel() must stop right now, and whether it has been called.
    private struct Step {
        var cancellationReason: CancellationReason?
        var cancel: CancellationState.OnCancel?
        /// Which step `cancel` stops: attempt n is 2n, the delay after it 2n + 1. A clock that fires at once runs
        /// the next attempt before the delay's own step is installed; that step is then stale and not installed.
        var id = 0
    }

    private let current = Locked(Step())

    init(
        attempts: Int,
        backoff: Double,
        clock: any PromiseClock,
        queue: DispatchQueue?,
        shouldRetry: @escaping (Error) -> Bool,
        body: @escaping () throws -> U
    ) {
        self.attempts = attempts
        self.backoff = backoff
        self.clock = clock
        self.queue = queue
        self.shouldRetry = shouldRetry
        self.body = body
        // The cancel action holds the step box, not `self`: an abandoned retry is not kept alive by its own
        // promise.
        let current = self.current
        promise.addCancelAction { reason in
            let cancelStep = current.withLock { step -> CancellationState.OnCancel? in
                step.cancellationReason = reason
                return step.cancel.take()
            }
            cancelStep?(reason)
        }
    }

    /// Makes `cancelStep` what `cancel()` runs from now on, unless a later step is already installed; runs it at
    /// once if the retry is already cancelled.
    private func install(step id: Int, _ cancelStep: @escaping CancellationState.OnCancel) {
        let reason = current.withLock { step -> CancellationReason? in
            if step.cancellationReason == nil, id > step.id {
                step.cancel = cancelStep
                step.id = id
            }
            return step.cancellationReason
        }
        if let reason {
            cancelStep(reason)
        }
    }

    func start(attempt: Int, delay: TimeInterval) {
        let sink = promise.sink
        guard !sink.isResolved else { return }
        let next: U
        do {
            next = try body()
        } catch {
            failed(attempt: attempt, delay: delay, error: error)
            return
        }
        if let cancellable = next as? CancellablePromise<U.T> {
            // A vote, not the promise: cancel actions never hold promises (Docs/Design/0003).
            let vote = cancellable.addVote()
            install(step: 2 * attempt) { vote.cast($0) }
        }
        next.pipe { result in
            switch result {
            case .fulfilled:
                sink.resolve(result)
            case .rejected(let error):
                self.failed(attempt: attempt, delay: delay, error: error)
            }
        }
    }

    private func failed(attempt: Int, delay: TimeInterval, error: Error) {
        let sink = promise.sink
        guard attempt < attempts, !error.isCancelled, !sink.isResolved, shouldRetry(error) else {
            sink.resolve(.rejected(error))
            return
        }
        let cancelTimer = scheduleReleasably(on: clock, after: DispatchTimeInterval(clampingSeconds: delay)) {
            dispatch(on: self.queue, flags: nil) {
                self.start(attempt: attempt + 1, delay: delay * self.backoff)
            }
        }
        install(step: 2 * attempt + 1) { _ in cancelTimer() }
    }
}
