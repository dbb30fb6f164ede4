/// A segmented download's segments, with the number of bytes written across all of them kept as a running count:
/// progress reads it on every piece of every body, and a sum over the segments there would grow with the square of
/// the file's size.
///
/// ```swift
/// var segments = SegmentList()
/// segments.append(SegmentSchedule.Segment(start: 0, end: 100, done: 0))
/// segments[0].done = 40
/// segments.written   // 40
/// ```
struct SegmentList: RandomAccessCollection, Sendable {
    typealias Segment = SegmentSchedule.Segment

    private var items: [Segment] = []
    /// The bytes written: the sum of every segment's `done - start`.
    private(set) var written: Int64 = 0

    var startIndex: Int { items.startIndex }
    var endIndex: Int { items.endIndex }

    subscript(index: Int) -> Segment {
        get { items[index] }
        set {
            written += Self.written(in: newValue) - Self.written(in: items[index])
            items[index] = newValue
        }
    }

    mutating func append(_ segment: Segment) {
        written += Self.written(in: segment)
        items.append(segment)
    }

    private static func written(in segment: Segment) -> Int64 {
        segment.done - segment.start
    }
}
