import PromiseCore

/// A value behind a lock that callers can wait on without polling: every `update` resumes the waiters whose
/// condition now holds. `StubServer`'s transfers and `TestClock`'s timers are kept in one.
final class Watched<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` and `waiters` are only touched under `state`'s lock; waiters resume outside it.
    private struct State {
        var value: Value
        var waiters: [(isReady: (Value) -> Bool, resume: () -> Void)] = []
    }

    private let state: Locked<State>

    init(_ value: Value) {
        state = Locked(State(value: value))
    }

    /// Reads the value under the lock.
    func read<R>(_ body: (Value) -> R) -> R {
        state.withLock { body($0.value) }
    }

    /// Changes the value under the lock, then resumes the waiters whose condition now holds.
    @discardableResult
    func update<R>(_ body: (inout Value) -> R) -> R {
        let (result, ready) = state.withLock { state -> (R, [() -> Void]) in
            let result = body(&state.value)
            guard !state.waiters.isEmpty else { return (result, []) }
            var ready: [() -> Void] = []
            let value = state.value
            state.waiters.removeAll { waiter in
                guard waiter.isReady(value) else { return false }
                ready.append(waiter.resume)
                return true
            }
            return (result, ready)
        }
        for resume in ready { resume() }
        return result
    }

    /// Returns once `isReady` holds for the value: at once if it already does, otherwise after the `update` that
    /// makes it hold.
    func wait(until isReady: @escaping (Value) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isReadyNow = state.withLock { state -> Bool in
                guard !isReady(state.value) else { return true }
                state.waiters.append((isReady, { continuation.resume() }))
                return false
            }
            if isReadyNow { continuation.resume() }
        }
    }
}
