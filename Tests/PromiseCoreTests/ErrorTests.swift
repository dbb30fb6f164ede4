import Foundation
import PromiseCore
import Testing

@Suite struct ErrorTests {
    @Test func isCancelledRecognisesCancellationErrors() {
        #expect(PMKError.cancelled.isCancelled)
        #expect(!PMKError.badInput.isCancelled)
        #expect(TestCancellation().isCancelled)
        #expect(CancellationError().isCancelled)
        #expect(URLError(.cancelled).isCancelled)
        #expect(CocoaError(.userCancelled).isCancelled)
        #expect(!TestError().isCancelled)
        #expect(!URLError(.timedOut).isCancelled)
    }

    @Test func pmkErrorsAreEquatableByCase() {
        #expect(PMKError.badInput == .badInput)
        #expect(PMKError.badInput != .noWinner)
        #expect(PMKError.compactMap(1, Int.self) == .compactMap("other", Int.self))
        #expect(PMKError.compactMap(1, Int.self) != .compactMap(1, String.self))
    }

    @Test func pmkErrorsDescribeThemselves() {
        #expect(PMKError.returnedSelf.localizedDescription == "A promise handler returned itself")
        #expect(PMKError.compactMap("x", Int.self).debugDescription == "Could not `compactMap<Int>`: x")
    }

    @Test func resultConvertsToAndFromSwiftResult() {
        let fulfilled = PromiseCore.Result(Swift.Result<Int, TestError>.success(1))
        #expect(fulfilled.isFulfilled)
        let error = TestError()
        let back = Swift.Result<Int, Error>(PromiseCore.Result<Int>.rejected(error))
        guard case .failure(let failure) = back else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure as? TestError == error)
    }
}
