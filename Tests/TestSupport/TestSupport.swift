package import Dispatch
package import Foundation
package import PromiseCore

/// An error with an identity, so a test can tell its own error from anyone else's.
package struct TestError: Error, Equatable, CustomStringConvertible {
    package let id = UUID()
    package var description: String { "TestError(\(id.uuidString.prefix(8)))" }

    package init() {}
}

/// An error that says it is a cancellation.
package struct TestCancellation: CancellableError {
    package var isCancelled: Bool { true }

    package init() {}
}

/// A lock-protected value for counting and recording from many threads.
package final class Shared<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    package var current: Value { withLock { $0 } }
}

extension Shared {
    /// Takes the value out, leaving `nil`: the caller releases it outside the lock.
    package func take<Wrapped>() -> Wrapped? where Value == Wrapped? {
        withLock { value in
            defer { value = nil }
            return value
        }
    }
}

extension Shared where Value == Int {
    package func increment() { withLock { $0 += 1 } }
}

extension Shared where Value: RangeReplaceableCollection {
    package func append(_ element: Value.Element) { withLock { $0.append(element) } }
}

/// An object whose deallocation a test can observe through a weak reference.
package final class Tracked: @unchecked Sendable {
    package init() {}
}

/// Releases threads together, so that the operations they run after `wait()` really race.
package final class StartGate: @unchecked Sendable {
    // @unchecked Sendable: DispatchGroup and DispatchSemaphore are thread-safe.
    private let ready = DispatchGroup()
    private let go = DispatchSemaphore(value: 0)
    private let parties: Int

    package init(parties: Int) {
        self.parties = parties
        for _ in 0..<parties { ready.enter() }
    }

    /// Called by each racing thread; returns when all have arrived and `open()` was called.
    package func wait() {
        ready.leave()
        go.wait()
    }

    /// Called by the coordinator: waits for every party, then releases them at once.
    package func open() {
        ready.wait()
        for _ in 0..<parties { go.signal() }
    }
}

/// Opens once and stays open: one thread waits at it until another has reached a point, to force one interleaving
/// of two threads without a sleep.
package final class Latch: @unchecked Sendable {
    // @unchecked Sendable: DispatchSemaphore is thread-safe, and `signal()` after `open()` keeps it open for every
    // later waiter.
    private let semaphore = DispatchSemaphore(value: 0)

    package init() {}

    /// Lets every waiter through, now and later.
    package func open() {
        semaphore.signal()
    }

    /// Blocks until the latch is open, or `timeout` has passed.
    ///
    /// - Returns: whether it opened in time (a `false` is a test failure, not a hang).
    package func wait(timeout: DispatchTimeInterval = .seconds(10)) -> Bool {
        guard semaphore.wait(timeout: .now() + timeout) == .success else { return false }
        semaphore.signal()  // stays open
        return true
    }

    /// Waits for the latch on a thread of its own, so that an async test does not block a thread of the
    /// cooperative pool.
    package func opened(within timeout: DispatchTimeInterval = .seconds(10)) async -> Bool {
        await onAThreadOfItsOwn { self.wait(timeout: timeout) }
    }
}

/// Runs `body` on a thread of its own (8 MiB of stack, as the main thread and the cooperative pool's threads have)
/// and returns what it returns.
///
/// A test that computes for seconds must not do it on one of the cooperative pool's threads: there are as many as
/// cores (two on CI), and the tasks of every test running in parallel need them. Before the heaviest tests moved
/// here, a `Task` started by a PromiseTesting test waited 14 s for a thread in the full suite, and the test's 10-s
/// `waitForTimers` failed. `body` runs outside the test's task: it returns what the test then checks with
/// `#expect`, rather than recording issues itself.
package func onAThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// ``onAThreadOfItsOwn(_:)`` for a body that throws.
package func onAThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await onAThreadOfItsOwn { Swift.Result { try body() } }.get()
}

/// Runs `body` on `count` threads released together by a gate, and returns when all have finished.
package func runConcurrently(threads count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let gate = StartGate(parties: count)
    let finished = DispatchGroup()
    for index in 0..<count {
        finished.enter()
        Thread.detachNewThread {
            gate.wait()
            body(index)
            finished.leave()
        }
    }
    gate.open()
    finished.wait()
}

/// Records PromiseCore's log events. Installed once as `conf.logHandler` for the whole test process, so
/// that no test has to change `conf` (tests run in parallel).
package enum LogCapture {
    /// An event, and the creation site the log handler could read while handling it.
    package typealias Logged = (event: LogEvent, site: PromiseCreationSite?)

    private static let all = Shared<[LogEvent]>([])
    @TaskLocal private static var scoped: Shared<[Logged]>?

    private static let installed: Bool = {
        conf.logHandler = { event in
            LogCapture.all.append(event)
            LogCapture.scoped?.append((event, PromiseDiagnostics.loggedCreationSite))
        }
        return true
    }()

    /// The events logged synchronously, by this task, while `body` ran.
    package static func events(during body: () throws -> Void) rethrows -> [LogEvent] {
        try eventsWithSites(during: body).map(\.event)
    }

    /// The events logged synchronously, by this task, while `body` ran, each with the creation site the log
    /// handler read from `PromiseDiagnostics.loggedCreationSite`.
    package static func eventsWithSites(during body: () throws -> Void) rethrows -> [Logged] {
        _ = installed
        let events = Shared<[Logged]>([])
        try $scoped.withValue(events) { try body() }
        return events.current
    }

    /// Every event logged by the process so far (for events logged on other threads).
    package static var allEvents: [LogEvent] {
        _ = installed
        return all.current
    }

    package static func install() { _ = installed }
}

extension LogEvent {
    package var isPendingPromiseDeallocated: Bool {
        if case .pendingPromiseDeallocated = self { return true }
        return false
    }

    package var isPendingGuaranteeDeallocated: Bool {
        if case .pendingGuaranteeDeallocated = self { return true }
        return false
    }

    package var isWaitOnMainThread: Bool {
        if case .waitOnMainThread = self { return true }
        return false
    }

    package var cauterizedError: Error? {
        if case .cauterized(let error) = self { return error }
        return nil
    }
}

/// A background queue for tests that check queue hops.
package let backgroundQueue = DispatchQueue(label: "PromiseCoreTests.background")
package let backgroundKey = DispatchSpecificKey<Bool>()
package let configureBackgroundQueue: Void = backgroundQueue.setSpecific(key: backgroundKey, value: true)

/// Whether the caller runs on the main queue. On Linux the main queue may be served by a worker thread
/// (after `dispatch_main()`), so `Thread.isMainThread` is not the test.
private let mainKey = DispatchSpecificKey<Bool>()
private let configureMainQueue: Void = DispatchQueue.main.setSpecific(key: mainKey, value: true)

package var isOnMainQueue: Bool {
    _ = configureMainQueue
    return DispatchQueue.getSpecific(key: mainKey) == true
}

package var isOnBackground: Bool {
    _ = configureBackgroundQueue
    return DispatchQueue.getSpecific(key: backgroundKey) == true
}

/// The bytes of the file at `url`, as `Data(contentsOf:)` reads them — except that an empty file is not read:
/// Linux's Foundation (Swift 6.3) leaks a 4 KiB buffer reading a file of size 0, which LeakSanitizer reports.
package func fileContents(_ url: URL) throws -> Data {
    let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber
    return size?.int64Value == 0 ? Data() : try Data(contentsOf: url)
}

/// Where `lock` is stored — the address a borrow of it has: a noncopyable value that holds an `Atomic` (as
/// `PromiseLock` does off Darwin) is never copied to be borrowed. The lock-layout tests compare it with
/// `PromiseLock.address(in:)`, where Darwin looks for the lock word.
package func storedAddress(of lock: borrowing PromiseLock) -> UnsafeMutableRawPointer {
    withUnsafePointer(to: lock) { UnsafeMutableRawPointer(mutating: $0) }
}

/// `count` bytes that are not all alike (no two neighbours equal, a period of 256), for a body to serve and check.
package func payload(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
}

/// A path in the temporary directory that nothing uses yet; the test removes what it writes there.
package func temporaryFile() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("promise-testing-\(UUID()).bin")
}
