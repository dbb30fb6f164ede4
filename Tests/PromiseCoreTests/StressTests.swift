import Dispatch
import Foundation
import PromiseCore
import TestSupport
import Testing

/// Many threads at once against the same promises. Run under `--sanitize=thread` in CI.
@Suite struct StressTests {
    @Test func concurrentFulfilAndRejectHaveExactlyOneWinner() {
        for _ in 0..<200 {
            let (promise, resolver) = Promise<Int>.pending()
            let handlerCalls = Shared(0)
            _ = promise.tap(on: nil) { _ in handlerCalls.increment() }
            let winners = Shared<[Int]>([])
            runConcurrently(threads: 4) { index in
                if index.isMultiple(of: 2) {
                    resolver.fulfill(index)
                } else {
                    resolver.reject(TestError())
                }
                // Every thread sees the same final result.
                if let value = promise.value {
                    winners.append(value)
                } else {
                    winners.append(-1)
                }
            }
            #expect(handlerCalls.current == 1)
            let seen = Set(winners.current)
            #expect(seen.count == 1, "threads saw different results: \(seen)")
        }
    }

    @Test func handlersAttachedWhileResolvingRunExactlyOnce() {
        for _ in 0..<100 {
            let (promise, resolver) = Promise<Int>.pending()
            let calls = Shared([Int](repeating: 0, count: 8 * 50))
            runConcurrently(threads: 9) { thread in
                if thread == 8 {
                    resolver.fulfill(1)
                    return
                }
                for index in 0..<50 {
                    let slot = thread * 50 + index
                    _ = promise.done(on: nil) { _ in calls.withLock { $0[slot] += 1 } }
                }
            }
            #expect(calls.current.allSatisfy { $0 == 1 })
        }
    }

    @Test func chainsResolvedFromManyThreadsDeliverEveryValue() async throws {
        let promises = (0..<1_000).map { index in
            DispatchQueue.global().async(.promise) { index }
                .map(on: .global()) { $0 * 2 }
                .then(on: nil) { Promise.value($0 + 1) }
        }
        let values = try await when(fulfilled: promises).async()
        #expect(values == (0..<1_000).map { $0 * 2 + 1 })
    }

    @Test func combinatorsWithInputsResolvedConcurrently() {
        for _ in 0..<50 {
            let inputs = (0..<16).map { _ in Promise<Int>.pending() }
            let all = when(fulfilled: inputs.map(\.promise))
            let first = race(inputs.map(\.promise))
            let everything = any(inputs.map(\.promise))
            let three = some(3, inputs.map(\.promise))
            runConcurrently(threads: 16) { index in inputs[index].resolver.fulfill(index) }
            #expect(all.value == Array(0..<16))
            #expect(first.value.map { (0..<16).contains($0) } == true)
            #expect(everything.value?.count == 16)
            #expect(three.value?.count == 3)
        }
    }
}
