@testable import CancellableURLSession

extension RangeAnswer {
    /// A `206` with `Content-Range: bytes <start>-<end>/<total>` (`*` for a `nil` total), and `tag` as its strong
    /// `ETag` if given: what the schedule tests feed the schedule.
    static func partial(_ start: Int64, _ end: Int64, of total: Int64?, tag: String? = "\"v1\"") -> RangeAnswer {
        let header = "bytes \(start)-\(end)/\(total.map(String.init) ?? "*")"
        return RangeAnswer(
            status: 206,
            range: ContentRange(header),
            rangeHeader: header,
            entityTag: tag,
            validator: tag.map { .entityTag($0) }
        )
    }
}
