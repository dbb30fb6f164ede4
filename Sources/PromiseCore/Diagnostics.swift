/// Where a promise was created: the `#fileID` and `#line` of the call that made it.
///
/// Recorded in debug builds only; see ``PromiseDiagnostics``.
public struct PromiseCreationSite: Sendable, Hashable, CustomStringConvertible {
    /// The file, as `#fileID` writes it: `"MyModule/Downloader.swift"`.
    public let fileID: String
    /// The line of the call.
    public let line: UInt

    /// Makes a site.
    public init(fileID: String, line: UInt) {
        self.fileID = fileID
        self.line = line
    }

    /// `"MyModule/Downloader.swift:42"`.
    public var description: String { "\(fileID):\(line)" }
}

/// A promise that is still pending, and where it was created.
public struct PendingPromise: Sendable, CustomStringConvertible {
    /// Where it was created.
    public let site: PromiseCreationSite
    /// Its type, as `String(describing:)` writes it: `"Promise<Data>"`, `"CancellablePromise<Data>"`.
    public let type: String
    /// It was deallocated while pending, with whatever could resolve it (its `Resolver`, or a guarantee's resolve
    /// closure): it can never resolve. A promise that is still alive is listed without this, even if its resolver is
    /// gone: a resolver is a value over its promise, and nothing counts its copies.
    public let canNeverResolve: Bool

    /// Makes a description of a pending promise.
    public init(site: PromiseCreationSite, type: String, canNeverResolve: Bool = false) {
        self.site = site
        self.type = type
        self.canNeverResolve = canNeverResolve
    }

    /// `"Promise<Data> created at MyModule/Downloader.swift:42"`, with `", which can never resolve"` added when
    /// ``canNeverResolve``.
    public var description: String {
        "\(type) created at \(site)" + (canNeverResolve ? ", which can never resolve" : "")
    }
}

/// Finds promises that never resolve: in debug builds, the promises that start work — made by
/// `Promise { seal in … }`, `Promise.pending()`, `Guarantee { resolve in … }`, `Guarantee.pending()` and every
/// `CancellablePromise` initialiser and factory — remember where they were created.
///
/// A test can assert that what it started has finished:
///
/// ```swift
/// let start = PromiseDiagnostics.checkpoint()
/// try await refresh().async()
/// let leaked = PromiseDiagnostics.pendingPromises(createdAfter: start)
/// #expect(leaked.isEmpty, "still pending: \(leaked)")
/// ```
///
/// When a ``LogEvent/pendingPromiseDeallocated`` or ``LogEvent/pendingGuaranteeDeallocated`` is logged, the log
/// handler reads the site from ``loggedCreationSite``. Promises made by chain methods (`then`, `map`, …) and
/// combinators are not listed: they are
/// pending only because what they wait for is, and that is listed.
///
/// In release builds nothing is recorded (``recordsCreationSites`` is `false`), no site is passed on, and
/// ``pendingPromises(createdAfter:)`` is always empty: the benchmark's rows are unchanged (the Performance article).
/// Recording costs a dictionary insertion under a global lock per promise, in debug builds only.
public enum PromiseDiagnostics {
    /// A point in the sequence of recorded promises; see ``pendingPromises(createdAfter:)``.
    public struct Checkpoint: Sendable, Hashable {
        let sequence: UInt64
    }

    /// Whether this build records creation sites: `true` in debug builds of PromiseCore.
    public static var recordsCreationSites: Bool {
        #if DEBUG
        true
        #else
        false
        #endif
    }

    /// Marks the current point, so that a later ``pendingPromises(createdAfter:)`` lists only what came after.
    public static func checkpoint() -> Checkpoint {
        #if DEBUG
        CreationRegistry.shared.checkpoint()
        #else
        Checkpoint(sequence: 0)
        #endif
    }

    /// Where the promise or guarantee that the event being logged is about was created: readable inside
    /// ``PMKConfiguration/logHandler`` while it handles ``LogEvent/pendingPromiseDeallocated`` or
    /// ``LogEvent/pendingGuaranteeDeallocated``, on the thread that logs it.
    ///
    /// ```swift
    /// conf.logHandler = { event in
    ///     if case .pendingPromiseDeallocated = event {
    ///         print("leaked:", PromiseDiagnostics.loggedCreationSite ?? "unknown site")
    ///     }
    /// }
    /// ```
    ///
    /// `nil` anywhere else, for promises whose site was not recorded (made by chain methods or combinators),
    /// and in release builds. The events themselves carry no site, so that they are constructed, matched and
    /// printed exactly as in PromiseKit.
    public static var loggedCreationSite: PromiseCreationSite? {
        loggedSite.current.pointee
    }

    /// The recorded promises that are still alive and pending, and those that were deallocated pending
    /// (``PendingPromise/canNeverResolve``), oldest first.
    ///
    /// - Parameter checkpoint: list only promises created after it; `nil` lists all. Tests that run in
    ///   parallel create promises at the same time: filter by ``PendingPromise/site`` if that matters.
    public static func pendingPromises(createdAfter checkpoint: Checkpoint? = nil) -> [PendingPromise] {
        #if DEBUG
        CreationRegistry.shared.pending(after: checkpoint?.sequence ?? 0)
        #else
        []
        #endif
    }
}

extension PromiseDiagnostics {
    /// The diagnostics scope of the current task: promises recorded while it is set carry it, so that a check
    /// can list only what its own test created while other tests run in parallel (PromiseTesting's trait).
    @TaskLocal package static var scope: UInt64 = 0

    private static let nextScope = Locked<UInt64>(0)

    /// Runs `body` in a fresh diagnostics scope and returns its result and the recorded promises it created — in
    /// this task or synchronously from it — that are still pending when it returns, oldest first; always empty in
    /// release builds.
    package static func pendingPromises<R>(
        isolation: isolated (any Actor)? = #isolation,
        createdDuring body: () async throws -> R
    ) async rethrows -> (result: R, pending: [PendingPromise]) {
        let start = checkpoint()
        let scope = nextScope.withLock { value -> UInt64 in
            value += 1
            return value
        }
        let result = try await $scope.withValue(scope, operation: body, isolation: isolation)
        #if DEBUG
        return (result, CreationRegistry.shared.pending(after: start.sequence, inScope: scope))
        #else
        return (result, [])
        #endif
    }
}

/// The site ``PromiseDiagnostics/loggedCreationSite`` returns, per thread: set only while `log` calls the
/// log handler.
private let loggedSite = PerThread<PromiseCreationSite?> { nil }

/// Logs `event` through `conf.logHandler`, with `site` readable as ``PromiseDiagnostics/loggedCreationSite``
/// while the handler runs (restored afterwards, so that an event logged from inside a handler does not lose the
/// outer one's site).
package func log(_ event: LogEvent, createdAt site: PromiseCreationSite?) {
    let slot = loggedSite.current
    let outer = slot.pointee
    slot.pointee = site
    defer { slot.pointee = outer }
    conf.logHandler(event)
}

extension _PromiseStorage {
    /// Records where this promise was created (debug builds only; a no-op that inlines away in release).
    ///
    /// `type` is the type listed by ``PromiseDiagnostics/pendingPromises(createdAfter:)``: the promise's own by
    /// default; a `CancellablePromise` passes its own type for its box.
    @inlinable
    @inline(__always)
    package final func recordCreation(file: StaticString, line: UInt, as type: Any.Type? = nil) {
        #if DEBUG
        CreationRegistry.shared.record(self, file: file, line: line, as: type)
        #endif
    }

    /// Called by the deinit of a promise that only its resolver could resolve: notes that it went away pending, and
    /// returns where it was created. It stays listed by ``PromiseDiagnostics/pendingPromises(createdAfter:)``, as one
    /// that can never resolve.
    package final func noteDeallocatedPending() -> PromiseCreationSite? {
        #if DEBUG
        CreationRegistry.shared.noteDeallocatedPending(self)
        #else
        nil
        #endif
    }
}

#if DEBUG
/// The creation sites of the promises that start work, in debug builds.
///
/// Holds every promise weakly; entries of promises that resolved or went away are swept when the table has
/// doubled since the last sweep (amortised O(1) per promise) and whenever it is listed.
@usableFromInline
final class CreationRegistry: @unchecked Sendable {
    // @unchecked Sendable: `table` is only touched under `lock`.
    @usableFromInline
    static let shared = CreationRegistry()

    private final class Entry {
        let sequence: UInt64
        let site: PromiseCreationSite
        let type: Any.Type
        let scope: UInt64
        /// Set when it was deallocated pending: listed even after it is gone.
        var canNeverResolve = false
        weak var promise: AnyObject?
        let isResolved: (AnyObject) -> Bool

        init(
            sequence: UInt64,
            site: PromiseCreationSite,
            type: Any.Type,
            scope: UInt64,
            promise: AnyObject,
            isResolved: @escaping (AnyObject) -> Bool
        ) {
            self.sequence = sequence
            self.site = site
            self.type = type
            self.scope = scope
            self.promise = promise
            self.isResolved = isResolved
        }

        /// Whether to list it: alive and pending, or deallocated pending.
        var isListed: Bool {
            if let promise { return !isResolved(promise) }
            return canNeverResolve
        }
    }

    private struct Table {
        var entries: [ObjectIdentifier: Entry] = [:]
        var sequence: UInt64 = 0
        var sweepAt = 1_024
    }

    private let table = Locked(Table())

    @usableFromInline
    func record<State>(_ promise: _PromiseStorage<State>, file: StaticString, line: UInt, as listedType: Any.Type?) {
        let site = PromiseCreationSite(fileID: "\(file)", line: line)
        let scope = PromiseDiagnostics.scope
        let isResolved: (AnyObject) -> Bool = {
            unsafeDowncast($0, to: _PromiseStorage<State>.self).isResolvedWithoutMetadata
        }
        let swept: [Entry] = table.withLock { table in
            table.sequence += 1
            table.entries[ObjectIdentifier(promise)] = Entry(
                sequence: table.sequence,
                site: site,
                type: listedType ?? type(of: promise),
                scope: scope,
                promise: promise,
                isResolved: isResolved
            )
            guard table.entries.count >= table.sweepAt else { return [] }
            // Resolving a promise takes its own lock, never this one: checking under this lock is safe.
            let gone = table.entries.filter { !$0.value.isListed }
            for key in gone.keys { table.entries.removeValue(forKey: key) }
            table.sweepAt = max(1_024, table.entries.count * 2)
            return Array(gone.values)
        }
        withExtendedLifetime(swept) {}  // released outside the lock
    }

    func checkpoint() -> PromiseDiagnostics.Checkpoint {
        PromiseDiagnostics.Checkpoint(sequence: table.withLock { $0.sequence })
    }

    func noteDeallocatedPending(_ promise: AnyObject) -> PromiseCreationSite? {
        table.withLock { table in
            // The promise is being deinitialised: its weak reference already reads `nil`, and its address is still
            // its own (an entry of an earlier object at the same address was replaced when this one was recorded:
            // every promise that logs this is recorded).
            guard let entry = table.entries[ObjectIdentifier(promise)], entry.promise == nil else {
                return nil
            }
            entry.canNeverResolve = true
            return entry.site
        }
    }

    func pending(after sequence: UInt64, inScope scope: UInt64? = nil) -> [PendingPromise] {
        // Strong references to the pending promises, taken under the lock and released after it.
        let found: [(Entry, AnyObject?)] = table.withLock { table in
            table.entries.values.compactMap { entry in
                guard entry.sequence > sequence, scope == nil || entry.scope == scope else { return nil }
                let promise = entry.promise
                guard entry.isListed else { return nil }
                return (entry, promise)
            }
        }
        return
            found
            .sorted { $0.0.sequence < $1.0.sequence }
            .map {
                PendingPromise(
                    site: $0.0.site,
                    type: String(describing: $0.0.type),
                    canNeverResolve: $0.0.canNeverResolve
                )
            }
    }
}
#endif
