import PromiseCore
import TestSupport
import Testing

/// The order in which the trampoline (Internal/Trampoline.swift) runs handlers of a branching chain.
@Suite struct TrampolineTests {
    @Test func branchesRunInHandlerOrderDepthFirst() {
        let (root, resolver) = Promise<Int>.pending()
        nonisolated(unsafe) var trace: [String] = []
        let left = root.map(on: nil) { value -> Int in
            trace.append("left")
            return value
        }
        let right = root.map(on: nil) { value -> Int in
            trace.append("right")
            return value
        }
        _ = left.done(on: nil) { _ in trace.append("left.done") }
        _ = right.done(on: nil) { _ in trace.append("right.done") }
        resolver.fulfill(1)
        #expect(trace == ["left", "right", "left.done", "right.done"])
    }

    @Test func aChainResolvedFromInsideAnotherChainCompletesBeforeTheOuterHandlerReturns() {
        let (inner, innerResolver) = Promise<Int>.pending()
        nonisolated(unsafe) var trace: [String] = []
        _ = inner.map(on: nil) { $0 + 1 }.map(on: nil) { $0 + 1 }.done(on: nil) { trace.append("inner \($0)") }
        _ = Promise.value(0).done(on: nil) { _ in
            innerResolver.fulfill(1)
            trace.append("outer")
        }
        #expect(trace == ["inner 3", "outer"])
    }
}
