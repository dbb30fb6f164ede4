import Cancellable
import Dispatch
import Foundation
import PromiseCore

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
        // Each contestant's combinator gets an array of its promises made beforehand, as the floor's does.
        let pending = (0..<count).map { _ in Promise<Int>.pending() }
        let promises = pending.map(\.promise)
        return measure(units: count) {
            let all = PromiseCore.when(fulfilled: promises)
            for (index, item) in pending.enumerated() { item.resolver.fulfill(index) }
            precondition(all.value?.count == count)
        }
    }

    func race(_ count: Int) -> Double? {
        let pending = (0..<count).map { _ in Promise<Int>.pending() }
        let promises = pending.map(\.promise)
        return measure(units: count) {
            let first = PromiseCore.race(promises)
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
            let (winner, inputs) = cancellableInputs(count) { handlers &+= 1 }
            let first = raceCancellingLosers(inputs)
            winner.fulfill(1)
            precondition(first.value == 1)
        }
        precondition(handlers == count - 1)
        return result
    }

    func raceCancelShared(_ count: Int) -> Double? {
        var handlers = 0
        let result = measure(units: count) {
            let (winner, inputs) = cancellableInputs(count) { handlers &+= 1 }
            let first = raceCancellingLosers(inputs)
            let second = raceCancellingLosers(inputs)
            winner.fulfill(1)
            precondition(first.value == 1 && second.value == 1)
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

/// `count` cancellable promises with `onCancel` as their cancel handler, and the resolver of the middle one.
private func cancellableInputs(
    _ count: Int,
    onCancel: @escaping () -> Void
) -> (winner: PromiseCore.Resolver<Int>, inputs: [CancellablePromise<Int>]) {
    var winner: PromiseCore.Resolver<Int>?
    let inputs = (0..<count).map { index in
        CancellablePromise<Int> { resolver in
            if index == count / 2 { winner = resolver }
            return onCancel
        }
    }
    return (winner!, inputs)
}
