import Cancellable
import CancellableURLSession
import Dispatch
import Foundation
import PromiseCore
import TestSupport
import Testing

@testable import PromiseTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 29's three scenarios, written as an app's test target would: a 30-second timeout, a 3-attempt retry with
/// exponential back-off, and a download paused and resumed. Each runs `PROMISE_TESTING_REPETITIONS` times (1,000
/// by default; .ci/run runs them once more under each sanitizer with 1): every run must pass, and none may wait on
/// the wall clock (each runs inside `withRealTimeForbidden`, which fails the test for any real-time timer). How long
/// they take is measured by the benchmark package's `testing-scenarios`, not here: a unit test's wall time measures
/// the machine's load as much as the code.
@Suite(timeLimit(minutes: 5))
struct DoneWhenScenarios {
    static let repetitions =
        ProcessInfo.processInfo.environment["PROMISE_TESTING_REPETITIONS"].flatMap(Int.init) ?? 1_000

    /// A thirty-second timeout on a request the server never answers: fires at 30 s of virtual time, not before,
    /// rejects with TimeoutError, and the transfer is stopped.
    static func thirtySecondTimeout() async throws {
        let clock = TestClock()
        let server = StubServer(clock: clock) { _ in .stall }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }

        let reply = withPromiseClock(clock) {
            session.cancellableData(from: server.url("/slow")).timeout(seconds: 30)
        }
        await server.waitForRequests(1)
        await clock.advance(by: .seconds(29))
        #expect(reply.isPending)
        await clock.advance(by: .seconds(1))
        await #expect(throws: TimeoutError.self) { try await reply.async() }
        await server.waitUntil { $0[0].state == .stoppedByClient }
    }

    /// Three attempts, one second then two seconds apart; the attempts after the first run on the main queue, as
    /// in an app.
    static func retryWithExponentialBackOff() async throws {
        let clock = TestClock()
        let attempts = Watched<[TimeInterval]>([])
        let value = retry(3, delay: 1, backoff: 2, clock: clock) { () -> Promise<Int> in
            attempts.update { $0.append(clock.elapsed) }
            return attempts.current.count < 3 ? Promise(error: TestError.flaky) : .value(42)
        }
        #expect(clock.pendingDelays == [.seconds(1)])
        await clock.advance(by: .seconds(1))
        #expect(attempts.current == [0, 1])
        #expect(clock.pendingDelays == [.seconds(2)], "the back-off doubled the delay")
        await clock.advance(by: .milliseconds(1_999))
        #expect(attempts.current.count == 2)
        await clock.advance(by: .milliseconds(1))
        #expect(try await value.async() == 42)
        #expect(attempts.current == [0, 1, 3])
    }

    /// 10 KB at 1 KB per virtual second: paused once 4 KB have arrived, resumed with `Range: bytes=4000-` and
    /// `If-Range`, finished from there; the file is byte for byte the source, and no byte was sent twice.
    static func pausedThenResumedDownload() async throws {
        let clock = TestClock()
        let file = payload(10_000)
        let server = StubServer(clock: clock) { request in
            StubResponse.file(file, etag: "\"v1\"", for: request).paced(chunkSize: 1_000, every: .seconds(1))
        }
        let session = URLSession.withProgressReporting(configuration: server.configuration)
        defer { session.invalidateAndCancel() }
        let destination = temporaryFile()
        defer { try? FileManager.default.removeItem(at: destination) }
        let received = Watched<Int64>(0)

        let download = session.resumableDownload(from: server.url("/file"), to: destination) { progress in
            received.update { $0 = progress.bytesTransferred }
        }
        await server.waitForRequests(1)
        await clock.advance(by: .seconds(3))
        await received.wait { $0 == 4_000 }
        let saved = try #require(await download.pause().async())
        #expect(saved.bytesKept == 4_000)
        await server.waitUntil { $0[0].state == .stoppedByClient }

        let resumed = session.resumeDownload(saved)
        await server.waitForRequests(2)
        #expect(server.transfers[1].request.value(forHTTPHeaderField: "Range") == "bytes=4000-")
        #expect(server.transfers[1].request.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
        #expect(server.transfers[1].status == 206)
        await clock.run()
        let (url, _) = try await resumed.promise.async()
        #expect(try Data(contentsOf: url) == file)
        #expect(server.transfers.map(\.bytesSent).reduce(0, +) == 10_000, "no byte sent twice")
    }

    /// Runs `scenario` `repetitions` times, each with real time forbidden.
    static func repeated(_ scenario: () async throws -> Void) async throws {
        for _ in 0..<repetitions {
            try await withRealTimeForbidden { try await scenario() }
        }
    }

    @Test func aThirtySecondTimeout() async throws {
        try await Self.repeated(Self.thirtySecondTimeout)
    }

    @Test func aThreeAttemptRetryWithExponentialBackOff() async throws {
        try await Self.repeated(Self.retryWithExponentialBackOff)
    }

    @Test func aPausedThenResumedDownload() async throws {
        try await Self.repeated(Self.pausedThenResumedDownload)
    }
}
