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

/// Verification costs one hash of each byte, made on a hashing queue while the transfer goes on: counted through the
/// hashing hooks of ``DownloadHooks``, against the real loopback server.
extension SegmentedDownloadTests {
    /// What the hashing queues did in one download.
    final class Hashing: Sendable {
        let pieces = Locked<[Int: Int]>([:])
        let streamed = Locked(0)
        let readBack = Locked<[Range<Int64>]>([])
        /// Opened when the hashing queue is held (`holding`), and what lets it go.
        let held = Latch()
        let release = DispatchSemaphore(value: 0)
        let firstHeld = Locked<Int?>(nil)

        /// Hooks that count; with `holding`, the first piece or chunk hashed waits on the queue until ``release``.
        func hooks(holding: Bool = false) -> DownloadHooks {
            var hooks = DownloadHooks()
            hooks.willHashPiece = { [self] piece in
                pieces.withLock { $0[piece, default: 0] += 1 }
                if holding { hold(piece) }
            }
            hooks.willHashStreamed = { [self] count in
                streamed.withLock { $0 += count }
                if holding { hold(0) }
            }
            hooks.willReadBack = { [self] range in readBack.withLock { $0.append(range) } }
            return hooks
        }

        private func hold(_ piece: Int) {
            let first = firstHeld.withLock { held in
                guard held == nil else { return false }
                held = piece
                return true
            }
            guard first else { return }
            held.open()
            release.wait()
        }
    }

    static var digest: String { SHA256.hexDigest(of: body) }

    @Test func eachPieceIsHashedOnceAndNothingIsHashedAgainAtTheEnd() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: 4 * 1_048_576), Self.resource()])
        let pieces = Self.pieces(of: Self.body)
        let hashing = Hashing()
        let download = DownloadHooks.$current.withValue(hashing.hooks()) {
            session.segmentedDownload(
                from: mirrors,
                to: directory.destination,
                verifying: DownloadIntegrity(length: Int64(Self.size), pieces: pieces),
                options: Self.options()
            )
        }
        _ = try expectIntact(await download.asPromise().asResult().async())
        let once = Dictionary(uniqueKeysWithValues: pieces.sha256.indices.map { ($0, 1) })
        #expect(hashing.pieces.withLock { $0 } == once)
        #expect(hashing.readBack.withLock { $0 }.isEmpty)
    }

    @Test func aSegmentedDownloadHashesEachByteOfItsFileOnceAndMostAsTheyArrive() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: 4 * 1_048_576), Self.resource()])
        let hashing = Hashing()
        let download = DownloadHooks.$current.withValue(hashing.hooks()) {
            session.segmentedDownload(
                from: mirrors,
                to: directory.destination,
                verifying: DownloadIntegrity(sha256: Self.digest),
                options: Self.options()
            )
        }
        _ = try expectIntact(await download.asPromise().asResult().async())
        // Every byte hashed once: the first segment as it came, then each next segment's bytes as they came, after
        // reading back those it had written before the frontier reached it — during the transfer or at the end.
        let streamed = Int64(hashing.streamed.withLock { $0 })
        let readBack = hashing.readBack.withLock { $0 }
        #expect(streamed > 0)
        let readBackBytes: Int64 = readBack.map { $0.upperBound - $0.lowerBound }.reduce(0, +)
        let inOrder = zip(readBack, readBack.dropFirst()).allSatisfy { $0.upperBound <= $1.lowerBound }
        #expect(streamed + readBackBytes == Int64(Self.size))
        #expect(inOrder, "\(readBack)")
    }

    @Test func aDownloadFromOneURLHashesItsBodyAsItArrivesAndReadsNothingBack() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: nil)])
        let hashing = Hashing()
        let download = DownloadHooks.$current.withValue(hashing.hooks()) {
            session.cancellableDownload(
                from: mirrors[0],
                to: directory.destination,
                verifying: DownloadIntegrity(length: Int64(Self.size), sha256: Self.digest)
            )
        }
        _ = try await download.async()
        #expect(try Data(contentsOf: directory.destination) == Self.body)
        #expect(hashing.streamed.withLock { $0 } == Self.size)
        #expect(hashing.readBack.withLock { $0 }.isEmpty)
    }

    @Test func aDownloadFromOneURLChecksEachPieceOnceAsItsLastByteArrivesAndNothingAgainAtTheEnd() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: 4 * 1_048_576)])
        let pieces = Self.pieces(of: Self.body)
        let hashing = Hashing()
        let download = DownloadHooks.$current.withValue(hashing.hooks()) {
            session.cancellableDownload(
                from: mirrors[0],
                to: directory.destination,
                verifying: DownloadIntegrity(length: Int64(Self.size), pieces: pieces)
            )
        }
        _ = try await download.async()
        #expect(try Data(contentsOf: directory.destination) == Self.body)
        // Each piece hashed once — as it arrived, or read back at the end (which the hook hears of too), never both.
        let once = Dictionary(uniqueKeysWithValues: pieces.sha256.indices.map { ($0, 1) })
        #expect(hashing.pieces.withLock { $0 } == once)
    }

    @Test func aDownloadFromOneURLStopsAtItsFirstBadPieceNotAfterItsLastByte() async throws {
        // One bad byte in the first piece; served slowly enough that the rest of the body would take seconds.
        var corrupt = Self.body
        corrupt[1_000] ^= 0xFF
        let body = corrupt
        let server = try serve { _ in
            .resource(
                .init(body: body, entityTag: "\"v1\"", lastModified: nil, chunkSize: 8_192, bytesPerSecond: 262_144)
            )
        }
        let error = await failure(
            of: session.cancellableDownload(
                from: server.url("/file"),
                to: directory.destination,
                verifying: DownloadIntegrity(length: Int64(Self.size), pieces: Self.pieces(of: Self.body))
            )
        )
        guard case DownloadIntegrityError.pieceMismatch(let piece, _, let actual)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(piece == 0 && actual == SHA256.hexDigest(of: body.prefix(Int(Self.pieceLength))))
        #expect(try directory.contents().isEmpty)
        #expect(await server.waitUntil { $0.first.map(Self.isOver) ?? false })
        let sent = try #require(server.connections.first).bytesSent
        #expect(sent < Self.size / 2, "stopped early: \(sent) of \(Self.size) bytes sent")
    }

    /// A server that sends more than the file's length — another file, an error page — is a length mismatch, as
    /// without piece digests: the pieces past the last are not pieces (an earlier build trapped on them).
    @Test func aBodyLongerThanThePiecesDescribeIsALengthMismatchNotACrash() async throws {
        var longer = Self.body
        longer.append(Self.body.prefix(100_000))
        let mirrors = try serve([Self.resource(longer, bytesPerSecond: nil)])
        let error = await failure(
            of: session.cancellableDownload(
                from: mirrors[0],
                to: directory.destination,
                verifying: DownloadIntegrity(length: Int64(Self.size), pieces: Self.pieces(of: Self.body))
            )
        )
        #expect(
            error as? DownloadIntegrityError == .lengthMismatch(expected: Int64(Self.size), actual: Int64(longer.count))
        )
        #expect(try directory.contents().isEmpty)
    }

    @Test func aDownloadFromOneURLStillRejectsABodyThatIsNotTheFile() async throws {
        let mirrors = try serve([Self.resource(Self.corrupted, bytesPerSecond: nil)])
        let error = await failure(
            of: session.cancellableDownload(
                from: mirrors[0],
                to: directory.destination,
                verifying: DownloadIntegrity(sha256: Self.digest)
            )
        )
        guard case DownloadIntegrityError.sha256Mismatch(let expected, let actual)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(expected == Self.digest && actual == SHA256.hexDigest(of: Self.corrupted))
        #expect(try directory.contents().isEmpty)
    }

    @Test func aResumedDownloadReadsBackTheBytesItKeptAndHashesTheRestAsItArrives() async throws {
        // The first answer stops after 400,000 bytes until the client goes away: the download cannot finish before it
        // is paused, however slowly a loaded machine runs the test (under ThreadSanitizer on CI, it did).
        let held = Self.resource(bytesPerSecond: 1_048_576, interruption: .stall(after: 400_000))
        let whole = Self.resource(bytesPerSecond: 1_048_576)
        let requests = Locked(0)
        let mirrors = try serve([
            { request in
                let count = requests.withLock { count in
                    count += 1
                    return count
                }
                return count == 1 ? held(request) : whole(request)
            }
        ])
        let integrity = DownloadIntegrity(sha256: Self.digest)
        let reached = Latch()
        let first = session.resumableDownload(from: mirrors[0], to: directory.destination, verifying: integrity) {
            if $0.bytesTransferred >= 300_000 { reached.open() }
        }
        #expect(await reached.opened(within: .seconds(30)))
        let saved = try #require(await first.pause().async())
        let hashing = Hashing()
        let resumed = DownloadHooks.$current.withValue(hashing.hooks()) { session.resumeDownload(saved) }
        _ = try await resumed.promise.async()
        #expect(try Data(contentsOf: directory.destination) == Self.body)
        #expect(hashing.readBack.withLock { $0 } == [0..<saved.bytesKept])
        #expect(Int64(hashing.streamed.withLock { $0 }) == Int64(Self.size) - saved.bytesKept)
    }

    @Test func aPauseWhileAPieceIsBeingHashedKeepsItsBytesAndTheResumeChecksThemAgain() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: 1_048_576)])
        let integrity = DownloadIntegrity(length: Int64(Self.size), pieces: Self.pieces(of: Self.body))
        let hashing = Hashing()
        let download = DownloadHooks.$current.withValue(hashing.hooks(holding: true)) {
            session.resumableSegmentedDownload(
                from: mirrors,
                to: directory.destination,
                verifying: integrity,
                options: Self.options()
            )
        }
        #expect(await hashing.held.opened(within: .seconds(30)))
        let piece = try #require(hashing.firstHeld.withLock { $0 })
        let saved = try #require(await download.pause().async())
        hashing.release.signal()
        // The piece was not verified when the download paused: its bytes are kept all the same, unverified.
        let bytes = Self.pieces(of: Self.body).range(of: piece, in: Int64(Self.size))
        #expect(saved.keptRanges.contains { $0.contains(bytes.lowerBound) && $0.upperBound >= bytes.upperBound })
        let again = Hashing()
        let resumed = DownloadHooks.$current.withValue(again.hooks()) {
            session.resumeSegmentedDownload(saved, options: Self.options())
        }
        _ = try expectIntact(await resumed.promise.asPromise().asResult().async())
        #expect(again.pieces.withLock { $0[piece] } == 1, "checked again on resume, once")
    }

    @Test func aCancelWhileTheBodyIsBeingHashedEndsAtOnceAndLeavesNoFile() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: 1_048_576)])
        let hashing = Hashing()
        let download = DownloadHooks.$current.withValue(hashing.hooks(holding: true)) {
            session.cancellableDownload(
                from: mirrors[0],
                to: directory.destination,
                verifying: DownloadIntegrity(sha256: Self.digest)
            )
        }
        #expect(await hashing.held.opened(within: .seconds(30)))
        download.cancel()
        // Rejected while the hashing queue is still held: the cancellation does not wait for the hashing.
        let error = await failure(of: download)
        hashing.release.signal()
        #expect(error?.isCancelled == true)
        #expect(try directory.contents().isEmpty)
    }
}
