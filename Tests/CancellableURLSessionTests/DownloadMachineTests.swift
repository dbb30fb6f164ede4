import Cancellable
import Foundation
import Testing

@testable import CancellableURLSession

/// The download's life, without a server, a file or a clock: every transition of ``DownloadMachine`` — each stage ×
/// each event — and the order of what it asks the engine to do.
@Suite struct DownloadMachineTests {
    typealias Machine = DownloadMachine
    typealias Action = DownloadMachine.Action

    /// A download of 250 bytes from two mirrors, in segments of 100.
    static func machine(keepsBytes: Bool = true, pieces: PieceDigests? = nil) -> Machine {
        let schedule = SegmentSchedule(
            mirrors: 2,
            options: SegmentScheduleTests.options(),
            expectedLength: pieces == nil ? nil : 250,
            pieces: pieces
        )
        return Machine(schedule: schedule, keepsBytes: keepsBytes)
    }

    /// The transfers `actions` start.
    static func started(_ actions: [Action]) -> [(id: Int, mirror: Int, start: Int64, end: Int64)] {
        SegmentScheduleTests.started(actions.compactMap { if case .transfer(let action) = $0 { action } else { nil } })
    }

    /// A running machine whose mirrors answered and wrote `written` bytes of segment 0 (0–100) and all of segment 1
    /// (100–200).
    static func running(keepsBytes: Bool = true, written: Int = 40) -> Machine {
        var machine = machine(keepsBytes: keepsBytes)
        let first = started(machine.begin(at: 0))
        _ = machine.accept(SegmentScheduleTests.partial(0, 99, of: 250), for: first[0].id, at: 0)
        _ = machine.accept(SegmentScheduleTests.partial(100, 199, of: 250), for: first[1].id, at: 0)
        _ = machine.receive(written, for: first[0].id, at: 1)
        _ = machine.receive(100, for: first[1].id, at: 1)
        return machine
    }

    /// A machine with every byte written: complete, not yet told so.
    static func whole(keepsBytes: Bool = true) -> Machine {
        var machine = machine(keepsBytes: keepsBytes)
        var pending = started(machine.begin(at: 0)).map(\.id)
        while let id = pending.first, machine.outlook == .goingOn {
            pending.removeFirst()
            guard let transfer = machine.schedule.transfers[id] else { continue }
            let answer = SegmentScheduleTests.partial(transfer.start, transfer.requestedEnd - 1, of: 250)
            _ = machine.accept(answer, for: id, at: 0)
            let (_, _, next) = machine.receive(Int(transfer.requestedEnd - transfer.start), for: id, at: 1)
            pending += started(next).map(\.id)
        }
        return machine
    }

    /// Every reason but a pause.
    static let reasons: [CancellationReason] = [
        .user, .timeout, .lostRace, .superseded, .ownerReleased, .custom("quit"),
    ]

    static let whatIsWritten = Machine.Kept(ranges: [0..<40, 100..<200], total: 250, validator: .entityTag("\"v1\""))

    // MARK: running

    @Test func aRunningDownloadTakesItsTransfersEvents() {
        var machine = Self.machine()
        let first = Self.started(machine.begin(at: 0))
        #expect(first.map(\.mirror) == [0, 1])
        let (take, _) = machine.accept(SegmentScheduleTests.partial(0, 99, of: 250), for: first[0].id, at: 0)
        #expect(take)
        let (write, goOn, _) = machine.receive(10, for: first[0].id, at: 1)
        #expect(write == SegmentSchedule.Write(offset: 0, range: 0..<10))
        #expect(goOn)
        #expect(machine.stage == .running)
        #expect(machine.outlook == .goingOn)
    }

    @Test func aCheckpointNamesWhatIsWrittenOnlyWhileRunningAndOnlyIfTheDownloadKeepsBytes() {
        var machine = Self.running()
        #expect(machine.checkpoint == Self.whatIsWritten)
        #expect(Self.running(keepsBytes: false).checkpoint == nil)
        _ = machine.cancel(.paused)
        #expect(machine.checkpoint == nil)
    }

    @Test func everyByteInStopsTheTransfersThenVerifies() {
        var machine = Self.whole()
        #expect(machine.outlook == .complete)
        #expect(machine.startVerifying() == [.stop, .verify])
        #expect(machine.stage == .verifying)
        #expect(machine.schedule.transfers.isEmpty)
        // Told twice (a late callback settles again): nothing more.
        #expect(machine.startVerifying().isEmpty)
    }

    @Test func completeBeforeEveryByteIsInDoesNothing() {
        var machine = Self.running()
        #expect(machine.startVerifying().isEmpty)
        #expect(machine.stage == .running)
    }

    @Test func everyMirrorDroppedStrandsTheDownload() {
        var machine = Self.running()
        let ids = machine.schedule.transfers.keys.sorted()
        for id in ids { _ = machine.transferEnded(id, fault: .status(404), at: 2) }
        #expect(machine.outlook == .stranded)
    }

    // MARK: failures

    @Test func aMendableFailureOfADownloadThatKeepsBytesKeepsWhatIsWritten() {
        var machine = Self.running()
        let kept = Self.whatIsWritten
        let ending = Machine.Ending(fate: .keep(kept), keptIfPaused: kept)
        #expect(machine.fail(mendable: true) == [.stop, .end(ending)])
        #expect(machine.stage == .stopping(kept))
        #expect(machine.schedule.transfers.isEmpty)
    }

    @Test func aFailureThatAResumeCannotMendOrOfADownloadThatKeepsNothingRemovesTheFile() {
        let removes = Machine.Ending(fate: .remove, keptIfPaused: nil)
        var diskError = Self.running()
        #expect(diskError.fail(mendable: false) == [.stop, .end(removes)])
        #expect(diskError.stage == .stopping(nil))
        var plain = Self.running(keepsBytes: false)
        #expect(plain.fail(mendable: true) == [.stop, .end(removes)])
    }

    @Test func aFailureAfterTheDownloadStoppedHasLostToWhatStoppedIt() {
        var paused = Self.running()
        _ = paused.cancel(.paused)
        #expect(paused.fail(mendable: true).isEmpty)
        var verifying = Self.whole()
        _ = verifying.startVerifying()
        #expect(verifying.fail(mendable: false).isEmpty)
        #expect(verifying.stage == .verifying)
    }

    // MARK: verifying

    @Test func aFilePassingItsChecksIsCommittedAndAPauseThatWinsKeepsItWhole() {
        var machine = Self.whole()
        _ = machine.startVerifying()
        let whole = Machine.Kept(ranges: [0..<250], total: 250, validator: .entityTag("\"v1\""))
        #expect(machine.verified(passed: true) == [.end(.init(fate: .commit, keptIfPaused: whole))])
        #expect(machine.stage == .committing)
        // Told again: nothing.
        #expect(machine.verified(passed: true).isEmpty)
    }

    @Test func aDownloadThatKeepsNothingRemovesItsCheckedFileIfAPauseWins() {
        var machine = Self.whole(keepsBytes: false)
        _ = machine.startVerifying()
        #expect(machine.verified(passed: true) == [.end(.init(fate: .commit, keptIfPaused: nil))])
    }

    @Test func aFileFailingItsChecksIsRemovedEvenIfAPauseWins() {
        var machine = Self.whole()
        _ = machine.startVerifying()
        #expect(machine.verified(passed: false) == [.end(.init(fate: .remove, keptIfPaused: nil))])
        #expect(machine.stage == .stopping(nil))
    }

    @Test func aVerdictWhileNotVerifyingIsIgnored() {
        var machine = Self.running()
        #expect(machine.verified(passed: true).isEmpty)
        #expect(machine.stage == .running)
    }

    // MARK: cancellations

    @Test func aCancelWhileRunningRemovesTheFileFirstThenStopsAndEnds() {
        for reason in Self.reasons + [.paused] {
            // `.paused` of a download that keeps nothing is a cancel like the others.
            var machine = Self.running(keepsBytes: reason != .paused)
            #expect(machine.cancel(reason) == [.remove, .stop, .publishNothing], "\(reason)")
            #expect(machine.stage == .ended)
            #expect(machine.schedule.transfers.isEmpty)
        }
    }

    @Test func aPauseWhileRunningStopsTheWritesAndKeepsWhatIsWrittenLater() {
        var machine = Self.running()
        #expect(machine.cancel(.paused) == [.stop, .keepLater(Self.whatIsWritten)])
        #expect(machine.stage == .pausing(Self.whatIsWritten))
    }

    @Test func aCancelWhileEndingRemovesTheFileNowUnlessAPauseKeepsIt() {
        var verifying = Self.whole()
        _ = verifying.startVerifying()
        var committing = Self.whole()
        _ = committing.startVerifying()
        _ = committing.verified(passed: true)
        var failing = Self.running()
        _ = failing.fail(mendable: true)
        for var machine in [verifying, committing, failing] {
            let stage = machine.stage
            #expect(machine.cancel(.paused).isEmpty)
            #expect(machine.cancel(.user) == [.remove])
            #expect(machine.cancel(.timeout) == [.remove])
            // The ending that lost its decision moves the machine on, not the cancellation.
            #expect(machine.stage == stage)
        }
    }

    @Test func aCancelAfterTheEndDoesNothing() {
        var machine = Self.running()
        _ = machine.cancel(.user)
        #expect(machine.cancel(.user).isEmpty)
        #expect(machine.cancel(.paused).isEmpty)
        var finished = Self.whole()
        _ = finished.startVerifying()
        _ = finished.verified(passed: true)
        finished.finished()
        #expect(finished.stage == .ended)
        #expect(finished.cancel(.user).isEmpty)
    }

    @Test func aCancelAfterAPauseChangesNothingItsBytesAreNamedNext() {
        var machine = Self.running()
        _ = machine.cancel(.paused)
        for reason in Self.reasons + [.paused] {
            #expect(machine.cancel(reason).isEmpty, "\(reason)")
        }
        #expect(machine.stage == .pausing(Self.whatIsWritten))
    }

    @Test func aCancelAfterAFailedCheckRemovesTheFileNowUnlessAPauseKeepsIt() {
        var machine = Self.whole()
        _ = machine.startVerifying()
        _ = machine.verified(passed: false)
        #expect(machine.cancel(.paused).isEmpty)
        #expect(machine.cancel(.user) == [.remove])
    }

    @Test func aPauseOfADownloadThatKeepsNothingRemovesItsFileWhileItEnds() {
        var verifying = Self.whole(keepsBytes: false)
        _ = verifying.startVerifying()
        #expect(verifying.cancel(.paused) == [.remove])
        _ = verifying.verified(passed: true)
        #expect(verifying.cancel(.paused) == [.remove])
    }

    @Test func anEndedDownloadTakesNoEvent() {
        var machine = Self.whole()
        _ = machine.startVerifying()
        _ = machine.verified(passed: true)
        machine.finished()
        #expect(machine.startVerifying().isEmpty)
        #expect(machine.verified(passed: true).isEmpty)
        #expect(machine.fail(mendable: true).isEmpty)
        #expect(machine.cancel(.user).isEmpty)
        #expect(machine.checkpoint == nil)
        #expect(machine.stage == .ended)
    }

    // MARK: what a lost decision keeps

    @Test func anEndingThatLosesItsDecisionKeepsOnlyWhatAPauseKeeps() {
        let kept = Self.whatIsWritten
        let ending = Machine.Ending(fate: .keep(kept), keptIfPaused: kept)
        #expect(ending.fateIfCancelled(by: .paused) == .keep(kept))
        for reason in Self.reasons {
            #expect(ending.fateIfCancelled(by: reason) == .remove)
        }
        let committed = Machine.Ending(fate: .commit, keptIfPaused: nil)
        #expect(committed.fateIfCancelled(by: .paused) == .remove)
    }

    // MARK: after the download stopped

    @Test func aTransfersLateEventsChangeNothingOnceTheDownloadStopped() {
        var machine = Self.running()
        let ids = machine.schedule.transfers.keys.sorted()
        _ = machine.cancel(.paused)
        let written = machine.schedule.written
        for id in ids {
            let (take, actions) = machine.accept(SegmentScheduleTests.partial(0, 99, of: 250), for: id, at: 3)
            #expect(!take && actions.isEmpty)
            let (write, goOn, more) = machine.receive(50, for: id, at: 3)
            #expect(write == nil && !goOn && more.isEmpty)
            #expect(machine.transferEnded(id, fault: .status(500), at: 3).isEmpty)
        }
        #expect(machine.tick(by: 10, stallTimeout: 1, minimumSpeed: nil, at: 13).isEmpty)
        #expect(machine.begin(at: 13).isEmpty)
        #expect(machine.completedPieces(overlapping: 0..<250).isEmpty)
        #expect(machine.piece(0, passed: false, at: 13).isEmpty)
        #expect(machine.schedule.written == written)
        #expect(machine.outlook == .goingOn)  // not stranded, not complete: it has stopped
    }

    @Test func stalledTransfersFailOnTheWatchClockAndDropTheirMirrors() {
        var machine = Self.running()
        // Both transfers are idle for 10 s of a 5 s stall timeout: with no retry (the default), both mirrors are
        // dropped, their transfers stopped, and nobody is left to fetch the rest.
        let actions = machine.tick(by: 10, stallTimeout: 5, minimumSpeed: nil, at: 11)
        let cancelled = actions.compactMap { if case .transfer(.cancel(let id)) = $0 { id } else { nil } }
        #expect(cancelled.count == 2)
        #expect(machine.schedule.mirrors.allSatisfy { $0.dropped == .stalled(seconds: 10) })
        #expect(machine.outlook == .stranded)
    }

    // MARK: pieces

    @Test func aPieceThatPassesIsFinalAndOneThatFailsIsFetchedAgain() {
        let digests = PieceDigests(length: 50, sha256: Array(repeating: String(repeating: "a", count: 64), count: 5))
        var machine = Self.machine(pieces: digests)
        let first = Self.started(machine.begin(at: 0))
        _ = machine.accept(SegmentScheduleTests.partial(0, 99, of: 250), for: first[0].id, at: 0)
        _ = machine.receive(100, for: first[0].id, at: 1)
        #expect(machine.completedPieces(overlapping: 0..<100) == [0, 1])
        #expect(machine.piece(0, passed: true, at: 1).isEmpty)
        #expect(machine.completedPieces(overlapping: 0..<100) == [1])
        _ = machine.piece(1, passed: false, at: 1)
        // Its only author is dropped for the bad piece, and the piece is to be fetched again: no longer complete.
        #expect(machine.schedule.mirrors[0].dropped != nil)
        #expect(machine.completedPieces(overlapping: 0..<100).isEmpty)
        #expect(machine.schedule.written == 50)
    }
}
