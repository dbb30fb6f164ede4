import PromiseCore
import TestSupport
import Testing

/// After resolution, nothing a promise held stays alive: handlers, their captures, intermediate promises.
@Suite struct LeakTests {
    @Test func handlerCapturesAreReleasedAfterResolution() {
        weak var weakCapture: Tracked?
        let (promise, resolver) = Promise<Int>.pending()
        do {
            let capture = Tracked()
            weakCapture = capture
            _ = promise.map(on: nil) { _ in capture }
        }
        #expect(weakCapture != nil, "a pending promise keeps its handler")
        resolver.fulfill(1)
        #expect(weakCapture == nil)
    }

    @Test func aResolvedChainIsReleased() {
        weak var weakFirst: Promise<Int>?
        weak var weakLast: Promise<Void>?
        do {
            let (first, resolver) = Promise<Int>.pending()
            let last = first.map(on: nil) { $0 + 1 }.then(on: nil) { Promise.value($0) }.done(on: nil) { _ in }
            weakFirst = first
            weakLast = last
            resolver.fulfill(1)
        }
        #expect(weakFirst == nil)
        #expect(weakLast == nil)
    }

    @Test func errorHandlersReleaseTheirCaptures() {
        weak var weakCapture: Tracked?
        do {
            let capture = Tracked()
            weakCapture = capture
            Promise<Int>(error: TestError())
                .recover(on: nil) { _ -> Promise<Int> in
                    _ = capture; return .value(1)
                }
                .ensure(on: nil) { _ = capture }
                .catch(on: nil) { _ in _ = capture }
                .finally(on: nil) { _ = capture }
        }
        #expect(weakCapture == nil)
    }

    @Test func combinatorsReleaseTheirInputsAfterResolution() {
        weak var weakInput: Promise<Int>?
        weak var weakAll: Promise<[Int]>?
        do {
            let (input, resolver) = Promise<Int>.pending()
            weakInput = input
            let all = when(fulfilled: [input, Promise.value(2)])
            weakAll = all
            _ = race([input])
            _ = any([input])
            _ = some(1, [input])
            resolver.fulfill(1)
        }
        #expect(weakInput == nil)
        #expect(weakAll == nil)
    }

    @Test func anAbandonedPendingPromiseIsReleased() {
        weak var weakPromise: Promise<Int>?
        weak var weakCapture: Tracked?
        _ = LogCapture.events {
            let (promise, _) = Promise<Int>.pending()
            let capture = Tracked()
            weakCapture = capture
            _ = promise.map(on: nil) { _ in capture }
            weakPromise = promise
        }
        #expect(weakPromise == nil)
        #expect(weakCapture == nil)
    }
}
