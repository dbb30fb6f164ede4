import PromiseCore
import TestSupport
import Testing

@Suite struct WhenConcurrentlyTests {
    /// Generates pending promises and records how many were pending at once.
    final class Generator: IteratorProtocol {
        var resolvers: [Resolver<Int>] = []
        var promises: [Promise<Int>] = []
        var generated = 0
        let total: Int
        var maxPending = 0

        init(total: Int) { self.total = total }

        func next() -> Promise<Int>? {
            guard generated < total else { return nil }
            generated += 1
            let (promise, resolver) = Promise<Int>.pending()
            resolvers.append(resolver)
            promises.append(promise)
            maxPending = max(maxPending, promises.filter(\.isPending).count)
            return promise
        }
    }

    @Test func keepsAtMostTheLimitPendingAndKeepsOrder() {
        let generator = Generator(total: 5)
        let all = when(fulfilled: AnyIterator(generator.next), concurrently: 2)
        #expect(generator.generated == 2)
        var index = 0
        while index < generator.resolvers.count {
            generator.resolvers[index].fulfill(index * 10)
            index += 1
        }
        #expect(generator.generated == 5)
        #expect(generator.maxPending == 2)
        #expect(all.value == [0, 10, 20, 30, 40])
    }

    @Test func stopsPullingAfterTheFirstRejection() {
        let generator = Generator(total: 10)
        let all = when(fulfilled: AnyIterator(generator.next), concurrently: 2)
        let error = TestError()
        generator.resolvers[0].reject(error)
        #expect(all.error as? TestError == error)
        #expect(generator.generated == 2)
        generator.resolvers[1].fulfill(1)
        #expect(generator.generated == 2)
    }

    /// The iterator runs outside the lock: while it makes up its mind, an input can reject and decide the outcome.
    /// Here it rejects the first input itself, then reports the end of the sequence (this trapped once).
    @Test func aRejectionWhileTheIteratorRunsThenTheEndOfTheSequence() {
        let (first, resolver) = Promise<Int>.pending()
        var calls = 0
        let iterator = AnyIterator<Promise<Int>> {
            calls += 1
            guard calls == 1 else {
                resolver.reject(TestError())
                return nil
            }
            return first
        }
        let all = when(fulfilled: iterator, concurrently: 2)
        #expect(all.error is TestError)
        #expect(calls == 2)
    }

    @Test func zeroConcurrencyIsBadInput() {
        let generator = Generator(total: 1)
        #expect(when(fulfilled: AnyIterator(generator.next), concurrently: 0).error as? PMKError == .badInput)
        let resolved = when(resolved: AnyIterator(generator.next), concurrently: 0).value
        #expect(resolved?.count == 1)
        #expect(resolved?.first?.isFulfilled == false)
        #expect(generator.generated == 0)
    }

    @Test func emptyIteratorFulfillsWithEmptyArray() {
        #expect(when(fulfilled: [Promise<Int>]().makeIterator(), concurrently: 3).value == [])
    }

    @Test func alreadyResolvedInputsAreAllCollected() {
        let inputs = (0..<100).map { Promise.value($0) }
        #expect(when(fulfilled: inputs.makeIterator(), concurrently: 7).value == Array(0..<100))
    }

    @Test func resolvedFormCollectsEveryResult() {
        let generator = Generator(total: 3)
        let all = when(resolved: AnyIterator(generator.next), concurrently: 1)
        generator.resolvers[0].reject(TestError())
        generator.resolvers[1].fulfill(1)
        generator.resolvers[2].fulfill(2)
        let results = all.value ?? []
        #expect(results.map(\.isFulfilled) == [false, true, true])
    }
}
