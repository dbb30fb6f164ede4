import Dispatch
import PromiseCore

/// Runs `work` once, `delay` from now on `clock`, unless the returned closure is called first.
///
/// Whichever comes first — the deadline or the returned closure — releases `work` and everything it captured
/// at once: the timer reaches `work` only through a box that both empty, so nothing is kept alive by a timer
/// that the clock still holds (Dispatch keeps a cancelled timer's block until its deadline). `after`,
/// `retry` and `timeout` use it.
func scheduleReleasably(
    on clock: any PromiseClock,
    after delay: DispatchTimeInterval,
    _ work: @escaping () -> Void
) -> () -> Void {
    let pending = Locked<UncheckedSendable<() -> Void>?>(UncheckedSendable(work))
    let timer = clock.schedule(after: delay) {
        pending.withLock { $0.take() }?.value()
    }
    return {
        timer.cancel()
        _ = pending.withLock { $0.take() }
    }
}
