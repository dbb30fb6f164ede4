/// Carries a value that is not `Sendable` across a `@Sendable` boundary the library controls.
///
/// PromiseKit's handlers are plain (non-`@Sendable`) closures so that code on the main actor can
/// update its own state in `done`/`catch` without ceremony (see `Docs/Design/0001-sendability.md`).
/// The library moves them to the queue the caller named with `on:` and runs them there exactly once;
/// this wrapper is how it tells the compiler so. It is used for nothing else.
@usableFromInline
package struct UncheckedSendable<Value>: @unchecked Sendable {
    @usableFromInline
    package let value: Value

    @inlinable
    package init(_ value: Value) {
        self.value = value
    }
}
