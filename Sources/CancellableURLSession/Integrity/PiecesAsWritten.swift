import Foundation
import PromiseCore

/// Checks the pieces of a file written from its first byte to its last, in order — a single-URL download's body —
/// each once its last byte is in the file: hashed once, on the ``PieceChecker``'s queue, while the rest of the body
/// arrives. A piece that fails stops the download at once (``failure``) instead of after its last byte; what was not
/// checked as it arrived (bytes a resumed download started with, a file moved in whole) is checked at the end.
///
/// Each verdict belongs to one version of the file's contents: once the file is emptied or reopened
/// (``restarted()``), the verdicts before are forgotten, and a check still under way is not trusted.
final class PiecesAsWritten: Sendable {
    private struct Ledger {
        /// Counts the versions of the file's contents.
        var generation = 0
        var passed: Set<Int> = []
        /// The first piece that failed, or could not be read back.
        var failure: (any Error)?
        /// Whether checks are still wanted: `false` once the download has stopped.
        var running = true
    }

    private let checker: PieceChecker
    private let digests: PieceDigests
    private let length: Int64
    private let ledger = Locked(Ledger())

    /// Checks for `integrity`'s pieces, reading the file back through `open`; `nil` if it has none.
    init?(_ integrity: DownloadIntegrity?, open: @escaping @Sendable () throws -> FileHandle) {
        guard let digests = integrity?.pieces, let length = integrity?.length else { return nil }
        self.digests = digests
        self.length = length
        checker = PieceChecker(digests, open: open)
    }

    /// `bytes` were written, and the file holds every byte before them: queues the pieces whose last byte is among
    /// them.
    func written(_ bytes: Range<Int64>) {
        checker.touch(bytes)
        let complete = digests.pieces(overlapping: bytes).filter { piece in
            digests.range(of: piece, in: length).upperBound <= bytes.upperBound
        }
        guard !complete.isEmpty else { return }
        let (ledger, checker, expected) = (ledger, checker, digests.sha256)
        let generation = ledger.withLock { $0.generation }
        checker.check(
            complete,
            in: length,
            isRunning: { ledger.withLock { $0.running } },
            verdict: { piece, verdict in
                let holds = checker.settle(piece)
                ledger.withLock { ledger in
                    guard holds, ledger.generation == generation, ledger.failure == nil else { return }
                    switch verdict {
                    case .passed:
                        ledger.passed.insert(piece)
                    case .failed(let actual):
                        ledger.failure = DownloadIntegrityError.pieceMismatch(
                            piece: piece,
                            expected: expected[piece].lowercased(),
                            actual: actual
                        )
                    case .unreadable(let error):
                        ledger.failure = error
                    }
                }
            }
        )
    }

    /// Whether every piece has passed so far: nothing is left to check.
    var allPassed: Bool {
        ledger.withLock { $0.passed.count == digests.sha256.count }
    }

    /// The file was emptied or reopened: the verdicts so far, and the checks under way, no longer hold.
    func restarted() {
        ledger.withLock { ledger in
            ledger.generation += 1
            ledger.passed = []
            ledger.failure = nil
        }
    }

    /// The first piece that failed its digest (``DownloadIntegrityError/pieceMismatch(piece:expected:actual:)``) or
    /// could not be read back, if one has: the download cannot succeed.
    var failure: (any Error)? {
        ledger.withLock { $0.failure }
    }

    /// Waits for the checks queued so far: the pieces that passed, or the first failure.
    func settled() -> Swift.Result<Set<Int>, any Error> {
        checker.waitForChecks()
        return ledger.withLock { ledger in ledger.failure.map { .failure($0) } ?? .success(ledger.passed) }
    }

    /// The download stopped: checks still queued are dropped.
    func stop() {
        ledger.withLock { $0.running = false }
    }
}
