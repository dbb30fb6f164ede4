import Foundation
import TestSupport
import Testing

@testable import CancellableURLSession

/// The file reads and writes of downloads and their digest, through both of their paths: `FileHandle`'s throwing
/// calls, and the descriptor that macOS before 10.15.4 and iOS before 13.4 use (forced here, so that it runs on
/// every system the suite runs on).
@Suite struct FileIOTests {
    let directory: DownloadDirectory

    init() throws {
        directory = try DownloadDirectory()
    }

    /// A file of `size` bytes in the test's directory, with its bytes.
    func file(size: Int) throws -> (URL, Data) {
        let bytes = DownloadIntegrationTests.payload(size)
        let url = directory.url.appendingPathComponent("file-\(size)")
        try bytes.write(to: url)
        return (url, bytes)
    }

    static func hex(_ digest: [UInt8]) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }

    @Test(arguments: [FileIO.automatic, .descriptor])
    func theDigestOfAFileLargerThanOneReadIsTheDigestOfItsBytes(io: FileIO) async throws {
        defer { directory.remove() }
        // Two whole 1 MiB reads and a part of one that ends inside a 64-byte block.
        let (url, bytes) = try file(size: 2 * 1_048_576 + 700_013)
        let (read, whole) = try await onAThreadOfItsOwn {
            var hash = SHA256()
            hash.update(bytes)
            return (try SHA256.hexDigest(ofFileAt: url, using: io), Self.hex(hash.finalize()))
        }
        #expect(read == whole)
    }

    @Test(arguments: [FileIO.automatic, .descriptor])
    func readInPiecesThatSplitBlocksTheDigestMatchesTheNISTVector(io: FileIO) async throws {
        defer { directory.remove() }
        let url = directory.url.appendingPathComponent("million-a")
        try ResumableDownloadTests.millionA.write(to: url)
        let pieceSizes = [1_000, 4_096, 65_537]
        let digests = try await onAThreadOfItsOwn {
            try pieceSizes.map { try SHA256.hexDigest(ofFileAt: url, pieceSize: $0, using: io) }
        }
        for (pieceSize, digest) in zip(pieceSizes, digests) {
            #expect(digest == ResumableDownloadTests.millionADigest, "pieces of \(pieceSize) bytes")
        }
    }

    @Test(arguments: [FileIO.automatic, .descriptor])
    func piecesAreReadInOrderUpToTheirSizeAndThenEmpty(io: FileIO) throws {
        defer { directory.remove() }
        let (url, bytes) = try file(size: 10_000)
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var pieces: [Data] = []
        while case let piece = try handle.readPiece(upToCount: 4_096, using: io), !piece.isEmpty {
            pieces.append(piece)
        }
        #expect(pieces.map(\.count) == [4_096, 4_096, 1_808])
        #expect(pieces.reduce(Data(), +) == bytes)
        #expect(try handle.readPiece(upToCount: 4_096, using: io).isEmpty, "stays at the end")
    }

    @Test(arguments: [FileIO.automatic, .descriptor])
    func writesGoAtThePositionAndKeepEveryByte(io: FileIO) throws {
        defer { directory.remove() }
        let (url, bytes) = try file(size: 100)
        let handle = try FileHandle(forWritingTo: url)
        try PartialFile.truncate(handle, at: 60)
        let large = DownloadIntegrationTests.payload(3 * 1_048_576 + 5)
        try handle.writeAll(large.dropFirst(1), using: io)  // a slice: its indices do not start at 0
        try handle.writeAll(Data(), using: io)
        try handle.writeAll(Data([7]), using: io)
        try handle.close()
        #expect(try fileContents(url) == bytes.prefix(60) + large.dropFirst(1) + Data([7]))
    }

    @Test func theDescriptorPathThrowsTheSystemsErrorInsteadOfRaising() throws {
        defer { directory.remove() }
        let (url, _) = try file(size: 10)
        // A handle open for writing cannot read, and one open for reading cannot write: EBADF from the system,
        // where Foundation's calls before macOS 10.15.4 / iOS 13.4 raise an exception that ends the app.
        let writer = try FileHandle(forWritingTo: url)
        defer { try? writer.close() }
        #expect(throws: POSIXError(.EBADF)) { try writer.readPiece(upToCount: 4, using: .descriptor) }
        let reader = try FileHandle(forReadingFrom: url)
        defer { try? reader.close() }
        #expect(throws: POSIXError(.EBADF)) { try reader.writeAll(Data([1]), using: .descriptor) }
        #expect(try fileContents(url) == DownloadIntegrationTests.payload(10), "the file is as it was")
    }
}
