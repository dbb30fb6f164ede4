import Dispatch
import Foundation

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
