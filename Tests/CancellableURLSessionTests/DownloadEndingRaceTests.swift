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

/// A transfer that completes at the instant it is paused or cancelled: exactly one of the two wins, decided under the
/// promise's cancellation lock, and the file on disk always agrees with the promise.
///
/// Each test forces one interleaving with latches at the download's hooks, not with a sleep: the delegate queue stops
/// where the test says, and the test acts while it is stopped there.
@Suite(.serialized) struct DownloadEndingRaceTests {
    typealias Mode = DownloadIntegrationTests.Mode
    static let size = 256 * 1_024
    static var body: Data { DownloadIntegrationTests.payload(size) }
    /// How long a latch waits before the test counts it as failed: well inside the time limit, long enough for a
    /// machine loaded by the rest of the suite.
    static let patience = DispatchTimeInterval.seconds(40)

    let directory: DownloadDirectory

    init() throws {
        directory = try DownloadDirectory()
    }

    func makeSession(_ mode: Mode) -> URLSession {
        DownloadIntegrationTests().makeSession(mode)
    }

    func serve() throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { _ in .resource(.init(body: Self.body, entityTag: "\"v1\"")) }
    }

    /// The transfer has received every byte and ended; a pause (or cancel) rejects the promise before the ending is
    /// decided. The cancellation wins: nothing is committed, a pause keeps every byte and publishes resume data, a
    /// cancel for good removes them.
    @Test(timeLimit(minutes: 1), arguments: Mode.allCases, [CancellationReason.paused, .user])
    func aCancellationThatRejectsBeforeACompletedTransferIsDecidedWins(
        mode: Mode,
        reason: CancellationReason
    ) async throws {
        defer { directory.remove() }
        let server = try serve()
        defer { server.stop() }
        let session = makeSession(mode)
        defer { session.finishTasksAndInvalidate() }
        let ended = Latch()
        let cancelling = Latch()
        let waitedInTime = Shared(false)
        let hooks = DownloadHooks(
            willCancelTask: { cancelling.open() },
            willDecide: {
                ended.open()
                // The transfer waits here until the cancel handler runs.
                waitedInTime.withLock { $0 = cancelling.wait(timeout: Self.patience) }
            }
        )
        let download = DownloadHooks.$current.withValue(hooks) {
            session.resumableDownload(from: server.url("/file"), to: directory.destination)
        }

        #expect(await ended.opened(within: Self.patience), "the transfer ended")
        #expect(download.promise.cancel(reason: reason), "the cancellation wins: the ending is not decided yet")
        #expect(download.promise.isRejected)
        let saved = await download.resumeData.async()
        #expect(waitedInTime.current, "the ending waited for the cancel handler, not for its latch to time out")

        #expect(await failure(of: download.promise)?.cancellationReason == reason)
        #expect(!FileManager.default.fileExists(atPath: directory.destination.path), "nothing committed")
        if reason == .paused {
            let saved = try #require(saved, "a pause keeps its bytes")
            #expect(saved.bytesKept == Int64(Self.size), "every byte had arrived")
            #expect(saved.totalBytes == Int64(Self.size))
            #expect(saved.validator == .entityTag("\"v1\""))
            #expect(try directory.contents() == [saved.partialFile.lastPathComponent])
            #expect(try fileContents(saved.partialFile) == Self.body)

            // Resuming asks for the bytes after the last one, gets a 416, and finishes without a byte sent again (a
            // session with a delegate of its own has no live delivery: it cannot resume, and starts over).
            let resumed = session.resumeDownload(saved)
            _ = try await resumed.promise.async()
            #expect(try fileContents(directory.destination) == Self.body)
            #expect(await server.waitUntil { $0.count == 2 && $0.allSatisfy { $0.finishedAt != nil } })
            #expect(server.connections.last?.status == (mode == .ownDelegate ? 200 : 416))
            #expect(try directory.contents() == ["file.bin"])
        } else {
            #expect(saved == nil, "a cancel for good keeps nothing")
            #expect(try directory.contents() == [], "and leaves nothing")
        }
    }

    /// The ending is decided in the transfer's favour; the file is being moved into place when the pause arrives.
    /// Completion wins: the pause finds the promise resolved, gives no resume data, and the promise fulfills with the
    /// file in place.
    @Test(timeLimit(minutes: 1), arguments: Mode.allCases)
    func aPauseThatArrivesOnceTheCompletionIsDecidedLoses(mode: Mode) async throws {
        defer { directory.remove() }
        let server = try serve()
        defer { server.stop() }
        let session = makeSession(mode)
        defer { session.finishTasksAndInvalidate() }
        let decided = Latch()
        let paused = Latch()
        let waitedInTime = Shared(false)
        let hooks = DownloadHooks(didDecide: {
            decided.open()
            // The ending waits here, decided but not carried out, until the test has paused.
            waitedInTime.withLock { $0 = paused.wait(timeout: Self.patience) }
        })
        let download = DownloadHooks.$current.withValue(hooks) {
            session.resumableDownload(from: server.url("/file"), to: directory.destination)
        }

        #expect(await decided.opened(within: Self.patience), "the completion was decided")
        #expect(!download.promise.cancel(reason: .paused), "the pause loses: the ending was decided first")
        let resumeData = download.pause()
        paused.open()

        let (url, _) = try await download.promise.async()
        #expect(waitedInTime.current, "the ending waited for the pause, not for its latch to time out")
        #expect(url == directory.destination)
        #expect(await resumeData.async() == nil, "nothing to resume: the download finished")
        #expect(try fileContents(directory.destination) == Self.body)
        #expect(try directory.contents() == ["file.bin"], "the partial file became the destination")
    }
}
