import Dispatch
import PromiseCore
import TestSupport
import Testing

@Suite struct PromiseTests {
    @Test func resolverBodyRunsAtOnceAndFulfills() {
        var ran = false
        let promise = Promise<Int> { seal in
            ran = true
            seal.fulfill(1)
        }
        #expect(ran)
        #expect(promise.value == 1)
    }

    @Test func throwingResolverBodyRejects() {
        let error = TestError()
        let promise = Promise<Int> { _ in throw error }
        #expect(promise.error as? TestError == error)
    }

    @Test func errorThrownAfterFulfilmentIsIgnored() {
        let promise = Promise<Int> { seal in
            seal.fulfill(1)
            throw TestError()
        }
        #expect(promise.value == 1)
    }

    @Test func pendingReturnsAPromiseAndItsResolver() {
        let (promise, resolver) = Promise<String>.pending()
        #expect(promise.isPending)
        resolver.fulfill("done")
        #expect(promise.value == "done")
        #expect(promise.isResolved && promise.isFulfilled && !promise.isRejected)
    }

    @Test func valueAndErrorFactoriesAreResolved() {
        #expect(Promise.value(3).value == 3)
        let error = TestError()
        let rejected = Promise<Int>(error: error)
        #expect(rejected.isRejected)
        #expect(rejected.error as? TestError == error)
        #expect(Promise<Void>.value.isFulfilled)
        #expect(Promise<Void>().isFulfilled)
    }

    @Test func bridgingFollowsAnotherThenable() {
        let (guarantee, resolve) = Guarantee<Int>.pending()
        let promise = Promise(guarantee)
        #expect(promise.isPending)
        resolve(7)
        #expect(promise.value == 7)
    }

    @Test func swiftResultMakesAResolvedPromise() {
        #expect(Promise(Swift.Result<Int, TestError>.success(4)).value == 4)
        let error = TestError()
        #expect(Promise(Swift.Result<Int, TestError>.failure(error)).error as? TestError == error)
    }

    @Test func waitReturnsTheValueOrThrows() throws {
        let (promise, resolver) = Promise<Int>.pending()
        DispatchQueue.global().async { resolver.fulfill(9) }
        #expect(try promise.wait() == 9)
        let error = TestError()
        #expect(throws: error) { try Promise<Int>(error: error).wait() }
    }

    /// Issue 14, item 3: PromiseKit 8.2's strings, which client tests and logs compare against.
    @Test func descriptionsAreAsInPromiseKit() {
        enum Error: Swift.Error { case dummy }
        let (pending, resolver) = Promise<Int>.pending()
        #expect(pending.description == "Promise(…Int)")
        #expect(pending.debugDescription == "Promise<Int>.pending(handlers: 0)")
        pending.pipe { _ in }
        _ = pending.map(on: nil) { $0 }
        #expect(pending.debugDescription == "Promise<Int>.pending(handlers: 2)")
        resolver.fulfill(3)
        #expect(pending.description == "Promise(3)")
        #expect(pending.debugDescription == "Promise<Int>.fulfilled(3)")
        #expect(Promise().debugDescription == "Promise<()>.fulfilled(())")
        let rejected = Promise<String>(error: Error.dummy)
        #expect(rejected.description == "Promise(dummy)")
        #expect(rejected.debugDescription == "Promise<String>.rejected(Error.dummy)")
        #expect("\(Promise.value(3))" == "Promise(3)")
        // PromiseKit 8.2's Guarantee has no description of its own: the default, its type.
        #expect("\(Guarantee.value(1))" == "PromiseCore.Guarantee<Swift.Int>")
    }

    @Test func firstResolutionWins() {
        let (promise, resolver) = Promise<Int>.pending()
        resolver.fulfill(1)
        resolver.fulfill(2)
        resolver.reject(TestError())
        #expect(promise.value == 1)
    }

    @Test func bodyRunsOnceAndEveryObserverSeesTheSameResult() {
        nonisolated(unsafe) var runs = 0
        let promise = Promise<Tracked> { seal in
            runs += 1
            seal.fulfill(Tracked())
        }
        nonisolated(unsafe) var seen: [Tracked] = []
        for _ in 0..<3 {
            _ = promise.done(on: nil) { seen.append($0) }
        }
        #expect(runs == 1)
        #expect(seen.count == 3)
        #expect(seen.allSatisfy { $0 === promise.value })
    }
}
