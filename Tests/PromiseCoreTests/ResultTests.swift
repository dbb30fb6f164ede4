import PromiseCore
import TestSupport
import Testing

@Suite struct ResultTests {
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

    @Test func isFulfilledTellsTheCase() {
        #expect(PromiseCore.Result.fulfilled(1).isFulfilled)
        #expect(!PromiseCore.Result<Int>.rejected(TestError()).isFulfilled)
    }
}
