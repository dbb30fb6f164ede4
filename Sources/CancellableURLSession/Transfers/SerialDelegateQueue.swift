import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The serial delegate queue `withProgressReporting` makes for an app's concurrent one: one operation at a time, on
/// the app's queue's dispatch queue if it has one. It holds that dispatch queue: swift-corelibs-foundation's
/// `underlyingQueue` does not.
final class SerialDelegateQueue: OperationQueue, @unchecked Sendable {
    // @unchecked Sendable: as OperationQueue (thread-safe by its documentation); `dispatchQueue` is immutable.
    private let dispatchQueue: DispatchQueue?

    init(runningOn queue: OperationQueue) {
        let name = "CancellableURLSession delegate queue, one at a time on \(queue.name ?? "a concurrent queue")"
        dispatchQueue = queue.underlyingQueue.map { DispatchQueue(label: name, target: $0) }
        super.init()
        self.name = name
        maxConcurrentOperationCount = 1
        qualityOfService = queue.qualityOfService
        underlyingQueue = dispatchQueue
    }
}
