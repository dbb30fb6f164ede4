import PromiseCore
import TestSupport
import Testing

@Suite struct ResolverTests {
    @Test func cocoaConventionPrefersTheError() {
        let error = TestError()
        #expect(Promise<Int> { $0.resolve(1, error) }.error as? TestError == error)
        #expect(Promise<Int> { $0.resolve(Int?.some(1), nil) }.value == 1)
        #expect(Promise<Int> { $0.resolve(error, Int?.none) }.error as? TestError == error)
        #expect(Promise<Int> { $0.resolve(nil, Int?.some(2)) }.value == 2)
    }

    @Test func nilValueAndNilErrorIsAnInvalidCallingConvention() {
        let promise = Promise<Int> { $0.resolve(Int?.none, nil) }
        #expect(promise.error as? PMKError == .invalidCallingConvention)
    }

    @Test func voidResolverForms() {
        #expect(Promise<Void> { $0.fulfill_() }.isFulfilled)
        #expect(Promise<Void> { $0.resolve(nil) }.isFulfilled)
        let error = TestError()
        #expect(Promise<Void> { $0.resolve(error) }.error as? TestError == error)
    }

    @Test func resultForms() {
        #expect(Promise<Int> { $0.resolve(.fulfilled(1)) }.value == 1)
        #expect(Promise<Int> { $0.resolve(Swift.Result<Int, TestError>.success(2)) }.value == 2)
        let error = TestError()
        #expect(Promise<Int> { $0.resolve(Swift.Result<Int, TestError>.failure(error)) }.error as? TestError == error)
    }

    @Test func droppingTheLastResolverOfAPendingPromiseLogs() {
        let events = LogCapture.events {
            _ = Promise<Int> { _ in }
        }
        #expect(events.filter(\.isPendingPromiseDeallocated).count == 1)
    }

    @Test func droppingTheResolverOfAResolvedPromiseDoesNotLog() {
        let events = LogCapture.events {
            _ = Promise<Int> { $0.fulfill(1) }
        }
        #expect(events.isEmpty)
    }
}
