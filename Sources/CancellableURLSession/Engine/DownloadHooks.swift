import Cancellable
import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Points where a test stops a transfer to force one interleaving of its ending and a cancellation, set for the
/// transfers a test makes with `DownloadHooks.$current.withValue(…)`. Not API.
struct DownloadHooks: Sendable {
    /// On the delegate queue, before URLSession is answered (after a response, before a redirect).
    var willAnswer: (@Sendable () -> Void)?
    /// In the cancel handler, on the cancelling thread: the cancellation has won, the task is not yet cancelled and the
    /// promise not yet rejected.
    var willCancelTask: (@Sendable () -> Void)?
    /// On the delegate queue, once the transfer has ended: before its ending and a cancellation are decided.
    var willDecide: (@Sendable () -> Void)?
    /// On the delegate queue, once the ending has won: before it is carried out (the file moved into place).
    var didDecide: (@Sendable () -> Void)?
    /// On the delegate queue, once a transfer's fault is forgiven and the next one is scheduled
    /// (``DownloadAttempts``).
    var didScheduleRetry: (@Sendable () -> Void)?
    /// On a hashing queue, before a chunk of so many bytes is hashed as it was written (``StreamingDigest``): a test
    /// counts the bytes, or blocks the queue here.
    var willHashStreamed: (@Sendable (Int) -> Void)?
    /// On a hashing queue, before these bytes of the file are read back to be hashed (``StreamingDigest``).
    var willReadBack: (@Sendable (Range<Int64>) -> Void)?
    /// On the piece-hashing queue, before this piece is read back and hashed (``PieceChecker``).
    var willHashPiece: (@Sendable (Int) -> Void)?

    @TaskLocal static var current = DownloadHooks()
}
