package import Dispatch

/// The one seam through which PromiseCore and Cancellable wait for time to pass (`after`, `timeout`).
///
/// Production code uses ``DispatchScheduler``; tests install a manual scheduler for the duration of a
/// task with `Schedulers.$current.withValue(manual) { … }` and advance time by hand.
package protocol Scheduler: Sendable {
    /// Runs `work` once, no earlier than `delay` from now, on an unspecified thread, unless the returned
    /// token is cancelled first.
    @discardableResult
    func schedule(after delay: DispatchTimeInterval, _ work: @escaping @Sendable () -> Void) -> ScheduledWork
}

/// Cancels a scheduled piece of work that has not run yet.
package struct ScheduledWork: Sendable {
    private let cancelWork: @Sendable () -> Void

    package init(cancel: @escaping @Sendable () -> Void) {
        cancelWork = cancel
    }

    package func cancel() {
        cancelWork()
    }
}

package enum Schedulers {
    /// The scheduler for the current task; Dispatch's clock outside tests.
    @TaskLocal package static var current: any Scheduler = DispatchScheduler()
}

/// Waits on Dispatch's monotonic clock and runs the work on a global queue.
package struct DispatchScheduler: Scheduler {
    package init() {}

    @discardableResult
    package func schedule(after delay: DispatchTimeInterval, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        // DispatchWorkItem is thread-safe but not marked Sendable by swift-corelibs-libdispatch.
        let item = UncheckedSendable(DispatchWorkItem(block: work))
        DispatchQueue.global().asyncAfter(deadline: .now() + delay, execute: item.value)
        return ScheduledWork { item.value.cancel() }
    }
}
