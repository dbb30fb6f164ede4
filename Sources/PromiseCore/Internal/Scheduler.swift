package import Dispatch

/// The one seam through which PromiseCore and Cancellable wait for time to pass (`after`, `timeout`).
///
/// Production code uses ``DispatchScheduler``; tests install a manual scheduler for the duration of a
/// task with `Scheduler.$current.withValue(manual) { … }` and advance time by hand.
package protocol Scheduler: Sendable {
    /// Runs `work` once, no earlier than `delay` from now, on an unspecified thread.
    func schedule(after delay: DispatchTimeInterval, _ work: @escaping @Sendable () -> Void)
}

package enum Schedulers {
    /// The scheduler for the current task; Dispatch's clock outside tests.
    @TaskLocal package static var current: any Scheduler = DispatchScheduler()
}

/// Waits on Dispatch's monotonic clock and runs the work on a global queue.
package struct DispatchScheduler: Scheduler {
    package init() {}

    package func schedule(after delay: DispatchTimeInterval, _ work: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay, execute: work)
    }
}
