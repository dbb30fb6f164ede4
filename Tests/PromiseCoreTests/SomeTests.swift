import PromiseCore
import TestSupport
import Testing

@Suite struct SomeTests {
    @Test func fulfillsWithTheFirstValuesInFulfilmentOrder() {
        let inputs = (0..<4).map { _ in Promise<Int>.pending() }
        let two = some(2, inputs.map(\.promise))
        inputs[3].resolver.fulfill(3)
        #expect(two.isPending)
        inputs[1].resolver.fulfill(1)
        #expect(two.value == [3, 1])
    }

    @Test func rejectsAsSoonAsTooFewCanStillFulfill() {
        let inputs = (0..<3).map { _ in Promise<Int>.pending() }
        let two = some(2, inputs.map(\.promise))
        let first = TestError()
        inputs[0].resolver.reject(first)
        #expect(two.isPending)
        let second = TestError()
        inputs[2].resolver.reject(second)
        guard let failure = two.error as? AggregateError else {
            Issue.record("expected AggregateError, got \(String(describing: two.error))")
            return
        }
        #expect(failure.required == 2)
        #expect(failure.errors.compactMap { $0 as? TestError } == [first, second])
    }

    @Test func countOutOfRangeIsBadInput() {
        let three = [Promise.value(1), Promise.value(2), Promise.value(3)]
        #expect(some(5, three).error as? PMKError == .badInput)
        #expect(some(0, three).error as? PMKError == .badInput)
        #expect(some(-1, three).error as? PMKError == .badInput)
        #expect(some(1, [Promise<Int>]()).error as? PMKError == .badInput)
    }

    @Test func variadicForm() {
        #expect(some(1, Promise.value(1), Promise.value(2)).value == [1])
    }
}
