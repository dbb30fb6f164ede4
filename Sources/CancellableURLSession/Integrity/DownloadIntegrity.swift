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
///
/// ## What verifying costs
///
/// Each byte is hashed once, on a thread of the library's own, while the transfer goes on, so that verifying adds
/// little to the time a download takes:
///
/// - The SHA-256 is updated as the bytes are written in order: the whole body of a single-URL download; a segmented
///   download's segments one after the other, each as it arrives once the one before is complete. What could not be
///   taken as it came — the bytes a resumed download kept, what a segment wrote before the one before it was
///   complete, chunks past a backlog the hashing thread could not keep up with (a build without the optimizer) — is
///   read back from the file on that thread, mostly while the transfer goes on; the rest once the last byte is in.
/// - Every download checks each piece once, as soon as its last byte is written, reading it back while it is still
///   in the file system's cache; the pieces are not read again at the end (only those of bytes a resume kept, or of
///   a file a session with a delegate of its own delivered whole).
///
/// Progress reports ``TransferPhase/verifying`` only while something is left to hash once the last byte is in.
public struct DownloadIntegrity: Sendable, Hashable, Codable {
    /// The file's length in bytes, if it is to be checked.
    public var length: Int64?
    /// The file's SHA-256 as 64 hexadecimal digits (ASCII, either case), if it is to be checked.
    public var sha256: String?
    /// The SHA-256 of each piece of the file, as a Metalink file carries them, if they are to be checked. They need
    /// ``length``. A segmented download checks each piece as soon as it is written, drops the mirror that sent a bad
    /// one and fetches the piece again; a download from one URL stops at the first bad piece, and rejects.
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
    ///
    /// - Parameters:
    ///   - digest: the file's SHA-256 as far as it was hashed while the file was written: only the bytes it did not
    ///     hash are read back. Without it, the whole file is read.
    ///   - piecesVerified: whether every piece was checked already (a segmented download checks each as it
    ///     completes, and completes only once each passed): they are not read again.
    func verify(fileAt url: URL, digest: StreamingDigest? = nil, piecesVerified: Bool = false) throws {
        try verify(fileAt: url, digest: digest, verifiedPieces: { _ in piecesVerified })
    }

    /// Throws ``DownloadIntegrityError`` if the file at `url` is not what is expected, reading back only the pieces
    /// that `verifiedPieces` does not say passed already (a single-URL download checks each as its last byte
    /// arrives, ``PiecesAsWritten``). `reading` hears of each piece read back (a test's hook).
    func verify(
        fileAt url: URL,
        digest: StreamingDigest?,
        verifiedPieces: (Int) -> Bool,
        reading: ((Int) -> Void)? = nil
    ) throws {
        let size = try PartialFile.size(of: url)
        if let length, size != length {
            throw DownloadIntegrityError.lengthMismatch(expected: length, actual: size)
        }
        if let sha256 {
            let actual = try digest?.finish(length: size) ?? SHA256.hexDigest(ofFileAt: url)
            guard actual == sha256.lowercased() else {
                throw DownloadIntegrityError.sha256Mismatch(expected: sha256.lowercased(), actual: actual)
            }
        }
        if let pieces, let length, !pieces.sha256.indices.allSatisfy(verifiedPieces) {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            for piece in pieces.sha256.indices where !verifiedPieces(piece) {
                reading?(piece)
                let actual = try pieces.hexDigest(of: piece, in: length, readingFrom: handle)
                let expected = pieces.sha256[piece].lowercased()
                guard actual == expected else {
                    throw DownloadIntegrityError.pieceMismatch(piece: piece, expected: expected, actual: actual)
                }
            }
        }
    }

    /// Whether ``verify(fileAt:digest:piecesVerified:)`` still has bytes to hash for a file of `length` bytes: what
    /// a download reports as its `verifying` phase. Checking the length alone, or finalizing a digest that hashed
    /// every byte as it was written, costs nothing worth reporting.
    func hasWorkLeft(forFileOf length: Int64, digest: StreamingDigest?, piecesVerified: Bool) -> Bool {
        if pieces != nil, !piecesVerified { return true }
        guard sha256 != nil else { return false }
        return !(digest?.isCaughtUp(to: length) ?? false)
    }
}

extension UInt8 {
    /// `0`–`9`, `a`–`f`, `A`–`F`.
    var isASCIIHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
