public import Dispatch
public import Foundation
import PromiseCore

/// A cancellable promise that fulfils after `seconds`; cancelling it stops the timer.
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
/// A zero, negative or NaN interval fulfils on the next turn of a global queue; an infinite one never fulfils
/// (but can still be cancelled).
@_disfavoredOverload
public func after(seconds: TimeInterval) -> CancellablePromise<Void> {
    after(DispatchTimeInterval(clampingSeconds: seconds))
}

/// A cancellable promise that fulfils after `interval`; cancelling it stops the timer.
///
/// ```swift
/// let delay: CancellablePromise<Void> = after(.milliseconds(300))
/// ```
@_disfavoredOverload
public func after(_ interval: DispatchTimeInterval) -> CancellablePromise<Void> {
    let promise = CancellablePromise<Void>()
    let sink = promise.sink
    promise.addCancelAction(
        scheduleReleasably(on: Schedulers.current, after: interval) {
            sink.resolve(.fulfilled(()), inHandler: false)
        }
    )
    return promise
}
