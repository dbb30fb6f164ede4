public import Dispatch
public import Foundation

/// A guarantee that resolves after `seconds`.
///
/// ```swift
/// after(seconds: 0.5).done { hideToast() }
/// ```
///
/// A zero, negative or non-finite interval resolves on the next turn of a global queue, never at once and
/// never not at all. The time comes from ``PromiseClocks/current``: real time unless a test installed a clock
/// with ``withPromiseClock(_:operation:)``.
public func after(seconds: TimeInterval) -> Guarantee<Void> {
    after(DispatchTimeInterval(clampingSeconds: seconds), clock: PromiseClocks.current)
}

/// A guarantee that resolves after `seconds` of `clock`'s time.
///
/// ```swift
/// after(seconds: 0.5, clock: clock).done { hideToast() }
/// ```
public func after(seconds: TimeInterval, clock: any PromiseClock) -> Guarantee<Void> {
    after(DispatchTimeInterval(clampingSeconds: seconds), clock: clock)
}

/// A guarantee that resolves after `interval`.
///
/// ```swift
/// after(.milliseconds(500)).done { hideToast() }
/// ```
public func after(_ interval: DispatchTimeInterval) -> Guarantee<Void> {
    after(interval, clock: PromiseClocks.current)
}

/// A guarantee that resolves after `interval` of `clock`'s time.
///
/// ```swift
/// after(.milliseconds(500), clock: clock).done { hideToast() }
/// ```
public func after(_ interval: DispatchTimeInterval, clock: any PromiseClock) -> Guarantee<Void> {
    let guarantee = Guarantee<Void>(state: nil)
    _ = clock.schedule(after: interval) {
        guarantee.resolve(.fulfilled(()))
    }
    return guarantee
}

extension DispatchTimeInterval {
    /// Converts seconds to nanoseconds, clamping what Dispatch cannot represent: negative or NaN becomes
    /// zero, and anything beyond ~292 years becomes `.never`.
    package init(clampingSeconds seconds: TimeInterval) {
        guard seconds > 0 else {
            self = .nanoseconds(0)
            return
        }
        let nanoseconds = seconds * 1_000_000_000
        guard nanoseconds < Double(Int.max) else {
            self = .never
            return
        }
        self = .nanoseconds(Int(nanoseconds))
    }
}
