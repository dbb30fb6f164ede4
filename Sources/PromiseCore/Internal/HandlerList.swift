/// A handler waiting for a promise's result. Handlers are internal closures that the library builds;
/// user code reaches them only through the queue hop they perform.
@usableFromInline
package typealias Handler<T> = (Result<T>) -> Void

/// A promise's handlers as its storage keeps them, with their type erased (see ``_PromiseStorage``).
@usableFromInline
package typealias ErasedHandlerList = HandlerList<Never>

/// The handlers of a pending promise, in the order they were added.
///
/// The first handler is stored inline, so the common case of one observer per promise costs no array
/// allocation (the same trick as SwiftNIO's `CallbackList`).
@usableFromInline
package struct HandlerList<T> {
    @usableFromInline
    var first: Handler<T>?
    @usableFromInline
    var rest: [Handler<T>] = []

    @inlinable
    package init() {}

    @inlinable
    var isEmpty: Bool { first == nil }

    /// How many handlers are waiting.
    var count: Int { first == nil ? 0 : 1 + rest.count }

    @inlinable
    mutating func append(_ handler: @escaping Handler<T>) {
        if first == nil {
            first = handler
        } else {
            rest.append(handler)
        }
    }

    @inlinable
    func run(with result: Result<T>) {
        guard let first else { return }
        first(result)
        for handler in rest {
            handler(result)
        }
    }
}
