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

/// A session made for one download may be invalidated as soon as the download has started, as the docs advise
/// (`finishTasksAndInvalidate()`): a download that makes requests later — a segmented download's next segments, a
/// retry — makes them on a session the app cannot invalidate. A task made on an invalidated session ends the process
/// ("Session invalidated"): before the fix, the `withProgressReporting` cases crashed the test run. (On Linux a plain
/// session's transfers already ran on a stand-in; on Apple platforms from macOS 12 they ran on the session itself.)
@Suite final class InvalidatedSessionTests: LoopbackSuite {
    static let size = 1_000_000
    static var body: Data { DownloadIntegrationTests.payload(size) }

    /// The sessions the docs show being made for one transfer.
    enum Kind: CaseIterable, CustomStringConvertible {
        case withProgressReporting, plain

        func make() -> URLSession {
            switch self {
            case .withProgressReporting: URLSession.withProgressReporting(configuration: .ephemeral)
            case .plain: URLSession(configuration: .ephemeral)
            }
        }

        var description: String { self == .plain ? "URLSession(configuration:)" : "withProgressReporting" }
    }

    @Test(timeLimit(minutes: 1), arguments: Kind.allCases)
    func aSegmentedDownloadOnASessionInvalidatedAfterItStartedMakesItsNextRequestsAndFinishes(kind: Kind) async throws {
        let body = Self.body
        let server = try serve { _ in .resource(.init(body: body, entityTag: "\"v1\"", chunkSize: 16_384)) }
        var options = SegmentedDownloadOptions()
        options.segmentSize = 65_536  // 16 segments from two mirrors: most requests are made after the first two
        let session = kind.make()
        #expect(session.lastingTransport.session !== session, "the download's requests run on a stand-in")
        let download = session.segmentedDownload(
            from: [server.url("/a"), server.url("/b")],
            to: directory.destination,
            options: options
        )
        session.finishTasksAndInvalidate()
        let result = try await download.async()
        #expect(try Data(contentsOf: result.url) == body)
        #expect(server.connections.count >= 16)
        #expect(try directory.contents() == ["file.bin"])
    }

    @Test(timeLimit(minutes: 1), arguments: Kind.allCases)
    func aRetryOnASessionInvalidatedAfterTheDownloadStartedIsMadeAndFinishes(kind: Kind) async throws {
        let body = Self.body
        let answers = Shared(0)
        // The first answer, a 503, waits until the session is invalidated: the retry is made after that, always.
        let invalidated = DispatchSemaphore(value: 0)
        let server = try serve { _ in
            let index = answers.withLock {
                $0 += 1
                return $0
            }
            guard index == 1 else { return .resource(.init(body: body, entityTag: "\"v1\"")) }
            invalidated.wait()
            return .statusWithFields(503, fields: [])
        }
        let session = kind.make()
        let download = session.resumableDownload(
            from: server.url("/file"),
            to: directory.destination,
            retrying: DownloadRetryPolicy(retries: 1, delay: 0)
        )
        session.finishTasksAndInvalidate()
        invalidated.signal()
        let (url, _) = try await download.promise.async()
        #expect(try Data(contentsOf: url) == body)
        #expect(answers.current == 2, "the 503, then the retry")
    }
}
