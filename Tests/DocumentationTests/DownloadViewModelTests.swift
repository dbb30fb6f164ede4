import CancellableURLSession
import Dispatch
import Foundation
import LoopbackHTTPServer
import PromiseCore
import PromiseTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// As the article's code it tests (scripts/extract-snippets.py): Observation is in every SDK from iOS 17 / macOS 14 and
// in the Linux toolchain, but not in the SDK copies the Linux-side Apple type-check uses.
#if canImport(Observation)
import Observation

/// Runs the `DownloadViewModel` of "Using PromiseCore in Swift 6 apps" — the article's own code, extracted into
/// `Generated/` — as an app's tests would: transfers served by a `StubServer`, time moved by a `TestClock`. Every
/// state change happens on the main actor, progress arrives chunk by chunk and in order, Stop and the ten-minute
/// timeout stop the transfer. Once more against a real HTTP server, to the end.
@MainActor
@Suite(.serialized, .noPromisesLeftPending)
struct DownloadViewModelTests {
    /// Every state the model passes through, as an observer on the main actor sees it (a change that is
    /// overwritten before the observer runs again is not seen), until `isFinal` holds.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)  // DownloadViewModel is @Observable
    func states(
        of model: DownloadViewModel,
        until isFinal: (DownloadViewModel.State) -> Bool
    ) async -> [DownloadViewModel.State] {
        var seen = [model.state]
        while !isFinal(model.state) {
            await withCheckedContinuation { continuation in
                withObservationTracking {
                    _ = model.state
                } onChange: {
                    continuation.resume()
                }
            }
            seen.append(model.state)
        }
        return seen
    }

    func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("view-model-\(UUID()).bin")
    }

    /// Waits until the model's state is `expected`.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func reach(_ expected: DownloadViewModel.State, _ model: DownloadViewModel) async {
        _ = await states(of: model) { $0 == expected }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.timeLimit(.minutes(1))) func progressIsShownChunkByChunkAndTheDownloadFinishes() async throws {
        let clock = TestClock()
        let body = Data((0..<600_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let server = StubServer(clock: clock) { _ in .body(body, chunkSize: 60_000, every: .milliseconds(100)) }
        let destination = temporaryFile()
        defer { try? FileManager.default.removeItem(at: destination) }

        let model = DownloadViewModel(configuration: server.configuration, clock: clock)
        model.start(from: server.url("/file"), to: destination)
        await server.waitForRequests(1)
        await reach(.downloading(fraction: 0.1), model)
        for tenths in 2...9 {
            await clock.advance(by: .milliseconds(100))
            await reach(.downloading(fraction: Double(tenths) / 10), model)
        }
        await clock.advance(by: .milliseconds(100))
        await reach(.finished(destination), model)
        #expect(try Data(contentsOf: destination) == body)
        #expect(server.transfers.map(\.state) == [.finished])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.timeLimit(.minutes(1))) func stopEndsTheTransferAndLeavesNoFile() async throws {
        let clock = TestClock()
        let server = StubServer(clock: clock) { _ in
            .body(Data(count: 1_000_000), chunkSize: 100_000, every: .seconds(1))
        }
        let destination = temporaryFile()
        defer { try? FileManager.default.removeItem(at: destination) }

        let model = DownloadViewModel(configuration: server.configuration, clock: clock)
        model.start(from: server.url("/big"), to: destination)
        await server.waitForRequests(1)
        await clock.advance(by: .seconds(1))
        await reach(.downloading(fraction: 0.2), model)
        model.stop()

        await reach(.stopped, model)
        await server.waitUntil { $0[0].state == .stoppedByClient }
        #expect(server.transfers[0].bytesSent == 200_000)
        #expect(clock.pendingTimers == 0, "the timeout's timer and the stub's chunks are released")
        #expect(!FileManager.default.fileExists(atPath: destination.path), "the partial file is removed")
        // Let every report already sent reach the main queue: the model ignores them after Stop.
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
        #expect(model.state == .stopped)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.timeLimit(.minutes(1))) func aStalledServerTimesOutAfterTenMinutes() async throws {
        let clock = TestClock()
        let server = StubServer(clock: clock) { _ in .stall }
        let destination = temporaryFile()
        defer { try? FileManager.default.removeItem(at: destination) }

        let model = DownloadViewModel(configuration: server.configuration, clock: clock)
        model.start(from: server.url("/stalled"), to: destination)
        await server.waitForRequests(1)
        await clock.advance(by: .seconds(599))
        #expect(model.state == .downloading(fraction: nil))
        await clock.advance(by: .seconds(1))
        await reach(.timedOut, model)
        await server.waitUntil { $0[0].state == .stoppedByClient }
    }

    /// The same model with its production defaults, over a real socket: the stub does not hide a wiring mistake.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.timeLimit(.minutes(1))) func downloadsToTheEndOverARealSocket() async throws {
        let body = Data((0..<600_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let server = try LoopbackHTTPServer { _ in .body(body, chunkSize: 30_000, bytesPerSecond: 20_000_000) }
        defer { server.stop() }
        let destination = temporaryFile()
        defer { try? FileManager.default.removeItem(at: destination) }

        let model = DownloadViewModel()
        model.start(from: server.url("/file"), to: destination)
        let seen = await states(of: model) { if case .downloading = $0 { false } else { true } }

        #expect(seen.last == .finished(destination))
        #expect(try Data(contentsOf: destination) == body)
        #expect(server.connections.first?.completed == true)
    }
}
#endif
