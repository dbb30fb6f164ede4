public import Foundation

/// Why a segmented download stopped using a mirror. A mirror is dropped at its first fault — or, for a fault that may
/// pass (``isTransient``), at the first after those ``SegmentedDownloadOptions/retrying`` forgives in a row; its
/// segment goes to the other mirrors.
///
/// ```swift
/// for mirror in result.mirrors {
///     if let reason = mirror.dropped { print("\(mirror.url): \(reason)") }
/// }
/// ```
public enum MirrorDropReason: Error, Sendable, Hashable, CustomStringConvertible {
    /// It serves a file of another length (`announced`) than the mirror that answered first (`expected`).
    case lengthDisagrees(expected: Int64, announced: Int64)
    /// Its strong validator (`ETag` or `Last-Modified`) is not the one of the mirror that answered first: its file
    /// may be another version.
    case validatorDisagrees(expected: String, announced: String?)
    /// It answered a range request with `200` and the whole file: it cannot serve segments.
    case ignoresRanges
    /// Its `206` carried a `Content-Range` (given here) that is not the range asked for, or none; or its `416` named
    /// no length.
    case unexpectedContentRange(String?)
    /// It sent the body with a content coding (given here): its bytes are not at the file's offsets.
    case contentCoded(String)
    /// It answered with this status.
    case status(Int)
    /// Its transfer failed with this `URLError` code (the connection was refused or reset, the network went away),
    /// and the error's own description (on Linux, libcurl's: "transfer closed with 26214400 bytes remaining").
    case transferFailed(URLError.Code, description: String)
    /// Its body ended after `received` of the `expected` bytes its response promised.
    case endedEarly(received: Int64, expected: Int64)
    /// It sent nothing for this many seconds (``SegmentedDownloadOptions/stallTimeout``).
    case stalled(seconds: TimeInterval)
    /// It sent more slowly than ``SegmentedDownloadOptions/minimumBytesPerSecond``: this many bytes per second.
    case tooSlow(bytesPerSecond: Int64)
    /// It alone wrote this piece of the file, whose SHA-256 is not the one the ``DownloadIntegrity/pieces`` give.
    case pieceMismatch(piece: Int)

    /// A sentence saying what the mirror did.
    public var description: String {
        switch self {
        case .lengthDisagrees(let expected, let announced):
            "It serves \(announced) bytes, not the \(expected) of the first mirror to answer."
        case .validatorDisagrees(let expected, let announced):
            "Its validator \(announced ?? "(none)") is not \(expected), the first mirror's."
        case .ignoresRanges: "It ignores ranges: it answered 200 with the whole file."
        case .unexpectedContentRange(let header): "It answered with Content-Range \(header ?? "(none)")."
        case .contentCoded(let coding): "It sent the body with the content coding \"\(coding)\"."
        case .status(let status): "It answered \(status)."
        case .transferFailed(let code, let description):
            "Its transfer failed: \(description) (URLError \(code.rawValue))."
        case .endedEarly(let received, let expected): "Its body ended after \(received) of \(expected) bytes."
        case .stalled(let seconds): "It sent nothing for \(String(format: "%.1f", seconds)) s."
        case .tooSlow(let speed): "It sent only \(speed) bytes per second."
        case .pieceMismatch(let piece): "It sent piece \(piece), whose SHA-256 is not the one expected."
        }
    }

    /// Whether the fault may pass, so that a mirror can be asked again
    /// (``SegmentedDownloadOptions/retrying``): its connection was lost, refused or timed out, its host not
    /// found, its server gave no answer (``transferFailed(_:description:)``); it stalled, or its body ended early; or
    /// it answered `408`, `429`, `500`, `502`, `503` or `504`. A mirror that serves another file, cannot serve ranges,
    /// is too slow or sent a bad piece will do so again: those faults do not pass.
    ///
    /// ```swift
    /// if let reason = mirror.dropped, reason.isTransient { retryLater(mirror.url) }
    /// ```
    public var isTransient: Bool {
        switch self {
        case .transferFailed(let code, _): Self.transientCodes.contains(code)
        case .endedEarly, .stalled: true
        case .status(let status): [408, 429, 500, 502, 503, 504].contains(status)
        case .lengthDisagrees, .validatorDisagrees, .ignoresRanges, .unexpectedContentRange, .contentCoded, .tooSlow,
            .pieceMismatch:
            false
        }
    }

    /// Why a transfer failed with `error`: its `URLError` code (`unknown` for another error) and its description.
    static func failure(of error: Error) -> Self {
        let description = (error as NSError).userInfo[NSLocalizedDescriptionKey] as? String ?? "\(error)"
        return .transferFailed((error as? URLError)?.code ?? .unknown, description: description)
    }

    /// The transfer errors that may pass. `unknown` and `badServerResponse` are what Linux's Foundation reports for a
    /// connection reset mid-body and for one closed before any answer.
    private static let transientCodes: Set<URLError.Code> = [
        .timedOut, .networkConnectionLost, .notConnectedToInternet, .cannotConnectToHost, .cannotFindHost,
        .dnsLookupFailed, .resourceUnavailable, .badServerResponse, .unknown,
    ]
}

extension MirrorDropReason: LocalizedError {
    /// The same sentence as `description`, for `localizedDescription`: what an app shows or logs.
    public var errorDescription: String? { description }
}
