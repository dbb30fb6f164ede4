import Dispatch
import Foundation

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

    func raceCancelShared(_ count: Int) -> Double? {
        var handlers = 0
        let result = measure(units: count) {
            let inputs = (0..<count).map { _ in CancellableFloorPromise<Int>(onCancel: { handlers &+= 1 }) }
            let first = CancellableFloorPromise.sharedRace(inputs)
            let second = CancellableFloorPromise.sharedRace(inputs)
            inputs[count / 2].resolve(.success(1))
            var values = 0
            first.whenComplete { if case .success(let winner) = $0 { values &+= winner } }
            second.whenComplete { if case .success(let winner) = $0 { values &+= winner } }
            precondition(values == 2)
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
