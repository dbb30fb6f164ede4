package import Dispatch
package import PromiseCore

/// Virtual time for `after` and `timeout`: work runs only when the test advances the clock.
///
/// Install it for the current task with `Schedulers.$current.withValue(scheduler) { … }`.
package final class ManualScheduler: Scheduler, @unchecked Sendable {
    package init() {}

    // @unchecked Sendable: all state is behind `state`'s lock.
    private struct Entry {
        let deadline: Int
        let sequence: Int
        let work: @Sendable () -> Void
    }

    private let state = Shared<(now: Int, sequence: Int, entries: [Entry])>((0, 0, []))

    @discardableResult
    package func schedule(after delay: DispatchTimeInterval, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let sequence: Int = state.withLock { state in
            let sequence = state.sequence
            state.entries.append(Entry(deadline: state.now + delay.nanoseconds, sequence: sequence, work: work))
            state.sequence += 1
            return sequence
        }
        return ScheduledWork { [state] in
            state.withLock { $0.entries.removeAll { $0.sequence == sequence } }
        }
    }

    /// Moves the clock forward and runs, in deadline order, every work item that became due.
    package func advance(by interval: DispatchTimeInterval) {
        let due: [Entry] = state.withLock { state in
            state.now += interval.nanoseconds
            let now = state.now
            let due = state.entries.filter { $0.deadline <= now }
            state.entries.removeAll { $0.deadline <= now }
            return due.sorted { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
        }
        for entry in due {
            entry.work()
        }
    }

    package var pendingCount: Int { state.withLock { $0.entries.count } }
}

extension DispatchTimeInterval {
    package var nanoseconds: Int {
        switch self {
        case .seconds(let value): return value * 1_000_000_000
        case .milliseconds(let value): return value * 1_000_000
        case .microseconds(let value): return value * 1_000
        case .nanoseconds(let value): return value
        case .never: return .max / 2
        @unknown default: return .max / 2
        }
    }
}
