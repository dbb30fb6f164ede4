import Foundation

/// A transfer's speed, as an app shows it: bytes per second, smoothed so that it neither jumps with every piece of a
/// body nor lags a change by more than a few seconds — an exponentially weighted average of the rate over windows of
/// at least ``window`` seconds, each weighted by its length (a time constant of ``smoothing`` seconds).
///
/// Pure: the time is passed in (the transfer's `PromiseClock`), so a test writes the instants down.
///
/// ```swift
/// var speed = TransferSpeed()
/// speed.record(total: 0, at: 0)
/// speed.record(total: 1_000_000, at: 1)
/// speed.bytesPerSecond   // 1,000,000: the first window's rate; later windows move it by their weight
/// ```
struct TransferSpeed: Sendable {
    /// The shortest window a rate is measured over, in seconds: shorter ones wait for more bytes.
    static let window: TimeInterval = 0.25
    /// How quickly the average follows a change, in seconds.
    static let smoothing: TimeInterval = 2

    /// The smoothed rate; `nil` until a first window has passed.
    private(set) var bytesPerSecond: Double?
    /// Where the current window began: the total then, and the time.
    private var windowStart: (total: Int64, time: TimeInterval)?

    /// Records that `total` bytes have been transferred by `time`.
    mutating func record(total: Int64, at time: TimeInterval) {
        guard let start = windowStart else {
            windowStart = (total, time)
            return
        }
        let elapsed = time - start.time
        guard elapsed >= Self.window else { return }
        let rate = Double(max(0, total - start.total)) / elapsed
        if let average = bytesPerSecond {
            let weight = 1 - exp(-elapsed / Self.smoothing)
            bytesPerSecond = average + weight * (rate - average)
        } else {
            bytesPerSecond = rate
        }
        windowStart = (total, time)
    }

    /// How long the `remaining` bytes take at this speed; `nil` until there is a speed, or at a speed of zero.
    func timeRemaining(for remaining: Int64) -> TimeInterval? {
        guard let bytesPerSecond, bytesPerSecond > 0 else { return nil }
        return Double(max(0, remaining)) / bytesPerSecond
    }
}
