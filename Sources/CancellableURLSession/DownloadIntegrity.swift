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

    /// Expects a file of `length` bytes and/or with the SHA-256 `sha256` (64 hexadecimal digits).
    ///
    /// A negative length or a digest that is not 64 hexadecimal digits makes the download reject at once with
    /// ``DownloadIntegrityError/invalidExpectation(_:)``, before any request is sent.
    public init(length: Int64? = nil, sha256: String? = nil) {
        self.length = length
        self.sha256 = sha256
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
        if let sha256, sha256.utf8.count != 64 || !sha256.utf8.allSatisfy(\.isASCIIHexDigit) {
            return "SHA-256 \"\(sha256)\" is not 64 hexadecimal digits"
        }
        return nil
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
        case .invalidExpectation(let problem):
            "The expected integrity cannot be checked: \(problem)."
        }
    }
}

extension UInt8 {
    /// `0`–`9`, `a`–`f`, `A`–`F`.
    fileprivate var isASCIIHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
