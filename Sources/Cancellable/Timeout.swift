public import Foundation
import PromiseCore

extension CancellablePromise {
    /// Rejects with ``TimeoutError`` if the promise has not resolved within `seconds`, and cancels the work.
    ///
    /// ```swift
    /// download(url).timeout(seconds: 30).done { show($0) }.catch { error in
    ///     if error is TimeoutError { offerRetry() }
    /// }
    /// ```
    ///
    /// The timeout is not a cancellation: `catch` with the default policy sees it. At the deadline this promise
    /// is cancelled with ``CancellationReason/timeout`` (its cancel handler stops the work) and then the
    /// returned promise rejects, so whoever sees the ``TimeoutError`` knows the work was already cancelled.
    /// If other branches also consume this promise, it is cancelled once they have all cancelled too.
    /// Cancelling the returned promise cancels this one. The timer is released as soon as either resolves.
    ///
    /// A zero, negative or NaN interval times out at once, before this returns, if the promise is still
    /// pending; an infinite one never times out.
    ///
    /// - Parameters:
    ///   - seconds: how long the promise may take.
    ///   - clock: where the time comes from: by default `PromiseClocks.current`, real time unless a
    ///     test installed a clock. A test passes a `TestClock` and advances it instead of waiting:
    ///
    ///     ```swift
    ///     let reply = fetch().timeout(seconds: 30, clock: clock)
    ///     await clock.advance(by: .seconds(30))   // reply rejects with TimeoutError, now
    ///     ```
    public func timeout(
        seconds: TimeInterval,
        clock: any PromiseClock = PromiseClocks.current
    ) -> CancellablePromise<T> {
        // The vote is in the limited promise's callbacks and in the timer: releasing the limited promise does not
        // withdraw it while the timer can still cast it.
        let cancelUpstream = addVote()
        let limited = CancellablePromise<T>(callbacks: OnCancelList(.vote(cancelUpstream)))
        limited.follow(promise)
        // The timer owns what it must act on — the limited promise's sink and this promise — until either the
        // deadline passes or the limited promise resolves; then it lets go, however long the timer itself
        // lingers in Dispatch.
        let resolver = DecidingResolver(limited.sink)
        let expire: () -> Void = {
            // Decide the timeout first, cancel the work, then reject: whoever sees the TimeoutError knows the
            // work has already been cancelled (and its cancellation cannot win over the timeout).
            _ = resolver.decide {
                cancelUpstream.cast(.timeout)
                return .rejected(TimeoutError(seconds: seconds))
            }
        }
        guard seconds > 0 else {
            expire()
            return limited
        }
        let cancelTimer = scheduleReleasably(
            on: clock,
            after: DispatchTimeInterval(clampingSeconds: seconds),
            expire
        )
        limited.promise.pipe { _ in cancelTimer() }
        return limited
    }
}
