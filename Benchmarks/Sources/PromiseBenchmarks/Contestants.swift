import Cancellable
import Dispatch
import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import OpenCombine
import PromiseCore

#if canImport(Glibc)
import Glibc
#endif

/// Resident memory of this process, from /proc/self/statm (Linux); 0 elsewhere.
func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Bytes per element held by `make`: resident-set growth while `count` of them are alive, minus the array
/// of references holding them. Run in a fresh child process, so that no freed heap is reused.
func bytesPerElement<T>(_ count: Int, _ make: () -> T) -> Double {
    var keep: [T] = []
    keep.reserveCapacity(count)
    for index in 0..<count { keep.append(make()); if index == 0 { keep.removeAll(keepingCapacity: true) } }
    let before = residentBytes()
    for _ in 0..<count { keep.append(make()) }
    let after = residentBytes()
    blackHole(keep)
    return Double(after - before) / Double(count)
}

/// A mutable value for callbacks that must be `@Sendable` (NIO's), in single-threaded workloads.
final class Accumulator: @unchecked Sendable {
    var value = 0
    var flag = false
}

final class Counter: @unchecked Sendable {
    // @unchecked Sendable: only touched under `lock`, or by one thread at a time as the workload says.
    let lock = NSLock()
    var value = 0
    let target: Int
    let done = DispatchSemaphore(value: 0)

    init(target: Int) { self.target = target }

    func increment() {
        lock.lock()
        value += 1
        let finished = value == target
        lock.unlock()
        if finished { done.signal() }
    }
}

// MARK: - PromiseCore

struct PromiseCoreContestant: Contestant {
    let name = "PromiseCore"
    let mode = "inline (on: nil)"

    func createFulfilHandler(_ count: Int) -> Double? {
        var sum = 0
        return measure(units: count) {
            for index in 0..<count {
                let (promise, resolver) = Promise<Int>.pending()
                promise.pipe { if case .fulfilled(let value) = $0 { sum &+= value } }
                resolver.fulfill(index)
            }
            blackHole(sum)
        }
    }

    func createFulfilMap(_ count: Int) -> Double? {
        nonisolated(unsafe) var sum = 0
        return measure(units: count) {
            for index in 0..<count {
                let (promise, resolver) = Promise<Int>.pending()
                let next = promise.map(on: nil) { sum &+= $0 }
                resolver.fulfill(index)
                blackHole(next)
            }
            blackHole(sum)
        }
    }

    func chain(_ links: Int) -> Double? {
        let (root, resolver) = Promise<Int>.pending()
        var last = root
        for _ in 0..<links { last = last.map(on: nil) { $0 &+ 1 } }
        return measure(units: links) { resolver.fulfill(0) }
    }

    func deepChain(_ links: Int) {
        let (root, resolver) = Promise<Int>.pending()
        var last = root
        for _ in 0..<links { last = last.map(on: nil) { $0 &+ 1 } }
        resolver.fulfill(0)
        precondition(last.value == links)
    }

    func when(_ count: Int) -> Double? {
        let pending = (0..<count).map { _ in Promise<Int>.pending() }
        return measure(units: count) {
            let all = PromiseCore.when(fulfilled: pending.map(\.promise))
            for (index, item) in pending.enumerated() { item.resolver.fulfill(index) }
            precondition(all.value?.count == count)
        }
    }

    func race(_ count: Int) -> Double? {
        let pending = (0..<count).map { _ in Promise<Int>.pending() }
        return measure(units: count) {
            let first = PromiseCore.race(pending.map(\.promise))
            pending[count / 2].resolver.fulfill(1)
            precondition(first.value == 1)
        }
    }

    func raceAutoCancel(_ count: Int) -> Double? {
        let pending = (0..<count).map { _ in CancellablePromise<Int>.pending() }
        return measure(units: count) {
            let first = raceCancellingLosers(pending.map(\.promise))
            pending[count / 2].resolver.fulfill(1)
            precondition(first.value == 1 && pending[0].promise.isCancelled)
        }
    }

    func anySome(_ count: Int) -> Double? {
        let pending = (0..<count).map { _ in Promise<Int>.pending() }
        return measure(units: count) {
            let everything = PromiseCore.any(pending.map(\.promise))
            let half = PromiseCore.some(count / 2, pending.map(\.promise))
            for (index, item) in pending.enumerated() { item.resolver.fulfill(index) }
            precondition(everything.value?.count == count && half.value?.count == count / 2)
        }
    }

    func crossThread(_ count: Int) -> Double? {
        let counter = Counter(target: count)
        let pending = (0..<count).map { _ in Promise<Int>.pending() }
        for item in pending { item.promise.pipe { _ in counter.increment() } }
        let resolvers = UncheckedBox(pending.map(\.resolver))
        return measure(units: count) {
            Thread.detachNewThread { for resolver in resolvers.value { resolver.fulfill(1) } }
            counter.done.wait()
        }
    }

    func bytesPerPendingPromise(_ count: Int) -> Double? {
        bytesPerElement(count) { () -> (Promise<Int>, PromiseCore.Resolver<Int>) in
            let (promise, resolver) = Promise<Int>.pending()
            promise.pipe { _ in }
            return (promise, resolver)
        }
    }

    func bytesPerPendingMap(_ count: Int) -> Double? {
        bytesPerElement(count) { () -> (Promise<Void>, PromiseCore.Resolver<Int>) in
            let (promise, resolver) = Promise<Int>.pending()
            return (promise.map(on: nil) { _ in }, resolver)
        }
    }
}

// PromiseCore: item 6's rows and the cancellation workloads.
extension PromiseCoreContestant {
    func createMapDone(_ count: Int) -> Double? {
        nonisolated(unsafe) var sum = 0
        return measure(units: count) {
            for index in 0..<count {
                let (promise, resolver) = Promise<Int>.pending()
                let done = promise.map(on: nil) { $0 &+ 1 }.done(on: nil) { sum &+= $0 }
                resolver.fulfill(index)
                blackHole(done)
            }
            blackHole(sum)
        }
    }

    func crossThreadMapDone(_ count: Int) -> Double? {
        let counter = Counter(target: count)
        let pending = (0..<count).map { _ in Promise<Int>.pending() }
        let ends = pending.map { $0.promise.map(on: nil) { $0 &+ 1 }.done(on: nil) { _ in counter.increment() } }
        let resolvers = UncheckedBox(pending.map(\.resolver))
        let result = measure(units: count) {
            Thread.detachNewThread { for resolver in resolvers.value { resolver.fulfill(1) } }
            counter.done.wait()
        }
        blackHole(ends)
        return result
    }

    func cancelOne(_ count: Int) -> Double? {
        var handlers = 0
        var observed = 0
        let result = measure(units: count) {
            for _ in 0..<count {
                let work = CancellablePromise<Int> { _ in { handlers &+= 1 } }
                let mapped = work.map(on: nil) { $0 &+ 1 }
                mapped.pipe { if case .rejected = $0 { observed &+= 1 } }
                mapped.cancel()
            }
        }
        precondition(handlers == count && observed == count)
        return result
    }

    func cancelChain(_ links: Int) -> Double? {
        var handlers = 0
        let head = CancellablePromise<Int> { _ in { handlers &+= 1 } }
        var tail = head
        for _ in 0..<links { tail = tail.map(on: nil) { $0 &+ 1 } }
        let result = measure(units: links) { tail.cancel() }
        precondition(handlers == 1 && head.isCancelled)
        return result
    }

    func raceCancel(_ count: Int) -> Double? {
        var handlers = 0
        let result = measure(units: count) {
            var winner: PromiseCore.Resolver<Int>?
            let inputs = (0..<count).map { index in
                CancellablePromise<Int> { resolver in
                    if index == count / 2 { winner = resolver }
                    return { handlers &+= 1 }
                }
            }
            let first = raceCancellingLosers(inputs)
            winner!.fulfill(1)
            precondition(first.value == 1)
        }
        precondition(handlers == count - 1)
        return result
    }

    func bytesPerPendingCancellableMap(_ count: Int) -> Double? {
        bytesPerElement(count) { () -> (CancellablePromise<Void>, PromiseCore.Resolver<Int>) in
            let (promise, resolver) = CancellablePromise<Int>.pending()
            return (promise.map(on: nil) { _ in }, resolver)
        }
    }
}

struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

// MARK: - The floor

struct FloorContestant: Contestant {
    let name = "floor"
    let mode = "inline, recursive"

    func createFulfilHandler(_ count: Int) -> Double? {
        var sum = 0
        return measure(units: count) {
            for index in 0..<count {
                let promise = FloorPromise<Int>()
                promise.whenFulfilled { sum &+= $0 }
                promise.fulfill(index)
            }
            blackHole(sum)
        }
    }

    func createFulfilMap(_ count: Int) -> Double? {
        var sum = 0
        return measure(units: count) {
            for index in 0..<count {
                let promise = FloorPromise<Int>()
                let next = promise.map { sum &+= $0 }
                promise.fulfill(index)
                blackHole(next)
            }
            blackHole(sum)
        }
    }

    func chain(_ links: Int) -> Double? {
        let root = FloorPromise<Int>()
        var last = root
        for _ in 0..<links { last = last.map { $0 &+ 1 } }
        return measure(units: links) { root.fulfill(0) }
    }

    func deepChain(_ links: Int) {
        let root = FloorPromise<Int>()
        var last = root
        for _ in 0..<links { last = last.map { $0 &+ 1 } }
        root.fulfill(0)
        precondition(last.current == links)
    }

    func when(_ count: Int) -> Double? {
        let pending = (0..<count).map { _ in FloorPromise<Int>() }
        return measure(units: count) {
            let all = FloorPromise.all(pending)
            for (index, promise) in pending.enumerated() { promise.fulfill(index) }
            precondition(all.current?.count == count)
        }
    }

    func race(_ count: Int) -> Double? {
        let pending = (0..<count).map { _ in FloorPromise<Int>() }
        return measure(units: count) {
            let first = FloorPromise.race(pending)
            pending[count / 2].fulfill(1)
            precondition(first.current == 1)
        }
    }

    func crossThread(_ count: Int) -> Double? {
        let counter = Counter(target: count)
        let pending = (0..<count).map { _ in FloorPromise<Int>() }
        for promise in pending { promise.whenFulfilled { _ in counter.increment() } }
        let promises = UncheckedBox(pending)
        return measure(units: count) {
            Thread.detachNewThread { for promise in promises.value { promise.fulfill(1) } }
            counter.done.wait()
        }
    }

    func bytesPerPendingPromise(_ count: Int) -> Double? {
        bytesPerElement(count) { () -> FloorPromise<Int> in
            let promise = FloorPromise<Int>()
            promise.whenFulfilled { _ in }
            return promise
        }
    }

    func bytesPerPendingMap(_ count: Int) -> Double? {
        bytesPerElement(count) { () -> (FloorPromise<Int>, FloorPromise<Void>) in
            let promise = FloorPromise<Int>()
            return (promise, promise.map { _ in })
        }
    }
}

// The floor: item 6's rows, and the cancellable floor for the cancellation workloads.
extension FloorContestant {
    func createMapDone(_ count: Int) -> Double? {
        var sum = 0
        return measure(units: count) {
            for index in 0..<count {
                let promise = FloorPromise<Int>()
                let done = promise.map { $0 &+ 1 }.map { sum &+= $0 }
                promise.fulfill(index)
                blackHole(done)
            }
            blackHole(sum)
        }
    }

    func crossThreadMapDone(_ count: Int) -> Double? {
        let counter = Counter(target: count)
        let promises = (0..<count).map { _ in FloorPromise<Int>() }
        let ends = promises.map { $0.map { $0 &+ 1 }.map { _ in counter.increment() } }
        let shared = UncheckedBox(promises)
        let result = measure(units: count) {
            Thread.detachNewThread { for promise in shared.value { promise.fulfill(1) } }
            counter.done.wait()
        }
        blackHole(ends)
        return result
    }

    func cancelOne(_ count: Int) -> Double? {
        var handlers = 0
        var observed = 0
        let result = measure(units: count) {
            for _ in 0..<count {
                let work = CancellableFloorPromise<Int>(onCancel: { handlers &+= 1 })
                let mapped = work.map { $0 &+ 1 }
                mapped.whenComplete { if case .failure = $0 { observed &+= 1 } }
                mapped.cancel()
            }
        }
        precondition(handlers == count && observed == count)
        return result
    }

    func cancelChain(_ links: Int) -> Double? {
        var handlers = 0
        let head = CancellableFloorPromise<Int>(onCancel: { handlers &+= 1 })
        var tail = head
        for _ in 0..<links { tail = tail.map { $0 &+ 1 } }
        let result = measure(units: links) { tail.cancel() }
        precondition(handlers == 1 && head.isCancelled)
        return result
    }

    func raceCancel(_ count: Int) -> Double? {
        var handlers = 0
        let result = measure(units: count) {
            let inputs = (0..<count).map { _ in CancellableFloorPromise<Int>(onCancel: { handlers &+= 1 }) }
            let first = CancellableFloorPromise.race(inputs)
            inputs[count / 2].resolve(.success(1))
            var value = 0
            first.whenComplete { if case .success(let winner) = $0 { value = winner } }
            precondition(value == 1)
        }
        precondition(handlers == count - 1)
        return result
    }

    func bytesPerPendingCancellableMap(_ count: Int) -> Double? {
        bytesPerElement(count) { () -> CancellableFloorPromise<Void> in
            CancellableFloorPromise<Int>(onCancel: {}).map { _ in }
        }
    }
}

// MARK: - SwiftNIO

/// NIO's futures complete on their event loop. Single-threaded workloads use an `EmbeddedEventLoop`, which
/// runs callbacks inline on the calling thread (NIO's cheapest path). The cross-thread workload uses a real
/// `NIOPosix` loop: handlers are attached on the loop, and the fulfilling thread hands each completion to the
/// loop with `execute`, as NIO requires.
struct NIOContestant: Contestant {
    let name = "SwiftNIO"
    let mode = "EmbeddedEventLoop, inline"

    /// An `EmbeddedEventLoop` may only be used on the thread that made it: each workload makes its own, on
    /// the benchmark thread (otherwise NIO's misuse checks run, and print, on every call).
    private var loop: EmbeddedEventLoop {
        Self.loops.withLock { loops in
            let thread = ObjectIdentifier(Thread.current)
            if let loop = loops[thread] { return loop }
            let loop = EmbeddedEventLoop()
            loops[thread] = loop
            return loop
        }
    }

    private static let loops = LockedLoops()

    func createFulfilHandler(_ count: Int) -> Double? {
        let loop = self.loop
        let sum = Accumulator()
        return measure(units: count) {
            for index in 0..<count {
                let promise = loop.makePromise(of: Int.self)
                promise.futureResult.whenSuccess { sum.value &+= $0 }
                promise.succeed(index)
            }
            blackHole(sum.value)
        }
    }

    func createFulfilMap(_ count: Int) -> Double? {
        let loop = self.loop
        let sum = Accumulator()
        return measure(units: count) {
            for index in 0..<count {
                let promise = loop.makePromise(of: Int.self)
                let next = promise.futureResult.map { sum.value &+= $0 }
                promise.succeed(index)
                blackHole(next)
            }
            blackHole(sum.value)
        }
    }

    func chain(_ links: Int) -> Double? {
        let loop = self.loop
        let root = loop.makePromise(of: Int.self)
        var last = root.futureResult
        for _ in 0..<links { last = last.map { $0 &+ 1 } }
        let result = measure(units: links) { root.succeed(0) }
        blackHole(last)
        return result
    }

    func deepChain(_ links: Int) {
        let loop = self.loop
        let root = loop.makePromise(of: Int.self)
        var last = root.futureResult
        for _ in 0..<links { last = last.map { $0 &+ 1 } }
        root.succeed(0)
        let value = Accumulator()
        last.whenSuccess { value.value = $0 }
        precondition(value.value == links)
    }

    func when(_ count: Int) -> Double? {
        let loop = self.loop
        let promises = (0..<count).map { _ in loop.makePromise(of: Int.self) }
        return measure(units: count) {
            let all = EventLoopFuture.whenAllSucceed(promises.map(\.futureResult), on: loop)
            for (index, promise) in promises.enumerated() { promise.succeed(index) }
            let values = Accumulator()
            all.whenSuccess { values.value = $0.count }
            precondition(values.value == count)
        }
    }

    func race(_ count: Int) -> Double? {
        let loop = self.loop
        let promises = (0..<count).map { _ in loop.makePromise(of: Int.self) }
        let result = measure(units: count) {
            // NIO has no race; the first success completes a promise (a second completion would trap).
            let winner = loop.makePromise(of: Int.self)
            let decided = Accumulator()
            for promise in promises {
                promise.futureResult.whenSuccess { value in
                    guard !decided.flag else { return }
                    decided.flag = true
                    winner.succeed(value)
                }
            }
            promises[count / 2].succeed(1)
            let value = Accumulator()
            winner.futureResult.whenSuccess { value.value = $0 }
            precondition(value.value == 1)
        }
        for (index, promise) in promises.enumerated() where index != count / 2 { promise.succeed(0) }
        return result
    }

    func crossThread(_ count: Int) -> Double? {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let realLoop = group.next()
        let counter = Counter(target: count)
        let promises = try! realLoop.submit {
            (0..<count).map { _ -> EventLoopPromise<Int> in
                let promise = realLoop.makePromise(of: Int.self)
                promise.futureResult.whenSuccess { _ in counter.increment() }
                return promise
            }
        }.wait()
        return measure(units: count) {
            Thread.detachNewThread {
                for promise in promises { realLoop.execute { promise.succeed(1) } }
            }
            counter.done.wait()
        }
    }

    func bytesPerPendingPromise(_ count: Int) -> Double? {
        let loop = self.loop
        return bytesPerElement(count) { () -> EventLoopPromise<Int> in
            let promise = loop.makePromise(of: Int.self)
            promise.futureResult.whenSuccess { _ in }
            return promise
        }
    }

    func bytesPerPendingMap(_ count: Int) -> Double? {
        let loop = self.loop
        return bytesPerElement(count) { () -> (EventLoopPromise<Int>, EventLoopFuture<Void>) in
            let promise = loop.makePromise(of: Int.self)
            return (promise, promise.futureResult.map { _ in })
        }
    }
}

extension NIOContestant {
    func createMapDone(_ count: Int) -> Double? {
        let loop = self.loop
        let sum = Accumulator()
        return measure(units: count) {
            for index in 0..<count {
                let promise = loop.makePromise(of: Int.self)
                let done = promise.futureResult.map { $0 &+ 1 }.map { sum.value &+= $0 }
                promise.succeed(index)
                blackHole(done)
            }
            blackHole(sum.value)
        }
    }

    func crossThreadMapDone(_ count: Int) -> Double? {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let realLoop = group.next()
        let counter = Counter(target: count)
        let promises = try! realLoop.submit {
            (0..<count).map { _ -> EventLoopPromise<Int> in
                let promise = realLoop.makePromise(of: Int.self)
                _ = promise.futureResult.map { $0 &+ 1 }.map { _ in counter.increment() }
                return promise
            }
        }.wait()
        return measure(units: count) {
            Thread.detachNewThread {
                for promise in promises { realLoop.execute { promise.succeed(1) } }
            }
            counter.done.wait()
        }
    }
}

/// One `EmbeddedEventLoop` per thread, made on that thread.
final class LockedLoops: @unchecked Sendable {
    // @unchecked Sendable: `loops` is only touched under `lock`.
    private let lock = NSLock()
    private var loops: [ObjectIdentifier: EmbeddedEventLoop] = [:]

    func withLock<R>(_ body: (inout [ObjectIdentifier: EmbeddedEventLoop]) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&loops)
    }
}

// MARK: - Swift Concurrency

/// A continuation resumed by the producer and awaited by one task; `TaskGroup` for the combinators, with
/// `cancelAll()` for a race that cancels its losers. The harness blocks on a semaphore until the async work
/// is done.
struct ConcurrencyContestant: Contestant {
    let name = "Swift Concurrency"
    let mode = "tasks on the cooperative pool"

    private func run(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }

    func createFulfilHandler(_ count: Int) -> Double? {
        measure(units: count) {
            run {
                var sum = 0
                for index in 0..<count {
                    sum &+= await withCheckedContinuation { $0.resume(returning: index) }
                }
                blackHole(sum)
            }
        }
    }

    func when(_ count: Int) -> Double? {
        measure(units: count) {
            run {
                let values = await withTaskGroup(of: Int.self) { group in
                    for index in 0..<count { group.addTask { index } }
                    var all: [Int] = []
                    for await value in group { all.append(value) }
                    return all
                }
                precondition(values.count == count)
            }
        }
    }

    func race(_ count: Int) -> Double? {
        measure(units: count) {
            run {
                let first = await withTaskGroup(of: Int.self) { group in
                    for index in 0..<count { group.addTask { index } }
                    let first = await group.next()
                    group.cancelAll()
                    return first
                }
                precondition(first != nil)
            }
        }
    }

    func raceAutoCancel(_ count: Int) -> Double? {
        measure(units: count) {
            run {
                let first = await withTaskGroup(of: Int.self) { group in
                    for index in 0..<count {
                        group.addTask {
                            if index == count / 2 { return 1 }
                            try? await Task.sleep(for: .seconds(60))  // cancelled by cancelAll()
                            return 0
                        }
                    }
                    let first = await group.next()
                    group.cancelAll()
                    return first
                }
                precondition(first == 1)
            }
        }
    }
}

/// Work that waits on a continuation until it is resumed or its task is cancelled: Swift Concurrency's
/// counterpart of a cancellable promise with a cancel handler. `onCancel` counts the handler runs.
final class CancellableWork: @unchecked Sendable {
    // @unchecked Sendable: `continuation` and `cancelled` are only touched under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Int, Error>?
    private var cancelled = false
    private let started: DispatchSemaphore?
    let handlers: Counter?

    init(handlers: Counter? = nil, started: DispatchSemaphore? = nil) {
        self.handlers = handlers
        self.started = started
    }

    func value() async throws -> Int {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                lock.lock()
                if cancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                } else {
                    self.continuation = continuation
                    lock.unlock()
                }
                started?.signal()
            }
        } onCancel: {
            handlers?.increment()
            lock.lock()
            cancelled = true
            let continuation = self.continuation
            self.continuation = nil
            lock.unlock()
            continuation?.resume(throwing: CancellationError())
        }
    }
}

/// A chain of `links` nested child tasks (`async let`), each adding 1 to what the one below returns: "map" as
/// a task of its own, so that cancelling the outermost reaches every link, as it does a promise chain.
func nestedLinks(_ links: Int, _ work: CancellableWork) async throws -> Int {
    if links == 0 { return try await work.value() }
    async let inner = nestedLinks(links - 1, work)
    return try await inner &+ 1
}

extension ConcurrencyContestant {
    /// 100k times: a task whose body awaits the work and adds 1, cancelled with `Task.cancel()`; awaiting its
    /// value sees the cancellation. In batches of 1,000 tasks (start, cancel, await), so that the pool is kept
    /// busy rather than handing over one task at a time.
    func cancelOne(_ count: Int) -> Double? {
        let handlers = Counter(target: count)
        let observed = Counter(target: count)
        let result = measure(units: count) {
            run {
                var remaining = count
                while remaining > 0 {
                    let batch = min(1_000, remaining)
                    remaining -= batch
                    let tasks = (0..<batch).map { _ in
                        let work = CancellableWork(handlers: handlers)
                        return Task { try await work.value() &+ 1 }
                    }
                    for task in tasks { task.cancel() }
                    for task in tasks {
                        if case .failure = await task.result { observed.increment() }
                    }
                }
            }
        }
        precondition(handlers.value == count && observed.value == count)
        return result
    }

    /// One task over `links` nested child tasks over the work; `Task.cancel()` reaches every child and runs the
    /// handler, and the error unwinds every task. Timed from the cancel until the outer task has finished.
    func cancelChain(_ links: Int) -> Double? {
        let handlers = Counter(target: 1)
        let started = DispatchSemaphore(value: 0)
        let work = CancellableWork(handlers: handlers, started: started)
        let task = Task { try await nestedLinks(links, work) }
        started.wait()
        let result = measure(units: links) {
            task.cancel()
            run { _ = await task.result }
        }
        precondition(handlers.value == 1)
        return result
    }

    /// A throwing task group of `count` children awaiting cancellable work (one returns at once); the first
    /// result wins, then `cancelAll()`; timed until every child has finished.
    func raceCancel(_ count: Int) -> Double? {
        let handlers = Counter(target: count - 1)
        let result = measure(units: count) {
            run {
                let first = try? await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<count {
                        group.addTask {
                            if index == count / 2 { return 1 }
                            return try await CancellableWork(handlers: handlers).value()
                        }
                    }
                    let first = try await group.next()
                    group.cancelAll()
                    while (try? await group.next()) != nil {}
                    return first
                }
                precondition(first == 1)
            }
        }
        precondition(handlers.value == count - 1)
        return result
    }
}

// MARK: - OpenCombine

/// `Future`, subscribed with `sink`; a sequence of futures flattened then `collect`ed for all, or `first` for a
/// race (OpenCombine 0.14 has no `MergeMany`).
/// Everything runs inline on the calling thread.
struct OpenCombineContestant: Contestant {
    let name = "OpenCombine"
    let mode = "inline (sink)"

    func createFulfilHandler(_ count: Int) -> Double? {
        var sum = 0
        return measure(units: count) {
            for index in 0..<count {
                var fulfil: ((Swift.Result<Int, Never>) -> Void)?
                let future = Future<Int, Never> { fulfil = $0 }
                let subscription = future.sink { sum &+= $0 }
                fulfil?(.success(index))
                blackHole(subscription)
            }
            blackHole(sum)
        }
    }

    func when(_ count: Int) -> Double? {
        var fulfils: [(Swift.Result<Int, Never>) -> Void] = []
        let futures = (0..<count).map { _ in Future<Int, Never> { fulfils.append($0) } }
        return measure(units: count) {
            var values = 0
            let subscription = Publishers.Sequence<[Future<Int, Never>], Never>(sequence: futures).flatMap { $0 }
                .collect().sink { values = $0.count }
            for (index, fulfil) in fulfils.enumerated() { fulfil(.success(index)) }
            precondition(values == count)
            blackHole(subscription)
        }
    }

    func race(_ count: Int) -> Double? {
        var fulfils: [(Swift.Result<Int, Never>) -> Void] = []
        let futures = (0..<count).map { _ in Future<Int, Never> { fulfils.append($0) } }
        return measure(units: count) {
            var value = 0
            let subscription = Publishers.Sequence<[Future<Int, Never>], Never>(sequence: futures).flatMap { $0 }
                .first().sink { value = $0 }
            fulfils[count / 2](.success(1))
            precondition(value == 1)
            blackHole(subscription)
        }
    }
}
