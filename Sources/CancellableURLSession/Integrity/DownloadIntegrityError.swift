public import Foundation

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

extension DownloadIntegrityError: LocalizedError {
    /// The same sentence as `description`, for `localizedDescription`: what an app shows or logs.
    public var errorDescription: String? { description }
}
