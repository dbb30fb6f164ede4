import Cancellable
import CancellableURLSession
import Foundation
import LoopbackHTTPServer
import PromiseCore
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `ResumableDownload.checkpoint()`: a single-URL download hands out resume data for the bytes on disk while it runs,
/// as a segmented one does, so that a crash loses only what came after it. (`swift run crash-recovery` kills such
/// downloads with `SIGKILL` and resumes them from their last checkpoint.)
@Suite final class ResumableDownloadCheckpointTests: LoopbackSuite {
    static let size = 512 * 1_024
    static let half = size / 2

    /// A server that holds the file's body at `half` until `gate` opens.
    func serveHeld(until gate: LoopbackHTTPServer.Gate) throws -> LoopbackHTTPServer {
        let body = DownloadIntegrationTests.payload(Self.size)
        return try serve { _ in
            .resource(.init(body: body, entityTag: "\"v1\"", interruption: .hold(after: Self.half, until: gate)))
        }
    }

    @Test(timeLimit(minutes: 1))
    func aCheckpointNamesTheBytesOnDiskAndItsResumeAsksOnlyForTheRest() async throws {
        let gate = LoopbackHTTPServer.Gate()
        let server = try serveHeld(until: gate)
        let reached = Latch()
        let download = session.resumableDownload(from: server.url("/file"), to: directory.destination) {
            if $0.bytesTransferred >= Int64(Self.half) { reached.open() }
        }
        #expect(await reached.opened(within: .seconds(40)))

        let checkpoint = try #require(download.checkpoint(), "the bytes written so far")
        #expect(checkpoint.bytesKept == Int64(Self.half))
        #expect(checkpoint.totalBytes == Int64(Self.size))
        #expect(checkpoint.validator == .entityTag("\"v1\""))
        #expect(checkpoint.url == server.url("/file"))
        let onDisk = try Data(contentsOf: checkpoint.partialFile)
        #expect(onDisk.prefix(Self.half) == DownloadIntegrationTests.payload(Self.size).prefix(Self.half))
        // One partial file cannot take two downloads.
        let twin = session.resumeDownload(checkpoint)
        #expect(await failure(of: twin.promise) as? DownloadError == .partialFileInUse(checkpoint.partialFile))

        // The download stops keeping its file (a pause: the app's process is gone, say), and a resume from the
        // checkpoint — not from the pause — continues it.
        _ = await download.pause().async()
        gate.open()
        let resumed = session.resumeDownload(checkpoint)
        let (url, _) = try await resumed.promise.async()
        #expect(try Data(contentsOf: url) == DownloadIntegrationTests.payload(Self.size))
        #expect(server.connections.last?.range == "bytes=\(Self.half)-", "no byte the checkpoint names is asked again")
        #expect(try directory.contents() == ["file.bin"])
    }

    @Test(timeLimit(minutes: 1))
    func thereIsNoCheckpointBeforeTheFirstByteOrAfterTheEnd() async throws {
        let gate = LoopbackHTTPServer.Gate()
        let server = try serve { _ in .stall }
        defer { gate.open() }
        let waiting = session.resumableDownload(from: server.url("/file"), to: directory.destination)
        #expect(waiting.checkpoint() == nil, "nothing is on disk yet")
        waiting.cancel()

        let body = DownloadIntegrationTests.payload(Self.size)
        let whole = try serve { _ in .resource(.init(body: body, entityTag: "\"v1\"")) }
        let finished = session.resumableDownload(from: whole.url("/file"), to: directory.destination)
        _ = try await finished.promise.async()
        #expect(finished.checkpoint() == nil, "the download has ended")
    }

    /// On a session with a delegate of the app's own, the body arrives at the end: nothing to name while it runs.
    @Test(timeLimit(minutes: 1))
    func aSessionWithADelegateOfItsOwnHasNoCheckpoint() async throws {
        let gate = LoopbackHTTPServer.Gate()
        let server = try serveHeld(until: gate)
        let own = sessionWithoutLiveDelivery()
        defer { own.invalidateAndCancel() }
        let download = own.resumableDownload(from: server.url("/file"), to: directory.destination)
        let half = Self.half
        let sent = await server.waitUntil { ($0.first?.bytesSent ?? 0) >= half }
        #expect(sent)
        #expect(download.checkpoint() == nil)
        gate.open()
        _ = try await download.promise.async()
    }
}
