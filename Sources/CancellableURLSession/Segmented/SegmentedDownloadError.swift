public import Foundation

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
    /// positive, ``SegmentedDownloadOptions/retrying`` as ``DownloadRetryPolicy`` says: retries 0 to 1,000, a delay
    /// of 0 to 86,400 seconds, a back-off of 1 to 10).
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

extension SegmentedDownloadError: LocalizedError {
    /// The same sentence as `description`, for `localizedDescription`: what an app shows or logs.
    public var errorDescription: String? { description }
}
