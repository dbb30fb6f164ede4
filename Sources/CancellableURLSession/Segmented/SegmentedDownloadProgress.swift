import Foundation

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
