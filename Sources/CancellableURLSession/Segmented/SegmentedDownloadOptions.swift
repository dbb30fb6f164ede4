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
