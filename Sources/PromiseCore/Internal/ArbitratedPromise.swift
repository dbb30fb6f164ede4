/// Decides whether a result resolves a promise — for another module of this package (Cancellable, whose cancellation
/// state machine decides between a result and a cancellation).
///
/// Not API: public only because a class subclassed in another module must be `open` (a `package` class cannot be
/// subclassed outside its module), and `@_spi` cannot hide it: `Resolver.resolve(_:)`, inlined into clients, names
/// it. The underscore keeps it out of code completion and the documentation.
open class _ResolutionArbiter {
    // No stored property: a subclass's lock must be the first stored property of the object (see `PromiseLock`).
    @inlinable
    public init() {}

    /// Receives a result for `promise`, which this arbiter decides for; the first result that wins resolves it.
    ///
    /// Called by a ``Resolver`` outside any handler.
    @inlinable
    open func _resolve<T>(_ promise: Promise<T>, with result: Result<T>) {
        promise.resolve(result, inHandler: false)
    }
}

/// A promise whose resolution its arbiter decides: Cancellable's box, which holds its cancellation state.
///
/// Holding the arbiter here, strongly, is what lets a resolver be one reference (``Resolver/Target/arbitrated(_:)``)
/// and a cancellable link's handler capture one object (``LinkPromise``). The arbiter must not hold this promise
/// strongly (Cancellable's state holds its box weakly), or the two would keep each other alive.
@usableFromInline
package class ArbitratedPromise<T>: Promise<T> {
    @usableFromInline
    package final let arbiter: _ResolutionArbiter

    @inlinable
    package init(arbiter: _ResolutionArbiter, state result: Result<T>? = nil) {
        self.arbiter = arbiter
        super.init(state: result)
    }
}

/// A cancellable chain link's promise: its arbiter (the link's cancellation state) and, until the link's input
/// delivers, what the link does with the input's result (Cancellable's step and its queue).
///
/// The handler the link adds to its input captures only this object — a closure whose context is one object uses
/// that object as its context — so a link allocates no closure context (see ``ChainLink``, whose rules apply: the
/// cargo is taken out once, by the input's handler, and only that thread touches it after the link is made).
///
/// `Cargo` is an optional (`nil` once taken), and the stored property's type is `Cargo` itself, not `Cargo?`: a
/// generic class's deinit is not specialised, and destroying a `Cargo?` would look up the metadata of `Optional<Cargo>`
/// on every link's release (see ``_PromiseStorage``), where `Cargo`'s is in the class's own metadata.
@usableFromInline
package final class LinkPromise<T, Cargo>: ArbitratedPromise<T> {
    /// Reached from other modules only through ``takeCargo()`` and ``readCargo(_:)``.
    @usableFromInline
    @exclusivity(unchecked)
    final var cargo: Cargo

    @inlinable
    package init(arbiter: _ResolutionArbiter, cargo: Cargo) {
        self.cargo = cargo
        super.init(arbiter: arbiter)
    }
}

extension LinkPromise {
    /// Takes the cargo out; `nil` once taken. Written here, in the module that declares ``cargo``: an access written
    /// in another module does not see its `@exclusivity(unchecked)` and is checked at run time.
    @inlinable
    package final func takeCargo<Wrapped>() -> Wrapped? where Cargo == Wrapped? {
        cargo.take()
    }

    /// What `body` reads of the cargo, which must not be taken yet; as ``takeCargo()``, without a run-time check.
    @inlinable
    package final func readCargo<Wrapped, Value>(_ body: (Wrapped) -> Value) -> Value where Cargo == Wrapped? {
        body(cargo.unsafelyUnwrapped)
    }
}

// Safe to share between threads as a promise is (its result behind its lock); the arbiter is immutable, and the
// cargo is touched only by the input's handler.
extension ArbitratedPromise: @unchecked Sendable where T: Sendable {}
extension LinkPromise: @unchecked Sendable where T: Sendable {}
