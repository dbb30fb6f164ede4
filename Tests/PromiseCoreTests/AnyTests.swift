import PromiseCore
import TestSupport
import Testing

@Suite struct AnyTests {
    @Test func waitsForEveryInputAndKeepsInputOrder() {
        let a = Promise<Int>.pending()
        let b = Promise<Int>.pending()
        let c = Promise<Int>.pending()
        let all = any([a.promise, b.promise, c.promise])
        b.resolver.fulfill(2)
        a.resolver.reject(TestError())
        #expect(all.isPending, "any must not settle before every input has")
        c.resolver.fulfill(3)
        let outcomes = all.value ?? []
        #expect(outcomes.map(\.isSuccess) == [false, true, true])
        #expect(outcomes.map(\.isError) == [true, false, false])
        #expect(outcomes.compactMap(\.value) == [2, 3])
        #expect(outcomes[0].error is TestError)
    }

    @Test func rejectsOnlyWhenEveryInputRejected() {
        let errors = [TestError(), TestError()]
        let all = any(Promise<Int>(error: errors[0]), Promise<Int>(error: errors[1]))
        guard let failure = all.error as? AllPromisesFailedError<Int> else {
            Issue.record("expected AllPromisesFailedError, got \(String(describing: all.error))")
            return
        }
        #expect(failure.promises.count == 2)
        #expect(failure.errors.compactMap { $0 as? TestError } == errors)
    }

    @Test func emptyArrayFulfillsWithEmptyArray() {
        #expect(any([Promise<Int>]()).value?.isEmpty == true)
    }

    @Test func acceptsGuarantees() {
        #expect(any(Guarantee.value(1), Guarantee.value(2)).value?.compactMap(\.value) == [1, 2])
    }
}
