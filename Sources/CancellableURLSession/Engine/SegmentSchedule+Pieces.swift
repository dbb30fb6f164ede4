import Foundation

extension SegmentSchedule {
    // MARK: Pieces

    /// The pieces overlapping `bytes` whose every byte is written and which are not verified yet: what to check now.
    func completedPieces(overlapping bytes: Range<Int64>) -> [Int] {
        guard let pieces, let total else { return [] }
        return pieces.pieces(overlapping: bytes).filter { piece in
            !verified[piece] && isWritten(pieces.range(of: piece, in: total))
        }
    }

    /// Whether every byte of `bytes` is written.
    private func isWritten(_ bytes: Range<Int64>) -> Bool {
        var covered: Int64 = 0
        for segment in segments where segment.start < bytes.upperBound && segment.done > bytes.lowerBound {
            covered += min(segment.done, bytes.upperBound) - max(segment.start, bytes.lowerBound)
        }
        return covered == bytes.count
    }

    /// Piece `piece` passed its digest: its bytes are final.
    mutating func pieceVerified(_ piece: Int) {
        guard !verified[piece] else { return }
        verified[piece] = true
        verifiedCount += 1
        authors[piece] = nil
    }

    /// Piece `piece` failed its digest: its bytes are cut out of their segments, to be fetched again. If one mirror
    /// wrote all of it, that mirror is dropped; if several did (or bytes a resumed download started with), the
    /// piece is fetched again by one transfer alone, so that a second failure names its mirror.
    mutating func pieceFailed(_ piece: Int, at now: TimeInterval) -> [Action] {
        guard let pieces, let total, !verified[piece] else { return [] }
        let bytes = pieces.range(of: piece, in: total)
        let writers = authors.removeValue(forKey: piece) ?? []
        cutOut(bytes)
        if writers.count == 1, let mirror = writers.first, mirror != Self.kept {
            return drop(mirror, .pieceMismatch(piece: piece), at: now)
        }
        return schedule(at: now)
    }

    /// Makes `bytes` (all written) one free segment, fetched by one transfer at a time: each segment that overlaps
    /// them keeps its parts before and after, and a part after keeps the segment's transfers (they write past it).
    private mutating func cutOut(_ bytes: Range<Int64>) {
        var slot: Int?
        for index in segments.indices
        where segments[index].start < bytes.upperBound && segments[index].end > bytes.lowerBound {
            let segment = segments[index]
            if segment.end > bytes.upperBound {
                // Its part after the piece keeps this index, and with it the transfers that write past the piece.
                if segment.start < bytes.lowerBound {
                    segments.append(Segment(start: segment.start, end: bytes.lowerBound, done: bytes.lowerBound))
                }
                segments[index].start = bytes.upperBound
                segments[index].done = max(segment.done, bytes.upperBound)
            } else if segment.start < bytes.lowerBound {
                // It ends inside the piece, and is complete: it keeps its part before.
                segments[index].end = bytes.lowerBound
                segments[index].done = bytes.lowerBound
            } else if slot == nil {
                slot = index  // wholly inside, and complete: the piece's segment takes its place
            } else {
                segments[index] = Segment(start: bytes.lowerBound, end: bytes.lowerBound, done: bytes.lowerBound)
            }
        }
        var piece = Segment(start: bytes.lowerBound, end: bytes.upperBound, done: bytes.lowerBound)
        piece.exclusive = true
        if let slot { segments[slot] = piece } else { segments.append(piece) }
    }

    /// Forgets who wrote the pieces that lie wholly inside `bytes`: their bytes will all be written again.
    mutating func forgetAuthors(of bytes: Range<Int64>) {
        guard let pieces, let total else { return }
        for piece in pieces.pieces(overlapping: bytes) where !verified[piece] {
            let range = pieces.range(of: piece, in: total)
            if bytes.lowerBound <= range.lowerBound && range.upperBound <= bytes.upperBound { authors[piece] = nil }
        }
    }

    /// The bytes written, as the ranges of the file they fill: in order, none touching another.
}
