public import Foundation

/// How a segmented download cuts its file and spreads it across mirrors.
///
/// ```swift
/// var options = SegmentedDownloadOptions()
/// options.segmentSize = 4 * 1_048_576      // fewer, larger requests
/// options.minimumBytesPerSecond = 65_536   // a mirror slower than 64 KiB/s gives its segment to another
/// options.retriesPerMirror = 3             // a dropped connection or a 503 is forgiven three times in a row
/// session.segmentedDownload(from: mirrors, to: file, options: options)
/// ```
public struct SegmentedDownloadOptions: Sendable, Hashable {
    /// The size of the segments the file is cut into at first, in bytes (aria2's `--min-split-size`, `-k`). Each
    /// segment is one range request. Default: 1 MiB.
    public var segmentSize: Int64 = 1_048_576
    /// The smallest piece a busy segment is split into when a mirror runs out of segments: below it, an idle mirror
    /// races the rest of a slower mirror's segment instead (the end game). Default: 256 KiB.
    public var minimumSplitSize: Int64 = 262_144
    /// Concurrent requests per mirror (aria2's `--max-connection-per-server`, `-x`). Default: 1.
    public var connectionsPerMirror = 1
    /// Whether, once no segment is left to split, an idle mirror that is faster also fetches the rest of a segment a
    /// slower mirror is still fetching; whichever finishes second is stopped the moment the other completes. Costs at
    /// most that rest's bytes, twice. Default: `true`.
    public var endGame = true
    /// A request that receives nothing for this many seconds stalls: its mirror is dropped (unless
    /// ``retriesPerMirror`` forgives it), and its segment goes to another. Default: 10.
    public var stallTimeout: TimeInterval = 10
    /// A request slower than this many bytes per second, once it has run for ``stallTimeout`` seconds, gives its
    /// segment to another mirror and its mirror is dropped — as long as another mirror is left. `nil` (the default):
    /// no speed floor.
    public var minimumBytesPerSecond: Int64?
    /// How many faults in a row that may pass (``MirrorDropReason/isTransient``: a connection lost or refused, a
    /// timeout, a stall, a body cut short, `408`, `429`, `500`, `502`, `503`, `504`) a mirror is forgiven before it is
    /// dropped (aria2's `--max-tries`, less one). A forgiven fault stops only the request it hit: its segment goes to
    /// the other mirrors, or back to this one after ``retryDelay``, from the bytes already written. Each segment the
    /// mirror then completes starts the count again. Any other fault drops the mirror at once. Default: 0, every
    /// fault drops its mirror.
    public var retriesPerMirror = 0
    /// How long a mirror rests after a forgiven fault before it is sent another request, in seconds (aria2's
    /// `--retry-wait`); longer if the server's `Retry-After` (seconds, or an HTTP date) asks for longer, up to five
    /// minutes — a mirror that asks for more is dropped. Measured by the stall watch, whose period is a quarter of
    /// ``stallTimeout`` up to a second, so the rest lasts up to one period longer. Default: 1.
    public var retryDelay: TimeInterval = 1

    /// The default options.
    public init() {}

    /// How often the download looks for stalls and counts rests down: a quarter of ``stallTimeout``, from 20 ms to
    /// a second.
    var watchPeriod: TimeInterval { max(0.02, min(1, stallTimeout / 4)) }

    /// Why these options cannot be used, naming the first that is out of range; `nil` if they can.
    var problem: String? {
        let largest: Int64 = 1 << 50
        if !(1...largest).contains(segmentSize) { return "segmentSize \(segmentSize) is not 1...\(largest)" }
        if !(1...largest).contains(minimumSplitSize) {
            return "minimumSplitSize \(minimumSplitSize) is not 1...\(largest)"
        }
        if !(1...64).contains(connectionsPerMirror) {
            return "connectionsPerMirror \(connectionsPerMirror) is not 1...64"
        }
        if !(stallTimeout > 0 && stallTimeout.isFinite) { return "stallTimeout \(stallTimeout) is not positive" }
        if let floor = minimumBytesPerSecond, floor <= 0 { return "minimumBytesPerSecond \(floor) is not positive" }
        if !(0...1_000).contains(retriesPerMirror) { return "retriesPerMirror \(retriesPerMirror) is not 0...1000" }
        if !(retryDelay >= 0 && retryDelay <= 86_400) { return "retryDelay \(retryDelay) is not 0...86400 seconds" }
        return nil
    }
}

/// Why a segmented download stopped using a mirror. A mirror is dropped at its first fault — or, for a fault that may
/// pass (``isTransient``), at the first after ``SegmentedDownloadOptions/retriesPerMirror`` forgiven in a row; its
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
    /// (``SegmentedDownloadOptions/retriesPerMirror``): its connection was lost, refused or timed out, its host not
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

/// One mirror of a segmented download: what it has sent so far, and whether it was dropped.
public struct MirrorStatus: Sendable, Hashable {
    /// The mirror's URL, as given.
    public let url: URL
    /// Every byte of the file it sent, written or not: the end game's losers and a split segment's overlap count
    /// here.
    public let bytesReceived: Int64
    /// The bytes it sent that are in the file.
    public let bytesWritten: Int64
    /// Its requests running now.
    public let activeRequests: Int
    /// Its speed in bytes per second, over its latest request; `nil` before its first byte.
    public let bytesPerSecond: Double?
    /// Why it was dropped, if it was.
    public let dropped: MirrorDropReason?
    /// How many of its faults were forgiven (``SegmentedDownloadOptions/retriesPerMirror``): each stopped one request,
    /// whose bytes left were asked for again.
    public let retries: Int
    /// The latest fault it was forgiven, if any.
    public let lastRetriedFault: MirrorDropReason?
}

/// How far a segmented download has got.
///
/// ```swift
/// session.segmentedDownload(from: mirrors, to: file) { progress in
///     print(progress.fractionCompleted ?? 0, progress.mirrors.map(\.bytesReceived))
/// }
/// ```
public struct SegmentedDownloadProgress: Sendable, Hashable {
    /// Bytes of the file written so far.
    public let bytesWritten: Int64
    /// The file's length, once a mirror has said.
    public let totalBytes: Int64?
    /// Each mirror, in the order given.
    public let mirrors: [MirrorStatus]

    /// `bytesWritten / totalBytes`, when the length is known and not zero.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return Double(bytesWritten) / Double(totalBytes)
    }
}

/// A finished segmented download: where the file is, and what each mirror sent.
public struct SegmentedDownloadResult: Sendable, Hashable {
    /// The destination, where the file now is.
    public let url: URL
    /// The file's length.
    public let totalBytes: Int64
    /// Each mirror, in the order given.
    public let mirrors: [MirrorStatus]

    /// Bytes the mirrors sent that are not in the file: what the end game and split segments cost.
    public var bytesDiscarded: Int64 {
        mirrors.reduce(0) { $0 + $1.bytesReceived - $1.bytesWritten }
    }
}

/// Why a segmented download failed (besides a file system error, or a ``DownloadIntegrityError``).
public enum SegmentedDownloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every mirror was dropped before the file was complete: why, for each, in the order given.
    case everyMirrorDropped([MirrorStatus])
    /// No mirror was given.
    case noMirrors
    /// A mirror's request is not an `http` or `https` request, or asks for a `Range` of its own.
    case invalidMirror(URL?)
    /// An option is out of range: the reason names it (``SegmentedDownloadOptions/segmentSize`` and
    /// ``SegmentedDownloadOptions/minimumSplitSize`` 1 byte to 1 PiB, ``SegmentedDownloadOptions/connectionsPerMirror``
    /// 1 to 64, ``SegmentedDownloadOptions/stallTimeout`` and ``SegmentedDownloadOptions/minimumBytesPerSecond``
    /// positive, ``SegmentedDownloadOptions/retriesPerMirror`` 0 to 1,000, ``SegmentedDownloadOptions/retryDelay`` 0
    /// to 86,400 seconds).
    case invalidOptions(String)
    /// The session delivers no bytes as they arrive, which segments need: it has a delegate of your own. Use a
    /// session without a delegate (such as `URLSession.shared`), or one made by
    /// `URLSession.withProgressReporting(configuration:delegateQueue:)`.
    case needsLiveDelivery

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .everyMirrorDropped(let mirrors):
            "Every mirror was dropped: "
                + mirrors.map { "\($0.url.absoluteString): \($0.dropped?.description ?? "?")" }.joined(separator: " ")
        case .noMirrors: "A segmented download needs at least one mirror."
        case .invalidOptions(let reason): "The segmented download's options are invalid: \(reason)."
        case .invalidMirror(let url):
            "\(url?.absoluteString ?? "(no URL)") is not an http or https request for the whole file."
        case .needsLiveDelivery:
            "A segmented download needs a session that delivers bytes as they arrive, not one with a delegate of "
                + "your own: URLSession.shared, or URLSession.withProgressReporting()."
        }
    }
}
