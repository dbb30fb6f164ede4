public import PromiseCore

extension Promise {
    /// Wraps the promise in a cancellable one. Cancelling it rejects the wrapper at once; the work behind
    /// this promise, which has no cancel handler, keeps running.
    ///
    /// ```swift
    /// let cancellable = legacyFetch().asCancellable()
    /// ```
    ///
    /// If the promise is already resolved, so is the wrapper, with the same result, when this returns.
    public func asCancellable() -> CancellablePromise<T> {
        let cancellable = CancellablePromise<T>()
        cancellable.follow(self)
        return cancellable
    }
}

extension Guarantee {
    /// Wraps the guarantee in a cancellable promise. Cancelling it rejects the wrapper at once.
    ///
    /// ```swift
    /// let delay = after(seconds: 5).asCancellable()
    /// delay.cancel()
    /// ```
    ///
    /// If the guarantee is already resolved, so is the wrapper, with the same value, when this returns.
    public func asCancellable() -> CancellablePromise<T> {
        let cancellable = CancellablePromise<T>()
        cancellable.follow(self)
        return cancellable
    }
}
