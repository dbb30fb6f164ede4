import Foundation
import PromiseCore
import TestSupport
import Testing

@testable import CancellableURLSession

/// ``StreamingDigest`` on its own, against a file in a temporary folder: it hashes what is written in order as it is
/// written, reads back only the rest at the end, and always gives the file's SHA-256.
@Suite final class StreamingDigestTests {
    let folder: URL
    let file: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("StreamingDigestTests-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        file = folder.appendingPathComponent("file.bin")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// What a digest did: the bytes it hashed as they were handed over, and the ranges it read back.
    final class Record: Sendable {
        let streamed = Locked(0)
        let readBack = Locked<[Range<Int64>]>([])

        func hooks(blocking gate: Gate? = nil) -> DownloadHooks {
            var hooks = DownloadHooks()
            hooks.willHashStreamed = { [self] count in
                streamed.withLock { $0 += count }
                gate?.pass()
            }
            hooks.willReadBack = { [self] range in readBack.withLock { $0.append(range) } }
            return hooks
        }
    }

    /// Holds the hashing queue in its first chunk until the test opens it: deterministic, without a sleep.
    final class Gate: Sendable {
        private let entered = DispatchSemaphore(value: 0)
        private let open = DispatchSemaphore(value: 0)
        private let first = Locked(true)

        func pass() {
            let isFirst = first.withLock { first in
                defer { first = false }
                return first
            }
            guard isFirst else { return }
            entered.signal()
            open.wait()
        }

        /// Waits until the queue is held in its first chunk.
        func waitUntilHeld() { entered.wait() }
        func release() { open.signal() }
    }

    func digest(_ record: Record, backlogLimit: Int = 16 << 20, gate: Gate? = nil) -> StreamingDigest {
        let file = file
        return StreamingDigest(backlogLimit: backlogLimit, hooks: record.hooks(blocking: gate)) {
            try FileHandle(forReadingFrom: file)
        }
    }

    /// Writes `data` at `offset` of the file, as a download does before it hands the chunk over.
    func write(_ data: Data, at offset: Int64) throws {
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.writeAll(data, at: offset)
    }

    static func bytes(_ count: Int, seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        let words = (0..<(count + 7) / 8).map { _ in generator.nextRaw() }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }

    @Test func bytesWrittenInOrderAreHashedAsTheyComeAndNothingIsReadBack() throws {
        let record = Record()
        let digest = digest(record)
        let data = Self.bytes(200_000, seed: 1)
        for start in stride(from: 0, to: data.count, by: 16_384) {
            let chunk = data[start..<min(start + 16_384, data.count)]
            try write(chunk, at: Int64(start))
            digest.append(chunk, at: Int64(start), writtenFrom: Int64(start))
        }
        #expect(try digest.finish(length: Int64(data.count)) == SHA256.hexDigest(of: data))
        #expect(record.streamed.withLock { $0 } == data.count)
        #expect(record.readBack.withLock { $0 }.isEmpty)
    }

    @Test func bytesPastAGapAreReadBackOnceTheFrontierReachesThem() throws {
        let record = Record()
        let digest = digest(record)
        let data = Self.bytes(100_000, seed: 2)
        // Another writer fills 60_000..<100_000 first; the in-order writer gets to 60_000 after.
        try write(data[60_000...], at: 60_000)
        digest.append(data[60_000...], at: 60_000, writtenFrom: 60_000)
        try write(data[..<60_000], at: 0)
        digest.append(data[..<60_000], at: 0, writtenFrom: 0)
        #expect(try digest.finish(length: 100_000) == SHA256.hexDigest(of: data))
        #expect(record.readBack.withLock { $0 } == [60_000..<100_000])
    }

    @Test func aWriterThatContinuesKeptBytesHasThemReadBackOnTheQueueFirst() throws {
        let record = Record()
        let digest = digest(record)
        let data = Self.bytes(90_000, seed: 3)
        try write(data[..<30_000], at: 0)  // kept from an earlier transfer
        try write(data[30_000...], at: 30_000)
        digest.append(data[30_000...], at: 30_000, writtenFrom: 0)
        #expect(try digest.finish(length: 90_000) == SHA256.hexDigest(of: data))
        #expect(record.readBack.withLock { $0 } == [0..<30_000])
        #expect(record.streamed.withLock { $0 } == 60_000)
    }

    @Test func pastItsBacklogAChunkIsLeftInTheFileAndReadBackOnceTheQueueCanTakeIt() throws {
        let record = Record()
        let gate = Gate()
        let digest = digest(record, backlogLimit: 100, gate: gate)
        let data = Self.bytes(180, seed: 4)
        try write(data, at: 0)
        digest.append(data[0..<60], at: 0, writtenFrom: 0)
        gate.waitUntilHeld()  // the first chunk is being hashed: its 60 bytes still count as queued
        digest.append(data[60..<120], at: 60, writtenFrom: 60)  // 120 > 100: left in the file, to read back
        digest.append(data[120..<180], at: 120, writtenFrom: 120)  // over again: read back after the first
        gate.release()
        #expect(try digest.finish(length: 180) == SHA256.hexDigest(of: data))
        #expect(record.streamed.withLock { $0 } == 60)
        #expect(record.readBack.withLock { $0 } == [60..<120, 120..<180])
    }

    @Test func aSingleWriterPastTheBacklogHasWhatWasSkippedReadBackBeforeItsNextChunk() throws {
        let record = Record()
        let gate = Gate()
        let digest = digest(record, backlogLimit: 100, gate: gate)
        let data = Self.bytes(180, seed: 12)
        try write(data, at: 0)
        digest.append(data[0..<60], at: 0, writtenFrom: 0)
        gate.waitUntilHeld()
        digest.append(data[60..<120], at: 60, writtenFrom: 0)  // over the backlog: left in the file
        digest.append(data[120..<180], at: 120, writtenFrom: 0)  // 60..<120 read back first; over again
        gate.release()
        #expect(try digest.finish(length: 180) == SHA256.hexDigest(of: data))
        #expect(record.streamed.withLock { $0 } == 60)
        #expect(record.readBack.withLock { $0 } == [60..<120, 120..<180])
    }

    @Test func aFrontierAtTheEndOfOneSegmentCatchesUpWithTheNextAsItIsWritten() throws {
        let record = Record()
        let digest = digest(record)
        let data = Self.bytes(200, seed: 13)
        // Segment 1 (100..<200) starts writing before segment 0 (0..<100) is done.
        try write(data[100..<150], at: 100)
        digest.append(data[100..<150], at: 100, writtenFrom: 100)  // past the frontier: left in the file
        try write(data[0..<100], at: 0)
        digest.append(data[0..<100], at: 0, writtenFrom: 0)  // the frontier reaches 100
        try write(data[150..<200], at: 150)
        digest.append(data[150..<200], at: 150, writtenFrom: 100)  // 100..<150 read back now, then this streamed
        #expect(try digest.finish(length: 200) == SHA256.hexDigest(of: data))
        #expect(record.streamed.withLock { $0 } == 150)
        #expect(record.readBack.withLock { $0 } == [100..<150])
    }

    @Test func bytesWrittenAgainMakeHashingStartOver() throws {
        let record = Record()
        let digest = digest(record)
        let first = Self.bytes(50_000, seed: 5)
        try write(first, at: 0)
        digest.append(first, at: 0, writtenFrom: 0)
        // The file starts over from byte 0 (a `200` after a resume, a retry that starts over), with other bytes.
        let second = Self.bytes(50_000, seed: 6)
        try write(second, at: 0)
        digest.append(second, at: 0, writtenFrom: 0)
        #expect(try digest.finish(length: 50_000) == SHA256.hexDigest(of: second))
        #expect(record.readBack.withLock { $0 }.isEmpty)
    }

    @Test func bytesWrittenAgainInTheMiddleAreHashedFromTheFileAtTheEnd() throws {
        let record = Record()
        let digest = digest(record)
        var data = Self.bytes(50_000, seed: 7)
        try write(data, at: 0)
        digest.append(data, at: 0, writtenFrom: 0)
        // A rollback writes 10_000..<20_000 again, with other bytes: the digest cannot take back what it hashed.
        data.replaceSubrange(10_000..<20_000, with: Self.bytes(10_000, seed: 8))
        try write(data[10_000..<20_000], at: 10_000)
        digest.append(data[10_000..<20_000], at: 10_000, writtenFrom: 10_000)
        #expect(try digest.finish(length: 50_000) == SHA256.hexDigest(of: data))
        #expect(record.readBack.withLock { $0 } == [0..<50_000])
    }

    @Test func aResetStartsOverFromTheFile() throws {
        let record = Record()
        let digest = digest(record)
        let data = Self.bytes(10_000, seed: 9)
        digest.append(Self.bytes(5_000, seed: 10), at: 0, writtenFrom: 0)
        digest.reset()  // the file was replaced whole
        try write(data, at: 0)
        #expect(try digest.finish(length: 10_000) == SHA256.hexDigest(of: data))
        #expect(record.readBack.withLock { $0 } == [0..<10_000])
    }

    /// Seconds of hashing under ThreadSanitizer: on a thread of its own, not one of the cooperative pool's two.
    @Test func randomWritesInRandomChunksAlwaysGiveTheFilesDigest() async throws {
        let file = file
        let wrong = await onAThreadOfItsOwn { () -> [String] in
            var wrong: [String] = []
            var generator = SplitMix64(seed: 0x5EED)
            for round in 0..<30 {
                do {
                    wrong += try Self.randomRound(round, file: file, using: &generator)
                } catch {
                    wrong.append("round \(round): \(error)")
                }
            }
            return wrong
        }
        #expect(wrong.isEmpty)
    }

    /// One file of random bytes, written in random chunks: in order, but now and then one held back and written after
    /// the others, some writes saying their run, some not. Returns what went wrong.
    static func randomRound(_ round: Int, file: URL, using generator: inout SplitMix64) throws -> [String] {
        try FileManager.default.removeItem(at: file)
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        let size = [0, 1, 63, 64, 65, Int.random(in: 0...120_000, using: &generator)][round % 6]
        let data = bytes(size, seed: UInt64(round))
        let record = Record()
        let digest = StreamingDigest(
            backlogLimit: Int.random(in: 1...150_000, using: &generator),
            hooks: record.hooks()
        ) { try FileHandle(forReadingFrom: file) }
        var held: [(Data, Int64)] = []
        var offset = 0
        while offset < size {
            let count = min(size - offset, Int.random(in: 1...50_000, using: &generator))
            let chunk = data[offset..<offset + count]
            if Int.random(in: 0..<5, using: &generator) == 0 {
                held.append((chunk, Int64(offset)))
            } else {
                try handle.writeAll(chunk, at: Int64(offset))
                let run = Bool.random(using: &generator) ? 0 : Int64(offset)  // in order: every byte before is in
                digest.append(chunk, at: Int64(offset), writtenFrom: held.isEmpty ? run : Int64(offset))
            }
            offset += count
        }
        for (chunk, offset) in held {
            try handle.writeAll(chunk, at: offset)
            digest.append(chunk, at: offset, writtenFrom: offset)
        }
        let actual = try digest.finish(length: Int64(size))
        return actual == SHA256.hexDigest(of: data) ? [] : ["round \(round): \(size) bytes"]
    }

    @Test func aStoppedDigestDropsItsQueuedWorkAndIsFreed() throws {
        let record = Record()
        let gate = Gate()
        weak var weakDigest: StreamingDigest?
        do {
            let digest = digest(record, gate: gate)
            weakDigest = digest
            let data = Self.bytes(40_000, seed: 11)
            try write(data, at: 0)
            for start in stride(from: 0, to: 40_000, by: 10_000) {
                digest.append(data[start..<start + 10_000], at: Int64(start), writtenFrom: Int64(start))
            }
            gate.waitUntilHeld()
            digest.stop()
            digest.append(Data([1]), at: 40_000, writtenFrom: 40_000)  // taken after the stop: ignored
            gate.release()
            digest.drain()
        }
        // Only the chunk being hashed as it stopped was hashed; the three queued after it were dropped.
        #expect(record.streamed.withLock { $0 } == 10_000)
        #expect(record.readBack.withLock { $0 }.isEmpty)
        #expect(weakDigest == nil, "the queue's blocks let go of it once they ran")
    }
}
