import TestSupport
import Testing

@testable import CancellableURLSession

/// `SegmentList`: the bytes written are a running count, which must always equal the sum it replaces, whatever the
/// schedule does to its segments — writes, splits, rollbacks of a dropped mirror's bytes, pieces cut out.
@Suite struct SegmentListTests {
    static func sum(_ segments: SegmentList) -> Int64 {
        segments.reduce(0) { $0 + ($1.done - $1.start) }
    }

    @Test func theCountFollowsEveryChangeToASegment() {
        var segments = SegmentList()
        segments.append(SegmentSchedule.Segment(start: 0, end: 100, done: 0))
        segments.append(SegmentSchedule.Segment(start: 100, end: 200, done: 150))
        #expect(segments.written == 50)
        segments[0].done = 40
        #expect(segments.written == 90)
        segments[1].start = 120
        #expect(segments.written == 70)
        segments[1] = SegmentSchedule.Segment(start: 120, end: 120, done: 120)
        #expect(segments.written == 40)
        #expect(segments.written == Self.sum(segments))
    }

    /// A schedule driven at random — answers, bodies, faults, stalls, bad pieces — keeps the count equal to the sum
    /// after every step.
    @Test(arguments: 1...20)
    func aScheduleDrivenAtRandomKeepsTheCountEqualToTheSum(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var options = SegmentedDownloadOptions()
        options.segmentSize = 4_096
        options.minimumSplitSize = 512
        options.connectionsPerMirror = 2
        options.retriesPerMirror = 2
        let total: Int64 = 40_000
        let digests = PieceDigests(
            length: 8_192,
            sha256: Array(repeating: String(repeating: "0", count: 64), count: 5)
        )
        var schedule = SegmentSchedule(mirrors: 3, options: options, expectedLength: total, pieces: digests)
        var running: [(id: Int, start: Int64, end: Int64, accepted: Bool)] = []
        func take(_ actions: [SegmentSchedule.Action]) {
            for action in actions {
                switch action {
                case .start(let id, _, let start, let end): running.append((id, start, end, false))
                case .cancel(let id): running.removeAll { $0.id == id }
                case .truncate: Issue.record("a segmented download started its file over")
                }
            }
        }
        take(schedule.begin(at: 0))
        var now: Double = 0
        var most: Int64 = 0
        for _ in 0..<400 where !running.isEmpty {
            now += 0.01
            let index = Int.random(in: running.indices, using: &random)
            let transfer = running[index]
            let roll = Int.random(in: 0..<20, using: &random)
            if !transfer.accepted, roll < 18 {
                // Its answer: the range asked for, of the whole file.
                let last = min(transfer.end, total) - 1
                let header = transfer.start < total ? "bytes \(transfer.start)-\(last)/\(total)" : "bytes */\(total)"
                let answer = RangeAnswer(
                    status: transfer.start < total ? 206 : 416,
                    range: ContentRange(header),
                    rangeHeader: header
                )
                let (body, actions) = schedule.accept(answer, for: transfer.id, at: now)
                if body { running[index].accepted = true } else { running.removeAll { $0.id == transfer.id } }
                take(actions)
            } else if roll < 17 {
                let count = Int.random(in: 1...3_000, using: &random)
                let (_, goOn, actions) = schedule.receive(count, for: transfer.id, at: now)
                if !goOn { running.removeAll { $0.id == transfer.id } }
                take(actions)
            } else if roll == 17 {
                running.remove(at: index)
                take(schedule.end(transfer.id, fault: .stalled(seconds: 1), at: now))
            } else if roll == 18 {
                // A piece that failed its digest, once every byte of it is written.
                for piece in schedule.completedPieces(overlapping: 0..<total).prefix(1) {
                    take(schedule.pieceFailed(piece, at: now))
                }
            } else {
                take(schedule.rest(by: 1, at: now))
            }
            #expect(schedule.written == Self.sum(schedule.segments), "seed \(seed)")
            #expect(schedule.written >= 0 && schedule.written <= total)
            most = max(most, schedule.written)
        }
        #expect(most > 0, "the sequence wrote bytes")
    }
}
