import Dispatch
import PromiseCore
import TestSupport
import Testing

/// Reads the configuration only: tests run in parallel and must not change `conf` (the log handler, set
/// once by `LogCapture`, is the single exception).
@Suite struct ConfigurationTests {
    @Test func defaultsMatchPromiseKit() {
        let configuration = PMKConfiguration()
        #expect(configuration.Q.map?.label == DispatchQueue.main.label)
        #expect(configuration.Q.return?.label == DispatchQueue.main.label)
        #expect(configuration.catchPolicy == .allErrorsExceptCancellation)
    }

    @Test func confIsAValueThatCanBeCopiedAndChanged() {
        var copy = conf
        copy.Q.map = nil
        copy.catchPolicy = .allErrors
        #expect(copy.Q.map == nil)
        #expect(conf.Q.map?.label == DispatchQueue.main.label)
    }

    @Test func confCanBeReadFromManyThreadsAtOnce() {
        DispatchQueue.concurrentPerform(iterations: 1_000) { _ in
            _ = conf.Q.map
            _ = conf.catchPolicy
        }
    }
}
