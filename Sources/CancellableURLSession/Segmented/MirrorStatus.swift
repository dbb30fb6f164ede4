public import Foundation

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
    /// How many of its faults were forgiven (``SegmentedDownloadOptions/retrying``): each stopped one request,
    /// whose bytes left were asked for again.
    public let retries: Int
    /// The latest fault it was forgiven, if any.
    public let lastRetriedFault: MirrorDropReason?
}
