import Dispatch
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

    /// A chain step is one object, its promise, which holds the step's body until it runs: the body — and what it
    /// captured — is released once it ran or its input rejected, while the step's promise is still held.
    @Test func aStepReleasesItsBodyOnceItRanWhileItsPromiseIsHeld() {
        typealias Step = (Promise<Int>, Tracked) -> AnyObject
        let steps: [(String, Step)] = [
            ("map", { input, capture in input.map(on: nil) { _ in withExtendedLifetime(capture) { 1 } } }),
            ("done", { input, capture in input.done(on: nil) { _ in withExtendedLifetime(capture) {} } }),
            ("get", { input, capture in input.get(on: nil) { _ in withExtendedLifetime(capture) {} } }),
            (
                "compactMap",
                { input, capture in input.compactMap(on: nil) { value in withExtendedLifetime(capture) { value } } }
            ),
            (
                "then",
                { input, capture in
                    input.then(on: nil) { value in withExtendedLifetime(capture) { Promise.value(value) } }
                }
            ),
            (
                "map on a queue",
                { input, capture in input.map(on: .global()) { _ in withExtendedLifetime(capture) { 1 } } }
            ),
            ("ensure", { input, capture in input.ensure(on: nil) { withExtendedLifetime(capture) {} } }),
            (
                "recover",
                { input, capture in
                    input.recover(on: nil) { _ in withExtendedLifetime(capture) { Promise.value(2) } }
                }
            ),
            (
                "catch",
                { input, capture in input.catch(on: nil) { _ in withExtendedLifetime(capture) {} }.box }
            ),
            (
                "catch on a queue",
                { input, capture in input.catch(on: .global()) { _ in withExtendedLifetime(capture) {} }.box }
            ),
            (
                "recover on a queue",
                { input, capture in
                    input.recover(on: .global()) { _ in withExtendedLifetime(capture) { Promise.value(2) } }
                }
            ),
            (
                "ensure on a queue",
                { input, capture in input.ensure(on: .global()) { withExtendedLifetime(capture) {} } }
            ),
        ]
        for (name, step) in steps {
            for rejects in [false, true] {
                let (input, resolver) = Promise<Int>.pending()
                expectReleasedOnceSettled("\(name), input \(rejects ? "rejected" : "fulfilled")") {
                    step(input, $0)
                } settle: {
                    link in
                    if rejects { resolver.reject(TestError()) } else { resolver.fulfill(1) }
                    if let promise = link as? Promise<Int> {
                        _ = try? promise.wait()
                    } else if let promise = link as? Promise<Void> {
                        _ = try? promise.wait()
                    } else if let guarantee = link as? Guarantee<Void> {
                        guarantee.wait()
                    }
                }
            }
        }
    }

    @Test func aGuaranteeStepReleasesItsBodyOnceItRanWhileItsGuaranteeIsHeld() {
        typealias Step = (Guarantee<Int>, Tracked) -> AnyObject
        let steps: [(String, Step)] = [
            ("map", { input, capture in input.map(on: nil) { _ in withExtendedLifetime(capture) { 1 } } }),
            ("done", { input, capture in input.done(on: nil) { _ in withExtendedLifetime(capture) {} } }),
            ("get", { input, capture in input.get(on: nil) { _ in withExtendedLifetime(capture) {} } }),
            (
                "then",
                { input, capture in input.then(on: nil) { value in withExtendedLifetime(capture) { .value(value) } } }
            ),
        ]
        for (name, step) in steps {
            let (input, resolve) = Guarantee<Int>.pending()
            expectReleasedOnceSettled(name) {
                step(input, $0)
            } settle: { _ in
                resolve(1)
            }
        }
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

    @Test func anOrphanedPendingPromiseIsReleased() {
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

/// Orphaned pending graphs (the work will never resolve and nobody holds anything) are freed: no
/// combinator closes a reference cycle through its inputs.
@Suite struct OrphanedGraphLeakTests {
    /// Builds a graph over inputs that never resolve, drops everything, and checks the inputs are gone.
    func expectFreed(_ build: ([Promise<Int>]) -> Void) {
        weak var weakInput: Promise<Int>?
        weak var weakCapture: Tracked?
        _ = LogCapture.events {
            let inputs = (0..<3).map { _ in Promise<Int>.pending().promise }
            let capture = Tracked()
            weakCapture = capture
            weakInput = inputs[0]
            _ = inputs[0].map(on: nil) { _ in capture }
            build(inputs)
        }
        #expect(weakInput == nil)
        #expect(weakCapture == nil)
    }

    @Test func heterogeneousWhen() {
        expectFreed { _ = when(fulfilled: $0[0], $0[1]) }
        expectFreed { _ = when(fulfilled: $0[0], $0[1], $0[2]) }
        expectFreed { _ = when(fulfilled: $0[0], $0[1].map { "\($0)" }, $0[2], Promise.value(true)) }
    }

    @Test func arraysOfAnyThenableAndAny() {
        expectFreed { _ = when(fulfilled: $0.map { $0 as any Thenable }) }
        expectFreed { _ = any($0) }
    }

    @Test func otherCombinators() {
        expectFreed { _ = when(fulfilled: $0) }
        expectFreed { _ = when(resolved: $0) }
        expectFreed { _ = race($0) }
        expectFreed { _ = race(fulfilled: $0) }
        expectFreed { _ = some(2, $0) }
        expectFreed { inputs in
            let (second, third) = (inputs[1], inputs[2])
            _ = inputs[0].then(on: nil) { _ in second }.recover(on: nil) { _ in third }
        }
    }
}
