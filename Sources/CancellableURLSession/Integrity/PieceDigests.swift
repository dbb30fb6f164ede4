import Foundation

/// The SHA-256 of each piece of a file: what a Metalink file (RFC 5854) lists in its `<pieces length="…"
/// type="sha-256">` element, one `<hash>` per piece.
///
/// ```swift
/// let pieces = PieceDigests(length: 262_144, sha256: metalinkHashes)   // one per 256 KiB, the last one shorter
/// let expected = DownloadIntegrity(length: fileSize, pieces: pieces)
/// session.segmentedDownload(from: mirrors, to: file, verifying: expected)   // a bad piece drops its mirror
/// ```
///
/// Piece `i` is the bytes `i * length ..< min((i + 1) * length, fileLength)`.
public struct PieceDigests: Sendable, Hashable, Codable {
    /// Each piece's length in bytes (the last one may be shorter).
    public var length: Int64
    /// Each piece's SHA-256 as 64 hexadecimal digits (ASCII, either case), in order.
    public var sha256: [String]

    /// The pieces of `length` bytes whose digests are `sha256`, in order.
    public init(length: Int64, sha256: [String]) {
        self.length = length
        self.sha256 = sha256
    }

    /// Its keys in resume data (<doc:ResumeDataFormat>): renaming a property must not rename its key.
    private enum CodingKeys: String, CodingKey {
        case length, sha256
    }

    /// Why these pieces cannot describe a file of `fileLength` bytes; `nil` if they can.
    func problem(for fileLength: Int64) -> String? {
        guard length > 0 else { return "piece length \(length) is not positive" }
        let count = fileLength / length + (fileLength % length == 0 ? 0 : 1)
        guard Int64(sha256.count) == count else {
            return "\(sha256.count) piece digests do not cut \(fileLength) bytes into pieces of \(length): \(count) do"
        }
        if let bad = sha256.firstIndex(where: { !DownloadIntegrity.isDigest($0) }) {
            return "the SHA-256 of piece \(bad) is not 64 hexadecimal digits"
        }
        return nil
    }

    /// The bytes of piece `piece` of a file of `fileLength` bytes.
    func range(of piece: Int, in fileLength: Int64) -> Range<Int64> {
        let start = Int64(piece) * length
        return start..<min(start + length, fileLength)
    }

    /// The pieces that overlap `bytes`: none past the last piece, whatever `bytes` says (a server may send more
    /// bytes than the file it was asked for has).
    func pieces(overlapping bytes: Range<Int64>) -> Range<Int> {
        guard !bytes.isEmpty, bytes.lowerBound >= 0 else { return 0..<0 }
        let count = Int64(sha256.count)
        let first = min(bytes.lowerBound / length, count)
        let last = min((bytes.upperBound - 1) / length + 1, count)
        return Int(first)..<Int(max(first, last))
    }

    /// The lowercase hexadecimal SHA-256 of piece `piece` of a file of `fileLength` bytes, read from `handle` in
    /// reads of at most 1 MiB.
    func hexDigest(of piece: Int, in fileLength: Int64, readingFrom handle: FileHandle) throws -> String {
        var hash = SHA256()
        try handle.readAll(range(of: piece, in: fileLength)) { hash.update($0) }
        return SHA256.hex(hash.finalize())
    }
}
