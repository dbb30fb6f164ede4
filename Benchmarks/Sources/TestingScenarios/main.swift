import Cancellable
import CancellableURLSession
import Dispatch
import Foundation
import PromiseCore
import PromiseTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// How long an app's test of timed and networked code takes on PromiseTesting's clock and stub server: the three
// scenarios of the testing article (a 30-second timeout, a 3-attempt retry with back-off, a 10 KB download paused
// and resumed), each written as a test would be, next to the floor under any stubbed transfer test — one request
// answered by the same stub, through a bare URLSession data task with a completion handler, no library.
//
// Run: swift run -c release --package-path Benchmarks testing-scenarios [rounds]
// Scenarios are interleaved within each round, so that a slow stretch of a noisy machine hits them all alike; the
// medians, and each one's ratio to the floor's, are what to quote.

struct ScenarioFailure: Error, CustomStringConvertible {
    let description: String
}

func require(_ condition: Bool, _ what: @autoclosure () -> String) throws {
    if !condition { throw ScenarioFailure(description: what()) }
}

/// Waits until a download's progress has reached a number of bytes (the test's `Watched.wait`).
final class ProgressGate: @unchecked Sendable {
    // @unchecked Sendable: `received` and `waiter` are only touched under `lock`.
    private let lock = NSLock()
    private var received: Int64 = 0
    private var waiter: (target: Int64, continuation: CheckedContinuation<Void, Never>)?

    func report(_ bytes: Int64) {
        lock.lock()
        received = bytes
        let ready = waiter.flatMap { bytes >= $0.target ? $0.continuation : nil }
        if ready != nil { waiter = nil }
        lock.unlock()
        ready?.resume()
    }

    func wait(for target: Int64) async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if received >= target {
                lock.unlock()
                continuation.resume()
            } else {
                waiter = (target, continuation)
                lock.unlock()
            }
        }
    }
}

/// The 10 KB body both transfers serve, made once: building it is not part of any test's cost.
let tenKilobytes = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("testing-scenarios-\(UUID())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }

enum Scenario: String, CaseIterable {
    case floor = "floor: one stubbed request, bare URLSession"
    case timeout = "30 s timeout on a stalled request"
    case retry = "3-attempt retry, 1 s then 2 s back-off"
    case download = "10 KB download paused and resumed"

    func run() async throws {
        switch self {
        case .floor: try await bareStubbedRequest()
        case .timeout: try await thirtySecondTimeout()
        case .retry: try await retryWithExponentialBackOff()
        case .download: try await pausedThenResumedDownload()
        }
    }
}

/// What any stubbed transfer test costs at least: a session, one request through the stub, the answer.
func bareStubbedRequest() async throws {
    let server = StubServer { _ in .body(tenKilobytes) }
    let session = URLSession(configuration: server.configuration)
    defer { session.invalidateAndCancel() }
    let data: Data = try await withCheckedThrowingContinuation { continuation in
        session.dataTask(with: server.url("/file")) { data, _, error in
            if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: data!) }
        }.resume()
    }
    try require(data.count == 10_000, "the floor received \(data.count) bytes")
}

func thirtySecondTimeout() async throws {
    let clock = TestClock()
    let server = StubServer(clock: clock) { _ in .stall }
    let session = URLSession.withProgressReporting(configuration: server.configuration)
    defer { session.invalidateAndCancel() }
    let reply = withPromiseClock(clock) {
        session.cancellableData(from: server.url("/slow")).timeout(seconds: 30)
    }
    await server.waitForRequests(1)
    await clock.advance(by: .seconds(29))
    try require(reply.isPending, "the timeout fired before 30 s")
    await clock.advance(by: .seconds(1))
    do {
        _ = try await reply.async()
        throw ScenarioFailure(description: "the stalled request fulfilled")
    } catch is TimeoutError {}
    await server.waitUntil { $0[0].state == .stoppedByClient }
}

func retryWithExponentialBackOff() async throws {
    let clock = TestClock()
    let attempts = ProgressGate()
    let count = UncheckedCount()
    let value = retry(3, delay: 1, backoff: 2, clock: clock) { () -> Promise<Int> in
        let attempt = count.increment()
        attempts.report(Int64(attempt))
        return attempt < 3 ? Promise(error: ScenarioFailure(description: "flaky")) : .value(42)
    }
    await clock.advance(by: .seconds(1))
    await attempts.wait(for: 2)
    try require(clock.pendingDelays == [.seconds(2)], "the back-off did not double")
    await clock.advance(by: .seconds(2))
    try require(try await value.async() == 42, "the third attempt's value")
}

final class UncheckedCount: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = 0

    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}

func pausedThenResumedDownload() async throws {
    let clock = TestClock()
    let file = tenKilobytes
    let server = StubServer(clock: clock) { request in
        StubResponse.file(file, etag: "\"v1\"", for: request).paced(chunkSize: 1_000, every: .seconds(1))
    }
    let session = URLSession.withProgressReporting(configuration: server.configuration)
    defer { session.invalidateAndCancel() }
    let destination = scratch.appendingPathComponent(UUID().uuidString)
    defer { try? FileManager.default.removeItem(at: destination) }
    let received = ProgressGate()
    let download = session.resumableDownload(from: server.url("/file"), to: destination) { progress in
        received.report(progress.bytesTransferred)
    }
    await server.waitForRequests(1)
    await clock.advance(by: .seconds(3))
    await received.wait(for: 4_000)
    guard let saved = await download.pause().async() else {
        throw ScenarioFailure(description: "nothing to resume")
    }
    try require(saved.bytesKept == 4_000, "kept \(saved.bytesKept) bytes")
    let resumed = session.resumeDownload(saved)
    await server.waitForRequests(2)
    await clock.run()
    let (url, _) = try await resumed.promise.async()
    try require(try Data(contentsOf: url) == file, "the file differs from the source")
    try require(server.transfers.map(\.bytesSent).reduce(0, +) == 10_000, "a byte was sent twice")
}

let rounds = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 300
var durations: [Scenario: [Double]] = [:]
for _ in 0..<10 {  // warm-up: first sessions, first protocol lookups
    for scenario in Scenario.allCases { try await scenario.run() }
}
for _ in 0..<rounds {
    for scenario in Scenario.allCases {
        let start = DispatchTime.now().uptimeNanoseconds
        try await scenario.run()
        durations[scenario, default: []].append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
    }
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

let floorMedian = percentile(durations[.floor]!, 0.5)
func cell(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
print("PromiseTesting scenarios — \(rounds) rounds, scenarios interleaved within each round; wall time per run.")
print(cell("scenario", 46) + cell("median", 11) + cell("p90", 11) + "median ÷ floor's")
for scenario in Scenario.allCases {
    let values = durations[scenario]!
    let median = percentile(values, 0.5)
    let p90 = percentile(values, 0.9)
    print(
        cell(scenario.rawValue, 46) + cell(String(format: "%.2f ms", median), 11)
            + cell(String(format: "%.2f ms", p90), 11) + String(format: "%.1f", median / floorMedian)
    )
}
