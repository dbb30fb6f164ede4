/// Logs a ``LogEvent`` if the only way to resolve a promise goes away unused: a `Resolver` dropped before it
/// resolved its promise, or a guarantee's resolve closure dropped before it was called.
///
/// Not generic on purpose: a generic class's deinit runs unspecialised and pays generic-metadata lookups, and
/// this one runs once per promise made with a resolver. `markResolved()` is called only by the single caller
/// whose resolution won (the box's `seal` says so), so the flag has one writer, and the deinit reads it after
/// the last release.
@usableFromInline
final class AbandonmentSentinel: @unchecked Sendable {
    @usableFromInline
    let event: LogEvent
    /// One writer (the winning resolution), one reader (the deinit, after the last release): no access can
    /// overlap, so the run-time exclusivity check every class property access gets is skipped.
    @usableFromInline
    @exclusivity(unchecked)
    var isResolved = false

    @inlinable
    init(_ event: LogEvent) {
        self.event = event
    }

    @inlinable
    func markResolved() {
        isResolved = true
    }

    deinit {
        if !isResolved {
            conf.logHandler(event)
        }
    }
}
