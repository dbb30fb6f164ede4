public import Foundation

/// How a download forgives faults that may pass — a connection lost, refused or timed out, a body cut short, `408`,
/// `429`, `500`, `502`, `503`, `504` (the faults ``MirrorDropReason/isTransient`` names) — by asking again after a
/// pause: a single-URL download takes it as `retrying:`, a segmented one applies it to each mirror
/// (``SegmentedDownloadOptions/retrying``).
///
/// ```swift
/// let patient = DownloadRetryPolicy(retries: 5, delay: 1, backoff: 2)   // after 1, 2, 4, 8 and 16 seconds
/// session.resumableDownload(from: url, to: file, retrying: patient)
/// ```
///
/// A resumable download asks again for the bytes it does not hold (`Range: bytes=<kept>-`, under the kept bytes'
/// validator); a `cancellableDownload`, which cannot resume, starts over. The wait before a retry is ``delay`` times
/// ``backoff`` to the power of the retries made before, or what the server's `Retry-After` asks if that is longer, up
/// to five minutes — a server that asks for more is not asked again. The waits are counted on
/// `PromiseClocks.current`, so a test's `TestClock` drives them. A pause or cancel while the download waits ends it
/// at once: a pause keeps its
/// bytes, a cancel removes them. Any other fault ends the download at once. The policy is not part of the resume
/// data: pass it again to
/// `URLSession.resumeDownload(_:to:from:verifying:withoutValidator:retrying:file:line:progress:)`.
public struct DownloadRetryPolicy: Sendable, Hashable {
    /// How many faults in a row are forgiven: 0...1,000.
    public var retries: Int
    /// The pause before the first retry, in seconds: 0...86,400.
    public var delay: TimeInterval
    /// What each pause is multiplied by for the next: 1...10.
    public var backoff: Double

    /// No retry: the first fault ends the download.
    public static let none = DownloadRetryPolicy(retries: 0)

    /// Forgives `retries` faults that may pass, pausing `delay` seconds before the first retry and `backoff` times
    /// longer before each next one.
    public init(retries: Int, delay: TimeInterval = 1, backoff: Double = 2) {
        self.retries = retries
        self.delay = delay
        self.backoff = backoff
    }

    /// Why the policy cannot be used, naming the first value out of range; `nil` if it can.
    var problem: String? {
        if !(0...1_000).contains(retries) { return "retries \(retries) is not 0...1000" }
        if !(delay >= 0 && delay <= 86_400) { return "delay \(delay) is not 0...86400 seconds" }
        if !(backoff >= 1 && backoff <= 10) { return "backoff \(backoff) is not 1...10" }
        return nil
    }

    /// The delay before retry number `retry` (1 for the first), given the server's `Retry-After`; `nil` if the server
    /// asks for longer than five minutes.
    func delay(before retry: Int, retryAfter: TimeInterval?) -> TimeInterval? {
        if let retryAfter, retryAfter > SegmentSchedule.longestRetryAfter { return nil }
        // No delay stays no delay: 0 × an infinite back-off (10 to the 999th) would be NaN.
        let backedOff = delay == 0 ? 0 : delay * pow(backoff, Double(retry - 1))
        return max(min(backedOff, 86_400), retryAfter ?? 0)
    }
}
