import Foundation
import PromiseCore

/// Checks a download's completed pieces against their digests (``DownloadIntegrity/pieces``) on a serial
/// queue of its own, off the engine's lock, and hands each verdict back: each piece is read back (from the page
/// cache, as it was just written) and hashed once.
///
/// The engine calls ``check(_:in:isRunning:verdict:)`` and ``touch(_:)`` under its lock, with each write, and
/// ``settle(_:)`` under it with each verdict: a piece is queued once while it is being checked, and a verdict on a
/// piece some of whose bytes were written again meanwhile (a rollback, a piece fetched again) is not trusted.
final class PieceChecker: @unchecked Sendable {
    // @unchecked Sendable: its only mutable state is behind `checking`'s lock.

    /// What a check found.
    enum Verdict: Sendable {
        case passed
        /// The piece's SHA-256 is `actual`, not its digest.
        case failed(actual: String)
        /// The piece could not be read back: the download fails with this error.
        case unreadable(any Error)
    }

    private let digests: PieceDigests
    /// The pieces queued or being hashed, each with whether a byte of it was written since it was queued.
    private let checking = Locked<[Int: Bool]>([:])
    private let queue = DispatchQueue(label: "CancellableURLSession.PieceChecker")
    /// Opens the file to read a piece back.
    private let open: @Sendable () throws -> FileHandle
    private let hooks: DownloadHooks

    init(
        _ digests: PieceDigests,
        hooks: DownloadHooks = DownloadHooks.current,
        open: @escaping @Sendable () throws -> FileHandle
    ) {
        self.digests = digests
        self.hooks = hooks
        self.open = open
    }

    /// Queues each of `pieces` (every byte of each written) of a file of `fileLength` bytes that is not queued
    /// already. Each check first asks `isRunning`, and drops the piece if the download stopped meanwhile; otherwise
    /// it hashes the piece and calls `verdict` with it, on the hashing queue.
    func check(
        _ pieces: [Int],
        in fileLength: Int64,
        isRunning: @escaping @Sendable () -> Bool,
        verdict: @escaping @Sendable (Int, Verdict) -> Void
    ) {
        let queued = checking.withLock { checking in
            pieces.filter { piece in
                guard checking[piece] == nil else { return false }
                checking[piece] = false
                return true
            }
        }
        for piece in queued {
            queue.async { [digests, open, hooks] in
                hooks.willHashPiece?(piece)
                guard isRunning() else { return }  // stopped meanwhile: dropped
                let result: Verdict
                do {
                    let handle = try open()
                    defer { try? handle.close() }
                    let actual = try digests.hexDigest(of: piece, in: fileLength, readingFrom: handle)
                    result = actual == digests.sha256[piece].lowercased() ? .passed : .failed(actual: actual)
                } catch {
                    result = .unreadable(error)
                }
                verdict(piece, result)
            }
        }
    }

    /// Bytes `bytes` were written: a verdict on a piece they overlap that is being checked will not be trusted.
    func touch(_ bytes: Range<Int64>) {
        checking.withLock { checking in
            guard !checking.isEmpty else { return }
            for piece in digests.pieces(overlapping: bytes) where checking[piece] != nil {
                checking[piece] = true
            }
        }
    }

    /// Returns once every check queued so far has handed its verdict over (or been dropped).
    func waitForChecks() {
        queue.sync {}
    }

    /// The verdict on `piece` arrived: it is no longer being checked.
    ///
    /// - Returns: whether the verdict holds — `false` if a byte of the piece was written since it was queued (check
    ///   it again once it is complete).
    func settle(_ piece: Int) -> Bool {
        checking.withLock { checking in
            checking.removeValue(forKey: piece) == false
        }
    }
}
