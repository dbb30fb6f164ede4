public import Foundation

/// How a segmented download cuts its file and spreads it across mirrors.
///
/// ```swift
/// var options = SegmentedDownloadOptions()
/// options.segmentSize = 4 * 1_048_576      // fewer, larger requests
/// options.minimumBytesPerSecond = 65_536   // a mirror slower than 64 KiB/s gives its segment to another
/// options.retrying = DownloadRetryPolicy(retries: 3)   // a dropped connection or a 503: forgiven 3 times in a row
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
    /// How a mirror's faults that may pass (``MirrorDropReason/isTransient``: a connection lost or refused, a
    /// timeout, a stall, a body cut short, `408`, `429`, `500`, `502`, `503`, `504`) are forgiven — the policy a
    /// single-URL download takes as `retrying:`, applied to each mirror. A forgiven fault stops only the request it
    /// hit: its segment goes to the other mirrors, or back to this one, from the bytes already written, once the mirror
    /// has rested: ``DownloadRetryPolicy/delay`` times ``DownloadRetryPolicy/backoff`` to the power of the faults it
    /// was forgiven in a row before, or longer if the server's `Retry-After` asks, up to five minutes (a mirror that
    /// asks for more is dropped). Each segment the mirror then completes starts the count again. Any other fault, and
    /// one past ``DownloadRetryPolicy/retries`` in a row, drops the mirror (aria2's `--max-tries`, less one, and
    /// `--retry-wait`). Rests are measured by the stall watch, whose period is a quarter of ``stallTimeout`` up to a
    /// second, so a rest lasts up to one period longer.
    ///
    /// ```swift
    /// var options = SegmentedDownloadOptions()
    /// options.retrying = DownloadRetryPolicy(retries: 3, delay: 1, backoff: 2)   // rests of 1, 2 and 4 seconds
    /// ```
    ///
    /// Default: no retry (every fault drops its mirror), a delay of 1 second, no back-off.
    public var retrying = DownloadRetryPolicy(retries: 0, delay: 1, backoff: 1)

    /// How many faults in a row that may pass a mirror is forgiven before it is dropped: ``retrying``'s
    /// ``DownloadRetryPolicy/retries``. Default: 0, every fault drops its mirror.
    public var retriesPerMirror: Int {
        get { retrying.retries }
        set { retrying.retries = newValue }
    }

    /// How long a mirror rests after its first forgiven fault before it is sent another request, in seconds:
    /// ``retrying``'s ``DownloadRetryPolicy/delay``. Default: 1.
    public var retryDelay: TimeInterval {
        get { retrying.delay }
        set { retrying.delay = newValue }
    }

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
        if let problem = retrying.problem { return "retrying: \(problem)" }
        return nil
    }
}
