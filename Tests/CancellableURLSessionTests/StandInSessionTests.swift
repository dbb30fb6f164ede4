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

/// The stand-in sessions of sessions without a delegate (`Transport`): one per session, let go of once that session
/// is released — but never while a download of it still makes requests on its stand-in.
@Suite struct StandInSessionTests {
    /// A segmented download of a session nobody holds asks for segment after segment; stand-ins of released sessions
    /// are let go of at every lookup, and another transfer looks one up meanwhile. The download's stand-in stays: a
    /// request made on an invalidated session ends the process on swift-corelibs-foundation.
    @Test(timeLimit(minutes: 1))
    func aDownloadKeepsTheStandInOfASessionNobodyHolds() async throws {
        let body = DownloadIntegrationTests.payload(512 * 1_024)
        let server = try LoopbackHTTPServer { _ in
            .resource(.init(body: body, entityTag: "\"v1\"", chunkSize: 8_192, bytesPerSecond: 2_000_000))
        }
        defer { server.stop() }
        let directory = try DownloadDirectory()
        defer { directory.remove() }
        var options = SegmentedDownloadOptions()
        options.segmentSize = 64 * 1_024
        options.minimumSplitSize = 16 * 1_024
        let halfway = Latch()
        let download = URLSession(configuration: .ephemeral).segmentedDownload(
            from: [server.url("/file")],
            to: directory.destination,
            options: options
        ) { if $0.bytesWritten >= Int64(body.count / 2) { halfway.open() } }
        #expect(await halfway.opened(within: .seconds(40)))
        // Another session's transfer looks its stand-in up: stand-ins of released sessions are let go of now.
        let other = URLSession(configuration: .ephemeral)
        _ = try await other.cancellableData(from: server.url("/other")).async()
        let result = try await download.async()
        #expect(try Data(contentsOf: result.url) == body)
    }
}
