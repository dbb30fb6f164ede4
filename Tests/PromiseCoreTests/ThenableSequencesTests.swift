import PromiseCore
import TestSupport
import Testing

@Suite struct ThenableSequencesTests {
    let numbers = Promise.value([3, 1, 2])

    @Test func mapFlatMapCompactMapFilterAndSort() {
        #expect(numbers.mapValues(on: nil) { $0 * 2 }.value == [6, 2, 4])
        #expect(numbers.flatMapValues(on: nil) { [$0, $0] }.value == [3, 3, 1, 1, 2, 2])
        #expect(Promise.value(["1", "x", "2"]).compactMapValues(on: nil) { Int($0) }.value == [1, 2])
        #expect(numbers.filterValues(on: nil) { $0 > 1 }.value == [3, 2])
        #expect(numbers.sortedValues(on: nil).value == [1, 2, 3])
    }

    @Test func thenMapAndThenFlatMapWaitForEveryPromise() {
        #expect(numbers.thenMap(on: nil) { Promise.value($0 + 1) }.value == [4, 2, 3])
        #expect(numbers.thenFlatMap(on: nil) { Promise.value([$0, 0]) }.value == [3, 0, 1, 0, 2, 0])
        let error = TestError()
        let rejected = numbers.thenMap(on: nil) { $0 == 1 ? Promise<Int>(error: error) : .value($0) }
        #expect(rejected.error as? TestError == error)
    }

    @Test func firstAndLastValue() {
        #expect(numbers.firstValue.value == 3)
        #expect(numbers.lastValue.value == 2)
        #expect(numbers.firstValue(on: nil) { $0 < 3 }.value == 1)
    }

    @Test func firstAndLastValueOfAnEmptySequenceRejectWithEmptySequence() {
        let empty = Promise.value([Int]())
        #expect(empty.firstValue.error as? PMKError == .emptySequence)
        #expect(empty.lastValue.error as? PMKError == .emptySequence)
        #expect(numbers.firstValue(on: nil) { $0 > 10 }.error as? PMKError == .emptySequence)
    }

    @Test func guaranteeSequenceHelpersStayGuarantees() {
        let values = Guarantee.value([3, 1, 2])
        let mapped: Guarantee<[Int]> = values.mapValues(on: nil) { $0 + 1 }
        #expect(mapped.value == [4, 2, 3])
        #expect(values.flatMapValues(on: nil) { [$0] }.value == [3, 1, 2])
        #expect(values.compactMapValues(on: nil) { $0 > 1 ? $0 : nil }.value == [3, 2])
        #expect(values.filterValues(on: nil) { $0 != 1 }.value == [3, 2])
        #expect(values.sortedValues(on: nil).value == [1, 2, 3])
        #expect(values.sortedValues(on: nil, >).value == [3, 2, 1])
        #expect(values.thenMap(on: nil) { Guarantee.value($0 * 2) }.value == [6, 2, 4])
        #expect(values.thenFlatMap(on: nil) { Guarantee.value([$0]) }.value == [3, 1, 2])
    }
}
