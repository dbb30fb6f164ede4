import Cancellable
import CancellableURLSession
import Dispatch
import Foundation
import PromiseCore
import PromiseTesting
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// No timer in the library bypasses the injectable clock: with real time forbidden, every timer API — given a clock
/// per call, or finding the installed one — schedules on the test clock, and none on Dispatch.
struct NoRealTimeTests {
    /// Every public API of the library that waits, each started once; returns what they made, to keep them alive.
    static func everyTimer(clock: (any PromiseClock)?) -> [AnyObject] {
        let (work, _) = CancellablePromise<Int>.pending()
        let failing = { () -> Promise<Int> in Promise(error: TestError.flaky) }
        let failingCancellable = { () -> CancellablePromise<Int> in CancellablePromise(error: TestError.flaky) }
        if let clock {
            let delayed: CancellablePromise<Void> = after(seconds: 2, clock: clock)
            let delayedInterval: CancellablePromise<Void> = after(.seconds(2), clock: clock)
            return [
                after(seconds: 2, clock: clock),
                after(.seconds(2), clock: clock),
                delayed,
                delayedInterval,
                work.timeout(seconds: 2, clock: clock),
                retry(2, delay: 2, clock: clock, failing),
                retry(2, delay: 2, clock: clock, on: nil, failingCancellable),
            ]
        }
        let delayed: CancellablePromise<Void> = after(seconds: 2)
        let delayedInterval: CancellablePromise<Void> = after(.seconds(2))
        return [
            after(seconds: 2),
            after(.seconds(2)),
            delayed,
            delayedInterval,
            work.timeout(seconds: 2),
            retry(2, delay: 2, failing),
            retry(2, delay: 2, on: nil, failingCancellable),
        ]
    }

    @Test func everyTimerUsesTheClockPassedPerCall() {
        let clock = TestClock()
        let made = withRealTimeForbidden { Self.everyTimer(clock: clock) }
        #expect(clock.pendingTimers == made.count)
        #expect(clock.pendingDelays.allSatisfy { $0 == .nanoseconds(2_000_000_000) })
        // Let every timer fire: a retry waiting out its delay holds its clock, and a clock its timers.
        clock.run()
        #expect(clock.pendingTimers == 0)
    }

    @Test func everyTimerUsesTheInstalledClockWhenGivenNone() {
        let clock = TestClock()
        let made = withRealTimeForbidden { withPromiseClock(clock) { Self.everyTimer(clock: nil) } }
        #expect(clock.pendingTimers == made.count)
        clock.run()
        #expect(clock.pendingTimers == 0)
    }

    @Test func aStubServerPacesOnItsClock() async throws {
        let clock = TestClock()
        let server = withRealTimeForbidden {
            StubServer(clock: clock) { _ in .body(Data(count: 10), chunkSize: 5, every: .seconds(1)) }
        }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let data = session.cancellableData(from: server.url("/x"))
        await server.waitForRequests(1)
        #expect(clock.pendingTimers == 1)
        await clock.advance(by: .seconds(1))
        #expect(try await data.async().data.count == 10)
    }

    @Test func theAsyncFormCatchesARetryBackOffScheduledFromAQueueWhileItIsAwaited() async throws {
        // The back-off is scheduled after the first attempt fails, on a queue, where no task-local is set: the
        // synchronous form, returning before that, could not see it.
        let attempts = Shared(0)
        try await withKnownIssue {
            try await withRealTimeForbidden {
                let loaded = retry(2, delay: 0.01, on: .global()) { () -> Promise<Int> in
                    attempts.increment()
                    return attempts.current == 1 ? Promise(error: TestError.flaky) : .value(7)
                }
                let value = try await loaded.async()
                #expect(value == 7)
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("a real-time timer of") }
        }
        #expect(attempts.current == 2)
    }

    @Test func aTimerStartedLaterOnAClockTakenInsideIsReportedToo() {
        let clock = withRealTimeForbidden { PromiseClocks.current }
        withKnownIssue {
            clock.schedule(after: .seconds(100)) {}.cancel()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("by work begun while real time was forbidden") }
        }
        // A clock taken outside is not watched.
        PromiseClocks.current.schedule(after: .seconds(100)) {}.cancel()
    }

    @Test func theTrapCatchesARealTimer() {
        withKnownIssue {
            withRealTimeForbidden { _ = Self.everyTimer(clock: nil) }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("real-time timer") }
        }
    }

    /// Only `DispatchClock` (and PromiseTesting's wait timeouts) may touch Dispatch's timers: a new `asyncAfter`, timer
    /// source or `Task.sleep` in the library's sources would bypass the clock where no runtime check can see it.
    @Test func onlyDispatchClockWaitsOnRealTimeInTheSources() throws {
        let sources = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var offenders: [String] = []
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                for pattern in [
                    "asyncAfter", "makeTimerSource", "Task.sleep", "Thread.sleep", "usleep(", "Timer.scheduledTimer",
                ]
                where code.contains(pattern) {
                    offenders.append("\(file.lastPathComponent):\(number + 1): \(code)")
                }
            }
        }
        // DispatchClock itself; and PromiseTesting's waits, which give up after a timeout in real time by design (on
        // Dispatch directly, so that a wait inside withRealTimeForbidden is not taken for the code's timer).
        let allowed = offenders.filter { $0.hasPrefix("PromiseClock.swift:") || $0.hasPrefix("Watched.swift:") }
        #expect(offenders.count == 2 && allowed.count == 2, "\(offenders)")
    }
}
