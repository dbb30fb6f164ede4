import Dispatch
import PromiseCore

/// Runs `operation` and fails the test for every real-time timer started by what it runs: each timer that
/// `DispatchClock` — the default clock — schedules while `operation` runs in this task (or synchronously from it),
/// or later, on a real-time clock that was taken inside it (a `retry`'s back-off, scheduled from a queue after an
/// attempt failed), is reported with its delay.
///
/// ```swift
/// withRealTimeForbidden {
///     withPromiseClock(clock) { model.refresh() }   // fails if anything in refresh() waits on the wall clock
/// }
/// ```
///
/// A test that installs a ``TestClock`` can wrap itself in this to prove that nothing it runs bypasses the clock
/// and waits real seconds. Timers started while `operation` runs are reported when it returns, at this call;
/// one started afterwards is reported as it starts, which reaches the test only if it is started from the test's
/// own task: to cover work that finishes later, await it inside
/// ``withRealTimeForbidden(isolation:fileID:filePath:line:column:_:)``.
@discardableResult
public func withRealTimeForbidden<R>(
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column,
    _ operation: () throws -> R
) rethrows -> R {
    let watch = RealTimeWatch(at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    defer { watch.close() }
    return try PromiseClocks.$realTimeObserver.withValue(watch.observe, operation: operation)
}

/// Awaits `operation` and fails the test for every real-time timer started by what it runs, as the synchronous
/// form does: in this task, and on real-time clocks taken inside it, from any thread, until it returns.
///
/// ```swift
/// @Test func theLoaderNeverWaitsOnTheWallClock() async throws {
///     try await withRealTimeForbidden {
///         _ = try await loader.load().async()   // a retry's back-off on the wall clock fails the test
///     }
/// }
/// ```
@discardableResult
public func withRealTimeForbidden<R>(
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column,
    _ operation: () async throws -> R
) async rethrows -> R {
    let watch = RealTimeWatch(at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    defer { watch.close() }
    return try await PromiseClocks.$realTimeObserver.withValue(
        watch.observe,
        operation: operation,
        isolation: isolation
    )
}

/// The real-time timers one `withRealTimeForbidden` saw: kept while its operation runs — they may be started on
/// any thread, where no test is current — and reported when it returns, in the test's task; reported at once after.
private final class RealTimeWatch: Sendable {
    private let site: CallSite
    private let seen = Locked<(delays: [DispatchTimeInterval], isClosed: Bool)>(([], false))

    init(at site: CallSite) {
        self.site = site
    }

    var observe: @Sendable (DispatchTimeInterval) -> Void {
        { [self] delay in
            let isClosed = seen.withLock { seen in
                if !seen.isClosed { seen.delays.append(delay) }
                return seen.isClosed
            }
            if isClosed {
                reportTestFailure(
                    "a real-time timer of \(delay) was started, by work begun while real time was forbidden",
                    at: site
                )
            }
        }
    }

    /// Reports the timers seen so far; later ones are reported as they start.
    func close() {
        let delays = seen.withLock { seen in
            seen.isClosed = true
            return seen.delays
        }
        for delay in delays {
            reportTestFailure("a real-time timer of \(delay) was started while real time was forbidden", at: site)
        }
    }
}
