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
                verdicts.withLock { $0[piece] = "\(verdict)" }
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
}
