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

/// `DownloadRetryPolicy`: a single-URL download forgives faults that may pass, as a segmented one forgives a mirror —
/// a resumable one asking only for the bytes it does not hold, a cancellable one starting over.
@Suite final class DownloadRetryTests: LoopbackSuite {
    static let size = 400_000
    static let cut = 100_000
    static var body: Data { DownloadIntegrationTests.payload(size) }

    /// A server whose answers are `answers`, one a request, then the whole file; it records when each request came.
    func serve(
        _ answers: [LoopbackHTTPServer.Response]
    ) throws -> (LoopbackHTTPServer, Shared<[Date]>) {
        let arrivals = Shared<[Date]>([])
        let body = Self.body
        let server = try serve { _ in
            let index = arrivals.withLock {
                $0.append(Date())
                return $0.count - 1
            }
            return index < answers.count ? answers[index] : .resource(.init(body: body, entityTag: "\"v1\""))
        }
        return (server, arrivals)
    }

    static var cutShort: LoopbackHTTPServer.Response {
        .resource(.init(body: body, entityTag: "\"v1\"", interruption: .close(after: cut)))
    }

    @Test(timeLimit(minutes: 1))
    func aResumableDownloadAsksAgainForTheBytesItDoesNotHoldAfterThePauseTheServerAsksFor() async throws {
        let (server, arrivals) = try serve([Self.cutShort, .statusWithFields(503, fields: ["Retry-After: 1"])])
        let policy = DownloadRetryPolicy(retries: 3, delay: 0.05)
        let download = session.resumableDownload(from: server.url("/file"), to: directory.destination, retrying: policy)
        let (url, _) = try await download.promise.async()
        #expect(try Data(contentsOf: url) == Self.body)
        #expect(await download.resumeData.async() == nil)
        let ranges = server.connections.map(\.range)
        #expect(ranges == [nil, "bytes=\(Self.cut)-", "bytes=\(Self.cut)-"], "no byte held is asked for again")
        let times = arrivals.current
        #expect(times.count == 3)
        #expect(times[2].timeIntervalSince(times[1]) >= 1, "the server's Retry-After is waited for")
        #expect(try directory.contents() == ["file.bin"])
    }

    @Test(timeLimit(minutes: 1))
    func aCancellableDownloadStartsOverWhenItAsksAgain() async throws {
        let (server, _) = try serve([Self.cutShort])
        let promise = session.cancellableDownload(
            from: server.url("/file"),
            to: directory.destination,
            retrying: DownloadRetryPolicy(retries: 1, delay: 0)
        )
        let (url, _) = try await promise.async()
        #expect(try Data(contentsOf: url) == Self.body)
        #expect(server.connections.map(\.range) == [nil, nil])
        #expect(try directory.contents() == ["file.bin"])
    }

    /// Faults in a row are counted: the cut transfer made progress (it counts as the first), the two closed before
    /// any answer did not — the third fault is not forgiven, and the download fails with it, keeping its bytes.
    @Test(timeLimit(minutes: 1))
    func whenTheRetriesAreSpentTheDownloadFailsWithTheLastFaultKeepingItsBytes() async throws {
        let (server, _) = try serve([Self.cutShort] + Array(repeating: .closeBeforeHeaders, count: 5))
        let download = session.resumableDownload(
            from: server.url("/file"),
            to: directory.destination,
            retrying: DownloadRetryPolicy(retries: 2, delay: 0)
        )
        let error = try #require(await failure(of: download.promise))
        #expect(error is URLError, "\(error)")
        #expect(server.connections.map(\.range) == [nil, "bytes=\(Self.cut)-", "bytes=\(Self.cut)-"])
        let saved = try #require(await download.resumeData.async())
        #expect(saved.bytesKept == Int64(Self.cut))
        #expect(try directory.contents() == [saved.partialFile.lastPathComponent])
        saved.discard()
    }

    @Test(timeLimit(minutes: 1))
    func aFaultThatWillNotPassIsNotAskedAgain() async throws {
        let (server, _) = try serve([.status(404, body: Data("gone".utf8))])
        let promise = session.cancellableDownload(
            from: server.url("/file"),
            to: directory.destination,
            retrying: DownloadRetryPolicy(retries: 5, delay: 0)
        )
        let error = try #require(await failure(of: promise))
        #expect((error as? HTTPStatusError)?.statusCode == 404)
        #expect(server.connections.count == 1)
        #expect(try directory.contents() == [])
    }

    /// A pause or a cancel while the download waits to ask again ends it at once: no transfer is left to end it.
    @Test(timeLimit(minutes: 1), arguments: [CancellationReason.paused, .user])
    func aCancellationWhileItWaitsEndsItAtOnce(reason: CancellationReason) async throws {
        let (server, _) = try serve([Self.cutShort])
        let waiting = Latch()
        let directory = directory
        let session = session
        let download = DownloadHooks.$current.withValue(DownloadHooks(didScheduleRetry: { waiting.open() })) {
            session.resumableDownload(
                from: server.url("/file"),
                to: directory.destination,
                retrying: DownloadRetryPolicy(retries: 1, delay: 3_600)
            )
        }
        #expect(await waiting.opened(within: .seconds(40)), "the first answer was cut, and a retry is scheduled")
        let filesWhenRejected = Shared<[String]?>(nil)
        download.promise.catch(on: nil, policy: .allErrors) { _ in
            filesWhenRejected.withLock { $0 = try? directory.contents() }
        }
        #expect(download.checkpoint()?.bytesKept == Int64(Self.cut), "a waiting download checkpoints its bytes")
        #expect(download.promise.cancel(reason: reason))
        let saved = await download.resumeData.async()
        #expect(await failure(of: download.promise)?.cancellationReason == reason)
        if reason == .paused {
            let saved = try #require(saved, "a pause keeps the bytes")
            #expect(saved.bytesKept == Int64(Self.cut))
            #expect(filesWhenRejected.current == [saved.partialFile.lastPathComponent])
            saved.discard()
        } else {
            #expect(saved == nil)
            #expect(filesWhenRejected.current == [], "removed before the promise rejected")
        }
        #expect(server.connections.count == 1, "it did not ask again")
    }

    @Test func aPolicyOutOfRangeRejectsBeforeAnyRequest() async throws {
        let server = try serve { _ in .status(500, body: Data()) }
        for policy in [
            DownloadRetryPolicy(retries: -1), DownloadRetryPolicy(retries: 1_001),
            DownloadRetryPolicy(retries: 1, delay: -1), DownloadRetryPolicy(retries: 1, delay: .nan),
            DownloadRetryPolicy(retries: 1, backoff: 0.5), DownloadRetryPolicy(retries: 1, backoff: .infinity),
        ] {
            let download = session.resumableDownload(
                from: server.url("/f"),
                to: directory.destination,
                retrying: policy
            )
            let error = await failure(of: download.promise)
            guard case .invalidRetryPolicy = error as? DownloadError else {
                Issue.record("\(policy): \(String(describing: error))")
                continue
            }
        }
        #expect(server.connections.isEmpty)
        #expect(try directory.contents() == [])
    }
}
