import Dispatch
import Foundation
import PromiseCore
import Testing

/// An error with an identity, so a test can tell its own error from anyone else's.
struct TestError: Error, Equatable, CustomStringConvertible {
    let id = UUID()
    var description: String { "TestError(\(id.uuidString.prefix(8)))" }
}

/// An error that says it is a cancellation.
struct TestCancellation: CancellableError {
    var isCancelled: Bool { true }
}

/// A lock-protected value for counting and recording from many threads.
final class Shared<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}

extension Shared where Value == Int {
    func increment() { withLock { $0 += 1 } }
}

extension Shared where Value: RangeReplaceableCollection {
    func append(_ element: Value.Element) { withLock { $0.append(element) } }
}

/// An object whose deallocation a test can observe through a weak reference.
final class Tracked: @unchecked Sendable {}

/// Releases threads together, so that the operations they run after `wait()` really race.
final class StartGate: @unchecked Sendable {
    // @unchecked Sendable: DispatchGroup and DispatchSemaphore are thread-safe.
    private let ready = DispatchGroup()
    private let go = DispatchSemaphore(value: 0)
    private let parties: Int

    init(parties: Int) {
        self.parties = parties
        for _ in 0..<parties { ready.enter() }
    }

    /// Called by each racing thread; returns when all have arrived and `open()` was called.
    func wait() {
        ready.leave()
        go.wait()
    }

    /// Called by the coordinator: waits for every party, then releases them at once.
    func open() {
        ready.wait()
        for _ in 0..<parties { go.signal() }
    }
}

/// Runs `body` on `count` threads released together by a gate, and returns when all have finished.
func race(threads count: Int, _ body: @escaping @Sendable (Int) -> Void) {
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
enum LogCapture {
    private static let all = Shared<[LogEvent]>([])
    @TaskLocal private static var scoped: Shared<[LogEvent]>?

    private static let installed: Bool = {
        conf.logHandler = { event in
            LogCapture.all.append(event)
            LogCapture.scoped?.append(event)
        }
        return true
    }()

    /// The events logged synchronously, by this task, while `body` ran.
    static func events(during body: () throws -> Void) rethrows -> [LogEvent] {
        _ = installed
        let events = Shared<[LogEvent]>([])
        try $scoped.withValue(events) { try body() }
        return events.current
    }

    /// Every event logged by the process so far (for events logged on other threads).
    static var allEvents: [LogEvent] {
        _ = installed
        return all.current
    }

    static func install() { _ = installed }
}

extension LogEvent {
    var isPendingPromiseDeallocated: Bool {
        if case .pendingPromiseDeallocated = self { return true }
        return false
    }

    var isPendingGuaranteeDeallocated: Bool {
        if case .pendingGuaranteeDeallocated = self { return true }
        return false
    }

    var isWaitOnMainThread: Bool {
        if case .waitOnMainThread = self { return true }
        return false
    }

    var cauterizedError: Error? {
        if case .cauterized(let error) = self { return error }
        return nil
    }
}

/// A background queue for tests that check queue hops.
let backgroundQueue = DispatchQueue(label: "PromiseCoreTests.background")
let backgroundKey = DispatchSpecificKey<Bool>()
let configureBackgroundQueue: Void = backgroundQueue.setSpecific(key: backgroundKey, value: true)

/// Whether the caller runs on the main queue. On Linux the main queue may be served by a worker thread
/// (after `dispatch_main()`), so `Thread.isMainThread` is not the test.
private let mainKey = DispatchSpecificKey<Bool>()
private let configureMainQueue: Void = DispatchQueue.main.setSpecific(key: mainKey, value: true)

var isOnMainQueue: Bool {
    _ = configureMainQueue
    return DispatchQueue.getSpecific(key: mainKey) == true
}

var isOnBackground: Bool {
    _ = configureBackgroundQueue
    return DispatchQueue.getSpecific(key: backgroundKey) == true
}
