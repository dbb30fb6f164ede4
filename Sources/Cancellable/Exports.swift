// `import Cancellable` alone gives access to the promise core too, so that code which imported only
// CancellablePromiseKit (and used `Promise`, `Guarantee`, `when`…) migrates by changing that one import.
@_exported public import PromiseCore
