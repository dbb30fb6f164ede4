import Foundation
import LoopbackHTTPServer
import Observation
import Testing

/// Runs the `DownloadViewModel` of "Using PromiseCore in Swift 6 apps" — the article's own code, extracted into
/// `Generated/` — against a real HTTP server: every state change happens on the main actor, progress arrives in
/// order, Stop and the timeout close the connection.
@MainActor
@Suite(.serialized)
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

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.timeLimit(.minutes(1))) func downloadsToTheEndWithProgressInOrder() async throws {
        let body = Data((0..<600_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let server = try LoopbackHTTPServer { _ in .body(body, chunkSize: 30_000, bytesPerSecond: 2_000_000) }
        defer { server.stop() }
        let destination = temporaryFile()
        defer { try? FileManager.default.removeItem(at: destination) }

        let model = DownloadViewModel()
        model.start(from: server.url("/file"), to: destination)
        let seen = await states(of: model) { if case .downloading = $0 { false } else { true } }

        #expect(seen.last == .finished(destination))
        #expect(try Data(contentsOf: destination) == body)
        let fractions = seen.compactMap { state -> Double? in
            if case .downloading(let fraction?) = state { fraction } else { nil }
        }
        // How many reports an observer sees depends on how busy the main queue is (under `swift test` it also runs
        // other suites' handlers): reports that arrive together are seen as one. Those seen must be in order; that
        // progress is shown at all is checked by the Stop test, which waits for it.
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "in order: \(fractions)")
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.timeLimit(.minutes(1))) func stopClosesTheConnectionAndLeavesNoFile() async throws {
        let server = try LoopbackHTTPServer { _ in
            .body(Data(count: 20_000_000), chunkSize: 16_384, bytesPerSecond: 2_000_000)
        }
        defer { server.stop() }
        let destination = temporaryFile()
        defer { try? FileManager.default.removeItem(at: destination) }

        let model = DownloadViewModel()
        model.start(from: server.url("/big"), to: destination)
        _ = await states(of: model) { state in
            switch state {
            case .downloading(let fraction): (fraction ?? 0) > 0
            default: true
            }
        }
        guard case .downloading(let fraction?) = model.state, fraction > 0 else {
            Issue.record("the download should be under way, not \(model.state)")
            return
        }
        model.stop()
        let seen = await states(of: model) { $0 == .stopped }

        #expect(seen.allSatisfy { if case .downloading = $0 { true } else { $0 == .stopped } })
        #expect(server.waitUntil(timeout: 5) { $0.first?.clientClosedAt != nil })
        #expect(server.connections.first?.completed == false)
        #expect(!FileManager.default.fileExists(atPath: destination.path), "the partial file is removed")
        // Let every report already sent reach the main queue: the model ignores them after Stop.
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
        #expect(model.state == .stopped)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.timeLimit(.minutes(1))) func aStalledServerTimesOut() async throws {
        let server = try LoopbackHTTPServer { _ in .stall }
        defer { server.stop() }
        let destination = temporaryFile()
        defer { try? FileManager.default.removeItem(at: destination) }

        let model = DownloadViewModel(timeLimit: 0.3)
        model.start(from: server.url("/stalled"), to: destination)
        let seen = await states(of: model) { if case .downloading = $0 { false } else { true } }

        #expect(seen.last == .timedOut)
        #expect(server.waitUntil(timeout: 5) { $0.first?.clientClosedAt != nil })
    }
}
