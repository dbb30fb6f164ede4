import Dispatch
package import Foundation
import PromiseCore

/// A value behind a lock that callers can wait on without polling: every `update` resumes the waiters whose
/// condition now holds. `StubServer`'s transfers and `TestClock`'s timers are kept in one.
///
/// Conditions are the test's own code, so they never run under the lock: one may read the very object it waits on
/// (`server.transfers` inside `server.waitUntil { … }`), which would deadlock on Linux and trap on Darwin. A
/// condition is checked against a copy of the value, and a waiter whose condition does not hold goes back on the
/// list only if no update came in the meantime; otherwise it is checked again, against the newer value. So each
/// update is seen by every waiter, and each waiter is checked by one thread at a time. (`package`: the tests'
/// `LoopbackHTTPServer` waits on its records the same way.)
package final class Watched<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value`, `version` and `waiters` are only touched under `state`'s lock; conditions are
    // checked, and waiters resumed, outside it.
    private struct State {
        var value: Value
        /// Counts the updates: a waiter checked against an older version is checked again before it waits.
        var version = 0
        var waiters: [Waiter] = []
    }

    private struct Waiter {
        let isReady: (Value) -> Bool
        let wait: WaitOutcome
    }

    private let state: Locked<State>

    package init(_ value: Value) {
        state = Locked(State(value: value))
    }

    /// Reads the value under the lock (`body` is the library's, never a test's).
    package func read<R>(_ body: (Value) -> R) -> R {
        state.withLock { body($0.value) }
    }

    /// Changes the value under the lock (`body` is the library's), then checks every waiter against the new value,
    /// outside it.
    @discardableResult
    package func update<R>(_ body: (inout Value) -> R) -> R {
        let (result, value, version, waiters) = state.withLock { state in
            let result = body(&state.value)
            state.version &+= 1
            let waiters = state.waiters
            state.waiters = []
            return (result, state.value, state.version, waiters)
        }
        for waiter in waiters { check(waiter, against: value, version: version) }
        return result
    }

    /// Returns `true` once `isReady` holds for the value: at once if it already does, otherwise after the `update`
    /// that makes it hold. Returns `false` if `timeout` seconds of real time pass first (never, by default), or the
    /// task is cancelled.
    @discardableResult
    package func wait(until isReady: @escaping (Value) -> Bool, timeout: TimeInterval = .infinity) async -> Bool {
        let wait = WaitOutcome()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                wait.attach(continuation)
                let (value, version) = state.withLock { ($0.value, $0.version) }
                check(Waiter(isReady: isReady, wait: wait), against: value, version: version)
                if timeout.isFinite {
                    DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) { wait.end(false) }
                }
            }
        } onCancel: {
            wait.end(false)
        }
    }

    /// ``wait(until:timeout:)`` for a test: if `timeout` passes first, fails the test at `site` with what `failure`
    /// says of the value then (what was waited for, and what was seen instead). A cancelled wait fails nothing.
    func wait(
        until isReady: @escaping (Value) -> Bool,
        timeout: TimeInterval,
        reportingAt site: CallSite,
        failure: (Value) -> String
    ) async -> Bool {
        if await wait(until: isReady, timeout: timeout) { return true }
        guard !Task.isCancelled else { return false }
        reportTestFailure(failure(read { $0 }), at: site)
        return false
    }

    /// Resumes `waiter` if its condition holds for `value` (the value at `version`); otherwise puts it back on the
    /// list — or, if an update came since `version`, checks it against that one.
    private func check(_ waiter: Waiter, against value: Value, version: Int) {
        var value = value
        var version = version
        while !waiter.wait.isEnded, !waiter.isReady(value) {
            let newer = state.withLock { state -> (Value, Int)? in
                guard state.version == version else { return (state.value, state.version) }
                state.waiters.append(waiter)
                return nil
            }
            guard let newer else { return }
            (value, version) = newer
        }
        waiter.wait.end(true)
    }
}

/// How one wait ends: met, or timed out or cancelled — decided once, by whichever comes first; the continuation is
/// resumed once, with that outcome, whether it was attached before or after.
private final class WaitOutcome: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Bool, Never>?)
        case ended(Bool)
    }

    private let state = Locked(State.waiting(nil))

    var isEnded: Bool {
        state.withLock { if case .ended = $0 { true } else { false } }
    }

    func attach(_ continuation: CheckedContinuation<Bool, Never>) {
        let ended = state.withLock { state -> Bool? in
            guard case .ended(let met) = state else {
                state = .waiting(continuation)
                return nil
            }
            return met
        }
        if let ended { continuation.resume(returning: ended) }
    }

    func end(_ met: Bool) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>?? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .ended(met)
            return .some(continuation)
        }
        if case let continuation?? = continuation { continuation.resume(returning: met) }
    }
}
