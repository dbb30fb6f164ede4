import Cancellable
import Foundation

/// The life of a download, from its first request to the last thing it does with its partial file: the pure state
/// machine that ``SegmentedDownloadEngine`` carries out. Without I/O, a lock or a clock (the time is passed in), it
/// decides when the download stops, what it keeps, and what is done next, in which order; the ``SegmentSchedule`` it
/// holds decides which bytes each mirror fetches and which of those that arrive are written.
///
/// ```
///            complete               passed
///  running ──────────▶ verifying ──────────▶ committing ──┐
///     │                    │ failed                        │
///     │ failure, pause     ▼                               ▼
///     ├──────────────▶ stopping(kept) ───── finished ───▶ ended
///     ├── pause ─────▶ pausing(kept) ────── finished ───────▲
///     └── cancel ──────────────────────────────────────────▲
/// ```
///
/// A transfer's events (``accept(_:for:at:)``, ``receive(_:for:at:)``, ``transferEnded(_:fault:at:)``,
/// ``tick(by:stallTimeout:minimumSpeed:at:)``) count only while it runs: once it has stopped, a late callback of a
/// transfer being stopped writes nothing and changes nothing. Every ending goes one way (design note 0007, "One
/// ending"): the transfers stop and the file is closed (``Action/stop``), then the promise is settled with what the
/// file becomes (``Ending``) — unless a cancellation came first, which decides the file's fate instead
/// (``Ending/fateIfCancelled(by:)``).
struct DownloadMachine: Sendable {
    /// Where the download is in its life.
    enum Stage: Sendable, Equatable {
        /// Transfers run and their bytes are written.
        case running
        /// Every byte is written and every piece verified; the transfers are stopped and the file closed. The file's
        /// length and digest are checked next (``verified(passed:)``).
        case verifying
        /// The file passed its checks: it is moved into place as the promise is fulfilled.
        case committing
        /// Stopped by a failure; no byte is written any more. What is kept (if anything) is flushed, then the promise
        /// is settled — with the file's fate carried out as it settles, unless a cancellation came first.
        case stopping(Kept?)
        /// Paused: the promise has rejected, no byte is written any more, and `Kept` is flushed and named by resume
        /// data next, off the caller's thread. Nothing can take it away any more: a later cancellation is too late.
        case pausing(Kept)
        /// The download did the last thing it does with its file (``finished()``), or was cancelled outright.
        case ended
    }

    /// What a stopped download keeps: the ranges written of a file of `total` bytes (`nil` if the length is not
    /// known), identified by `validator`.
    struct Kept: Sendable, Equatable {
        var ranges: [Range<Int64>]
        var total: Int64?
        var validator: DownloadResumeData.Validator?
    }

    /// What becomes of the partial file.
    enum Fate: Sendable, Equatable {
        /// It replaces the destination.
        case commit
        /// It stays, flushed to disk, and resume data names what it holds (or, if the data cannot be made or the file
        /// cannot be flushed, it is removed).
        case keep(Kept)
        /// It is removed.
        case remove
    }

    /// How a download that stopped on its own settles its promise: whether it fulfills or rejects is the outcome's
    /// (its checks, or the failure that stopped it); this is what becomes of the file.
    struct Ending: Sendable, Equatable {
        /// The file's fate as the promise is settled.
        var fate: Fate
        /// What a pause that came first keeps instead (a resumable download's bytes); `nil` to remove the file.
        var keptIfPaused: Kept?

        /// The file's fate if a cancellation for `reason` settled the promise first: a pause keeps ``keptIfPaused``;
        /// anything else — the user's `cancel()`, a timeout, a lost race — removes it.
        func fateIfCancelled(by reason: CancellationReason) -> Fate {
            if reason == .paused, let keptIfPaused { return .keep(keptIfPaused) }
            return .remove
        }
    }

    /// What the engine carries out after a step, in order.
    enum Action: Sendable, Equatable {
        /// Starts or stops one transfer.
        case transfer(SegmentSchedule.Action)
        /// Stops everything the download runs beside its transfers' bytes: the stall watch, and every transfer still
        /// running. The file is closed already: no byte is written after the step that returns this.
        case stop
        /// Checks the complete file's length and digest, then reports with ``verified(passed:)``.
        case verify
        /// Settles the promise as `Ending` says, with the file's fate carried out before the promise settles.
        case end(Ending)
        /// On the delegate queue — not on the caller's thread, not under the lock — keeps `Kept`: a pause.
        case keepLater(Kept)
        /// Removes the partial file now.
        case remove
        /// Hands out no resume data: the last thing a cancelled download does.
        case publishNothing
    }

    private(set) var stage = Stage.running
    /// Which bytes each mirror fetches, and which are written.
    private(set) var schedule: SegmentSchedule
    /// Whether the download keeps its bytes when it pauses or loses every mirror (a resumable one).
    let keepsBytes: Bool

    init(schedule: SegmentSchedule, keepsBytes: Bool) {
        self.schedule = schedule
        self.keepsBytes = keepsBytes
    }

    var isRunning: Bool { stage == .running }

    /// Whether the download stopped short of a verified file — failed, paused, cancelled — or has ended: what it
    /// computes for its checks (a digest as the bytes arrive) is no longer wanted. A download being verified or
    /// committed still needs it.
    var hasStopped: Bool {
        switch stage {
        case .running, .verifying, .committing: false
        case .stopping, .pausing, .ended: true
        }
    }

    /// What the file holds now, for resume data.
    private var kept: Kept {
        Kept(ranges: schedule.keptRanges, total: schedule.total, validator: schedule.validator)
    }

    // MARK: Transfers

    /// The first requests.
    mutating func begin(at now: TimeInterval) -> [Action] {
        guard isRunning else { return [] }
        return schedule.begin(at: now).map(Action.transfer)
    }

    /// A transfer's response: whether to take its body (``SegmentSchedule/accept(_:for:at:)``).
    mutating func accept(_ answer: RangeAnswer, for id: Int, at now: TimeInterval) -> (Bool, [Action]) {
        guard isRunning else { return (false, []) }
        let (take, actions) = schedule.accept(answer, for: id, at: now)
        return (take, actions.map(Action.transfer))
    }

    /// `count` bytes of a transfer's body: which to write, and whether the transfer goes on
    /// (``SegmentSchedule/receive(_:for:at:)``).
    mutating func receive(_ count: Int, for id: Int, at now: TimeInterval) -> (SegmentSchedule.Write?, Bool, [Action]) {
        guard isRunning else { return (nil, false, []) }
        let (write, goOn, actions) = schedule.receive(count, for: id, at: now)
        return (write, goOn, actions.map(Action.transfer))
    }

    /// A transfer sent bytes that are not the file (an error status's body, collected): it is not stalled.
    mutating func heard(from id: Int) {
        guard isRunning else { return }
        schedule.heard(from: id)
    }

    /// A write the schedule admitted failed: its bytes are not on disk.
    mutating func unwrite(_ write: SegmentSchedule.Write, for id: Int) {
        schedule.unwrite(write, for: id)
    }

    /// A transfer ended, with `fault` if it failed (``SegmentSchedule/end(_:fault:at:)``).
    mutating func transferEnded(_ id: Int, fault: MirrorDropReason?, at now: TimeInterval) -> [Action] {
        guard isRunning else { return [] }
        return schedule.end(id, fault: fault, at: now).map(Action.transfer)
    }

    /// The watch clock advanced by `interval`: stalled and too slow transfers fail, rested mirrors get work.
    mutating func tick(
        by interval: TimeInterval,
        stallTimeout: TimeInterval,
        minimumSpeed: Int64?,
        at now: TimeInterval
    ) -> [Action] {
        guard isRunning else { return [] }
        var actions: [SegmentSchedule.Action] = []
        let faults = schedule.tick(by: interval, stallTimeout: stallTimeout, minimumSpeed: minimumSpeed, at: now)
        for (id, reason) in faults { actions += schedule.fail(id, reason, at: now) }
        return (actions + schedule.rest(by: interval, at: now)).map(Action.transfer)
    }

    /// The pieces overlapping `bytes` that are written whole and not verified yet: what to check now; none once the
    /// download has stopped.
    func completedPieces(overlapping bytes: Range<Int64>) -> [Int] {
        guard isRunning else { return [] }
        return schedule.completedPieces(overlapping: bytes)
    }

    /// Piece `piece` matched its digest, or not (``SegmentSchedule/pieceFailed(_:at:)``): ignored once the download
    /// has stopped.
    mutating func piece(_ piece: Int, passed: Bool, at now: TimeInterval) -> [Action] {
        guard isRunning else { return [] }
        guard passed else { return schedule.pieceFailed(piece, at: now).map(Action.transfer) }
        schedule.pieceVerified(piece)
        return []
    }

    // MARK: Endings

    /// What the download's state says now that a step has run: `.complete` once every byte is written and every
    /// piece verified, `.stranded` once no mirror is left to fetch what is missing.
    enum Outlook: Sendable, Equatable {
        case goingOn, complete, stranded
    }

    /// Where a running download stands; `.goingOn` once it has stopped.
    var outlook: Outlook {
        guard isRunning else { return .goingOn }
        if schedule.isComplete { return .complete }
        return schedule.isStranded ? .stranded : .goingOn
    }

    /// Every byte is in: the transfers stop and the file is checked. Nothing happens unless the download is running and
    /// complete.
    mutating func startVerifying() -> [Action] {
        guard outlook == .complete else { return [] }
        stage = .verifying
        schedule.stopAll()
        return [.stop, .verify]
    }

    /// The complete file's checks `passed`, or not: the promise is settled — fulfilled with the file in place, or
    /// rejected with the file removed. A pause that wins the decision keeps a file that passed (whole: it needs no
    /// byte more), if the download keeps its bytes.
    mutating func verified(passed: Bool) -> [Action] {
        guard stage == .verifying else { return [] }
        guard passed else {
            stage = .stopping(nil)
            return [.end(Ending(fate: .remove, keptIfPaused: nil))]
        }
        stage = .committing
        return [.end(Ending(fate: .commit, keptIfPaused: keepsBytes ? kept : nil))]
    }

    /// The download failed (a write the file system refused; every mirror dropped): it stops, and rejects. If the
    /// failure is one a resume can mend (`mendable`: every mirror dropped, not a disk error) and the download keeps
    /// its bytes, the file is kept for a resume. Nothing happens unless the download is running: a failure that comes
    /// once it has stopped has lost to whatever stopped it.
    mutating func fail(mendable: Bool) -> [Action] {
        guard isRunning else { return [] }
        let kept = keepsBytes && mendable ? kept : nil
        stage = .stopping(kept)
        schedule.stopAll()
        return [.stop, .end(Ending(fate: kept.map(Fate.keep) ?? .remove, keptIfPaused: kept))]
    }

    /// The promise was cancelled for `reason`, and the promise rejects once this returns: the transfers stop and the
    /// file is removed — or, for a pause of a download that keeps its bytes, kept (flushed and named later, off the
    /// caller's thread).
    ///
    /// The file is removed before the transfers are told to stop: no byte is written after this step all the same,
    /// since the engine closes the file as the machine stops running, under the lock every write holds.
    ///
    /// If the download was already ending (verifying, committing, stopping), that ending loses its decision to this
    /// cancellation and carries out ``Ending/fateIfCancelled(by:)`` after the rejection; the file is removed now all
    /// the same, unless a pause keeps it. Once a pause has stopped the download, or it has ended, a cancellation
    /// changes nothing.
    mutating func cancel(_ reason: CancellationReason) -> [Action] {
        let pausing = reason == .paused && keepsBytes
        switch stage {
        case .running:
            schedule.stopAll()
            if pausing {
                let kept = kept
                stage = .pausing(kept)
                return [.stop, .keepLater(kept)]
            }
            stage = .ended
            // Removed first: the promise rejects next, and nothing writes to the file any more.
            return [.remove, .stop, .publishNothing]
        case .verifying, .committing, .stopping:
            return pausing ? [] : [.remove]
        case .pausing, .ended:
            return []
        }
    }

    /// The download did the last thing it does with its file: it has ended, whatever ended it. Only a download that
    /// stopped running can: its file is no longer written.
    mutating func finished() {
        precondition(stage != .running, "a download published its ending while its transfers ran")
        stage = .ended
    }

    /// What a checkpoint may name: what the file holds while the download runs; `nil` once it has stopped or if it
    /// does not keep its bytes.
    var checkpoint: Kept? {
        guard isRunning, keepsBytes else { return nil }
        return kept
    }
}
