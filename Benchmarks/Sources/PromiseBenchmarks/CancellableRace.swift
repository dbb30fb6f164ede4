import Cancellable

// In a file of its own: with OpenCombine imported, `Cancellable` names OpenCombine's protocol, and inside a
// contestant `race` names the contestant's method.
func raceCancellingLosers(_ promises: [CancellablePromise<Int>]) -> CancellablePromise<Int> {
    race(promises, autoCancel: true)
}
