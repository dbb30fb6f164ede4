public import Dispatch
public import Foundation
import PromiseCore

/// A cancellable promise that fulfills after `seconds`; cancelling it stops the timer.
///
/// ```swift
/// let delay: CancellablePromise<Void> = after(seconds: 5)
/// delay.done { showHint() }
/// stopButton.onTap = { delay.cancel() }   // the hint never shows; the timer lets go at once
/// ```
///
/// PromiseCore's `after(seconds:)`, which returns a `Guarantee<Void>`, is still the one chosen where nothing
/// asks for a cancellable promise, so PromiseKit-era code keeps compiling unchanged. Ask for this one with a
/// type (`let delay: CancellablePromise<Void> = …`) or by using it as one (`after(seconds: 5).cancel()`).
///
/// A zero, negative or NaN interval fulfills on the next turn of a global queue; an infinite one never fulfills
/// (but can still be cancelled). The time comes from `PromiseClocks.current`: real time unless a test installed
/// a clock with `withPromiseClock(_:operation:)`.
@_disfavoredOverload
public func after(seconds: TimeInterval) -> CancellablePromise<Void> {
    after(DispatchTimeInterval(clampingSeconds: seconds), clock: PromiseClocks.current)
}

/// A cancellable promise that fulfills after `seconds` of `clock`'s time; cancelling it stops the timer.
///
/// ```swift
/// let delay: CancellablePromise<Void> = after(seconds: 5, clock: clock)
/// ```
@_disfavoredOverload
public func after(seconds: TimeInterval, clock: any PromiseClock) -> CancellablePromise<Void> {
    after(DispatchTimeInterval(clampingSeconds: seconds), clock: clock)
}

/// A cancellable promise that fulfills after `interval`; cancelling it stops the timer.
///
/// ```swift
/// let delay: CancellablePromise<Void> = after(.milliseconds(300))
/// ```
@_disfavoredOverload
public func after(_ interval: DispatchTimeInterval) -> CancellablePromise<Void> {
    after(interval, clock: PromiseClocks.current)
}

/// A cancellable promise that fulfills after `interval` of `clock`'s time; cancelling it stops the timer.
///
/// ```swift
/// let delay: CancellablePromise<Void> = after(.milliseconds(300), clock: clock)
/// ```
@_disfavoredOverload
public func after(_ interval: DispatchTimeInterval, clock: any PromiseClock) -> CancellablePromise<Void> {
    let promise = CancellablePromise<Void>()
    let sink = promise.sink
    promise.addCancelAction(
        scheduleReleasably(on: clock, after: interval) {
            sink.resolve(.fulfilled(()), inHandler: false)
        }
    )
    return promise
}
