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

/// Per-piece digests (``DownloadIntegrity/pieces``) against the real loopback server: a mirror that serves bad bytes
/// under the right length and validator is caught at its first bad piece, dropped, and the piece fetched elsewhere.
extension SegmentedDownloadTests {
    static let pieceLength: Int64 = 64 * 1_024

    /// The digests of `data` in pieces of ``pieceLength``.
    static func pieces(of data: Data) -> PieceDigests {
        let digests = stride(from: 0, to: data.count, by: Int(pieceLength)).map { start in
            SHA256.hexDigest(of: data[start..<min(start + Int(pieceLength), data.count)])
        }
        return PieceDigests(length: pieceLength, sha256: digests)
    }

    /// The body with one byte changed in every piece: the same length, and served under the same ETag.
    static var corrupted: Data {
        var data = body
        for offset in stride(from: 1_000, to: data.count, by: Int(pieceLength)) { data[offset] ^= 0xFF }
        return data
    }

    @Test func aMirrorThatServesBadPiecesIsDroppedAtItsFirstAndTheFileIsWhole() async throws {
        // The liar is the fastest: without piece digests it would write most of the file.
        let mirrors = try serve([
            Self.resource(Self.corrupted, bytesPerSecond: 4 * 1_048_576), Self.resource(bytesPerSecond: 1_048_576),
        ])
        let integrity = DownloadIntegrity(length: Int64(Self.size), pieces: Self.pieces(of: Self.body))
        let result = try #require(try expectIntact(await download(mirrors, verifying: integrity)))
        guard case .pieceMismatch(let piece) = result.mirrors[0].dropped else {
            Issue.record("mirror 0: \(String(describing: result.mirrors[0].dropped))")
            return
        }
        // Dropped at the first piece it completed: no more than that piece's bytes (and what arrived with them)
        // were taken from it, and none of them is in the file.
        #expect(piece < 2)
        #expect(result.mirrors[1].dropped == nil)
        #expect(result.mirrors[1].bytesWritten == Int64(Self.size))
    }

    @Test func aResumedDownloadChecksThePiecesItKeptAndFetchesATamperedOneAgain() async throws {
        let mirrors = try serve([Self.resource(bytesPerSecond: 1_048_576)])
        let integrity = DownloadIntegrity(length: Int64(Self.size), pieces: Self.pieces(of: Self.body))
        // Paused once three pieces are on disk.
        let (saved, _) = await pause(mirrors, at: 3 * Self.pieceLength, verifying: integrity)
        let data = try #require(saved)
        #expect(data.integrity == integrity)
        // Another program changes a byte of the second piece on disk.
        let file = try FileHandle(forWritingTo: data.partialFile)
        try file.writeAll(Data([0xAA]), at: Self.pieceLength + 10)
        try file.close()
        let before = try #require(servers.first).connections.count
        let resumed = session.resumeSegmentedDownload(data, options: Self.options())
        _ = try expectIntact(await resumed.promise.asPromise().asResult().async())
        // The tampered piece was fetched again, the intact first piece was not.
        let asked = askedRanges(from: before)
        #expect(asked.contains { $0.contains(Self.pieceLength + 10) })
        #expect(!asked.contains { $0.contains(10) })
    }

    @Test func aDownloadFromOneURLRejectsItsFirstBadPieceNamingItAndLeavesNoFile() async throws {
        let mirrors = try serve([Self.resource(Self.corrupted, bytesPerSecond: nil)])
        let integrity = DownloadIntegrity(length: Int64(Self.size), pieces: Self.pieces(of: Self.body))
        let error = await failure(
            of: session.cancellableDownload(
                for: URLRequest(url: mirrors[0]),
                to: directory.destination,
                verifying: integrity
            )
        )
        guard case DownloadIntegrityError.pieceMismatch(let piece, let expected, _)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(piece == 0 && expected == Self.pieces(of: Self.body).sha256[0])
        #expect(try directory.contents().isEmpty)
    }

    @Test func pieceDigestsThatCannotDescribeTheFileAreRefusedBeforeAnyRequest() async throws {
        let mirror = [URL(string: "http://127.0.0.1:1/f")!]
        let digest = String(repeating: "a", count: 64)
        let cases: [(DownloadIntegrity, String)] = [
            (DownloadIntegrity(pieces: PieceDigests(length: 10, sha256: [digest])), "pieces need the file's length"),
            (
                DownloadIntegrity(length: 25, pieces: PieceDigests(length: 10, sha256: [digest, digest])),
                "2 piece digests do not cut 25 bytes into pieces of 10: 3 do"
            ),
            (
                DownloadIntegrity(length: 10, pieces: PieceDigests(length: 0, sha256: [digest])),
                "piece length 0 is not positive"
            ),
            (
                DownloadIntegrity(length: 10, pieces: PieceDigests(length: 10, sha256: ["xyz"])),
                "the SHA-256 of piece 0 is not 64 hexadecimal digits"
            ),
        ]
        for (integrity, problem) in cases {
            let error = await failure(
                of: session.segmentedDownload(from: mirror, to: directory.destination, verifying: integrity)
            )
            #expect(error as? DownloadIntegrityError == .invalidExpectation(problem))
        }
        #expect(try directory.contents().isEmpty)
    }
}
