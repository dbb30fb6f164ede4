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

/// One URL on the segmented engine (``URLSession/restDownload(_:to:verifying:options:file:line:progress:)``), against
/// a real loopback server: a server without ranges answers the one request with the whole file; a forgiven fault asks
/// for the rest under `If-Range`; a file that changed meanwhile is answered whole, and the file starts over.
@Suite(.serialized, timeLimit(minutes: 2)) final class RestDownloadTests: LoopbackSuite {
    static var body: Data { SegmentedDownloadTests.body }
    /// Another file, longer than `body`: `body` backwards, and 200,000 bytes more.
    static var longerAndChanged: Data { Data(body.reversed()) + Data(repeating: 0x5A, count: 200_000) }

    static func resource(
        _ body: Data = body,
        tag: String = "\"v1\"",
        ignoresRanges: Bool = false,
        interruption: LoopbackHTTPServer.Interruption? = nil
    ) -> LoopbackHTTPServer.Resource {
        LoopbackHTTPServer.Resource(
            body: body,
            entityTag: tag,
            lastModified: nil,
            ignoresRanges: ignoresRanges,
            chunkSize: 8_192,
            interruption: interruption
        )
    }

    static func retryingOnce() -> SegmentedDownloadOptions {
        var options = SegmentedDownloadOptions()
        options.retrying = DownloadRetryPolicy(retries: 1, delay: 0)
        return options
    }

    func download(
        _ url: URL,
        verifying integrity: DownloadIntegrity? = nil,
        options: SegmentedDownloadOptions = retryingOnce()
    ) async throws -> Data? {
        let outcome = await session.restDownload(
            URLRequest(url: url),
            to: directory.destination,
            verifying: integrity,
            options: options
        )
        .asPromise().asResult().async()
        guard case .success(let result) = outcome else {
            Issue.record("the download failed: \(outcome)")
            return nil
        }
        #expect(result.totalBytes == Int64(Self.body.count))
        #expect(try directory.contents() == ["file.bin"])
        return try Data(contentsOf: directory.destination)
    }

    /// A server that answers its first request with `first`, and every other with `then`.
    func serve(
        _ first: LoopbackHTTPServer.Resource,
        then: LoopbackHTTPServer.Resource
    ) throws -> LoopbackHTTPServer {
        let requests = Locked(0)
        return try serve { _ in
            let count = requests.withLock { count in
                count += 1
                return count
            }
            return .resource(count == 1 ? first : then)
        }
    }

    @Test func aServerWithoutRangesAnswersTheOneRequestWithTheWholeFile() async throws {
        let resource = Self.resource(ignoresRanges: true)
        let server = try serve { _ in .resource(resource) }
        #expect(try await download(server.url("/file")) == Self.body)
        #expect(server.connections.count == 1)
        #expect(server.connections.first?.range == nil)
        #expect(server.connections.first?.headers["if-range"] == nil)
    }

    /// A body of no announced length (it ends as the server closes the connection) sets the file's length as it
    /// ends; only then can its pieces be told apart, and they are checked then, before the download completes.
    @Test func aBodyOfNoLengthIsCheckedPieceByPieceOnceItEnds() async throws {
        var unannounced = Self.resource()
        unannounced.sendsLength = false
        let resource = unannounced
        let server = try serve { _ in .resource(resource) }
        let pieceLength: Int64 = 262_144
        let pieces = stride(from: 0, to: Self.body.count, by: Int(pieceLength)).map { start in
            SHA256.hexDigest(of: Self.body.subdata(in: start..<min(start + Int(pieceLength), Self.body.count)))
        }
        let integrity = DownloadIntegrity(
            length: Int64(Self.body.count),
            sha256: SHA256.hexDigest(of: Self.body),
            pieces: PieceDigests(length: pieceLength, sha256: pieces)
        )
        #expect(try await download(server.url("/file"), verifying: integrity) == Self.body)
    }

    @Test func aRequestWithARangeOfItsOwnWritesThePartAsTheFile() async throws {
        let resource = Self.resource()
        let server = try serve { _ in .resource(resource) }
        var request = URLRequest(url: server.url("/file"))
        request.setValue("bytes=100000-299999", forHTTPHeaderField: "Range")
        let outcome = await session.restDownload(request, to: directory.destination).asPromise().asResult().async()
        guard case .success(let result) = outcome else {
            Issue.record("the download failed: \(outcome)")
            return
        }
        #expect(result.totalBytes == 200_000)
        #expect(try Data(contentsOf: directory.destination) == Self.body.subdata(in: 100_000..<300_000))
        #expect(server.connections.map(\.range) == ["bytes=100000-299999"])
    }

    @Test func anErrorStatusRejectsWithItsOwnErrorAndBodyAndLeavesNothing() async throws {
        let server = try serve { _ in .status(404, body: Data("no such file".utf8)) }
        let outcome = await session.restDownload(URLRequest(url: server.url("/file")), to: directory.destination)
            .asPromise().asResult().async()
        guard case .failure(let error as HTTPStatusError) = outcome else {
            Issue.record("not an HTTPStatusError: \(outcome)")
            return
        }
        #expect(error.response.statusCode == 404)
        #expect(error.body == Data("no such file".utf8))
        #expect(try directory.contents().isEmpty)
    }

    @Test func anErrorBodyIsKeptUpToItsLimitAndTheRestIsNotRead() async throws {
        let limit = SegmentTransferSink.errorBodyLimit
        let body = Data((0..<(3 * limit)).map { UInt8(truncatingIfNeeded: $0 / 1_000) })
        let server = try serve { _ in .status(500, body: body) }
        let outcome = await session.restDownload(URLRequest(url: server.url("/file")), to: directory.destination)
            .asPromise().asResult().async()
        guard case .failure(let error as HTTPStatusError) = outcome else {
            Issue.record("not an HTTPStatusError: \(outcome)")
            return
        }
        #expect(error.response.statusCode == 500)
        #expect(error.body == body.prefix(limit))
        #expect(try directory.contents().isEmpty)
    }

    @Test func aServerWithoutRangesAskedForTheRestRepeatsTheValidatorAndOnlyTheMissingBytesAreWritten() async throws {
        // Cut the first time; the retry asks for the rest, and is answered 200 with the whole file under the same
        // ETag: the bytes kept stay, the body's first bytes are not written again.
        let cut = Self.resource(ignoresRanges: true, interruption: .close(after: 400_000))
        let whole = Self.resource(ignoresRanges: true)
        let server = try serve(cut, then: whole)
        let written = Locked<[Int64]>([])
        let outcome = await session.restDownload(
            URLRequest(url: server.url("/file")),
            to: directory.destination,
            options: Self.retryingOnce()
        ) { progress in
            written.withLock { $0.append(progress.bytesWritten) }
        }
        .asPromise().asResult().async()
        #expect(try outcome.get().totalBytes == Int64(Self.body.count))
        #expect(try Data(contentsOf: directory.destination) == Self.body)
        // Never started over: what was written only grew.
        let counts = written.withLock { $0 }
        #expect(counts == counts.sorted() && counts.contains { $0 > 0 && $0 < Int64(Self.body.count) })
        let connections = server.connections.filter { $0.unanswered == nil }
        #expect(connections.map(\.status) == [200, 200])
        #expect(connections.last?.range?.hasPrefix("bytes=") == true)
    }

    @Test func aServerThatIsDownRejectsWithTheConnectionsOwnError() async throws {
        let down = try LoopbackHTTPServer { _ in .status(500, body: Data()) }
        let url = down.url("/file")
        down.stop()
        let outcome = await session.restDownload(URLRequest(url: url), to: directory.destination)
            .asPromise().asResult().async()
        guard case .failure(let error as URLError) = outcome else {
            Issue.record("not a URLError: \(outcome)")
            return
        }
        #expect(error.code == .cannotConnectToHost)
        #expect(try directory.contents().isEmpty)
    }

    @Test func aBusyServerIsAskedAgainAfterItsRetryAfter() async throws {
        let resource = Self.resource()
        let requests = Locked(0)
        let server = try serve { _ in
            let count = requests.withLock { count in
                count += 1
                return count
            }
            return count == 1 ? .statusWithFields(503, fields: ["Retry-After: 0"]) : .resource(resource)
        }
        let phases = Locked<[TransferPhase]>([])
        let outcome = await session.restDownload(
            URLRequest(url: server.url("/file")),
            to: directory.destination,
            options: Self.retryingOnce()
        ) { progress in
            phases.withLock { phases in
                // Every report but the second and later of a run of `.transferring` ones.
                if progress.phase != .transferring || phases.last != .transferring { phases.append(progress.phase) }
            }
        }
        .asPromise().asResult().async()
        #expect(try outcome.get().totalBytes == Int64(Self.body.count))
        #expect(try Data(contentsOf: directory.destination) == Self.body)
        #expect(server.connections.filter { $0.unanswered == nil }.map(\.status) == [503, 200])
        // Each request is said as it goes out: the one after the rest too.
        #expect(phases.withLock { $0 } == [.connecting, .connecting, .transferring, .movingIntoPlace])
    }

    @Test func aCutConnectionIsForgivenAndTheRestIsAskedForUnderIfRange() async throws {
        let first = Self.resource(interruption: .close(after: 400_000))
        let rest = Self.resource()
        let server = try serve(first, then: rest)
        #expect(try await download(server.url("/file")) == Self.body)
        let connections = server.connections.filter { $0.unanswered == nil }
        #expect(connections.count == 2)
        let range = try #require(connections.last?.range)
        let start = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
        #expect(range.hasPrefix("bytes=") && range.hasSuffix("-") && start > 0, "\(range)")
        #expect(connections.last?.headers["if-range"] == "\"v1\"")
        #expect(connections.last?.status == 206)
    }

    @Test func aFileThatChangedBeforeTheRetryIsAnsweredWholeAndStartsTheFileOver() async throws {
        // Cut past the new file's end: what was written of the old file must go, not only be written over.
        let old = Self.resource(
            Self.longerAndChanged,
            tag: "\"old\"",
            interruption: .close(after: Self.body.count + 100_000)
        )
        let now = Self.resource()
        let server = try serve(old, then: now)
        // Not one byte of the old file is left in the new one, and the digest is of the new one's bytes alone.
        let integrity = DownloadIntegrity(sha256: SHA256.hexDigest(of: Self.body))
        #expect(try await download(server.url("/file"), verifying: integrity) == Self.body)
        let connections = server.connections.filter { $0.unanswered == nil }
        #expect(connections.count == 2)
        #expect(connections.last?.headers["if-range"] == "\"old\"")
        #expect(connections.last?.status == 200)
    }
}
