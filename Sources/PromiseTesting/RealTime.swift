import Dispatch
import PromiseCore

/// Runs `operation` and fails the test for every real-time timer started in it: each timer that
/// `DispatchClock` — the default clock — schedules while `operation` runs in this task (or synchronously from it)
/// is reported with its delay.
///
/// ```swift
/// withRealTimeForbidden {
///     withPromiseClock(clock) { model.refresh() }   // fails if anything in refresh() waits on the wall clock
/// }
/// ```
///
/// A test that installs a ``TestClock`` can wrap itself in this to prove that nothing it runs bypasses the clock
/// and waits real seconds.
@discardableResult
public func withRealTimeForbidden<R>(
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column,
    _ operation: () throws -> R
) rethrows -> R {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    return try PromiseClocks.$realTimeObserver.withValue(
        { delay in
            reportTestFailure("a real-time timer of \(delay) was started while real time was forbidden", at: site)
        },
        operation: operation
    )
}
