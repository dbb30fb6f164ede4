public import Foundation

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
