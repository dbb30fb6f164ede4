import Cancellable
import Foundation
import LoopbackHTTPServer
import PromiseCore
import TestSupport
import Testing

@testable import CancellableURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Progress as an app shows it: bytes, a speed, the time left, and what the transfer is doing.
@Suite struct TransferProgressTests {
    @Test func theSpeedIsTheFirstWindowsRateThenAnAverageWeightedByEachWindowsLength() {
        var speed = TransferSpeed()
        speed.record(total: 0, at: 10)
        #expect(speed.bytesPerSecond == nil, "no window has passed")
        speed.record(total: 100_000, at: 10.1)
        #expect(speed.bytesPerSecond == nil, "a window shorter than a quarter of a second waits for more")
        speed.record(total: 1_000_000, at: 11)
        #expect(speed.bytesPerSecond == 1_000_000)
        // A second at half the rate moves the average by 1 − e^(−1/2) of the difference.
        speed.record(total: 1_500_000, at: 12)
        let expected = 1_000_000 + (1 - exp(-0.5)) * (500_000 - 1_000_000)
        #expect(abs((speed.bytesPerSecond ?? 0) - expected) < 0.001)
        #expect(speed.timeRemaining(for: 0) == 0)
        #expect(abs((speed.timeRemaining(for: 1_000_000) ?? 0) - 1_000_000 / expected) < 0.000_001)
        // A stalled transfer slows the average towards zero, never below.
        speed.record(total: 1_500_000, at: 30)
        #expect((speed.bytesPerSecond ?? -1) >= 0 && (speed.bytesPerSecond ?? 1) < 1_000)
    }

    @Test func theTimeLeftNeedsASpeedAndATotal() {
        #expect(
            TransferProgress(
                bytesTransferred: 512,
                totalBytesExpected: 1_024,
                phase: .transferring,
                bytesPerSecond: 256
            )
            .estimatedTimeRemaining == 2
        )
        #expect(TransferProgress(bytesTransferred: 512, totalBytesExpected: 1_024).estimatedTimeRemaining == nil)
        let noTotal = TransferProgress(
            bytesTransferred: 512,
            totalBytesExpected: nil,
            phase: .transferring,
            bytesPerSecond: 256
        )
        #expect(noTotal.estimatedTimeRemaining == nil)
        #expect(TransferProgress(bytesTransferred: 1, totalBytesExpected: 2).phase == .transferring)
    }

    /// A verified download says so: its bytes arrive with a speed, then it verifies, then it moves its file into
    /// place — in that order, each report of the whole file.
    @Test(timeLimit(minutes: 1), arguments: DownloadIntegrationTests.Mode.allCases)
    func aVerifiedDownloadReportsItsSpeedThenVerifyingThenMovingIntoPlace(
        mode: DownloadIntegrationTests.Mode
    ) async throws {
        let size = 600_000
        let body = DownloadIntegrationTests.payload(size)
        let server = try LoopbackHTTPServer { _ in .body(body, chunkSize: 20_000, bytesPerSecond: 1_000_000) }
        defer { server.stop() }
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let session = DownloadIntegrationTests().makeSession(mode)
        defer { session.finishTasksAndInvalidate() }
        let reports = Shared<[TransferProgress]>([])
        let expected = DownloadIntegrity(length: Int64(size), sha256: SHA256.hexDigest(of: body))
        // The hashing queue is held in its first chunk until the download says it verifies: without that, a digest
        // that kept up with the bytes would leave nothing to verify, and no `.verifying` to report.
        let gate = StreamingDigestTests.Gate()
        let hooks = DownloadHooks(willHashStreamed: { _ in gate.pass() })
        _ = try await DownloadHooks.$current.withValue(hooks) {
            session.cancellableDownload(
                from: server.url("/file"),
                to: directory.destination,
                verifying: expected
            ) { progress in
                reports.append(progress)
                if progress.phase == .verifying { gate.release() }
            }
        }
        .async()

        var seen = reports.current[...]
        if mode != .ownDelegate {
            // Before any byte: the request is on its way. (A session with a delegate of its own reports once, at the
            // end.)
            #expect(seen.first?.phase == .connecting && seen.first?.bytesTransferred == 0)
            seen = seen.dropFirst()
        }
        let phases = seen.map(\.phase)
        let firstOther = phases.firstIndex { $0 != .transferring } ?? phases.endIndex
        #expect(Array(phases[firstOther...]) == [.verifying, .movingIntoPlace], "\(phases)")
        #expect(
            seen.suffix(2).allSatisfy { $0.bytesTransferred == Int64(size) && $0.totalBytesExpected == Int64(size) }
        )
        if mode != .ownDelegate {
            // Half a second of bytes at a megabyte a second: a speed, and a time left, while they arrive.
            let measured = seen.prefix(firstOther).compactMap(\.bytesPerSecond)
            #expect(!measured.isEmpty && measured.allSatisfy { $0 > 0 }, "\(measured)")
            #expect(seen.prefix(firstOther).contains { $0.estimatedTimeRemaining != nil })
        }
    }

    /// A segmented download reports the same way: connecting, its speed over every mirror, then verifying, then moving
    /// into place.
    @Test(timeLimit(minutes: 1))
    func aVerifiedSegmentedDownloadReportsItsSpeedThenVerifyingThenMovingIntoPlace() async throws {
        let size = 600_000
        let body = DownloadIntegrationTests.payload(size)
        let server = try LoopbackHTTPServer { _ in
            .resource(.init(body: body, entityTag: "\"v1\"", chunkSize: 20_000, bytesPerSecond: 1_000_000))
        }
        defer { server.stop() }
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        let session = URLSession.withProgressReporting(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        var options = SegmentedDownloadOptions()
        options.segmentSize = 200_000
        let reports = Shared<[SegmentedDownloadProgress]>([])
        let expected = DownloadIntegrity(length: Int64(size), sha256: SHA256.hexDigest(of: body))
        // Held as above: a digest that kept up with every segment would leave nothing to verify.
        let gate = StreamingDigestTests.Gate()
        let hooks = DownloadHooks(willHashStreamed: { _ in gate.pass() })
        _ = try await DownloadHooks.$current.withValue(hooks) {
            session.segmentedDownload(
                from: [server.url("/a"), server.url("/b")],
                to: directory.destination,
                verifying: expected,
                options: options
            ) { progress in
                reports.append(progress)
                if progress.phase == .verifying { gate.release() }
            }
        }
        .async()

        let seen = reports.current.dropFirst()
        #expect(reports.current.first?.phase == .connecting && reports.current.first?.bytesWritten == 0)
        let phases = seen.map(\.phase)
        let firstOther = phases.firstIndex { $0 != .transferring } ?? phases.endIndex
        #expect(Array(phases[firstOther...]) == [.verifying, .movingIntoPlace], "\(phases)")
        #expect(seen.suffix(2).allSatisfy { $0.bytesWritten == Int64(size) && $0.bytesPerSecond == nil })
        let measured = seen.prefix(firstOther).compactMap(\.bytesPerSecond)
        #expect(!measured.isEmpty && measured.allSatisfy { $0 > 0 }, "\(measured)")
        #expect(seen.prefix(firstOther).contains { $0.estimatedTimeRemaining != nil })
    }
}
