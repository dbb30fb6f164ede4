import Foundation
import PromiseCore

/// A whole-file SHA-256 computed as the file is written: the bytes written in order from offset 0 are hashed on a
/// serial queue of its own while the transfer goes on, and what did not arrive that way is read back from the file on
/// that queue — as soon as the hashed bytes reach it, or at the end (``finish(length:)``).
///
/// Writers hand each chunk over as it is written (``append(_:at:writtenFrom:)``), one at a time, in the order they
/// write: a chunk that continues the bytes handed over so far (the *frontier*) is queued for hashing — as the same
/// `Data`, which URLSession never mutates, so no byte is copied; a chunk past the frontier is left in the file, read
/// back on the queue once the frontier reaches it (each writer says where the run of bytes it writes starts, so the
/// digest knows which bytes are in the file), or at the end; a chunk below the frontier means those bytes are being
/// written again, so what was hashed is dropped and hashing starts over from offset 0. At most ``backlogLimit`` bytes
/// of chunks wait on the queue: past that (a hashing thread slower than the network, as in a build without the
/// optimizer) a chunk is left in the file too, so that memory stays bounded.
///
/// Once the download ends without a file to check, ``stop()`` drops the work still queued: each queued operation then
/// returns at once. The queued blocks hold this object only until they have run.
final class StreamingDigest: @unchecked Sendable {
    // @unchecked Sendable: `hash` is touched only on `queue`; everything else is behind `control`'s lock.

    /// What the writers and the hashing queue share.
    private struct Control {
        /// The bytes `0..<frontier` are hashed, or queued to be, in order.
        var frontier: Int64 = 0
        /// Whether chunks at the frontier are still taken: `false` once reading back failed, until hashing starts
        /// over.
        var streaming = true
        /// Bytes of chunks waiting on the queue.
        var queued = 0
        /// Operations waiting on the queue.
        var pending = 0
        /// Whether reading bytes back failed: ``finish(length:)`` then hashes the whole file.
        var failed = false
        /// Whether a read back of bytes the queue skipped is queued: at most one is, so that the queue stays short.
        var catchingUp = false
        /// Runs of bytes known to be in the file that the frontier has not reached, by where the frontier would
        /// enter them: their ends. A handful: one per segment being written, or completed ahead of the frontier.
        var runs: [Int64: Int64] = [:]
        var stopped = false
        /// Counts the times hashing started over: a read back queued before cannot mark the new start failed.
        var generation = 0

        /// Hashing starts over from offset 0, with the operations still queued. The bytes in the file stay as they
        /// are: the runs known to be written still are.
        mutating func startOver() {
            self = Control(queued: queued, pending: pending, runs: runs, generation: generation + 1)
        }

        /// The bytes `run` are in the file.
        mutating func record(_ run: Range<Int64>) {
            guard run.upperBound > frontier else { return }
            runs[max(run.lowerBound, frontier)] = run.upperBound
        }

        /// A read back of the run of written bytes the frontier stands at, unless one is queued already.
        mutating func catchUp() -> Operation? {
            guard streaming, !catchingUp, let end = runs.removeValue(forKey: frontier), end > frontier else {
                return nil
            }
            defer {
                frontier = end
                catchingUp = true
            }
            return .readBack(frontier..<end)
        }
    }

    private enum Operation {
        case reset
        case update(Data)
        case readBack(Range<Int64>)
    }

    /// The most bytes of chunks that wait to be hashed: 16 MiB unless a test says otherwise.
    let backlogLimit: Int
    private let control = Locked(Control())
    private let queue = DispatchQueue(label: "CancellableURLSession.StreamingDigest")
    /// Opens the file to read back what was not hashed as it was written.
    private let open: @Sendable () throws -> FileHandle
    /// Whether the download still runs, for a download that tells it so rather than calling ``stop()``.
    private let isRunning: @Sendable () -> Bool
    private let hooks: DownloadHooks
    /// On `queue` only.
    private var hash = SHA256()

    /// A digest of the file that `open` opens for reading.
    ///
    /// - Parameters:
    ///   - isRunning: asked on the hashing queue before each operation: once it says `false`, the operation is
    ///     dropped, as after ``stop()``.
    init(
        backlogLimit: Int = 16 << 20,
        hooks: DownloadHooks = DownloadHooks.current,
        isRunning: @escaping @Sendable () -> Bool = { true },
        open: @escaping @Sendable () throws -> FileHandle
    ) {
        self.backlogLimit = backlogLimit
        self.hooks = hooks
        self.isRunning = isRunning
        self.open = open
    }

    /// `data` was written at `offset`.
    ///
    /// - Parameter runStart: where the bytes written just before `offset` start: every byte of `runStart..<offset`
    ///   is in the file — `0` for a single transfer writing a file from its start or continuing bytes kept, the
    ///   start of its segment for a segmented download's transfer, `offset` if nothing is known. If the frontier lies
    ///   in that run, the bytes from the frontier to `offset` are read back on the queue (one read back queued at a
    ///   time), and the chunk is hashed after them: a frontier that stopped at the end of one segment, or at a chunk
    ///   skipped past the backlog, catches up during the transfer rather than after it.
    func append(_ data: Data, at offset: Int64, writtenFrom runStart: Int64) {
        guard !data.isEmpty else { return }
        control.withLock { control in
            guard !control.stopped else { return }
            var operations: [Operation] = []
            if offset < control.frontier {
                // Bytes already hashed are written again: their digest may not hold any more.
                control.startOver()
                operations.append(.reset)
            }
            if runStart < offset { control.record(runStart..<offset) }
            if let catchUp = control.catchUp() { operations.append(catchUp) }
            if control.streaming, offset == control.frontier, control.queued + data.count <= backlogLimit {
                operations.append(.update(data))
                control.queued += data.count
                control.frontier += Int64(data.count)
            }
            // Else the chunk is left in the file: read back once the frontier reaches it, or at the end.
            control.record(runStart..<(offset + Int64(data.count)))
            if let catchUp = control.catchUp() { operations.append(catchUp) }  // the frontier reached another run
            // Queued under the lock, so that the queue runs operations in the order the writes were made.
            for operation in operations { enqueue(operation, &control) }
        }
    }

    /// The file starts over (it was emptied or replaced whole): hashing starts over from offset 0.
    func reset() {
        control.withLock { control in
            guard !control.stopped else { return }
            control.startOver()
            control.runs = [:]  // replaced whole: what was written is gone
            enqueue(.reset, &control)
        }
    }

    /// The download ended without a file to check: the work still queued is dropped, and nothing more is taken.
    func stop() {
        control.withLock { $0.stopped = true }
    }

    /// Waits until every operation queued so far has run (or was dropped): for tests.
    func drain() {
        queue.sync {}
    }

    /// Whether every byte of a file of `length` bytes is hashed already: what ``finish(length:)`` still has to do
    /// is only to finalize.
    func isCaughtUp(to length: Int64) -> Bool {
        control.withLock { $0.pending == 0 && !$0.failed && $0.frontier == length }
    }

    /// Waits for the queue, reads back and hashes what was not hashed of a file of `length` bytes — only the bytes
    /// from the frontier on, unless reading back failed — and returns the lowercase hexadecimal digest. Nothing is
    /// taken after it.
    ///
    /// - Throws: the file system's error.
    func finish(length: Int64) throws -> String {
        // A read back that ends queues the next one (``Control/catchUp()``): behind this wait, which then waits again.
        while true {
            if let digest = try queue.sync(execute: { try finishIfIdle(length: length) }) { return digest }
        }
    }

    /// On the queue: the digest, unless an operation is still queued (behind this one).
    private func finishIfIdle(length: Int64) throws -> String? {
        let (frontier, failed, pending) = control.withLock { ($0.frontier, $0.failed, $0.pending) }
        guard pending == 0 else { return nil }
        defer { control.withLock { $0.stopped = true } }
        var start = frontier
        if failed || frontier > length {
            hash = SHA256()
            start = 0
        }
        if start < length {
            try readBack(start..<length)
        }
        return SHA256.hex(hash.finalize())
    }

    private func enqueue(_ operation: Operation, _ control: inout Control) {
        control.pending += 1
        let generation = control.generation
        queue.async { [self] in run(operation, generation) }
    }

    /// Runs `operation` on the queue, unless the download stopped meanwhile.
    private func run(_ operation: Operation, _ generation: Int) {
        let stopped = control.withLock { $0.stopped } || !isRunning()
        var failed = false
        switch operation {
        case .reset:
            hash = SHA256()
        case .update(let data):
            if !stopped {
                hooks.willHashStreamed?(data.count)
                hash.update(data)
            }
        case .readBack(let bytes):
            if !stopped {
                do { try readBack(bytes) } catch { failed = true }
            }
        }
        control.withLock { control in
            control.pending -= 1
            if case .update(let data) = operation { control.queued -= data.count }
            guard control.generation == generation else { return }
            if failed {
                control.failed = true
                control.streaming = false
            }
            if case .readBack = operation {
                control.catchingUp = false
                if let catchUp = control.catchUp() { enqueue(catchUp, &control) }  // what arrived meanwhile
            }
        }
    }

    /// Hashes `bytes` of the file, read in reads of at most 1 MiB. On the queue.
    private func readBack(_ bytes: Range<Int64>) throws {
        hooks.willReadBack?(bytes)
        let handle = try open()
        defer { try? handle.close() }
        // A download stopped meanwhile (a cancel during the last read back) does not wait for the rest.
        try handle.readAll(bytes, stopped: { control.withLock { $0.stopped } }) { hash.update($0) }
    }
}
