import Foundation

/// What a downloaded file must be: its length, its SHA-256, or both. Checked once every byte is in, before the
/// file replaces the destination.
///
/// ```swift
/// let expected = DownloadIntegrity(length: 734_003_200, sha256: "9f86d081884c7d659a2feaa0c55ad015…")
/// session.cancellableDownload(for: request, to: file, verifying: expected)
///     .catch { error in
///         if error is DownloadIntegrityError { reportCorruptMirror() }   // the destination is untouched
///     }
/// ```
///
/// A mismatch rejects the download with ``DownloadIntegrityError`` and removes what was downloaded; a file already
/// at the destination stays as it was. This also makes a race of mirrors, or a download resumed from another
/// mirror, safe against a mirror that serves a different file.
public struct DownloadIntegrity: Sendable, Hashable, Codable {
    /// The file's length in bytes, if it is to be checked.
    public var length: Int64?
    /// The file's SHA-256 as 64 hexadecimal digits (ASCII, either case), if it is to be checked.
    public var sha256: String?
    /// The SHA-256 of each piece of the file, as a Metalink file carries them, if they are to be checked. They need
    /// ``length``. A segmented download checks each piece as soon as it is written, and drops the mirror that sent a
    /// bad one; every other download checks them with the whole file.
    public var pieces: PieceDigests?

    /// Expects a file of `length` bytes, with the SHA-256 `sha256` (64 hexadecimal digits), made of `pieces`: any
    /// of them.
    ///
    /// A negative length, a digest that is not 64 hexadecimal digits, or pieces that do not cut `length` bytes
    /// make the download reject at once with ``DownloadIntegrityError/invalidExpectation(_:)``, before any request
    /// is sent.
    public init(length: Int64? = nil, sha256: String? = nil, pieces: PieceDigests? = nil) {
        self.length = length
        self.sha256 = sha256
        self.pieces = pieces
    }

    /// Its keys in resume data (<doc:ResumeDataFormat>), which apps keep across updates: renaming a property must not
    /// rename its key.
    private enum CodingKeys: String, CodingKey {
        case length, sha256, pieces
    }

    /// Throws ``DownloadIntegrityError/invalidExpectation(_:)`` if the expectation cannot be checked.
    func validate() throws {
        if let problem { throw DownloadIntegrityError.invalidExpectation(problem) }
    }

    /// Why the expectation cannot be checked, if it cannot: a negative length, or a digest that is not 64 ASCII
    /// hexadecimal digits (`Character.isHexDigit` would also take fullwidth digits such as `Ａ`).
    var problem: String? {
        if let length, length < 0 {
            return "length \(length) is negative"
        }
        if let sha256, !Self.isDigest(sha256) {
            return "SHA-256 \"\(sha256)\" is not 64 hexadecimal digits"
        }
        if let pieces {
            guard let length else { return "pieces need the file's length" }
            if let problem = pieces.problem(for: length) { return problem }
        }
        return nil
    }

    /// Whether `digest` is 64 ASCII hexadecimal digits.
    static func isDigest(_ digest: String) -> Bool {
        digest.utf8.count == 64 && digest.utf8.allSatisfy(\.isASCIIHexDigit)
    }

    /// Throws ``DownloadIntegrityError`` if the file at `url` is not what is expected.
    func verify(fileAt url: URL) throws {
        if let length {
            let actual = try PartialFile.size(of: url)
            guard actual == length else {
                throw DownloadIntegrityError.lengthMismatch(expected: length, actual: actual)
            }
        }
        if let sha256 {
            let actual = try SHA256.hexDigest(ofFileAt: url)
            guard actual == sha256.lowercased() else {
                throw DownloadIntegrityError.sha256Mismatch(expected: sha256.lowercased(), actual: actual)
            }
        }
        if let pieces, let length {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            for piece in pieces.sha256.indices {
                let actual = try pieces.hexDigest(of: piece, in: length, readingFrom: handle)
                let expected = pieces.sha256[piece].lowercased()
                guard actual == expected else {
                    throw DownloadIntegrityError.pieceMismatch(piece: piece, expected: expected, actual: actual)
                }
            }
        }
    }
}

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

    /// The pieces that overlap `bytes`.
    func pieces(overlapping bytes: Range<Int64>) -> Range<Int> {
        guard !bytes.isEmpty else { return 0..<0 }
        return Int(bytes.lowerBound / length)..<Int((bytes.upperBound - 1) / length + 1)
    }

    /// The lowercase hexadecimal SHA-256 of piece `piece` of a file of `fileLength` bytes, read from `handle` in
    /// reads of at most 1 MiB.
    func hexDigest(of piece: Int, in fileLength: Int64, readingFrom handle: FileHandle) throws -> String {
        let bytes = range(of: piece, in: fileLength)
        var hash = SHA256()
        var offset = bytes.lowerBound
        while offset < bytes.upperBound {
            let count = Int(min(bytes.upperBound - offset, 1 << 20))
            hash.update(try handle.readAll(count: count, at: offset))
            offset += Int64(count)
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

/// Why a download was not the file its ``DownloadIntegrity`` described.
///
/// ```swift
/// if case .sha256Mismatch(let expected, let actual) = error as? DownloadIntegrityError { … }
/// ```
public enum DownloadIntegrityError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The downloaded file had `actual` bytes, not `expected`.
    case lengthMismatch(expected: Int64, actual: Int64)
    /// The downloaded file's SHA-256 (lowercase hexadecimal) was `actual`, not `expected`.
    case sha256Mismatch(expected: String, actual: String)
    /// Piece `piece` of the file (``PieceDigests``) had the SHA-256 `actual`, not `expected`.
    case pieceMismatch(piece: Int, expected: String, actual: String)
    /// The ``DownloadIntegrity`` itself cannot be checked (a negative length, a malformed digest): nothing was
    /// sent.
    case invalidExpectation(String)

    /// A sentence saying what did not match.
    public var description: String {
        switch self {
        case .lengthMismatch(let expected, let actual):
            "The download has \(actual) bytes, not the \(expected) expected."
        case .sha256Mismatch(let expected, let actual):
            "The download's SHA-256 is \(actual), not the \(expected) expected."
        case .pieceMismatch(let piece, let expected, let actual):
            "Piece \(piece) of the download has the SHA-256 \(actual), not the \(expected) expected."
        case .invalidExpectation(let problem):
            "The expected integrity cannot be checked: \(problem)."
        }
    }
}

extension UInt8 {
    /// `0`–`9`, `a`–`f`, `A`–`F`.
    var isASCIIHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
