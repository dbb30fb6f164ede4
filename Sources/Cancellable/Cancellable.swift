// Cancellable: placeholder until its own issue (CancellablePromise on top of PromiseCore).
@_exported public import PromiseCore
