import Foundation
import PromiseCore
import Testing

@testable import CancellableURLSession

/// ``PieceChecker`` on its own: a piece is queued once while it is checked, a verdict on a piece written again
/// meanwhile is not trusted, and a check the download no longer wants is dropped.
@Suite final class PieceCheckerTests {
    let folder: URL
    let file: URL
    let data = Data((0..<25).map { UInt8($0) })

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("PieceCheckerTests-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        file = folder.appendingPathComponent("file.bin")
        try data.write(to: file)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Pieces of 10 bytes; piece 1's digest is wrong.
    var digests: PieceDigests {
        PieceDigests(
            length: 10,
            sha256: [
                SHA256.hexDigest(of: data[0..<10]),
                String(repeating: "0", count: 64),
                SHA256.hexDigest(of: data[20...]),
            ]
        )
    }

    @Test func aPieceIsQueuedOnceAndAVerdictOnBytesWrittenAgainIsNotTrusted() {
        let gate = StreamingDigestTests.Gate()
        let hashed = Locked<[Int]>([])
        var hooks = DownloadHooks()
        hooks.willHashPiece = { piece in
            hashed.withLock { $0.append(piece) }
            gate.pass()
        }
        let file = file
        let checker = PieceChecker(digests, hooks: hooks) { try FileHandle(forReadingFrom: file) }
        let verdicts = Locked<[Int: String]>([:])
        let arrived = DispatchSemaphore(value: 0)
        let check = { (pieces: [Int], running: Bool) in
            checker.check(pieces, in: 25, isRunning: { running }) { piece, verdict in
                let name =
                    switch verdict {
                    case .passed: "passed"
                    case .failed: "failed"
                    case .unreadable: "unreadable"
                    }
                verdicts.withLock { $0[piece] = name }
                arrived.signal()
            }
        }
        check([0], true)
        gate.waitUntilHeld()  // piece 0 is being checked
        check([2], false)  // the download stopped before piece 2's turn: dropped
        check([0, 1], true)  // piece 0 is not queued again
        checker.touch(5..<6)  // a byte of piece 0 is written again meanwhile
        gate.release()
        arrived.wait()
        arrived.wait()
        #expect(hashed.withLock { $0 } == [0, 2, 1])
        #expect(verdicts.withLock { $0 } == [0: "passed", 1: "failed"])
        #expect(!checker.settle(0), "written again while it was checked: checked again")
        #expect(checker.settle(1))
    }

    // MARK: Pieces checked as a body is written in order

    @Test func piecesWrittenInOrderAreCheckedAsTheirLastByteArrivesAndTheFirstFailureIsKept() throws {
        let file = file
        let integrity = DownloadIntegrity(length: 25, pieces: digests)
        let checks = try #require(PiecesAsWritten(integrity) { try FileHandle(forReadingFrom: file) })
        checks.written(0..<9)  // no piece complete yet
        #expect(try checks.settled().get() == [])
        checks.written(9..<15)  // piece 0 complete
        #expect(try checks.settled().get() == [0])
        checks.written(15..<25)  // pieces 1 (wrong) and 2
        guard case .failure(DownloadIntegrityError.pieceMismatch(let piece, _, let actual)) = checks.settled() else {
            Issue.record("piece 1 passed")
            return
        }
        #expect(piece == 1 && actual == SHA256.hexDigest(of: data[10..<20]))
        #expect(checks.failure != nil)
    }

    @Test func aVerdictOnAFileThatWasEmptiedMeanwhileIsForgotten() throws {
        let gate = StreamingDigestTests.Gate()
        var hooks = DownloadHooks()
        hooks.willHashPiece = { _ in gate.pass() }
        let file = file
        let integrity = DownloadIntegrity(length: 25, pieces: digests)
        let checks = try #require(
            DownloadHooks.$current.withValue(hooks) {
                PiecesAsWritten(integrity) { try FileHandle(forReadingFrom: file) }
            }
        )
        checks.written(0..<10)
        gate.waitUntilHeld()  // piece 0 is being checked
        checks.restarted()  // the file starts over: that check is on bytes it no longer holds
        gate.release()
        #expect(try checks.settled().get() == [], "piece 0 is checked again at the end")
    }

    @Test func bytesPastTheLastPieceAreNoPiece() throws {
        let file = file
        let integrity = DownloadIntegrity(length: 25, pieces: digests)
        let checks = try #require(PiecesAsWritten(integrity) { try FileHandle(forReadingFrom: file) })
        checks.written(0..<10)
        checks.written(10..<60)  // a body longer than the file: pieces 1 and 2, and nothing past them
        guard case .failure(DownloadIntegrityError.pieceMismatch(let piece, _, _)) = checks.settled() else {
            Issue.record("piece 1 is wrong")
            return
        }
        #expect(piece == 1)
        #expect(digests.pieces(overlapping: 20..<1_000) == 2..<3)
        #expect(digests.pieces(overlapping: 30..<1_000).isEmpty)
    }

    @Test func aDownloadWithoutPieceDigestsChecksNoPieces() {
        #expect(
            PiecesAsWritten(DownloadIntegrity(sha256: SHA256.hexDigest(of: data))) {
                throw CocoaError(.fileReadUnknown)
            } == nil
        )
        #expect(PiecesAsWritten(nil) { throw CocoaError(.fileReadUnknown) } == nil)
    }
}
