import Dispatch
import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix

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
        let futures = promises.map(\.futureResult)
        return measure(units: count) {
            let all = EventLoopFuture.whenAllSucceed(futures, on: loop)
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
