import Foundation
import PromiseCore
import TestSupport
import Testing

@Suite struct CancellableErrorTests {
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

    @Test func aCustomCancellableErrorDecidesForItself() {
        struct MaybeCancelled: CancellableError {
            let isCancelled: Bool
        }
        #expect(MaybeCancelled(isCancelled: true).isCancelled)
        #expect(!MaybeCancelled(isCancelled: false).isCancelled)
    }
}
